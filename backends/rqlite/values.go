package rqlite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/storecheck/storecheck/model"
)

// rqlite answers in JSON, so a column value arrives as what encoding/json
// made of it: string for TEXT, float64 for INTEGER and REAL, nil for NULL
// (and, from an Executor that does not go through JSON, int64 or []byte).

// text converts a non-NULL text column.
func text(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case nil:
		return "", fmt.Errorf("unexpected NULL in a text column")
	default:
		return "", fmt.Errorf("unexpected %T in a text column", v)
	}
}

// nullText converts a nullable text column; NULL gives nil.
func nullText(v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	s, err := text(v)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// integer converts an INTEGER column. JSON carries it as a float64, exact
// up to 2^53, far above any version, seq or index a run reaches.
func integer(v any) (int64, error) {
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, fmt.Errorf("non-integral %v in an integer column", x)
		}
		return int64(x), nil
	case int64:
		return x, nil
	case json.Number:
		return x.Int64()
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("integer column: %w", err)
		}
		return n, nil
	default:
		return 0, fmt.Errorf("unexpected %T in an integer column", v)
	}
}

// float converts a REAL column.
func float(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case json.Number:
		return x.Float64()
	default:
		return 0, fmt.Errorf("unexpected %T in a real column", v)
	}
}

// truth converts a 0/1 column such as EXISTS(…).
func truth(v any) (bool, error) {
	if b, ok := v.(bool); ok {
		return b, nil
	}
	n, err := integer(v)
	if err != nil {
		return false, err
	}
	return n != 0, nil
}

// canonical reads a JSON text column in canonical form.
func canonical(v any) (string, error) {
	s, err := text(v)
	if err != nil {
		return "", err
	}
	return model.CanonicalJSON([]byte(s))
}

// object is model.CanonicalJSON for a value that must be a JSON object; nil
// or empty stands for {}, as in model.Reference.
func object(raw json.RawMessage, what string) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}", nil
	}
	s, err := model.CanonicalJSON(raw)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if s[0] != '{' {
		return "", fmt.Errorf("%s: must be a JSON object, got %.40s", what, s)
	}
	return s, nil
}

// decode reads a stored execution.
func decode(data string) (*model.Execution, error) {
	var e model.Execution
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		return nil, fmt.Errorf("stored execution is not valid: %w", err)
	}
	return &e, nil
}

// convert applies conv to every row, checking each has width columns.
func convert[T any](rows [][]any, width int, conv func([]any) (T, error)) ([]T, error) {
	out := make([]T, 0, len(rows))
	for i, r := range rows {
		if len(r) < width {
			return nil, fmt.Errorf("row %d has %d columns, want %d", i, len(r), width)
		}
		v, err := conv(r)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		out = append(out, v)
	}
	return out, nil
}
