package rqlite

import "fmt"

// rqlite answers in JSON, so a column value arrives as what encoding/json
// made of it: string for TEXT, float64 for INTEGER and REAL, nil for NULL
// (and, from an Executor that does not go through JSON, int64 or []byte).
// backends/internal/rowconv converts every one of those.

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
