package sqlstore

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Columns are scanned into any and converted here, because drivers disagree
// on Go types: a TEXT column may come back as string or []byte (and, from
// libSQL, as time.Time when it looks like a timestamp), an INTEGER as int64
// or float64, a REAL as float64 or int64.

// text converts a non-NULL text column.
func text(v any) (string, error) {
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

// integer converts an INTEGER column.
func integer(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, fmt.Errorf("non-integral %v in an integer column", x)
		}
		return int64(x), nil
	case []byte, string:
		s, _ := text(x)
		n, err := strconv.ParseInt(s, 10, 64)
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
	case []byte, string:
		s, _ := text(x)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("real column: %w", err)
		}
		return f, nil
	default:
		return 0, fmt.Errorf("unexpected %T in a real column", v)
	}
}

// truth converts a 0/1 column such as EXISTS(…).
func truth(v any) (bool, error) {
	n, err := integer(v)
	if err != nil {
		return false, err
	}
	return n != 0, nil
}

// nullable turns a *string into a driver argument: nil or the string.
func nullable(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
