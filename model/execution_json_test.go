package model

import (
	"encoding/json"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// marshalViaMap is the definition of an execution's canonical JSON: its
// fields in a map, encoded by encoding/json (sorted keys, no HTML escaping).
func marshalViaMap(e Execution) ([]byte, error) {
	ctx, err := CanonicalObject(e.Context, "execution context")
	if err != nil {
		return nil, err
	}
	obj := map[string]any{
		"id": e.ID, "definition_id": e.DefinitionID, "version": e.Version, "status": e.Status,
		"outcome": e.Outcome, "active_path": e.ActivePath, "parent_id": e.ParentID, "context": json.RawMessage(ctx),
	}
	for k, v := range e.Extra {
		c, err := CanonicalJSON(v)
		if err != nil {
			return nil, err
		}
		obj[k] = json.RawMessage(c)
	}
	return marshalNoEscape(obj)
}

// TestExecutionJSONMatchesTheMap: the directly written JSON is byte for
// byte the map's, for any strings (control characters, quotes, HTML
// characters, U+2028, invalid UTF-8), extra keys sorting before, between
// and after the contract's, and any extra values.
func TestExecutionJSONMatchesTheMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := anyExecution().Draw(rt, "execution")
		want, werr := marshalViaMap(e)
		got, gerr := e.MarshalJSON()
		if (werr == nil) != (gerr == nil) || string(want) != string(got) {
			rt.Fatalf("the map gives %s (%v), MarshalJSON %s (%v)", want, werr, got, gerr)
		}
	})
}

// anyExecution draws an execution: any strings (control characters,
// quotes, HTML characters, U+2028, invalid UTF-8), with or without outcome,
// parent and context, and extra keys sorting before, between and after the
// contract's with any values.
func anyExecution() *rapid.Generator[Execution] {
	text := rapid.OneOf(rapid.String(), rapid.StringOf(rapid.RuneFrom([]rune{'a', '"', '\\', '<', '&', '\n', '\x01', '\u2028', 'é', '\x7f'})),
		rapid.SampledFrom([]string{"", "e1", "\xff\xfe", "a\u2029b"}))
	return rapid.Custom(func(rt *rapid.T) Execution {
		e := Execution{ID: text.Draw(rt, "id"), DefinitionID: text.Draw(rt, "def"), Version: rapid.Int64().Draw(rt, "version"),
			Status: text.Draw(rt, "status"), ActivePath: text.Draw(rt, "path")}
		if rapid.Bool().Draw(rt, "outcome") {
			e.Outcome = Ptr(text.Draw(rt, "outcome text"))
		}
		if rapid.Bool().Draw(rt, "parent") {
			e.ParentID = Ptr(text.Draw(rt, "parent text"))
		}
		if rapid.Bool().Draw(rt, "context") {
			e.Context = json.RawMessage(`{"n":` + rapid.SampledFrom([]string{"1", "2.50", `"x"`, `{"b":1,"a":[1,2]}`}).Draw(rt, "ctx") + `}`)
		}
		for _, k := range rapid.SliceOfDistinct(rapid.SampledFrom([]string{"token", "prev", "a", "zz", "context_x", "id2", "Z", "é", "<k>", "active"}), func(s string) string { return s }).Draw(rt, "extras") {
			if e.Extra == nil {
				e.Extra = map[string]json.RawMessage{}
			}
			v, err := json.Marshal(jsonValue(0).Draw(rt, "extra "+k))
			if err != nil {
				rt.Fatal(err)
			}
			e.Extra[k] = v
		}
		return e
	})
}

// TestExecutionJSONRefusesShadowing: an extra field may not reuse a
// contract field's key. Every contract key is tried, alone and among extra
// keys sorting before and after it.
func TestExecutionJSONRefusesShadowing(t *testing.T) {
	for k := range knownFields {
		for _, others := range [][]string{nil, {"a", "zz"}, {k + "_", "_" + k, "context_x"}} {
			extra := map[string]json.RawMessage{k: json.RawMessage(`1`)}
			for _, o := range others {
				extra[o] = json.RawMessage(`2`)
			}
			e := Execution{ID: "e", Extra: extra}
			if _, err := e.MarshalJSON(); err == nil || !strings.Contains(err.Error(), "shadows") {
				t.Errorf("an extra field named %s among %v: got %v, want it refused as shadowing", k, others, err)
			}
		}
	}
}

// TestKnownKeysAreSorted: appendExecution writes the contract's fields in
// knownKeys' order, which must be encoding/json's, and merges Extra's keys
// into it.
func TestKnownKeysAreSorted(t *testing.T) {
	for i := 1; i < len(knownKeys); i++ {
		if knownKeys[i-1] >= knownKeys[i] {
			t.Errorf("key %q follows %q: not in sorted order", knownKeys[i], knownKeys[i-1])
		}
	}
}
