package replicalag

import (
	"context"
	"time"

	"github.com/storecheck/storecheck/backends/libsql"
	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/model"
)

// Cluster is what one level runs on: a primary and the replicas opened on
// it.
type Cluster interface {
	// NewReplica opens one client's replica store, syncing on the
	// schedule of the given stream.
	NewReplica(ctx context.Context, name string, stream uint64) (*replica.Store, error)
	// Primary is the primary as a store of its own, read at the heal.
	// The cluster owns it.
	Primary() model.Store
	// Close closes every replica still open and the primary's handle, and
	// removes every file, process and rule the cluster made.
	Close() error
}

// Faulter is what a cluster offers the fault phase. Stalling a replica is
// the replica's own (replica.Store.StallSyncs).
type Faulter interface {
	// CutReplica breaks one client's link to the primary; HealReplica
	// restores it.
	CutReplica(ctx context.Context, name string) error
	HealReplica(ctx context.Context, name string) error
	// KillPrimary stops the primary abruptly; RestartPrimary starts it
	// again on the same data.
	KillPrimary(ctx context.Context) error
	RestartPrimary(ctx context.Context) error
}

// Target is a backend a sweep can run on.
type Target struct {
	// Kind says what the replicas are, as reports show it, e.g.
	// "lagsim (simulation of embedded-replica lag on SQLite, not libSQL)".
	Kind string
	// Simulation is true when the replicas are simulated.
	Simulation bool
	// Top is the URL's lag: the top of the sweep.
	Top time.Duration
	// Jitter is the replicas' sync jitter, for the schedule digest.
	Jitter float64
	// Open opens a fresh, empty cluster at level lvl, seeded with seed.
	Open func(ctx context.Context, lvl Level, seed uint64) (Cluster, error)
	// Close releases what the target holds across levels (a server it
	// started); nil when nothing.
	Close func() error
	// Faults are the faults its clusters take in the fault phase, in plan
	// order (see Faults).
	Faults []string
	// Links are the link rates (bits per second) of the sweep's link
	// levels (Level.Link); none where the target cannot slow its link.
	Links []int64
	// Servers are the servers it runs on, as they describe themselves.
	Servers []string
}

// Level is what a cluster is opened for.
type Level struct {
	// Lag is the replicas' mean sync interval (give or take their
	// jitter); 0 syncs before every read.
	Lag time.Duration
	// Link, when set, slows the link between the replicas and the primary
	// to that many bits per second (a real token bucket in the kernel).
	Link int64
	// Label names the level in the server's log file.
	Label string
}

// PrimaryPauser is a cluster whose primary can be frozen (SIGSTOP) and
// thawed.
type PrimaryPauser interface {
	PausePrimary(ctx context.Context) error
	ResumePrimary(ctx context.Context) error
}

// ReplicaCrasher is a cluster that can run a replica client in a process
// of its own, kill that process mid-sync and reopen its file here.
type ReplicaCrasher interface {
	StartReplicaProcess(ctx context.Context, name string) error
	KillReplicaProcess(ctx context.Context, name string, delay time.Duration) (int64, error)
	ReopenReplica(ctx context.Context, name string, stream uint64) (*libsql.ReopenedReplica, error)
}
