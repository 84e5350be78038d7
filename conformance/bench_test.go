package conformance_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/model"
)

// BenchmarkSequence measures one conformance test case (a random sequence of
// about 30 operations, each compared with the reference, and all six tables
// compared after every step) per backend.
func BenchmarkSequence(b *testing.B) {
	for _, name := range []string{"memory", "sqlite", "libsql"} {
		b.Run(name, func(b *testing.B) {
			url := name + ":"
			if name != "memory" {
				url += filepath.Join(b.TempDir(), name+".db")
			}
			open := func(ctx context.Context, cfg model.Config) (model.Store, error) { return backends.Open(ctx, url, cfg) }
			var ops int64
			seed := uint64(0)
			for b.Loop() {
				seed++
				rep, err := conformance.Check(context.Background(), open, conformance.CheckConfig{Seed: seed, Checks: 1})
				if err != nil || !rep.Passed {
					b.Fatalf("sequence %d: %v %s", seed, err, rep.Failure)
				}
				ops += rep.Ops
			}
			b.ReportMetric(float64(ops)/float64(seed), "ops/sequence")
		})
	}
}
