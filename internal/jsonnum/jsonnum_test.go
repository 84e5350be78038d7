package jsonnum

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEndAgreesWithEncodingJSON: a text is one JSON number exactly when End
// takes all of it, as encoding/json's validator says.
func TestEndAgreesWithEncodingJSON(t *testing.T) {
	for _, text := range []string{
		"0", "-0", "7", "-12", "1.5", "0.000001", "1e9", "1E+2", "12.5e-3", "-0.0",
		"", "-", "01", "-01", "1.", ".5", "1e", "1e+", "+1", "Infinity", "NaN", "1.5.2", "0x10", "1_000",
	} {
		whole := End([]byte(text), 0) == len(text)
		if valid := json.Valid([]byte(text)); whole != valid {
			t.Errorf("%q: End takes all of it %v, encoding/json says valid %v", text, whole, valid)
		}
	}
	if got := End([]byte(`{"n":-3.25e2}`), 5); got != 12 {
		t.Errorf("a number inside an object ends at %d, want 12", got)
	}
}

// FuzzEnd: for any text, End agrees with encoding/json on whether it is one
// number.
func FuzzEnd(f *testing.F) {
	for _, s := range []string{"0", "-1.5e3", "01", "1.", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		whole := len(text) > 0 && End([]byte(text), 0) == len(text)
		var v float64
		// One number and nothing else: JSON allows whitespace around a
		// value, End does not look at it.
		isNumber := json.Valid([]byte(text)) && strings.TrimSpace(text) == text && len(text) > 0 &&
			(text[0] == '-' || (text[0] >= '0' && text[0] <= '9')) && json.Unmarshal([]byte(text), &v) == nil
		if whole && !json.Valid([]byte(text)) {
			t.Fatalf("%q: End takes it as a number, encoding/json refuses it", text)
		}
		if !whole && isNumber {
			t.Fatalf("%q: encoding/json reads a number, End does not take all of it", text)
		}
	})
}
