package procfault

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/backends/libsql"
	"github.com/storecheck/storecheck/backends/mutants"
	"github.com/storecheck/storecheck/backends/sqlite"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// storeSettings are what a worker opens its store with.
type storeSettings struct {
	hooks sqlstore.Hooks
	// busy is the busy timeout; 0 keeps the backend's (10 s).
	busy time.Duration
	// synchronous is PRAGMA synchronous; "" keeps the backend's (NORMAL).
	synchronous string
}

// openStore opens the store rawURL names in this process. sqlite: and libsql:
// files get the settings, hooks included; any other URL (a mutant) is opened
// as backends.Open does, without them. hooked says whether the hooks are
// installed.
func openStore(ctx context.Context, rawURL string, set storeSettings) (store model.Store, hooked bool, err error) {
	scheme, path, _ := strings.Cut(rawURL, ":")
	opts := sqlstore.Options{Hooks: set.hooks}
	var s *sqlstore.Store
	switch scheme {
	case sqlite.Name:
		o := []sqlite.Option{sqlite.WithStoreOptions(opts)}
		if set.busy > 0 {
			o = append(o, sqlite.WithBusyTimeout(set.busy))
		}
		if set.synchronous != "" {
			o = append(o, sqlite.WithSynchronous(set.synchronous))
		}
		s, err = sqlite.Open(ctx, path, model.DefaultConfig(), o...)
	case libsql.Name:
		o := []libsql.Option{libsql.WithStoreOptions(opts)}
		if set.busy > 0 {
			o = append(o, libsql.WithBusyTimeout(set.busy))
		}
		if set.synchronous != "" {
			o = append(o, libsql.WithSynchronous(set.synchronous))
		}
		s, err = libsql.Open(ctx, path, model.DefaultConfig(), o...)
	default:
		st, err := backends.Open(ctx, rawURL, model.DefaultConfig())
		return st, false, err
	}
	if err != nil {
		return nil, false, err
	}
	return s, true, nil
}

// dbOf returns the database under a SQL-backed store (the sqlite and libsql
// stores, and every mutant, which embeds one).
func dbOf(s model.Store) (*sql.DB, bool) {
	d, ok := s.(interface{ DB() *sql.DB })
	if !ok {
		return nil, false
	}
	return d.DB(), true
}

// integrityCheck runs PRAGMA integrity_check and returns its rows joined:
// "ok" for a sound database.
func integrityCheck(ctx context.Context, s model.Store) (string, error) {
	db, ok := dbOf(s)
	if !ok {
		return "", fmt.Errorf("the store has no SQL database to check")
	}
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return "", fmt.Errorf("integrity_check: %w", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var v any
		if err := rows.Scan(&v); err != nil {
			return "", fmt.Errorf("integrity_check: %w", err)
		}
		switch x := v.(type) {
		case []byte:
			lines = append(lines, string(x))
		default:
			lines = append(lines, fmt.Sprint(x))
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("integrity_check: %w", err)
	}
	return strings.Join(lines, "; "), nil
}

// filePath returns the database file a backend URL names, for the embedded
// backends and for mutants given ?path=FILE; ok is false for anything else
// (a server, an in-memory database, a mutant on a throw-away file).
func filePath(rawURL string) (path string, ok bool) {
	scheme, rest, _ := strings.Cut(rawURL, ":")
	switch scheme {
	case sqlite.Name, libsql.Name:
		return rest, rest != "" && rest != memoryPath
	case mutants.Scheme:
		_, query, _ := strings.Cut(rest, "?")
		v, err := url.ParseQuery(query)
		if err != nil || v.Get("path") == "" {
			return "", false
		}
		return v.Get("path"), true
	}
	return "", false
}

// memoryPath is the path of a private in-memory database, which no second
// process can open.
const memoryPath = ":memory:"

// hookable reports whether openStore installs hooks for rawURL.
func hookable(rawURL string) bool {
	scheme, _, _ := strings.Cut(rawURL, ":")
	return scheme == sqlite.Name || scheme == libsql.Name
}
