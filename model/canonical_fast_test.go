package model

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The fast path must never change CanonicalJSON's answer: whenever it says
// a document is canonical, decoding and re-encoding gives the same bytes.
func TestFastPathAgreesWithDefinition(t *testing.T) {
	fixed := []string{
		`{}`, `[]`, `""`, `0`, `-0`, `1.5e-3`, `1E5`, `true`, `null`,
		`{"a":1,"b":[1,2,{"c":"d"}]}`, `{"b":1,"a":2}`, `{"a":1,"a":2}`, `{ "a":1}`,
		`{"a":"x\"y"}`, `{"a":"\u0041"}`, `{"a":"<&>"}`, `{"a":"é"}`, "{\"a\":\"\u2028\"}",
		`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `[1,]`, `{"a":1}x`, `"\xff"`, `{"Z":1,"a":2}`,
	}
	for _, s := range fixed {
		checkAgreement(t, []byte(s))
	}
	rapid.Check(t, func(rt *rapid.T) {
		v := jsonValue(0).Draw(rt, "value")
		for _, pretty := range []bool{false, true} {
			b := encodeShuffled(rt, v, pretty)
			checkAgreement(t, b)
		}
	})
}

func checkAgreement(t testing.TB, b []byte) {
	t.Helper()
	slowBytes, slowErr := canonicalSlow(b)
	slow := string(slowBytes)
	fast, fastErr := CanonicalJSON(b)
	if (slowErr == nil) != (fastErr == nil) || slow != fast {
		t.Fatalf("%q: definition gives %q (%v), CanonicalJSON %q (%v)", b, slow, slowErr, fast, fastErr)
	}
	if alreadyCanonical(b) && slow != string(b) {
		t.Fatalf("%q: the fast path calls it canonical, but its canonical form is %q", b, slow)
	}
}

// jsonValue draws a JSON value: objects, arrays, strings (some needing
// escapes), numbers, booleans and null.
func jsonValue(depth int) *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		kind := rapid.IntRange(0, 6).Draw(t, "kind")
		if depth > 3 && kind < 2 {
			kind += 2
		}
		switch kind {
		case 0:
			m := map[string]any{}
			for range rapid.IntRange(0, 4).Draw(t, "fields") {
				m[rapid.SampledFrom([]string{"a", "b", "Z", "é", "a\"b", "k<", "\u2028"}).Draw(t, "key")] = jsonValue(depth+1).Draw(t, "field")
			}
			return m
		case 1:
			var a []any
			for range rapid.IntRange(0, 3).Draw(t, "items") {
				a = append(a, jsonValue(depth+1).Draw(t, "item"))
			}
			return a
		case 2:
			return rapid.SampledFrom([]string{"", "plain", "tab\there", "quote\"", "back\\slash", "<&>", "é", "\u2029", "\x01"}).Draw(t, "string")
		case 3:
			return json.Number(rapid.SampledFrom([]string{"0", "-0", "12", "1.25", "-3e7", "1E-2", "1e400"}).Draw(t, "number"))
		case 4:
			return rapid.Bool().Draw(t, "bool")
		default:
			return nil
		}
	})
}

// encodeShuffled writes v with object keys in a drawn order, compact or
// indented.
func encodeShuffled(t *rapid.T, v any, pretty bool) []byte {
	var b strings.Builder
	var enc func(v any)
	enc = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			keys = rapid.Permutation(keys).Draw(t, "order")
			b.WriteString("{")
			for i, k := range keys {
				if i > 0 {
					b.WriteString(",")
				}
				if pretty {
					b.WriteString(" ")
				}
				kb, _ := json.Marshal(k)
				b.Write(kb)
				b.WriteString(":")
				enc(x[k])
			}
			b.WriteString("}")
		case []any:
			b.WriteString("[")
			for i, it := range x {
				if i > 0 {
					b.WriteString(",")
				}
				enc(it)
			}
			b.WriteString("]")
		default:
			vb, err := json.Marshal(x)
			if err != nil {
				panic(fmt.Sprint(err))
			}
			b.Write(vb)
		}
	}
	enc(v)
	return []byte(b.String())
}
