package model

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// TestParseEventAgreesWithGeneral: any event, written as stores write it
// (Event.Canonical), is read back in one pass — always where it holds no
// escape — as encoding/json reads it.
func TestParseEventAgreesWithGeneral(t *testing.T) {
	text := rapid.OneOf(rapid.String(), rapid.SampledFrom([]string{"", "tick", "a\"b", "é", "\u2028", "<&>", "\xff"}))
	rapid.Check(t, func(rt *rapid.T) {
		ev := Event{ID: text.Draw(rt, "id"), Name: text.Draw(rt, "name")}
		if rapid.Bool().Draw(rt, "has data") {
			data, err := json.Marshal(jsonValue(0).Draw(rt, "data"))
			if err != nil {
				rt.Fatal(err)
			}
			ev.Data = data
		}
		s, err := ev.Canonical()
		if err != nil {
			rt.Fatal(err)
		}
		general, err := parseEventGeneral(s)
		if err != nil {
			rt.Fatalf("the general path refuses %s: %v", s, err)
		}
		direct, ok := parseCanonicalEvent([]byte(s))
		if !ok && !bytes.ContainsRune([]byte(s), '\\') {
			rt.Fatalf("a canonical event with no escape was left to the general path: %s", s)
		}
		if ok && !reflect.DeepEqual(direct, general) {
			rt.Fatalf("%s: read directly as %#v, by the general path as %#v", s, direct, general)
		}
	})
}

// TestParseEventOnAnyDocument: on any document — keys in another case,
// unknown keys, an id or name that is no string, null data, duplicate
// keys, keys out of order, whitespace, escapes — the one-pass reading
// declines or reads what encoding/json reads, and ParseEvent answers as the
// general path does, error text included.
func TestParseEventOnAnyDocument(t *testing.T) {
	fixed := []string{
		`{}`, `{"name":"a"}`, `{"data":null,"name":"a"}`, `{"data":{"b":1,"a":2},"name":"a"}`, `{"ID":"x","name":"a"}`,
		`{"id":null,"name":"a"}`, `{"id":7,"name":"a"}`, `{"name":"a","x":1}`, `{"name":"a","name":"b"}`,
		`{"data":1,"data":null}`, `{"name":"a"} `, `{"name":"a"}x`, `{"name":"\u0061"}`, `[]`, `null`, `{"name"}`,
	}
	for _, doc := range fixed {
		checkEventAgreement(t, doc)
	}
	value := rapid.OneOf(jsonValue(0), rapid.Just[any](nil),
		rapid.Map(rapid.SampledFrom([]string{"", "tick", "a\"b", "é", "<&>"}), func(s string) any { return s }))
	rapid.Check(t, func(rt *rapid.T) {
		doc := map[string]any{}
		for _, k := range rapid.SliceOfDistinct(rapid.SampledFrom([]string{"data", "id", "name", "ID", "Name", "x"}),
			func(s string) string { return s }).Draw(rt, "keys") {
			doc[k] = value.Draw(rt, k)
		}
		checkEventAgreement(t, string(encodeShuffled(rt, doc, rapid.Bool().Draw(rt, "pretty"))))
	})
}

func checkEventAgreement(t testing.TB, doc string) {
	t.Helper()
	general, generalErr := parseEventGeneral(doc)
	if direct, ok := parseCanonicalEvent([]byte(doc)); ok && (generalErr != nil || !reflect.DeepEqual(direct, general)) {
		t.Fatalf("%s: read directly as %#v, the general path gives %#v (%v)", doc, direct, general, generalErr)
	}
	got, err := ParseEvent(doc)
	sameAnswer(t, doc, "ParseEvent", got, err, "the general path", general, generalErr)
}

// BenchmarkParseEvent reads back an event as stores keep it: in one pass
// (ParseEvent) and by encoding/json (the general path, as before).
func BenchmarkParseEvent(b *testing.B) {
	s, err := Event{ID: "c3-e1-41-0", Name: "tick", Data: json.RawMessage(`{"from":"e1","n":41}`)}.Canonical()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		parse func(string) (Event, error)
	}{{"direct", ParseEvent}, {"general", parseEventGeneral}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.parse(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
