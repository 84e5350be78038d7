// Package rowconv turns the column values of the contract's six tables, as a
// database driver or rqlite's JSON hands them over, into model's values and
// rows. The SQL backends (sqlstore, and rqlite over HTTP) read the same
// tables with the same statements; how they run a query stays theirs, and
// what a row means is decided here, once.
//
// A column value arrives as an any, because sources disagree on Go types: a
// TEXT column may come back as string or []byte (and, from libSQL, as
// time.Time when it looks like a timestamp), an INTEGER as int64 or float64
// (rqlite's JSON carries every number as float64, or json.Number), a REAL as
// float64 or int64, NULL as nil.
package rowconv

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/storecheck/storecheck/model"
)

// Text converts a non-NULL text column.
func Text(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case nil:
		return "", fmt.Errorf("unexpected NULL in a text column")
	case time.Time:
		return "", fmt.Errorf("the driver turned a text column into a time (%v); select it with AsBlob to get its exact text", x)
	default:
		return "", fmt.Errorf("unexpected %T in a text column", v)
	}
}

// NullText converts a nullable text column; NULL gives nil.
func NullText(v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	s, err := Text(v)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// Integer converts an INTEGER column. A float64 (all rqlite's JSON has) must
// be integral and is exact up to 2^53, far above any version, seq or index
// a run reaches.
func Integer(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, fmt.Errorf("non-integral %v in an integer column", x)
		}
		return int64(x), nil
	case json.Number:
		return x.Int64()
	case []byte, string:
		s, _ := Text(x)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("integer column: %w", err)
		}
		return n, nil
	default:
		return 0, fmt.Errorf("unexpected %T in an integer column", v)
	}
}

// Float converts a REAL column.
func Float(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case json.Number:
		return x.Float64()
	case []byte, string:
		s, _ := Text(x)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("real column: %w", err)
		}
		return f, nil
	default:
		return 0, fmt.Errorf("unexpected %T in a real column", v)
	}
}

// Truth converts a 0/1 column such as EXISTS(…).
func Truth(v any) (bool, error) {
	if b, ok := v.(bool); ok {
		return b, nil
	}
	n, err := Integer(v)
	if err != nil {
		return false, err
	}
	return n != 0, nil
}

// Canonical reads a JSON text column in canonical form (model.CanonicalJSON).
func Canonical(v any) (string, error) {
	s, err := Text(v)
	if err != nil {
		return "", err
	}
	return model.CanonicalJSON([]byte(s))
}

// Execution decodes the data column of an executions row.
func Execution(data string) (*model.Execution, error) {
	e, err := model.DecodeExecution([]byte(data))
	if err != nil {
		return nil, fmt.Errorf("stored execution is not valid: %w", err)
	}
	return e, nil
}
