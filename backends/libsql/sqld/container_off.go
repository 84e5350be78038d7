//go:build storecheck_nocontainers

package sqld

import (
	"context"
	"errors"
)

// NewContainer starts nothing in a build with the tag
// storecheck_nocontainers, the worker processes' binary, which leaves
// testcontainers-go out (see backends/rqlite/cluster/containers_off.go).
func NewContainer(context.Context, string) (Provider, error) {
	return nil, errors.New("this storecheck binary was built without container support (-tags storecheck_nocontainers); run the storecheck binary itself")
}
