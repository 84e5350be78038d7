//go:build storecheck_nocontainers

package cluster

import (
	"context"
	"errors"
)

// A build with the tag storecheck_nocontainers — the binary the worker
// processes of crash-recovery, power-loss, writer-stall and lease-stall run
// (make build), which never start a container — leaves testcontainers-go
// out: its package initialisation lists every process of the machine, a
// third of a worker's start-up time (docs/PERFORMANCE.md). Here a
// container cluster cannot start.

// errNoContainers says why.
var errNoContainers = errors.New("this storecheck binary was built without container support (-tags storecheck_nocontainers); run the storecheck binary itself")

// Containers is the container cluster of the other builds; in this one it
// is never made.
type Containers struct{ Cluster }

// DockerAvailable says that this build starts no container.
func DockerAvailable(context.Context) error { return errNoContainers }

// StartContainers starts nothing in this build.
func StartContainers(context.Context, ContainerConfig) (*Containers, error) {
	return nil, errNoContainers
}

// Leftovers finds nothing: this build creates no container.
func Leftovers(context.Context, string) ([]string, error) { return nil, nil }
