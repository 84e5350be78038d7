//go:build cgo

package libsql

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"

	_ "github.com/tursodatabase/go-libsql" // registers the "libsql" driver
)

// Open opens (creating if needed) the libSQL database file at path, or a
// private one for ":memory:" (on a single connection), and creates the six
// tables. The directory must exist.
func Open(ctx context.Context, path string, cfg model.Config, opts ...Option) (*sqlstore.Store, error) {
	set := settings{Settings: dbfile.Defaults(), mode: Local}
	for _, o := range opts {
		o(&set)
	}
	switch set.mode {
	case Local:
	case Replica:
		return nil, fmt.Errorf("%s: open %q: replica mode is opened with OpenReplica (URL %s:PATH?primary=URL)", Name, path, ReplicaScheme)
	default:
		return nil, fmt.Errorf("%s: open %q: mode %d is not supported (only Local)", Name, path, set.mode)
	}
	if err := set.Check(Name); err != nil {
		return nil, err
	}
	if err := dbfile.CheckPath(Name, path); err != nil {
		return nil, err
	}
	memory := path == dbfile.Memory
	dsn, init := dbfile.FileURI(path), pragmas(set.Settings)
	if memory {
		dsn, init = dbfile.Memory, nil
	}
	conn, err := newInitConnector(dsn, init)
	if err != nil {
		return nil, fmt.Errorf("%s: open %q: %w", Name, path, sqlstore.OneLine(err))
	}
	db := sql.OpenDB(conn)
	conns := set.MaxConns
	if memory {
		conns = 1
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if set.Store.Name == "" {
		set.Store.Name = Name
	}
	s, err := sqlstore.New(ctx, db, cfg, set.Store)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: open %q: %w", Name, path, sqlstore.OneLine(err))
	}
	return s, nil
}

// pragmas are the statements every new connection to a file runs.
func pragmas(set dbfile.Settings) []string {
	var out []string
	for _, p := range set.Pragmas() {
		out = append(out, p.SQL())
	}
	return out
}
