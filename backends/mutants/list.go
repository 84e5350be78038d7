package mutants

import (
	"context"
	"encoding/base64"
	"strings"

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

// pagePrefixSkip pages list_executions by key instead of by offset: its
// cursor is the last id a page returned, so a row inserted or deleted
// between two pages does not shift the next one.
type pagePrefixSkip struct{ *base }

func wrapPagePrefixSkip(_ context.Context, b *base, _ model.Config) (model.Store, error) {
	return &pagePrefixSkip{base: b}, nil
}

// keysetPrefix marks the mutant's cursors, which hold the last id listed.
const keysetPrefix = "key:"

// keysetMaxRows bounds the rows the mutant reads to make one page.
const keysetMaxRows = 1 << 16

// ListExecutions implements model.Store: the rows the filter selects, from
// the first id past the cursor's, limit at a time.
func (s *pagePrefixSkip) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	if err := model.CheckLimit(f.Limit); err != nil {
		return model.Page{}, s.errorf("list executions: %w", err)
	}
	var from string
	if f.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(f.Cursor)
		if err != nil || !strings.HasPrefix(string(b), keysetPrefix) {
			return model.Page{}, s.errorf("list executions: %w: cursor %q was not issued by this store", model.ErrInvalidArgument, f.Cursor)
		}
		// BUG: the next page starts at last + "\xff", meant as the
		// smallest string above the last id; it is above every id that
		// extends the last one too (e1 → e10), which are never listed.
		from = strings.TrimPrefix(string(b), keysetPrefix) + "\xff"
	}
	all := f
	all.Cursor, all.Limit = "", keysetMaxRows
	rows, err := s.Store.ListExecutions(ctx, all)
	if err != nil {
		return model.Page{}, err
	}
	var page model.Page
	for i, it := range rows.Items {
		if it.ID < from {
			continue
		}
		if len(page.Items) == f.Limit {
			last := page.Items[len(page.Items)-1].ID
			page.Next = base64.RawURLEncoding.EncodeToString([]byte(keysetPrefix + last))
			break
		}
		page.Items = append(page.Items, rows.Items[i])
	}
	return page, nil
}
