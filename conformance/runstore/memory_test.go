package runstore_test

import (
	"context"
	"testing"

	confrunstore "github.com/storecheck/storecheck/conformance/runstore"
	runmodel "github.com/storecheck/storecheck/model/runstore"
)

// The reference model must pass its own suite: the examples pin it to the
// contract's text, and the property compares it with a fresh copy of itself.
func TestReferenceConforms(t *testing.T) {
	confrunstore.Run(t, func(context.Context) (runmodel.Store, error) { return runmodel.NewReference(), nil })
}
