package procfault

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/storecheck/storecheck/chaos"
	"github.com/storecheck/storecheck/model/runstore"
)

// runsLedger is what the parent knows of a run store's ops in a power-loss
// run: those confirmed by a recovery, those acknowledged since, and the
// one in flight when the worker died.
type runsLedger struct {
	confirmed, pending []runsOp
	inflight           *runsOp
	total              int // acknowledged ops of the run, lost ones included
	notes              []string
	// branches are what power cuts lost on top of confirmed (branches.go).
	branches branches[runsOp]
}

func (l *runsLedger) observe(m message) {
	switch m.Type {
	case msgBegin:
		l.inflight = m.RunsOp
	case msgAck:
		if l.inflight != nil {
			l.pending = append(l.pending, *l.inflight)
			l.total++
		}
		l.inflight = nil
	case msgFail:
		l.notes = append(l.notes, fmt.Sprintf("op %d failed without a fault: %s", m.N, m.Error))
	}
}

// replay is the reference run store after ops.
func replay(ctx context.Context, ops []runsOp) (*runstore.Dump, error) {
	ref := runstore.NewReference()
	for _, op := range ops {
		if err := op.apply(ctx, ref); err != nil {
			return nil, fmt.Errorf("the reference model refuses %s: %w (the worker drew an op its acknowledged history does not allow)", op, err)
		}
	}
	d, err := ref.Dump(ctx)
	if err != nil {
		return nil, err
	}
	d.Sort()
	return d, nil
}

// verify judges the tables a worker recovered after a power cut under
// rule: they must be the reference after the confirmed ops and the
// acknowledged ones (all of them, under keepAll; a prefix, under
// keepPrefix), with or without the op in flight when none was lost, or
// else the reference after a prefix of a branch an earlier cut lost on the
// same confirmed ops (branches.go). It confirms what they hold and returns
// how many acknowledged ops were lost.
func (l *runsLedger) verify(ctx context.Context, rule lossRule, integrity string, got *runstore.Dump) (afterCut, error) {
	cut := -1
	if rule != keepAll {
		cut = l.branches.next()
	}
	since := len(l.pending)
	if integrity != "ok" {
		if rule == keepNothing {
			return l.unexplained(fmt.Sprintf("the file is damaged: integrity check says %q", integrity), since), nil
		}
		return afterCut{}, broke(ErrIntegrity, "PRAGMA integrity_check after the power cut: %s", integrity)
	}
	got.Sort()
	shortest := len(l.pending)
	if rule != keepAll {
		shortest = 0
	}
	var against *runstore.Dump // the tables with every acknowledged op, for the error
	for kept := len(l.pending); kept >= shortest; kept-- {
		ops := append(append([]runsOp(nil), l.confirmed...), l.pending[:kept]...)
		cands := [][]runsOp{ops}
		if kept == len(l.pending) && l.inflight != nil {
			cands = append(cands, append(append([]runsOp(nil), ops...), *l.inflight))
		}
		for i, cand := range cands {
			want, err := replay(ctx, cand)
			if err != nil {
				return afterCut{}, err
			}
			if against == nil {
				against = want
			}
			if len(runstore.Diff(want, got, 1)) == 0 {
				if rule != keepAll {
					l.branches.after(cut, l.pending, optional(l.inflight), kept, i == 1)
				}
				l.confirmed, l.pending, l.inflight = cand, nil, nil
				return afterCut{Lost: since - kept, Applied: i == 1}, nil
			}
		}
	}
	if found, ok, err := l.fromBranch(ctx, got, since); err != nil || ok {
		return found, err
	}
	diff := strings.Join(runstore.Diff(against, got, 3), "; ")
	if rule == keepNothing {
		return l.unexplained("the recovered tables are no state the acknowledged ops leave: "+diff, since), nil
	}
	what := "all the acknowledged writes"
	if rule == keepPrefix {
		what = "the acknowledged writes less a suffix of those since the last recovery"
	}
	return afterCut{}, broke(ErrDurability, "the recovered run store is not what %s leave (%d writes since the last recovery); against all of them: %s", what, since, diff)
}

// fromBranch looks for got among the tables a prefix of a lost branch
// leaves after the confirmed ops; on a match the ledger moves onto them and
// every op since the last recovery (since of them) is lost.
func (l *runsLedger) fromBranch(ctx context.Context, got *runstore.Dump, since int) (afterCut, bool, error) {
	for i, br := range l.branches.lost {
		for n := 1; n <= len(br.ops); n++ {
			cand := append(append([]runsOp(nil), l.confirmed...), br.ops[:n]...)
			want, err := replay(ctx, cand)
			if err != nil {
				break // the reference refuses it: no longer prefix can match
			}
			if len(runstore.Diff(want, got, 1)) > 0 {
				continue
			}
			l.confirmed, l.pending, l.inflight = cand, nil, nil
			l.branches.cameBack(i, n)
			return afterCut{Lost: since, CameBack: min(n, br.acked), LostAt: br.cut}, true, nil
		}
	}
	return afterCut{}, false, nil
}

// optional is the op in flight as a list of none or one.
func optional(op *runsOp) []runsOp {
	if op == nil {
		return nil
	}
	return []runsOp{*op}
}

// unexplained starts again from empty tables (the caller empties the file).
func (l *runsLedger) unexplained(why string, lost int) afterCut {
	*l = runsLedger{total: l.total, notes: l.notes, branches: l.branches}
	l.branches.forget()
	return afterCut{Lost: lost, Unexplained: why}
}

// runsPower is a run store's power-loss run in progress.
type runsPower struct {
	opt    PowerOptions
	url    string
	cycles int
	res    *PowerResult
	led    runsLedger
	power  *powerCut
}

// run makes the cycles: recover and verify, then ops until the kill, then
// the cut; a last worker only recovers.
func (r *runsPower) run(ctx context.Context) error {
	for c := 0; c <= r.cycles && r.res.Err == nil; c++ {
		if err := r.cycle(ctx, c, c == r.cycles); err != nil {
			return interrupted(ctx, err)
		}
	}
	r.res.Notes = append(r.res.Notes, r.led.notes...)
	r.res.Acked = r.led.total
	return nil
}

func (r *runsPower) fault(s string) {
	if r.opt.Fault != nil {
		r.opt.Fault(s)
	}
}

func (r *runsPower) cycle(ctx context.Context, c int, last bool) error {
	start := time.Now()
	if r.power.wipe {
		if err := r.power.wipeFile(); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(r.opt.Seed, 3<<32+uint64(c)))
	killAt, delay := 1+rng.IntN(maxTarget), uniform(rng, 2*time.Millisecond)
	cfg := workerConfig{Mode: modeRuns, URL: r.url, Seed: r.opt.Seed, Cycle: c, MaxCommits: maxCommits,
		LifeMS: workerLife.Milliseconds(), Verify: last}
	w, deadline, done, err := startCycle(ctx, r.opt.Command, cfg)
	if err != nil {
		return err
	}
	defer done()
	m, err := await(ctx, w, msgRecovered, deadline)
	if err != nil {
		return err
	}
	r.res.RecoveryTimes = append(r.res.RecoveryTimes, time.Duration(m.RecoveryUS)*time.Microsecond)
	if m.RunsDump == nil {
		return notRun("the worker reported no tables")
	}
	inflight := r.led.inflight != nil
	found, err := r.led.verify(ctx, r.power.rule, m.Integrity, m.RunsDump)
	r.power.recovered(found)
	if err != nil {
		r.res.Err = fmt.Errorf("after power cut %d: %w", c, err)
		return nil
	}
	if inflight && found.Applied {
		r.res.Applied++
	}
	if last {
		return nil
	}
	plan := fmt.Sprintf("at op %d after %v", killAt, delay.Round(time.Microsecond))
	r.fault(fmt.Sprintf("SIGKILL %d/%d: %s", c+1, r.cycles, plan))
	var kill <-chan time.Time
traffic:
	for {
		select {
		case m, ok := <-w.events:
			if !ok {
				return notRun("the worker exited before it was killed: %s", w.status())
			}
			r.led.observe(m)
			if m.Type == msgError {
				return notRun("the worker stopped: %s failed: %s", m.Stage, m.Error)
			}
			if kill == nil && m.Type == msgBegin && m.N == killAt {
				kill = time.After(delay)
			}
		case <-kill:
			break traffic
		case <-deadline:
			return notRun("the worker did not reach op %d within %v: %s", killAt, cycleTimeout, w.status())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if _, err := chaos.KillProcess.Inject(ctx, w.Process, nil); err != nil {
		return notRun("%v", err)
	}
	for _, m := range w.drain() {
		r.led.observe(m)
	}
	r.res.Cycles++
	if r.led.inflight != nil {
		r.res.InFlight++
	}
	r.res.CycleTimes = append(r.res.CycleTimes, time.Since(start))
	r.res.Cycle = append(r.res.Cycle, fmt.Sprintf("cycle %d: killed %s; %d ops acknowledged so far; %v",
		c, plan, r.led.total, time.Since(start).Round(time.Millisecond)))
	r.fault(fmt.Sprintf("power cut %d/%d", c+1, r.cycles))
	return r.power.cut(ctx)
}
