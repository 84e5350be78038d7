package model

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// TestDecodeExecutionAgreesWithUnmarshal: whatever an execution holds, the
// bytes MarshalJSON writes for it are read back by the canonical form's
// direct reading — always where they hold no escape — as the general path
// reads them, and what it reads is written back as the same bytes.
func TestDecodeExecutionAgreesWithUnmarshal(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := anyExecution().Draw(rt, "execution")
		data, err := e.MarshalJSON()
		if err != nil {
			rt.Fatal(err)
		}
		var general Execution
		if err := general.unmarshalGeneral(data); err != nil {
			rt.Fatalf("the general path refuses %s: %v", data, err)
		}
		var direct Execution
		ok := decodeCanonicalExecution(data, &direct)
		if !ok && !bytes.ContainsRune(data, '\\') {
			rt.Fatalf("a canonical document with no escape was left to the general path: %s", data)
		}
		if ok && !reflect.DeepEqual(direct, general) {
			rt.Fatalf("%s: read directly as\n%#v\nby the general path as\n%#v", data, direct, general)
		}
		got, err := DecodeExecution(data)
		if err != nil || !reflect.DeepEqual(*got, general) {
			rt.Fatalf("%s: DecodeExecution gives %#v (%v), the general path %#v", data, got, err, general)
		}
		if again, err := got.MarshalJSON(); ok && (err != nil || !bytes.Equal(again, data)) {
			rt.Fatalf("read directly and written again: %s (%v), not %s", again, err, data)
		}
	})
}

// TestDecodeExecutionOnAnyDocument: on any document — contract keys with
// values of the wrong type, versions that are no int64, duplicate keys,
// keys out of order, whitespace, escapes, trailing bytes — the direct
// reading either declines, leaving its target as it was, or reads what the
// general path reads; and DecodeExecution answers as json.Unmarshal does,
// errors included.
func TestDecodeExecutionOnAnyDocument(t *testing.T) {
	fixed := []string{
		`{}`, `{"id":"a","id":"b"}`, `{"version":1.0}`, `{"version":1e2}`, `{"version":-0}`,
		`{"version":9223372036854775808}`, `{"version":null}`, `{"id":null}`, `{"id":7}`,
		`{"context":[]}`, `{"context":null}`, `{"context":"x"}`, `{"context":{"b":1,"a":2}}`,
		`{"outcome":null,"parent_id":"p"}`, `{"outcome":1}`, `{"id":"a"} `, ` {"id":"a"}`,
		`{"id":"a"}x`, `{"id":"a\u0062"}`, `{"token":"t","id":"a"}`, `{"a":1,"a":2}`, `[]`, `null`,
		`{"id":"a",}`, `{"id"}`, `{"context":{"a":1},"context":null}`, `{"\u0069d":"a"}`, "{\"id\":\"\xff\"}",
	}
	for _, doc := range fixed {
		checkDecodeAgreement(t, []byte(doc))
	}
	value := rapid.OneOf(jsonValue(0), rapid.Just[any](nil),
		rapid.Map(rapid.SampledFrom([]string{"0", "-0", "7", "-12", "1.0", "1e2", "9223372036854775807", "9223372036854775808"}),
			func(s string) any { return json.Number(s) }),
		rapid.Map(rapid.SampledFrom([]string{"", "e1", "a\"b", "é", "\u2028", "<&>"}), func(s string) any { return s }))
	rapid.Check(t, func(rt *rapid.T) {
		doc := map[string]any{}
		for _, k := range rapid.SliceOfDistinct(rapid.SampledFrom([]string{
			"active_path", "context", "definition_id", "id", "outcome", "parent_id", "status", "version", "token", "prev", "Z", "é",
		}), func(s string) string { return s }).Draw(rt, "keys") {
			doc[k] = value.Draw(rt, k)
			if k == "context" && rapid.Bool().Draw(rt, "context is an object") {
				doc[k] = map[string]any{"n": value.Draw(rt, "context value")}
			}
		}
		checkDecodeAgreement(t, encodeShuffled(rt, doc, rapid.Bool().Draw(rt, "pretty")))
	})
}

func checkDecodeAgreement(t testing.TB, doc []byte) {
	t.Helper()
	var general Execution
	generalErr := general.unmarshalGeneral(doc)
	sentinel := Execution{ID: "left as it was", Extra: map[string]json.RawMessage{"k": json.RawMessage(`1`)}}
	direct := sentinel
	if decodeCanonicalExecution(doc, &direct) {
		if generalErr != nil || !reflect.DeepEqual(direct, general) {
			t.Fatalf("%s: read directly as %#v, the general path gives %#v (%v)", doc, direct, general, generalErr)
		}
	} else if !reflect.DeepEqual(direct, sentinel) {
		t.Fatalf("%s: declined, but its target was changed to %#v", doc, direct)
	}
	var viaJSON Execution
	jsonErr := json.Unmarshal(doc, &viaJSON)
	var got Execution
	decoded, err := DecodeExecution(doc)
	if decoded != nil {
		got = *decoded
	}
	sameAnswer(t, string(doc), "DecodeExecution", got, err, "json.Unmarshal", viaJSON, jsonErr)
}

// sameAnswer fails t unless two readings of doc both failed with the same
// error text, or both read the same value.
func sameAnswer[T any](t testing.TB, doc, name string, got T, err error, wantName string, want T, wantErr error) {
	t.Helper()
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("%s: %s's error %v, %s's %v", doc, name, err, wantName, wantErr)
	case err != nil && err.Error() != wantErr.Error():
		t.Fatalf("%s: %s's error %q, %s's %q", doc, name, err, wantName, wantErr)
	case err == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("%s: %s gives %#v, %s %#v", doc, name, got, wantName, want)
	}
}

// BenchmarkDecodeExecution reads back the bytes a store keeps for an
// execution shaped as the workloads write them (witness fields in Extra):
// directly (DecodeExecution, as every store's load now does) and by the
// general path alone (what json.Unmarshal ran after validating the whole
// document, before the direct reading).
func BenchmarkDecodeExecution(b *testing.B) {
	e := Execution{ID: "c3-e1", DefinitionID: "workload", Version: 41, Status: "running", ActivePath: "root.a",
		Context: json.RawMessage(`{"n":41,"note":"benchmark"}`), Extra: map[string]json.RawMessage{
			"token": json.RawMessage(`"c3-e1-41"`), "prev": json.RawMessage(`"c2-e1-40"`),
		}}
	data, err := e.MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeExecution(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("general", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var got Execution
			if err := got.unmarshalGeneral(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSetMemberKnowsEveryContractKey: the direct reader names the contract
// keys in its own switch (a search of knownKeys there made the reading a
// quarter slower: 1,180 → 1,460 ns, alternating); every key of knownKeys
// must reach a field of its own, never Extra, and take a value of its type.
func TestSetMemberKnowsEveryContractKey(t *testing.T) {
	for _, k := range knownKeys {
		taken := false
		for _, v := range []string{`"x"`, `{}`, `1`, `null`} {
			var e Execution
			if e.setMember([]byte(k), []byte(v)) {
				taken = true
			}
			if e.Extra != nil {
				t.Errorf("contract key %s with %s landed in Extra: %v", k, v, e.Extra)
			}
		}
		if !taken {
			t.Errorf("contract key %s took none of a string, an object, a number or null", k)
		}
	}
}
