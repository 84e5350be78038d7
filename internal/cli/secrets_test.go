package cli_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/storecheck/storecheck/internal/cli/clitest"

	"github.com/storecheck/storecheck/internal/cli"
)

// TestNoTokenInAnyOutput plants an auth token in the environment (where
// storecheck reads it) and, defensively, in backend URLs (where it must
// never be used), runs storecheck with each, and greps every file the
// runs wrote and everything they printed. A fake primary checks that the
// environment's token is really sent to the server.
func TestNoTokenInAnyOutput(t *testing.T) {
	const envToken = "sc-env-token-7f3a9c51"
	const urlToken = "sc-url-token-41b2d8e0"
	t.Setenv("LIBSQL_AUTH_TOKEN", envToken)
	t.Setenv("STORECHECK_TEST_TOKEN", envToken)

	var mu sync.Mutex
	var auth []string
	primary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "not a real sqld", http.StatusServiceUnavailable)
	}))
	t.Cleanup(primary.Close)

	dbs, outs := t.TempDir(), t.TempDir()
	small := []string{"--scenario", "replica-lag-conflict", "--seed", "3", "--clients", "2", "--executions", "1", "--ops", "40"}
	runs := [][]string{
		// The token from the environment, a primary that refuses: NOT RUN.
		{"--backend", "libsql+replica:" + filepath.Join(dbs, "a.db") + "?primary=" + primary.URL + "&token_env=STORECHECK_TEST_TOKEN"},
		{"--backend", "libsql+replica:" + filepath.Join(dbs, "b.db") + "?primary=" + primary.URL},
		// Tokens in URLs: refused before anything runs, without echoing them.
		{"--backend", "libsql+replica:" + filepath.Join(dbs, "c.db") + "?primary=" + primary.URL + "&authToken=" + urlToken},
		{"--backend", "libsql+replica:" + filepath.Join(dbs, "d.db") + "?primary=http://user:" + urlToken + "@127.0.0.1:1"},
		{"--backend", "lagsim:" + filepath.Join(dbs, "e.db") + "?lag=10ms&token=" + urlToken},
		// An adapter's command line is a backend URL too.
		{"--backend", "exec:python3 adapters/python/sqlite_store.py --token=" + urlToken},
		// A run that passes, with the token in the environment.
		{"--backend", "lagsim:" + filepath.Join(dbs, "f.db") + "?lag=10ms"},
	}
	var printed bytes.Buffer
	for i, args := range runs {
		out := filepath.Join(outs, string(rune('a'+i)))
		var stdout, stderr bytes.Buffer
		code := cli.Main(context.Background(), append(append([]string{"run", "--out", out}, args...), small...), &stdout, &stderr)
		t.Logf("run %d: exit %d\n%s%s", i, code, clitest.LastLines(stdout.String(), 3), stderr.String())
		printed.Write(stdout.Bytes())
		printed.Write(stderr.Bytes())
	}
	files := clitest.GrepSecrets(t, printed.Bytes(), []string{outs}, envToken, urlToken)
	if files < 10 {
		t.Errorf("the runs wrote only %d files: the grep proves little", files)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) == 0 {
		t.Fatalf("the fake primary was never called")
	}
	for _, a := range auth {
		if a != "Bearer "+envToken {
			t.Errorf("the primary got Authorization %q, want the environment's token", a)
		}
	}
}

// TestNoURLTokenInErrorsOrReasons puts a token where storecheck refuses
// one or cannot use it — a backend that takes no query, a server URL it
// rejects, the command line of an adapter that cannot start — and greps
// what each command printed and wrote: an error or a NOT RUN reason that
// quotes the URL, or only its query, must not quote the token.
func TestNoURLTokenInErrorsOrReasons(t *testing.T) {
	const token = "sc-url-token-93c1e7aa"
	outs := t.TempDir()
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"run", "--backend", "memory:?token=" + token}, cli.ExitUsage},
		{[]string{"run", "--backend", "runs+memory:?authToken=" + token}, cli.ExitUsage},
		{[]string{"run", "--backend", "rqlite+process://?token=" + token}, cli.ExitUsage},
		{[]string{"qualify", "--backends", "memory:?auth_token=" + token}, cli.ExitUsage},
		// The adapter cannot start: NOT RUN, with the command line in the reason.
		{[]string{"run", "--backend", "exec:/nonexistent/store --dsn libsql://db.example?authToken=" + token, "--scenario", "conformance"}, cli.ExitUsage},
		{[]string{"qualify", "--adapter", "/nonexistent/store --dsn libsql://u:" + token + "@db.example", "--scenario", "conformance"}, cli.ExitFail}, // nothing checked
	}
	var printed bytes.Buffer
	for i, c := range cases {
		args := append(c.args, "--seed", "1", "--out", filepath.Join(outs, string(rune('a'+i))))
		var stdout, stderr bytes.Buffer
		code := cli.Main(context.Background(), args, &stdout, &stderr)
		if code != c.code {
			t.Errorf("%q: exit %d, want %d\n%s", c.args, code, c.code, stderr.String())
		}
		printed.Write(stdout.Bytes())
		printed.Write(stderr.Bytes())
	}
	// Only the qualify of an adapter that cannot start writes reports (an
	// adapter command line carrying authToken= is refused before anything
	// is written), and those it writes are the ones that quote it.
	if files := clitest.GrepSecrets(t, printed.Bytes(), []string{outs}, token); files < 4 {
		t.Errorf("the runs wrote only %d files: the grep proves little", files)
	}
	if !bytes.Contains(printed.Bytes(), []byte("REDACTED")) {
		t.Errorf("nothing printed says REDACTED: were the URLs quoted at all?\n%s", printed.String())
	}
}
