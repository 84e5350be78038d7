package mutants

import (
	"context"

	"github.com/storecheck/storecheck/model"
)

// pageSkip advances list_executions' cursor past the look-ahead row.
type pageSkip struct{ *base }

func wrapPageSkip(_ context.Context, b *base, _ model.Config) (model.Store, error) {
	return &pageSkip{base: b}, nil
}

// ListExecutions implements model.Store. The SQLite store fetches limit+1
// rows to learn whether another page exists and returns the first limit.
func (s *pageSkip) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	page, err := s.Store.ListExecutions(ctx, f)
	if err != nil || page.Next == "" {
		return page, err
	}
	off, err := model.DecodeOffsetCursor(f.Cursor)
	if err != nil {
		return model.Page{}, s.errorf("list executions: %w", err)
	}
	// BUG: the cursor counts the rows fetched (limit+1, the look-ahead row
	// included) instead of the rows returned, so each next page starts one
	// row late and the row at the boundary is never listed.
	page.Next = model.EncodeOffsetCursor(off + f.Limit + 1)
	return page, nil
}
