package linearizability

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/storecheck/storecheck/model"
)

// RecoveryBound is how long the heal reads may take, retries included: a
// store that does not answer them within it after the traffic (and the
// faults' heals) did not recover. A healed rqlite cluster elects a leader
// within its election timeout (about 2 s measured) and serves reads; 30 s
// leaves a margin of ten on a loaded two-core machine.
const RecoveryBound = 30 * time.Second

// Heal reads the final tables through c, which should come from
// Recorder.HealClient, once the traffic has stopped and faults are healed:
// every execution h mentions is loaded and its trace read; the outbox, the
// spawn queue and every timer (due_timers at math.MaxFloat64) are read; and
// every processed event id a commit of h carries is looked up. A failed
// read is retried until RecoveryBound has passed since the heal began; the
// error (wrapping ErrNotRecovered) says which read kept failing. The reads
// that failed stay in the history, as failed reads.
func Heal(ctx context.Context, c *Client, h History) error {
	return HealWithin(ctx, c, h, RecoveryBound)
}

// HealWithin is Heal with another bound than RecoveryBound (0 means
// RecoveryBound).
func HealWithin(ctx context.Context, c *Client, h History, bound time.Duration) error {
	if bound <= 0 {
		bound = RecoveryBound
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var execs []string
	seenExec := map[string]bool{}
	events := map[procKey]bool{}
	var probes []procKey
	for _, op := range h.Ops {
		if op.Execution != "" && !seenExec[op.Execution] {
			seenExec[op.Execution] = true
			execs = append(execs, op.Execution)
		}
		if op.Kind.IsCommit() && op.Input.EventID != "" {
			k := procKey{op.Execution, op.Input.EventID}
			if !events[k] {
				events[k] = true
				probes = append(probes, k)
			}
		}
	}
	reads := make([]func() error, 0, 2*len(execs)+3+len(probes))
	for _, e := range execs {
		reads = append(reads,
			func() error { _, err := c.Load(ctx, e); return err },
			func() error { _, err := c.ReadTrace(ctx, e); return err })
	}
	reads = append(reads,
		func() error { _, err := c.PendingOutbox(ctx); return err },
		func() error { _, err := c.PendingSpawns(ctx); return err },
		func() error { _, err := c.DueTimers(ctx, math.MaxFloat64); return err })
	for _, k := range probes {
		reads = append(reads, func() error { _, err := c.IsProcessed(ctx, k.exec, k.event); return err })
	}
	for i, read := range reads {
		if err := retry(ctx, read); err != nil {
			return fmt.Errorf("%w within %v: heal read %d of %d: %w", ErrNotRecovered, bound, i+1, len(reads), err)
		}
	}
	return nil
}

// ErrNotRecovered marks a store that did not answer the heal reads within
// RecoveryBound: a broken guarantee (availability), not a harness error.
var ErrNotRecovered = errors.New("the store did not serve the final reads")

// retry runs read until it succeeds or ctx ends, backing off between
// attempts (50 ms more each time, at most a second).
func retry(ctx context.Context, read func() error) error {
	for attempt := 1; ; attempt++ {
		err := read()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d attempts, the last: %w", attempt, err)
		case <-time.After(min(time.Duration(attempt)*50*time.Millisecond, time.Second)):
		}
	}
}

// A Replica is a store that serves its reads from a replica of the
// primary (see Operation.Replica): replica.Store is one.
type Replica interface {
	model.Store
	// Name names the replica in the history.
	Name() string
	// ReadYourWrites says whether its reads include its own writes.
	ReadYourWrites() bool
	// Sync brings it up to the primary now.
	Sync(ctx context.Context) error
}

// HealReplicas brings every replica up to the primary and loads each of
// execs from each of them through a heal client named after it, whose
// reads the convergence check compares with the primary's heal reads
// (ErrReplicaConvergence). Call it after Heal, with the faults healed.
func HealReplicas(ctx context.Context, rec *Recorder, replicas []Replica, execs []string) error {
	return HealReplicasWithin(ctx, rec, replicas, execs, RecoveryBound)
}

// HealReplicasWithin is HealReplicas with another bound than RecoveryBound
// (0 means RecoveryBound).
func HealReplicasWithin(ctx context.Context, rec *Recorder, replicas []Replica, execs []string, bound time.Duration) error {
	if bound <= 0 {
		bound = RecoveryBound
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for _, r := range replicas {
		if err := retry(ctx, func() error { return r.Sync(ctx) }); err != nil {
			return fmt.Errorf("%w within %v: sync replica %s: %w", ErrNotRecovered, bound, r.Name(), err)
		}
	}
	for _, r := range replicas {
		c := rec.NewClient(ClientOptions{Store: r, Replica: r.Name(), ReadYourWrites: r.ReadYourWrites(), Heal: true})
		for _, e := range execs {
			if err := retry(ctx, func() error { _, err := c.Load(ctx, e); return err }); err != nil {
				return fmt.Errorf("%w within %v: heal load of %s on replica %s: %w", ErrNotRecovered, bound, e, r.Name(), err)
			}
		}
	}
	return nil
}
