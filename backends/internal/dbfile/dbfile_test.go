package dbfile

import (
	"strings"
	"testing"
)

func TestParseFile(t *testing.T) {
	for rest, want := range map[string]File{
		"/tmp/p.db":                    {Path: "/tmp/p.db"},
		"/tmp/p.db?synchronous=full":   {Path: "/tmp/p.db", Synchronous: "FULL"},
		"/tmp/p.db?synchronous=Normal": {Path: "/tmp/p.db", Synchronous: "NORMAL"},
		":memory:":                     {Path: ":memory:"},
	} {
		got, err := ParseFile("sqlite", rest)
		if err != nil || got != want {
			t.Errorf("ParseFile(%q) = %+v, %v; want %+v", rest, got, err, want)
		}
	}
	for _, rest := range []string{"/tmp/p.db?synchronous=fast", "/tmp/p.db?sync=full", "/tmp/p.db?%zz", ":memory:?synchronous=full"} {
		if _, err := ParseFile("sqlite", rest); err == nil || !strings.HasPrefix(err.Error(), "sqlite: ") {
			t.Errorf("ParseFile(%q): err %v, want one naming the backend", rest, err)
		}
	}
}

// A file URL written like a server's (libsql://host:port) is refused, not
// opened as a file at the root named after the host.
func TestCheckPathRefusesAHost(t *testing.T) {
	for _, path := range []string{"//127.0.0.1:1", "//tmp/x.db", "///tmp/x.db"} {
		err := Validate("libsql", path)
		if err == nil || !strings.Contains(err.Error(), "names a host") {
			t.Errorf("Validate(libsql, %q) = %v, want a refusal naming the host form", path, err)
		}
	}
	if err := Validate("libsql", t.TempDir()+"/x.db"); err != nil {
		t.Errorf("a plain file path refused: %v", err)
	}
}
