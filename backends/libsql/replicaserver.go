package libsql

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/storecheck/storecheck/backends/libsql/sqld"
)

// StartPrimary starts the sqld primary a URL without primary= asks for:
// the sqld binary (t.SQLD, $SQLD or PATH), else the image (t.Image or
// sqld.DefaultImage) if it is on this machine. The returned stop function
// stops it and removes its data. An error wrapping sqld.ErrUnavailable
// says why neither could run (the NOT RUN reason).
func StartPrimary(ctx context.Context, t ReplicaTarget) (sqld.Server, func() error, error) {
	p, err := sqld.Find(ctx, t.SQLD, t.Image)
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "storecheck-sqld-*")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: sqld data folder: %w", ReplicaScheme, err)
	}
	s, err := p.Start(ctx, dir)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("%s: %s: %w", ReplicaScheme, p.Name(), err), os.RemoveAll(dir))
	}
	stop := func() error { return errors.Join(s.Close(), os.RemoveAll(dir)) }
	return s, stop, nil
}
