package mutants_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/model"
)

// The sequential suite itself catches these mutants (their concurrent
// catches, if any, are internal/mutantrun's): each failure names the
// guarantee its check holds the store to. They were missed by it until the
// check or the draw named here was added.
func TestConformanceCatches(t *testing.T) {
	for name, want := range map[string]string{
		// the seq ledger: an acked seq pending again is a reused seq
		"outbox-seq-reuse": "seqs must never be reused",
		// the event id pool holds ids that differ only in case
		"event-id-nocase": "store differs from the reference model",
		// the execution id pool holds e1 and E1, the timer paths a and A
		"execution-id-nocase": "store differs from the reference model",
		"timer-path-nocase":   "store differs from the reference model",
		// the execution id pool holds e10, which extends e1
		"page-prefix-skip": "store differs from the reference model",
	} {
		t.Run(name, func(t *testing.T) {
			open := func(ctx context.Context, cfg model.Config) (model.Store, error) {
				return backends.Open(ctx, "mutant:"+name, cfg)
			}
			for _, seed := range []uint64{1, 2, 3} {
				rep, err := conformance.Check(context.Background(), open, conformance.CheckConfig{Seed: seed, Checks: 100, ShrinkTime: 2 * time.Second})
				if err != nil {
					t.Fatalf("seed %d: harness: %v", seed, err)
				}
				if rep.Passed {
					t.Fatalf("seed %d: conformance passed mutant %s (%d cases, %d ops)", seed, name, rep.Cases, rep.Ops)
				}
				if !strings.Contains(rep.Failure, want) {
					t.Errorf("seed %d: failure %q does not say %q", seed, rep.Failure, want)
				}
			}
		})
	}
}
