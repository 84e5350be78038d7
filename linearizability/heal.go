package linearizability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/storecheck/storecheck/internal/wait"
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
// every processed event id a commit of h carries is looked up, by several
// heal clients at once (more clients like c). When h holds a write of
// unknown outcome, which may still land, the tables are read in rounds
// until two agree (settleGap, below). A failed
// read is retried until RecoveryBound has passed since the heal began; the
// error (wrapping ErrNotRecovered) says which read kept failing. The reads
// that failed stay in the history, as failed reads.
func Heal(ctx context.Context, c *Client, h History) error {
	return HealWithin(ctx, c, h, RecoveryBound)
}

// HealEnded is Heal for a history whose writers have all ended — every
// process that wrote exited before it is called — so that no write of
// unknown outcome can still land: the tables are read once, with no
// settling rounds.
func HealEnded(ctx context.Context, c *Client, h History) error {
	return heal(ctx, c, h, RecoveryBound, false)
}

// HealWithin is Heal with another bound than RecoveryBound (0 means
// RecoveryBound).
func HealWithin(ctx context.Context, c *Client, h History, bound time.Duration) error {
	return heal(ctx, c, h, bound, unknownWrites(h))
}

// heal reads the final tables, in settling rounds when settle is set.
func heal(ctx context.Context, c *Client, h History, bound time.Duration, settle bool) error {
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
	reads := tableReads(ctx, c, execs)
	rounds := 1
	if settle {
		rounds = settleRounds
	}
	var last []string
	for round := 1; ; round++ {
		seen := make([]string, len(reads))
		for i, read := range reads {
			err := retry(ctx, func() error {
				var err error
				seen[i], err = read()
				return err
			})
			if err != nil {
				return fmt.Errorf("%w within %v: heal read %d of %d: %w", ErrNotRecovered, bound, i+1, len(reads)+len(probes), err)
			}
		}
		if round >= rounds || slices.Equal(seen, last) {
			break
		}
		last = seen
		if !wait.Sleep(ctx, settleGap) {
			return fmt.Errorf("%w within %v: the final tables were still changing: %w", ErrNotRecovered, bound, ctx.Err())
		}
	}
	return probeProcessed(ctx, c, probes, bound, len(reads))
}

// A write whose outcome is unknown (indeterminate: the call timed out, the
// connection broke) may still be on its way when the traffic stops: in a
// server's socket, in a frozen node thawed by the faults' heal, in a
// forwarder that sends it again. If it lands between two heal reads, one
// read shows the tables without it and the next with it, and the checks,
// which read the heal reads as one final state, see its side-writes without
// its row (atomicity) on a correct store. So when the history has such a
// write, the heal reads the tables in rounds, settleGap apart, until a
// round shows exactly what the one before it showed (at most settleRounds
// rounds): the last round is the final state, and the earlier ones stay in
// the history as reads like any other. A write that lands later than that
// still can break the heal; a history without indeterminate writes is read
// once, as before.
const (
	settleGap    = 500 * time.Millisecond
	settleRounds = 10
)

// unknownWrites reports whether h holds a write of unknown outcome.
func unknownWrites(h History) bool {
	for i := range h.Ops {
		if h.Ops[i].Output.Outcome == OutcomeIndeterminate {
			return true
		}
	}
	return false
}

// tableReads are the heal's reads of the tables through c: every execution
// loaded and its trace read, the outbox, the spawn queue and every timer.
// Each returns what it read, as text, to compare rounds.
func tableReads(ctx context.Context, c *Client, execs []string) []func() (string, error) {
	reads := make([]func() (string, error), 0, 2*len(execs)+3)
	for _, e := range execs {
		reads = append(reads,
			func() (string, error) { return shown(c.Load(ctx, e)) },
			func() (string, error) { return shown(c.ReadTrace(ctx, e)) })
	}
	return append(reads,
		func() (string, error) { return shown(c.PendingOutbox(ctx)) },
		func() (string, error) { return shown(c.PendingSpawns(ctx)) },
		func() (string, error) { return shown(c.DueTimers(ctx, math.MaxFloat64)) })
}

// shown is a read's answer as text.
func shown[T any](v T, err error) (string, error) {
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("heal: describe an answer: %w", err)
	}
	return string(raw), nil
}

// healProbers is how many clients look up the processed event ids at once.
// A run's commits carry thousands of event ids, and a server answers each
// lookup in a round trip: one client took 6 s of a 39 s rqlite fault run
// for them (docs/PERFORMANCE.md).
const healProbers = 8

// probeProcessed looks up every probe's event with is_processed, shared
// among healProbers heal clients like c (c the first), each looking up its
// share one after another, as any client's calls go. The store is quiescent
// by now, so the order of the lookups does not matter; each is retried as
// the other heal reads are. before is how many heal reads came before, for
// the error's count.
func probeProcessed(ctx context.Context, c *Client, probes []procKey, bound time.Duration, before int) error {
	n := min(healProbers, len(probes))
	if n == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		once  sync.Once
		first error // the first lookup to give up: the bound passed, or the run was stopped
	)
	var wg sync.WaitGroup
	for w := range n {
		client := c
		if w > 0 {
			client = c.sibling()
		}
		wg.Go(func() {
			for i := w; i < len(probes) && ctx.Err() == nil; i += n {
				k := probes[i]
				read := func() error { _, err := client.IsProcessed(ctx, k.exec, k.event); return err }
				if err := retry(ctx, read); err != nil {
					once.Do(func() {
						first = fmt.Errorf("%w within %v: heal read %d of %d: %w", ErrNotRecovered, bound, before+i+1, before+len(probes), err)
						cancel()
					})
					return
				}
			}
		})
	}
	wg.Wait()
	return first
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
