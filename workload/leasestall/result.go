package leasestall

import (
	"context"
	"fmt"

	"github.com/storecheck/storecheck/linearizability/leases"
	"github.com/storecheck/storecheck/model/runstore"
)

// GuaranteeNewHolder: the worker that claimed a run after a stall holds a
// live lease, so its checkpoint and finish succeed.
const GuaranteeNewHolder = "the new lease holder is served"

// GuaranteeClaimOrder: claim_next takes the queued run of highest
// priority; goroutine mode's victim, claiming alone, must get its round's
// run.
const GuaranteeClaimOrder = "claim takes the highest-priority queued run"

// GuaranteeInterrupt: an interrupt makes the run wait and ends its
// holder's lease; the holder's fenced calls are rejected from then on.
const GuaranteeInterrupt = "an interrupt ends the holder's lease"

// GuaranteeVersion: a change made against a version the run has left is
// a conflict.
const GuaranteeVersion = "a stale expected version is a conflict"

// GuaranteeRequeue: requeue_expired_leases puts every running run whose
// lease expired at its now back in the queue; goroutine mode's stalled
// victim's run must be among those the takeover's sweep returns.
const GuaranteeRequeue = "a sweep requeues every run whose lease expired"

// GuaranteeDecideOnce: a decided interrupt cannot be decided again.
const GuaranteeDecideOnce = "an interrupt is decided once"

// GuaranteeExpiry: an overdue interrupt expires, rejected, and times its
// waiting run out.
const GuaranteeExpiry = "an overdue interrupt times its run out"

// GuaranteeCheckpoints: a checkpoint whose sequence skips a number is a
// conflict, so a run's checkpoints are numbered without gaps.
const GuaranteeCheckpoints = "checkpoints numbered without gaps"

// GuaranteeTables prefixes a violation of the tables' invariants
// (runstore.Invariants: gap-free numbering, one active run per session, tokens
// in the claim events).
const GuaranteeTables = "table invariants"

// Result is what a run established.
type Result struct {
	// Mode is "goroutines" or "processes".
	Mode string
	// Verdict is leases.Ok only when every check passed and porcupine
	// decided every run.
	Verdict leases.Verdict
	// Violations lists every broken guarantee; the first is the headline.
	Violations []leases.Violation
	// Notes say what happened that is not a violation (a round that could
	// not stall its victim, a stage skipped).
	Notes  []string
	Counts Counts
	// History is every recorded operation; Report porcupine's verdict.
	History []leases.Op
	Report  *leases.Report
}

// Counts say how much the run exercised.
type Counts struct {
	Ops    int // recorded operations
	Claims int // successful claims
	Stalls int // faults injected: victims paused or processes stopped
	// PastLease is how many operations workers made past their lease (all
	// must fail), and Takeovers how many of those came after another claim
	// of the run had returned (the stale-token case proper).
	PastLease int
	Takeovers int
	// Interrupts is how many holders had their run interrupted under them
	// (goroutine mode; their fenced calls must all fail).
	Interrupts int
	Runs       int // runs porcupine checked
}

// finish checks the history and the store's tables and assembles the
// result; found are violations the workload saw itself.
func finish(ctx context.Context, mode string, store runstore.Store, ops []leases.Op, found []leases.Violation, notes []string) (*Result, error) {
	rep := leases.Check(ctx, ops, leases.Options{})
	res := &Result{Mode: mode, History: ops, Report: rep, Notes: append(notes, rep.Notes...)}
	res.Violations = append(append(res.Violations, rep.Violations...), found...)
	if d, ok := store.(runstore.Dumper); ok {
		dump, err := d.Dump(ctx)
		if err != nil {
			return nil, fmt.Errorf("lease-stall: dump the tables: %w", err)
		}
		dump.Sort()
		for _, p := range runstore.Invariants(dump) {
			res.Violations = append(res.Violations, leases.Violation{Guarantee: GuaranteeTables, Detail: p})
		}
	} else {
		res.Notes = append(res.Notes, "the store cannot dump its tables: their invariants were not checked")
	}
	res.Counts = count(ops)
	res.Counts.Runs = rep.Runs
	switch {
	case len(res.Violations) > 0:
		res.Verdict = leases.Illegal
	default:
		res.Verdict = rep.Verdict
	}
	return res, nil
}

// count tallies a history.
func count(ops []leases.Op) Counts {
	c := Counts{Ops: len(ops)}
	claims := map[string][]leases.Op{}
	for _, op := range ops {
		if op.Kind == leases.Claim && op.Outcome == leases.OK {
			c.Claims++
			claims[op.Run] = append(claims[op.Run], op)
		}
	}
	for _, op := range ops {
		if !op.PastLease {
			continue
		}
		c.PastLease++
		for _, cl := range claims[op.Run] {
			if cl.Token > op.Token && cl.Return < op.Call {
				c.Takeovers++
				break
			}
		}
	}
	return c
}

// Summary is one line about the result.
func (r *Result) Summary() string {
	return fmt.Sprintf("%s: %d ops, %d claims, %d stalls, %d operations past their lease (%d after a takeover), %d holders interrupted, %d runs checked",
		r.Mode, r.Counts.Ops, r.Counts.Claims, r.Counts.Stalls, r.Counts.PastLease, r.Counts.Takeovers, r.Counts.Interrupts, r.Counts.Runs)
}
