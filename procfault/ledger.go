package procfault

import (
	"context"
	"fmt"
	"strings"

	"github.com/storecheck/storecheck/model"
)

// ledger is what the parent knows of the commits of a crash-recovery run,
// from the workers' reports: the reference model of every commit confirmed
// so far, the commits acknowledged since, and the one in flight when the
// last worker died.
type ledger struct {
	ref *model.Reference // the tables after every confirmed commit
	// acked lists every acknowledged commit of the run, in order; pending
	// those of the last cycle, not yet in ref.
	acked, pending []*wireCommit
	// inflight was called and not acknowledged: its outcome is unknown.
	// stage says how far it got (msgBegin or msgPreCommit).
	inflight *wireCommit
	stage    string
	// notes are commits that failed without a fault.
	notes []string
	// total counts the acknowledged commits of the run, those a power cut
	// lost (and acked no longer lists) included.
	total int
	// branches are what power cuts lost on top of ref (branches.go).
	branches branches[*wireCommit]
}

func newLedger() *ledger {
	return &ledger{ref: model.NewReference(model.DefaultConfig())}
}

// observe records one worker message.
func (l *ledger) observe(m message) {
	switch m.Type {
	case msgBegin:
		l.inflight, l.stage = m.Commit, msgBegin
	case msgPreCommit:
		if l.inflight != nil {
			l.stage = msgPreCommit
		}
	case msgAck:
		if l.inflight != nil {
			l.total++
			l.acked = append(l.acked, l.inflight)
			l.pending = append(l.pending, l.inflight)
		}
		l.inflight, l.stage = nil, ""
	case msgFail:
		l.notes = append(l.notes, fmt.Sprintf("commit %d failed without a fault: %s", m.N, m.Error))
		if m.NotApplied {
			l.inflight, l.stage = nil, ""
		}
	}
}

// verify checks the tables a worker recovered after the last crash against
// what was acknowledged, then confirms the commits they hold. It returns
// whether the commit in flight at the crash turned out applied. The checks
// run in order and the first broken guarantee is returned: integrity, then
// durability of every acknowledged commit, then atomicity of the one in
// flight, then the whole tables against the reference model.
func (l *ledger) verify(ctx context.Context, integrity string, got *model.Dump) (applied bool, err error) {
	if integrity != "ok" {
		return false, broke(ErrIntegrity, "PRAGMA integrity_check after the crash: %s", integrity)
	}
	got.Sort()
	without, with, err := l.candidates(ctx)
	if err != nil {
		return false, err
	}
	t := indexTables(got)
	for _, c := range l.acked {
		if err := t.durable(c); err != nil {
			return false, err
		}
	}
	if l.inflight != nil {
		if applied, err = t.atomic(l.inflight, l.stage); err != nil {
			return false, err
		}
	}
	next, err := matchTables(ctx, got, without, with, applied)
	if err != nil {
		return false, err
	}
	l.ref, l.pending, l.inflight, l.stage = next, nil, nil, ""
	return next == with, nil
}

// candidates are the tables the recovered store may hold: the confirmed
// ones with the acknowledged commits (without), and those with the commit
// in flight too (with; nil when none was, or it cannot apply).
func (l *ledger) candidates(ctx context.Context) (without, with *model.Reference, err error) {
	without = l.ref.Clone()
	for _, c := range l.pending {
		if err := without.Commit(ctx, c.Exe.Clone(), c.batch()); err != nil {
			return nil, nil, broke(ErrDurability, "the reference model refuses acknowledged commit %s: %v (the worker committed from a state the acknowledged history does not explain)", c.token(), err)
		}
	}
	if l.inflight != nil {
		with = without.Clone()
		if err := with.Commit(ctx, l.inflight.Exe.Clone(), l.inflight.batch()); err != nil {
			with = nil
		}
	}
	return without, with, nil
}

// matchTables returns the candidate got equals. When neither does, the
// error lists how got differs from the one the witnesses point to.
func matchTables(ctx context.Context, got *model.Dump, without, with *model.Reference, applied bool) (*model.Reference, error) {
	var diffs [2][]string
	for i, cand := range []*model.Reference{without, with} {
		if cand == nil {
			continue
		}
		want, err := cand.Dump(ctx)
		if err != nil {
			return nil, fmt.Errorf("reference dump: %w", err)
		}
		if diffs[i] = model.Diff(want, got, model.DiffOptions{Limit: 5}); len(diffs[i]) == 0 {
			return cand, nil
		}
	}
	d, which := diffs[0], "the acknowledged commits"
	if applied && with != nil {
		d, which = diffs[1], "the acknowledged commits and the one in flight"
	}
	return nil, broke(ErrDurability, "the recovered tables are not what %s leave: %s", which, strings.Join(d, "; "))
}
