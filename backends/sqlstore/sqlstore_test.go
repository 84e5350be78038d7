package sqlstore

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/model"
)

func TestConversions(t *testing.T) {
	if s, err := text([]byte("2024-01-02")); err != nil || s != "2024-01-02" {
		t.Errorf("text([]byte) = %q, %v", s, err)
	}
	if _, err := text(time.Now()); err == nil || !strings.Contains(err.Error(), "AsBlob") {
		t.Errorf("text(time.Time) = %v, want an error pointing at AsBlob", err)
	}
	if p, err := nullText(nil); err != nil || p != nil {
		t.Errorf("nullText(nil) = %v, %v", p, err)
	}
	for _, v := range []any{int64(3), float64(3), "3", []byte("3")} {
		if n, err := integer(v); err != nil || n != 3 {
			t.Errorf("integer(%T) = %d, %v", v, n, err)
		}
	}
	if _, err := integer(2.5); err == nil {
		t.Error("integer(2.5) succeeded")
	}
	for _, v := range []any{float64(1.5), "1.5", []byte("1.5")} {
		if f, err := float(v); err != nil || f != 1.5 {
			t.Errorf("float(%T) = %v, %v", v, f, err)
		}
	}
	if f, err := float(int64(2)); err != nil || f != 2 {
		t.Errorf("float(int64) = %v, %v", f, err)
	}
	if b, err := truth(int64(1)); err != nil || !b {
		t.Errorf("truth(1) = %v, %v", b, err)
	}
}

func TestCanonicalObject(t *testing.T) {
	for in, want := range map[string]string{"": "{}", " ": "{}", `{"b":1, "a":[2]}`: `{"a":[2],"b":1}`} {
		if got, err := canonicalObject([]byte(in), "x"); err != nil || got != want {
			t.Errorf("canonicalObject(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"[]", "1", `"s"`, "{", "null"} {
		if _, err := canonicalObject([]byte(in), "x"); err == nil {
			t.Errorf("canonicalObject(%q) succeeded", in)
		}
	}
}

func TestStatementsProjection(t *testing.T) {
	plain, blob := NewStatements(AsIs), SQLite()
	if strings.Contains(plain.ListSelect, "CAST") || !strings.Contains(blob.ListSelect, "CAST(id AS BLOB)") {
		t.Errorf("projections: plain %q, blob %q", plain.ListSelect, blob.ListSelect)
	}
	if plain.UpdateExecution != blob.UpdateExecution || !reflect.DeepEqual(plain.Schema, blob.Schema) {
		t.Error("the projection changed a statement other than a SELECT list")
	}
}

func TestListQuery(t *testing.T) {
	s := &Store{st: NewStatements(AsIs)}
	q, args := s.listQuery(model.ListFilter{Limit: 2, DefinitionID: model.Ptr("d"), Statuses: []string{"a", "b"}, RootsOnly: true}, 4)
	want := " WHERE definition_id = ? AND json_extract(data,'$.status') IN (?, ?) AND json_extract(data,'$.parent_id') IS NULL ORDER BY id LIMIT ? OFFSET ?"
	if !strings.HasSuffix(q, want) {
		t.Errorf("query %q does not end in %q", q, want)
	}
	if !reflect.DeepEqual(args, []any{"d", "a", "b", int64(3), int64(4)}) {
		t.Errorf("args %v", args)
	}
	q, args = s.listQuery(model.ListFilter{Limit: 1, Statuses: []string{}}, 0)
	if strings.Contains(q, "WHERE") || len(args) != 2 {
		t.Errorf("an empty filter gave %q %v", q, args)
	}
}

func TestOneLine(t *testing.T) {
	base := errors.New("failed to execute query\nerror code = 2")
	err := OneLine(base)
	if err.Error() != "failed to execute query; error code = 2" || !errors.Is(err, base) {
		t.Errorf("OneLine = %q", err)
	}
	if OneLine(nil) != nil {
		t.Error("OneLine(nil) != nil")
	}
}
