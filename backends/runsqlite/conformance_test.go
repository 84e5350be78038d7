package runsqlite

import (
	"context"
	"path/filepath"
	"testing"

	confrunstore "github.com/storecheck/storecheck/conformance/runstore"
	"github.com/storecheck/storecheck/model/runstore"
)

// TestConformance runs the run-store conformance suite on a database file;
// the suite opens it once and resets it between uses.
func TestConformance(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	confrunstore.Run(t, func(ctx context.Context) (runstore.Store, error) { return Open(ctx, path) })
}

// TestConformanceInMemory runs the suite on a private in-memory database.
func TestConformanceInMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("the file database covers the same SQL")
	}
	confrunstore.Run(t, func(ctx context.Context) (runstore.Store, error) { return Open(ctx, ":memory:") })
}
