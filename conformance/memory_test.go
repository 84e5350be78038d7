package conformance_test

import (
	"context"
	"testing"

	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/model"
)

// The reference model must pass its own suite: the examples pin it to the
// contract's text, and the property compares it with a fresh copy of itself.
func TestReferenceConforms(t *testing.T) {
	conformance.Run(t, func(_ context.Context, cfg model.Config) (model.Store, error) {
		return model.NewReference(cfg), nil
	})
}

// A store without Dump (model.Dumper is optional) is compared through its
// public reads. The reference seen that way must pass every example too:
// the dedupe example once failed with "dedupe ledger: want one row, got []"
// because its event id was not among those the reads probe.
func TestReferenceWithoutDumpConforms(t *testing.T) {
	conformance.Run(t, func(_ context.Context, cfg model.Config) (model.Store, error) {
		return struct{ model.Store }{model.NewReference(cfg)}, nil
	})
}
