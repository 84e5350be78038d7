package runs_test

import (
	"context"
	"testing"

	confruns "github.com/storecheck/storecheck/conformance/runs"
	runmodel "github.com/storecheck/storecheck/model/runs"
)

// The reference model must pass its own suite: the examples pin it to the
// contract's text, and the property compares it with a fresh copy of itself.
func TestReferenceConforms(t *testing.T) {
	confruns.Run(t, func(context.Context) (runmodel.Store, error) { return runmodel.NewReference(), nil })
}
