package replicalag

import (
	"github.com/storecheck/storecheck/backends/replica"
)

// The sweep runs on a replica set (package backends resolves one from a
// backend URL): a fresh cluster per level, whose controls say which faults
// the fault phase can inject.
type (
	// Target is a backend a sweep can run on.
	Target = replica.Set
	// Cluster is what one level runs on.
	Cluster = replica.Cluster
	// Level is what a cluster is opened for.
	Level = replica.Level
	// Positioner is a cluster whose replicas know their position.
	Positioner = replica.Positioner
	// ReplicaCrasher runs replica clients in processes of their own.
	ReplicaCrasher = replica.ClientCrasher
	// PrimaryPauser freezes and thaws the primary.
	PrimaryPauser = replica.PrimaryPauser
)

// Faulter is a cluster whose clients' links can be cut and whose primary
// can be killed and restarted.
type Faulter interface {
	replica.Cutter
	replica.PrimaryKiller
}
