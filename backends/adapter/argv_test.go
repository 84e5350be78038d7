package adapter

import (
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	cases := []struct {
		line string
		want []string
	}{
		{"python3 adapters/python/sqlite_store.py", []string{"python3", "adapters/python/sqlite_store.py"}},
		{"  a \t b\n c  ", []string{"a", "b", "c"}},
		{`go run ./adapters/go --backend 'sqlite:{dir}/store.db'`, []string{"go", "run", "./adapters/go", "--backend", "sqlite:{dir}/store.db"}},
		{`a 'b c' "d e" f\ g`, []string{"a", "b c", "d e", "f g"}},
		{`'it''s' "say \"hi\"" "\$HOME" "\x"`, []string{"its", `say "hi"`, "$HOME", `\x`}},
		{`$HOME ~ * "" ''`, []string{"$HOME", "~", "*", "", ""}},
		{"a\\\nb", []string{"ab"}},
		{`x'y'"z"`, []string{"xyz"}},
		{"", nil},
	}
	for _, c := range cases {
		got, err := Split(c.line)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Split(%q) = %q, %v; want %q", c.line, got, err, c.want)
		}
	}
	for _, bad := range []struct{ line, want string }{
		{`a 'b`, "unterminated single quote"},
		{`a "b`, "unterminated double quote"},
		{`a \`, "trailing backslash"},
	} {
		if _, err := Split(bad.line); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Split(%q) error %v, want %q", bad.line, err, bad.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for rest, want := range map[string]string{
		"":           "no command",
		"   ":        "no command",
		"python3 'x": "unterminated single quote",
	} {
		if err := Validate(rest); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(%q) = %v, want %q", rest, err, want)
		}
	}
	if err := Validate("python3 adapters/python/sqlite_store.py --broken no-cas"); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

// An adapter's command line is written into every report, reproduce line
// and log: one that carries a credential (--token=…, authToken=…,
// --password …) is refused, without repeating its value, as a secret in
// a libsql+replica URL is.
func TestValidateRefusesCredentials(t *testing.T) {
	const secret = "sc-adapter-secret-93d1"
	for _, line := range []string{
		"python3 a.py --token=" + secret,
		"python3 a.py authToken=" + secret,
		"python3 a.py --auth-token " + secret,
		"python3 a.py --password " + secret,
		"./store -api_key=" + secret,
		"./store --db x DB_PASSWORD=" + secret,
	} {
		err := Validate(line)
		if err == nil || !strings.Contains(err.Error(), "looks like a credential") || strings.Contains(err.Error(), secret) {
			t.Errorf("Validate(%q) = %v; want a refusal that does not repeat the value", line, err)
		}
	}
	for _, line := range []string{
		"python3 a.py --broken no-cas",
		"python3 a.py --token-file /run/secrets/t", // a path, not the secret
		"python3 a.py --token-file=/run/secrets/t",
		"python3 a.py --tokens", // a flag with no value after it
		"./store --key-column id --mode=fast",
	} {
		if err := Validate(line); err != nil {
			t.Errorf("Validate(%q) = %v; want nil", line, err)
		}
	}
}
