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
