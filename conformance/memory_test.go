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
