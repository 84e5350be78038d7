// Package dbfile holds what the embedded SQLite-family backends (sqlite,
// libsql) share about opening a database file: the connection settings, their
// defaults, and the checks that turn a bad path into a clear error.
package dbfile

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Memory is the path that selects a private in-memory database.
const Memory = ":memory:"

// Settings configure every pooled connection of an embedded database.
type Settings struct {
	// BusyTimeout is how long a connection waits for a lock held by another
	// before failing with "database is locked".
	BusyTimeout time.Duration
	// Synchronous is PRAGMA synchronous: OFF, NORMAL, FULL or EXTRA.
	Synchronous string
	// MaxConns caps the connection pool (a :memory: database always uses one).
	MaxConns int
	// NoAutoCheckpoint turns SQLite's automatic checkpoints off (PRAGMA
	// wal_autocheckpoint = 0), for an owner that checkpoints the WAL itself.
	NoAutoCheckpoint bool
}

// Defaults are WAL-friendly settings: a 10 s busy timeout, synchronous
// NORMAL, eight pooled connections.
func Defaults() Settings {
	return Settings{BusyTimeout: 10 * time.Second, Synchronous: "NORMAL", MaxConns: 8}
}

// Check validates the settings, naming backend in the error.
func (s Settings) Check(backend string) error {
	switch strings.ToUpper(s.Synchronous) {
	case "OFF", "NORMAL", "FULL", "EXTRA":
	default:
		return fmt.Errorf("%s: synchronous must be OFF, NORMAL, FULL or EXTRA, got %q", backend, s.Synchronous)
	}
	if s.BusyTimeout < 0 {
		return fmt.Errorf("%s: busy timeout must not be negative, got %v", backend, s.BusyTimeout)
	}
	if s.MaxConns < 1 {
		return fmt.Errorf("%s: max connections must be at least 1, got %d", backend, s.MaxConns)
	}
	return nil
}

// Pragma is one PRAGMA assignment.
type Pragma struct{ Name, Value string }

// SQL returns the pragma as a statement.
func (p Pragma) SQL() string { return "PRAGMA " + p.Name + " = " + p.Value }

// Pragmas are what every pooled connection of a file database runs,
// busy_timeout first so that the others wait for locks too. journal_mode
// is persistent, so setting it again on each connection is a no-op.
func (s Settings) Pragmas() []Pragma {
	ps := []Pragma{
		{"busy_timeout", fmt.Sprint(s.BusyTimeout.Milliseconds())},
		{"synchronous", strings.ToUpper(s.Synchronous)},
		{"journal_mode", "WAL"},
	}
	if s.NoAutoCheckpoint {
		ps = append(ps, Pragma{"wal_autocheckpoint", "0"})
	}
	return ps
}

// CheckPath rejects an empty path and a file path whose directory does not
// exist, so that opening neither creates directories nor fails with the
// driver's "unable to open database file". Memory passes.
func CheckPath(backend, path string) error {
	if path == "" {
		return fmt.Errorf("%s: empty database path (give a file path, or %s)", backend, Memory)
	}
	if path == Memory {
		return nil
	}
	if strings.HasPrefix(path, "//") {
		// libsql://host:port reads as a server's URL; taken as a path it
		// would be a file at the root named after the host, and a run on
		// it would pass without ever reaching a server.
		return fmt.Errorf("%s: %q names a host (//HOST), not a database file: give the file's path, e.g. /tmp/store.db; "+
			"a server is reached through its own scheme ('storecheck backends' lists them)", backend, path)
	}
	dir := filepath.Dir(path)
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: open %q: directory %q does not exist", backend, path, dir)
	case err != nil:
		return fmt.Errorf("%s: open %q: %w", backend, path, err)
	case !info.IsDir():
		return fmt.Errorf("%s: open %q: %q is not a directory", backend, path, dir)
	}
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return fmt.Errorf("%s: open %q: is a directory", backend, path)
	}
	return nil
}

// FileURI returns the file: URI of path for drivers that open URIs (both
// modernc and go-libsql do): the characters that end or escape a URI path,
// %, ? and #, are percent-encoded, so a file named "a?b" is not opened as
// "a" with a query.
func FileURI(path string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(filepath.Clean(path))
}

// PathParam reads the query of a catalogue URL (NAME?path=FILE): path=FILE
// or nothing, and checks the path. label ("mutant:NAME") starts every error.
// "" means no path was given.
func PathParam(label, query string) (string, error) {
	values, err := url.ParseQuery(query)
	if err != nil {
		return "", fmt.Errorf("%s: bad parameters %q: %w", label, query, err)
	}
	path := ""
	for k, v := range values {
		if k != "path" || len(v) != 1 {
			return "", fmt.Errorf("%s: unknown or repeated parameter %q (only path=FILE)", label, k)
		}
		path = v[0]
		if err := CheckPath(label, path); err != nil {
			return "", err
		}
	}
	return path, nil
}

// A File is a file backend's URL after its scheme: a path and the settings
// its query overrides, e.g. "/tmp/p.db?synchronous=full".
type File struct {
	Path string
	// Synchronous is the URL's synchronous= in upper case; "" when the URL
	// names none (the backend's default, NORMAL, holds).
	Synchronous string
}

// ParseFile splits rest into the path and the settings of its query. The
// query may name synchronous (off, normal, full, extra); any other
// parameter, or one given twice, is an error, so that a typo is not
// silently a file name nor one setting silently another.
func ParseFile(backend, rest string) (File, error) {
	path, query, hasQuery := strings.Cut(rest, "?")
	f := File{Path: path}
	if !hasQuery {
		return f, nil
	}
	v, err := url.ParseQuery(query)
	if err != nil {
		return f, fmt.Errorf("%s: bad query %q: %w", backend, query, err)
	}
	for key, vals := range v {
		if len(vals) != 1 {
			return f, fmt.Errorf("%s: parameter %q given %d times", backend, key, len(vals))
		}
		switch key {
		case "synchronous":
			s := Settings{Synchronous: vals[0], BusyTimeout: 0, MaxConns: 1}
			if err := s.Check(backend); err != nil {
				return f, err
			}
			f.Synchronous = strings.ToUpper(s.Synchronous)
		default:
			return f, fmt.Errorf("%s: unknown URL parameter %q (a file URL takes synchronous=off|normal|full|extra)", backend, key)
		}
	}
	if f.Path == Memory && f.Synchronous != "" {
		return f, fmt.Errorf("%s: synchronous= is for a database file, not %s", backend, Memory)
	}
	return f, nil
}

// Validate checks a file URL: its query and its path.
func Validate(backend, rest string) error {
	f, err := ParseFile(backend, rest)
	if err != nil {
		return err
	}
	return CheckPath(backend, f.Path)
}
