package model

import "testing"

func TestCanonicalObject(t *testing.T) {
	for in, want := range map[string]string{"": "{}", " ": "{}", `{"b":1, "a":[2]}`: `{"a":[2],"b":1}`} {
		if got, err := CanonicalObject([]byte(in), "x"); err != nil || got != want {
			t.Errorf("CanonicalObject(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"[]", "1", `"s"`, "{", "null"} {
		if _, err := CanonicalObject([]byte(in), "x"); err == nil {
			t.Errorf("CanonicalObject(%q) succeeded", in)
		}
	}
}
