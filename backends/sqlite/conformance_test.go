package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/model"
)

// TestConformance runs the full conformance suite on a database file; the
// suite opens it once and resets it between uses.
func TestConformance(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conformance.db")
	conformance.Run(t, func(ctx context.Context, cfg model.Config) (model.Store, error) {
		return Open(ctx, path, cfg)
	})
}
