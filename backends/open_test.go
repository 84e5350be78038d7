package backends

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// TestOpenSchemes opens every scheme, file databases in a directory whose
// name a file: URI would misread, and checks each file is where it was
// asked. What follows a ? in a file URL is its query (synchronous=).
func TestOpenSchemes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a b%20c#d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{
		"memory:",
		"sqlite::memory:",
		"sqlite:" + filepath.Join(dir, "a.db") + "?synchronous=full",
		"libsql:" + filepath.Join(dir, "b.db"),
		"libsql:" + filepath.Join(dir, "c.db") + "?synchronous=extra",
		"libsql::memory:",
	} {
		t.Run(url, func(t *testing.T) {
			ctx := context.Background()
			s, err := Open(ctx, url, model.DefaultConfig())
			if err != nil && strings.Contains(err.Error(), "without cgo") {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			exe := &model.Execution{ID: "a"}
			if err := s.Save(ctx, exe); err != nil || exe.Version != 1 {
				t.Fatalf("save: %v, version %d", err, exe.Version)
			}
			for setting, level := range map[string]int{"synchronous=full": 2, "synchronous=extra": 3} {
				if !strings.Contains(url, setting) {
					continue
				}
				var got int
				db := s.(interface{ DB() *sql.DB }).DB()
				if err := db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&got); err != nil || got != level {
					t.Errorf("PRAGMA synchronous = %d (%v), want %d for %s", got, err, level, setting)
				}
			}
			_, path, _ := strings.Cut(url, ":")
			if path, _, _ = strings.Cut(path, "?"); strings.HasPrefix(path, dir) {
				if _, err := os.Stat(path); err != nil {
					t.Errorf("no database at %s: %v", path, err)
				}
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing", "x.db")
	cases := []struct{ url, want string }{
		{"nope:x", `unknown backend "nope:" (known: memory, sqlite, libsql, `},
		{"nope:", `unknown backend "nope:" (known: memory, sqlite, libsql, `},
		{"store.db", `backend URL "store.db" has no scheme`},
		{":memory:", `has no scheme`},
		{"", `has no scheme`},
		{"memory:x", `takes nothing after the colon`},
		{"sqlite:", `sqlite: empty database path`},
		{"libsql:", `libsql: empty database path`},
		{"sqlite:/tmp/x.db?sync=full", `sqlite: unknown URL parameter "sync"`},
		{"libsql:/tmp/x.db?synchronous=fast", `libsql: synchronous must be OFF, NORMAL, FULL or EXTRA, got "fast"`},
		// Two settings are no setting: the last was taken silently.
		{"sqlite:/tmp/x.db?synchronous=full&synchronous=off", `sqlite: parameter "synchronous" given 2 times`},
		{"sqlite:" + missing, `does not exist`},
		{"libsql:" + missing, `does not exist`},
		{"exec:", `backend exec: no command`},
		{"exec:python3 'x", `backend exec: unterminated single quote`},
		{"exec:/nonexistent/adapter", `adapter "/nonexistent/adapter": start:`},
		// A broken reader or writer the catalogue does not have is refused
		// before any server starts.
		{"libsql+replica:/tmp/x.db?read_mutant=nope", `libsql+replica: read_mutant: unknown replica read mutant "nope" (known: [flip-flop keeps-deleted mixed-source torn-replica])`},
		{"libsql+replica:/tmp/x.db?mutant=nope", `libsql+replica: mutant: unknown replica mutant "nope" (known: [`},
	}
	for _, c := range cases {
		s, err := Open(context.Background(), c.url, model.DefaultConfig())
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded, want %q", c.url, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%q) = %q, want one line containing %q", c.url, err, c.want)
		}
		if strings.HasPrefix(c.url, "libsql+replica:") {
			if err := Validate(c.url); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate(%q) = %v, want %q", c.url, err, c.want)
			}
		}
	}
}

// A file URL that sets synchronous= twice is refused, as every other URL
// refuses a repeated parameter, not opened with the last setting.
func TestRepeatedSynchronousIsRefused(t *testing.T) {
	dir := t.TempDir()
	for _, scheme := range []string{"sqlite", "libsql", "runs+sqlite"} {
		url := scheme + ":" + filepath.Join(dir, "x.db") + "?synchronous=full&synchronous=off"
		want := scheme + `: parameter "synchronous" given 2 times`
		if err := Validate(url); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(%q) = %v, want %q", url, err, want)
		}
	}
}

func TestSchemeExamples(t *testing.T) {
	for _, s := range Schemes() {
		if strings.Contains(s.Description, "\n") {
			t.Errorf("%s: the description is not one line", s.Name)
		}
		if !strings.HasPrefix(s.Example, s.Name+":") {
			t.Errorf("example %q is not a %s: URL", s.Example, s.Name)
		}
	}
}

// TestWithLogDirKeepsFailedServersLogs: a backend that starts its own
// server, told a log folder, leaves the server's log there when the server
// fails to start, and the error points at it (not at a folder the failed
// open has already removed).
func TestWithLogDirKeepsFailedServersLogs(t *testing.T) {
	bindir, err := os.MkdirTemp("", "storecheck-fake-servers-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bindir) })
	if err := os.Chmod(bindir, 0o755); err != nil { // rqlited may run as a user of its own
		t.Fatal(err)
	}
	fake := func(name, script string) string {
		path := filepath.Join(bindir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	rqlited := fake("rqlited", "echo 'fake rqlited: cannot start' >&2\nexit 3\n")
	sqld := fake("sqld", "[ \"$1\" = --version ] && { echo 'sqld sqld 0.0.0-fake'; exit 0; }\necho 'fake sqld: cannot start' >&2\nexit 3\n")
	for _, c := range []struct{ url, log, says string }{
		{"rqlite+process:?nodes=1&rqlited=" + rqlited, "n1.log", "fake rqlited: cannot start"},
		{"libsql+replica:" + filepath.Join(t.TempDir(), "r.db") + "?sqld=" + sqld + "&net=loopback&auth=none", "sqld.log", "fake sqld: cannot start"},
	} {
		scheme, _, _ := strings.Cut(c.url, ":")
		t.Run(scheme, func(t *testing.T) {
			logs := filepath.Join(t.TempDir(), "logs")
			s, err := Open(WithLogDir(context.Background(), logs), c.url, model.DefaultConfig())
			if err == nil {
				s.Close()
				t.Fatal("opened a backend whose server exits at once")
			}
			if strings.Contains(err.Error(), "without cgo") {
				t.Skip(err)
			}
			if !strings.Contains(err.Error(), logs) {
				t.Errorf("error %q does not point at %s", err, logs)
			}
			b, rerr := os.ReadFile(filepath.Join(logs, c.log))
			if rerr != nil || !strings.Contains(string(b), c.says) {
				t.Errorf("%s after the failed open: %q, %v", c.log, b, rerr)
			}
		})
	}
}

// TestCoresAndFreshness: what a run on each kind of URL keeps busy,
// whether its runs share state, and whether a server of its own runs
// beside its stores, as the runner budgets them.
func TestCoresAndFreshness(t *testing.T) {
	for _, c := range []struct {
		url       string
		cores     float64
		fresh     bool
		inProcess bool
	}{
		{"memory:", 1, true, true},
		{"sqlite:/tmp/s.db", 1, false, true},
		{"libsql:/tmp/s.db", 1, false, true},
		{"lagsim:/tmp/p.db?lag=10ms", 1, false, true},
		{"mutant:blind-write", 1, false, true},
		{"runs+sqlite:/tmp/r.db", 1, false, true},
		{"runs+mutant:claim-by-age", 1, false, true},
		{"libsql+replica:/tmp/r.db?primary=http://127.0.0.1:8080", 1, false, false},
		{"exec:python3 store.py", 1, false, false},
		{"rqlite+process:?nodes=3", 1.5, true, false},
		{"rqlite+process:?nodes=5", 2.5, true, false},
		{"rqlite+process:?nodes=1", 1, true, false},
		{"rqlite+container:?nodes=3", 1.5, true, false},
		{"rqlite://127.0.0.1:4001", 1, false, false},
	} {
		tg, err := Resolve(c.url)
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		if tg.Cores != c.cores || tg.Fresh != c.fresh || tg.InProcess != c.inProcess {
			t.Errorf("%s: cores %.1f, fresh %v, in process %v; want %.1f, %v, %v", c.url, tg.Cores, tg.Fresh, tg.InProcess, c.cores, c.fresh, c.inProcess)
		}
	}
}
