package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
)

// querier is what both *sql.DB and *sql.Conn offer for reads.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// collect runs query and converts each row, whose columns are scanned into
// any, with conv. It returns nil when there are no rows.
func collect[T any](ctx context.Context, q querier, conv func(cols []any) (T, error), width int, query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	cols := make([]any, width)
	ptrs := make([]any, width)
	for i := range cols {
		ptrs[i] = &cols[i]
	}
	for rows.Next() {
		clear(cols)
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		v, err := conv(cols)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", len(out), err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
