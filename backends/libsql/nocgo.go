//go:build !cgo

package libsql

import (
	"context"
	"fmt"

	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// Open fails: go-libsql links a C library, and this binary was built
// without cgo.
func Open(ctx context.Context, path string, cfg model.Config, opts ...Option) (*sqlstore.Store, error) {
	return nil, fmt.Errorf("%s: open %q: this binary was built without cgo (CGO_ENABLED=0), which go-libsql needs", Name, path)
}
