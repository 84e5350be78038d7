package linearizability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/storecheck/storecheck/model"
	"pgregory.net/rapid"
)

// TestTopLevelStringBytesAgreesWithWitnessFields: where model.TopLevelStringBytes
// answers, it reads the token witnessFields (the decoding definition)
// reads; on canonical documents with no escape and a plain token it always
// answers.
func TestTopLevelStringBytesAgreesWithWitnessFields(t *testing.T) {
	for _, c := range []struct {
		doc  string
		want string
		sure bool
	}{
		{`{"kind":"commit","token":"c1-457"}`, "c1-457", true},
		{`{"token":"c1-457"}`, "c1-457", true},
		{`{}`, "", true},
		{`[1,2]`, "", true},
		{`"token"`, "", true},
		{`{"a":{"token":"inner"},"b":[1,{"c":"}"}],"token":"outer"}`, "outer", true},
		{`{"a":"x\"token\":\"no","token":"yes"}`, "yes", false},
		{`{"token":7}`, "", true},
		{`{"token":null}`, "", true},
		{`{"token":{"a":1}}`, "", true},
		{`{"kind":"x"}`, "", true},
		{`{"token":"a\"b"}`, `a"b`, false},
		{`{"tok\u0065n":"x"}`, "x", false},
		{`{ "token":"x"}`, "x", false},
	} {
		got, sure := model.TopLevelStringBytes([]byte(c.doc), TokenField)
		if sure != c.sure || (sure && string(got) != c.want) {
			t.Errorf("TopLevelStringBytes(%s) = %q, sure %v; want %q, sure %v", c.doc, got, sure, c.want, c.sure)
		}
		if def, _, err := witnessFields(c.doc); err != nil || def != c.want {
			t.Errorf("witnessFields(%s) = %q, %v; the case expects %q", c.doc, def, err, c.want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		doc := map[string]any{}
		keys := rapid.SliceOfN(rapid.SampledFrom([]string{"token", "prev", "kind", "a", "tokens", "toke", "z\"q", "é"}), 0, 6).Draw(t, "keys")
		for _, k := range keys {
			doc[k] = rapid.OneOf(
				rapid.Just[any](nil),
				rapid.Map(rapid.Int(), func(n int) any { return n }),
				rapid.Map(rapid.StringMatching(`[a-z0-9\-]{0,8}`), func(s string) any { return s }),
				rapid.Map(rapid.String(), func(s string) any { return s }),
				rapid.Map(rapid.SliceOfN(rapid.String(), 0, 3), func(s []string) any { return s }),
				rapid.Map(rapid.MapOfN(rapid.SampledFrom([]string{"token", "x", "}"}), rapid.String(), 0, 2), func(m map[string]string) any { return m }),
			).Draw(t, k)
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		canon, err := model.CanonicalJSONBytes(raw)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := witnessFields(string(canon))
		if err != nil {
			t.Fatal(err)
		}
		got, sure := model.TopLevelStringBytes(canon, TokenField)
		if sure && string(got) != want {
			t.Fatalf("TopLevelStringBytes(%s) = %q; witnessFields reads %q", canon, got, want)
		}
		if s, isString := doc[TokenField].(string); isString && !sure && plain([]byte(s)) && !bytes.ContainsRune(canon, '\\') {
			t.Fatalf("TopLevelStringBytes(%s) is unsure of a plain token in a document with no escape", canon)
		}
	})
}

// TestTokenHashFormats: an id is the token, '#' and the hash as eight
// lower-case hex digits, leading zeros kept, as "%s#%08x" writes it.
func TestTokenHashFormats(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		token, h := rapid.String().Draw(t, "token"), rapid.Uint32().Draw(t, "hash")
		if got, want := tokenHash(token, h), fmt.Sprintf("%s#%08x", token, h); got != want {
			t.Fatalf("tokenHash(%q, %#x) = %q, want %q", token, h, got, want)
		}
	})
}

// TestDataIDIsTheStoredObjectID: DataID, which reads the token from Extra
// in place where it can, is the ObjectID of the execution's canonical JSON
// — for any token (quotes, escapes, non-ASCII, empty, a number, absent)
// and any prev.
func TestDataIDIsTheStoredObjectID(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.OneOf(rapid.String(), rapid.StringMatching(`[a-z0-9-]{0,12}`),
			rapid.StringOf(rapid.RuneFrom([]rune{'a', '"', '\\', '<', '\n', 'é', '\u2028'})))
		exe := &model.Execution{ID: "e", DefinitionID: "d", Version: rapid.Int64Range(0, 9).Draw(t, "version"),
			Context: json.RawMessage(`{"n":1}`), Extra: map[string]json.RawMessage{}}
		switch rapid.IntRange(0, 2).Draw(t, "token kind") {
		case 0:
			raw, err := json.Marshal(text.Draw(t, "token"))
			if err != nil {
				t.Fatal(err)
			}
			exe.Extra[TokenField] = raw
		case 1:
			exe.Extra[TokenField] = json.RawMessage(`7`)
		}
		if rapid.Bool().Draw(t, "has prev") {
			raw, _ := json.Marshal(text.Draw(t, "prev"))
			exe.Extra[PrevField] = raw
		}
		got, err := DataID(exe)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := exe.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want, err := ObjectID(stored)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("DataID = %q, the ObjectID of %s is %q", got, stored, want)
		}
	})
}
