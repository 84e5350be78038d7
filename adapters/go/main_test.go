package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/model"
)

// serveArg makes the test binary this adapter: TestMain then runs main's
// code on stdin and stdout instead of the tests.
const serveArg = "serve-as-adapter"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == serveArg {
		os.Exit(adapterMain(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestSameAsInProcess: each backend gives the same conformance verdict,
// operation sequence and operation count through this adapter (opened as an
// exec: URL, like the CLI does) as in process.
func TestSameAsInProcess(t *testing.T) {
	for _, backend := range []string{"sqlite:{dir}/store.db", "memory:"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			inProcess := strings.ReplaceAll(backend, "{dir}", dir)
			viaAdapter := "exec:'" + os.Args[0] + "' " + serveArg + " --backend '" + backend + "'"
			cfg := conformance.CheckConfig{Seed: 11, Checks: 15}
			want, err := conformance.Check(ctx, opener(inProcess), cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := conformance.Check(ctx, opener(viaAdapter), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !want.Passed || !got.Passed {
				t.Fatalf("passed: in process %v, through the adapter %v: %s", want.Passed, got.Passed, got.Failure)
			}
			if want.Digest != got.Digest || want.Ops != got.Ops || want.Cases != got.Cases {
				t.Errorf("in process %s/%d ops/%d cases, through the adapter %s/%d ops/%d cases",
					want.Digest, want.Ops, want.Cases, got.Digest, got.Ops, got.Cases)
			}
		})
	}
}

func opener(url string) conformance.Opener {
	return func(ctx context.Context, cfg model.Config) (model.Store, error) {
		return backends.Open(ctx, url, cfg)
	}
}

// TestBadBackend: a backend URL the adapter cannot serve ends it with an
// error before any request.
func TestBadBackend(t *testing.T) {
	var stderr strings.Builder
	code := adapterMain([]string{"--backend", "nope:x"}, strings.NewReader(""), &strings.Builder{}, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), `unknown backend "nope:"`) {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}
