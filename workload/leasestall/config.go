package leasestall

import (
	"fmt"
	"sync/atomic"
	"time"

	workerproc "github.com/storecheck/storecheck/worker"
)

// Config sets the size of a run. Zero values mean the defaults.
type Config struct {
	// Seed makes every random choice (which worker stalls, how many steps
	// a worker takes, priorities).
	Seed uint64
	// Sessions is how many sessions the create phase races on (default 6),
	// and CreateClients how many creates race per session (default 4).
	Sessions      int
	CreateClients int
	// Workers is the number of background worker goroutines (default 4),
	// and WorkerOps caps each one's operations (default 400).
	Workers   int
	WorkerOps int
	// Rounds is the number of stall rounds in goroutine mode (default 9:
	// three of each kind).
	Rounds int
	// Lease is the lease workers take: logical time in goroutine mode
	// (default 1s), wall time in process mode (default 300ms).
	Lease time.Duration

	// Processes is the number of worker processes (default 3); Duration
	// how long their traffic runs (default 3s); Stall how long one stays
	// stopped (default 3 × Lease).
	Processes int
	Duration  time.Duration
	Stall     time.Duration
	// WorkerCommand starts the worker processes; nil means the running
	// binary (worker.Self), which must call worker.Main with Role first
	// thing.
	WorkerCommand *workerproc.Command
	// URL is the run-store URL worker processes open.
	URL string

	// Progress, when set, counts operations as they are recorded.
	Progress *atomic.Int64
}

func (c Config) withDefaults(processes bool) Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Sessions, 6)
	def(&c.CreateClients, 4)
	def(&c.Workers, 4)
	def(&c.WorkerOps, 400)
	def(&c.Rounds, 9)
	def(&c.Processes, 3)
	if c.Lease == 0 {
		c.Lease = time.Second
		if processes {
			c.Lease = 300 * time.Millisecond
		}
	}
	if c.Duration == 0 {
		c.Duration = 3 * time.Second
	}
	if c.Stall == 0 {
		c.Stall = 3 * c.Lease
	}
	return c
}

func (c Config) check() error {
	for _, v := range []struct {
		name string
		n    int
	}{{"sessions", c.Sessions}, {"create clients", c.CreateClients}, {"workers", c.Workers}, {"worker ops", c.WorkerOps},
		{"rounds", c.Rounds}, {"processes", c.Processes}} {
		if v.n < 1 {
			return fmt.Errorf("lease-stall: %s must be at least 1, got %d", v.name, v.n)
		}
	}
	if c.Lease <= 0 || c.Duration <= 0 || c.Stall <= c.Lease {
		return fmt.Errorf("lease-stall: lease and duration must be positive and the stall longer than the lease (lease %v, stall %v)", c.Lease, c.Stall)
	}
	return nil
}
