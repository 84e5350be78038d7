//go:build !cgo

package libsql

import (
	"context"
	"fmt"
	"time"

	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/worker"
)

// ReplicaCluster needs cgo; without it OpenReplicaCluster fails.
type ReplicaCluster struct{}

// ClusterOptions are as with cgo.
type ClusterOptions struct {
	Primary   string
	Server    *Primary
	OwnServer bool
	Interval  time.Duration
	Seed      uint64
	Writer    Writer
	Reader    Reader
	Workers   *worker.Command
}

func errNoCgo() error {
	return fmt.Errorf("%s: this binary was built without cgo (CGO_ENABLED=0), which go-libsql needs", ReplicaScheme)
}

// OpenReplicaCluster fails without cgo.
func OpenReplicaCluster(context.Context, ReplicaTarget, model.Config, ClusterOptions) (*ReplicaCluster, error) {
	return nil, errNoCgo()
}

// OpenReplica fails without cgo.
func OpenReplica(context.Context, string, model.Config, Mutants) (model.Store, error) {
	return nil, errNoCgo()
}

// The methods below exist so that code using a cluster builds without cgo;
// no cluster can be opened.

func (*ReplicaCluster) Primary() model.Store { return nil }
func (*ReplicaCluster) NewReplica(context.Context, string, uint64) (*replica.Store, error) {
	return nil, errNoCgo()
}
func (*ReplicaCluster) CutReplica(context.Context, string) error  { return errNoCgo() }
func (*ReplicaCluster) HealReplica(context.Context, string) error { return errNoCgo() }
func (*ReplicaCluster) KillPrimary(context.Context) error         { return errNoCgo() }
func (*ReplicaCluster) RestartPrimary(context.Context) error      { return errNoCgo() }
func (*ReplicaCluster) Close() error                              { return nil }

// ReplicaSyncWorker fails without cgo.
func ReplicaSyncWorker(context.Context, *worker.Child) error { return errNoCgo() }
