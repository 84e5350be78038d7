package sqlstore

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/model"
)

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
	st := NewStatements(AsIs)
	q, args := st.ListQuery(model.ListFilter{Limit: 2, DefinitionID: model.Ptr("d"), Statuses: []string{"a", "b"}, RootsOnly: true}, 4)
	want := " WHERE definition_id = ? AND json_extract(data,'$.status') IN (?, ?) AND json_extract(data,'$.parent_id') IS NULL ORDER BY id LIMIT ? OFFSET ?"
	if !strings.HasSuffix(q, want) {
		t.Errorf("query %q does not end in %q", q, want)
	}
	if !reflect.DeepEqual(args, []any{"d", "a", "b", int64(3), int64(4)}) {
		t.Errorf("args %v", args)
	}
	q, args = st.ListQuery(model.ListFilter{Limit: 1, Statuses: []string{}}, 0)
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
