package replica

import (
	"context"
	"time"

	"github.com/storecheck/storecheck/model"
)

// Cluster is a primary and the replicas opened on it: what one level of a
// replica workload runs on.
type Cluster interface {
	// NewReplica opens one client's replica store, syncing on the
	// schedule of the given stream.
	NewReplica(ctx context.Context, name string, stream uint64) (*Store, error)
	// Primary is the primary as a store of its own, read at the heal.
	// The cluster owns it.
	Primary() model.Store
	// Close closes every replica still open and the primary's handle, and
	// removes every file, process and rule the cluster made.
	Close() error
}

// Set is a backend whose clients read from replicas: it opens a fresh
// cluster per level of a workload.
type Set struct {
	// Kind says what the replicas are, as reports show it.
	Kind string
	// Simulation is true when the replicas are simulated.
	Simulation bool
	// Top is the URL's lag: the top of a sweep.
	Top time.Duration
	// Jitter is the replicas' sync jitter, for a schedule digest.
	Jitter float64
	// Open opens a fresh, empty cluster at level lvl, seeded with seed.
	Open func(ctx context.Context, lvl Level, seed uint64) (Cluster, error)
	// Close releases what the set holds across levels; nil when nothing.
	Close func() error
	// Controls are the faults its clusters can take (see the Control
	// constants), in the order a fault plan injects them.
	Controls []Control
	// Links are the rates (bits per second) its link can be slowed to
	// (Level.Link); none where it cannot.
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
	// Label names the level in a server's log file.
	Label string
}

// Control names a fault a cluster can take.
type Control string

// The controls, each with the interface its cluster implements.
const (
	// Stall: a replica's syncs stop (Store.StallSyncs); every cluster.
	Stall Control = "stall-replica"
	// Cut: a client's link to the primary breaks (Cutter).
	Cut Control = "cut-replica"
	// CrashClient: a replica client in a process of its own is killed
	// mid-sync and its file reopened (ClientCrasher).
	CrashClient Control = "crash-replica"
	// Pause: the primary freezes (PrimaryPauser).
	Pause Control = "pause-primary"
	// Kill: the primary dies and restarts on its data (PrimaryKiller).
	Kill Control = "kill-primary"
)

// Cutter breaks and restores one client's link to the primary.
type Cutter interface {
	CutReplica(ctx context.Context, name string) error
	HealReplica(ctx context.Context, name string) error
}

// PrimaryKiller stops the primary abruptly and starts it again on the same
// data.
type PrimaryKiller interface {
	KillPrimary(ctx context.Context) error
	RestartPrimary(ctx context.Context) error
}

// PrimaryPauser freezes the primary (SIGSTOP) and thaws it.
type PrimaryPauser interface {
	PausePrimary(ctx context.Context) error
	ResumePrimary(ctx context.Context) error
}

// Reopened is a replica client reopened on the file of a killed process.
type Reopened struct {
	*Store
	// Replica names the client.
	Replica string
	// Integrity is what the file's own integrity check said ("ok").
	Integrity string
	// Killed is the position the dead process last reported; Resumed the
	// position the reopened replica's first sync reached; Comparable is
	// false when the primary restarted in between (a new replication log
	// numbers its frames afresh).
	Killed, Resumed int64
	Comparable      bool
}

// ClientCrasher runs a replica client in a process of its own, kills that
// process mid-sync and reopens its file here.
type ClientCrasher interface {
	StartReplicaProcess(ctx context.Context, name string) error
	KillReplicaProcess(ctx context.Context, name string, delay time.Duration) (int64, error)
	ReopenReplica(ctx context.Context, name string, stream uint64) (*Reopened, error)
}

// Positioner is a cluster whose replicas know their replication position
// and can be read locally, table by table (real embedded replicas).
type Positioner interface {
	// PrimaryPosition is the primary's replication index now.
	PrimaryPosition(ctx context.Context) (int64, error)
	// Position is the replication position replica name's last sync
	// reached.
	Position(name string) (int64, bool)
	// LocalDump reads replica name's six tables from its own copy.
	LocalDump(ctx context.Context, name string) (*model.Dump, error)
}
