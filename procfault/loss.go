package procfault

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/storecheck/storecheck/model"
)

// A lossRule is what a recovery after a power cut may lack of the commits
// acknowledged since the last recovery: what the store's PRAGMA
// synchronous promises (in WAL mode).
type lossRule int

const (
	// keepAll: every acknowledged commit survives (FULL and EXTRA fsync the
	// WAL at every commit; and any setting across a process crash).
	keepAll lossRule = iota
	// keepPrefix: the last commits acknowledged may be lost, a suffix of
	// them, never one without an earlier one, never part of one, never a
	// damaged file (NORMAL syncs the WAL only at checkpoints, and WAL
	// frames are checksummed in a chain, so recovery stops at the first
	// frame that did not reach the disk); or, in their place, a prefix of
	// commits an earlier cut lost on the same confirmed tables
	// (branches.go).
	keepPrefix
	// keepNothing: nothing is promised (OFF never syncs): what was lost or
	// damaged is reported, and no guarantee is judged.
	keepNothing
)

// ruleFor is the loss rule of a PRAGMA synchronous setting ("" is the
// backends' default, NORMAL).
func ruleFor(synchronous string) (lossRule, error) {
	switch strings.ToUpper(synchronous) {
	case "FULL", "EXTRA":
		return keepAll, nil
	case "", "NORMAL":
		return keepPrefix, nil
	case "OFF":
		return keepNothing, nil
	}
	return 0, fmt.Errorf("synchronous %q is none of OFF, NORMAL, FULL, EXTRA", synchronous)
}

// String says what the rule promises, for reports.
func (r lossRule) String() string {
	switch r {
	case keepAll:
		return "every acknowledged commit survives"
	case keepPrefix:
		return "only a suffix of the last acknowledged commits may be lost, each whole, the file sound; commits an earlier cut lost may come back, whole and in order (reported)"
	default:
		return "nothing is promised; losses and damage are reported"
	}
}

// afterCut is what one recovery after a power cut found.
type afterCut struct {
	// Lost is how many commits acknowledged since the last recovery the
	// recovered store does not hold.
	Lost int
	// Applied says whether the commit in flight at the cut survived.
	Applied bool
	// Unexplained is set under keepNothing when the recovered store is
	// damaged or is no state the acknowledged commits leave: what it
	// says; the run starts again from an empty file.
	Unexplained string
	// CameBack counts the acknowledged writes an earlier cut (LostAt) lost
	// that this recovery holds again, in place of those since the last
	// recovery (branches.go).
	CameBack, LostAt int
}

// verifyCut checks the tables a worker recovered after a power cut under
// rule, and confirms what they hold. Under keepAll it is verify. Otherwise
// the surviving commits are the longest prefix of the pending ones whose
// rows are all there; the tables must then be exactly the reference with
// that prefix (and the commit in flight when nothing was lost), which
// rules out a later commit without an earlier one and a part of a commit.
// Failing that, they may be the reference with a prefix of a branch an
// earlier cut lost on the same confirmed tables (branches.go): that is
// allowed, and reported as commits that came back. The lost commits leave
// the ledger: no later recovery is asked for them.
func (l *ledger) verifyCut(ctx context.Context, rule lossRule, integrity string, got *model.Dump) (afterCut, error) {
	if rule == keepAll {
		applied, err := l.verify(ctx, integrity, got)
		return afterCut{Applied: applied}, err
	}
	cut := l.branches.next()
	since := len(l.pending) // acknowledged since the last recovery
	if integrity != "ok" {
		if rule == keepNothing {
			return l.unexplained(fmt.Sprintf("the file is damaged: integrity check says %q", integrity), since), nil
		}
		return afterCut{}, broke(ErrIntegrity, "PRAGMA integrity_check after the power cut: %s", integrity)
	}
	got.Sort()
	base, acked, pending, inflight := l.ref, slices.Clone(l.acked), l.pending, l.inflight
	t := indexTables(got)
	kept := 0
	for kept < len(l.pending) && t.durable(l.pending[kept]) == nil {
		kept++
	}
	lost := l.pending[kept:]
	l.pending = l.pending[:kept]
	l.acked = l.acked[:len(l.acked)-len(lost)]
	if len(lost) > 0 {
		l.inflight, l.stage = nil, "" // it came after the lost ones
	}
	applied, err := l.verify(ctx, integrity, got)
	if err != nil {
		found, ok, berr := l.fromBranch(ctx, got, base, acked[:len(acked)-len(pending)], since)
		switch {
		case berr != nil:
			return afterCut{}, berr
		case ok:
			return found, nil
		}
	}
	switch {
	case err != nil && rule == keepNothing:
		return l.unexplained(err.Error(), since), nil
	case err != nil && len(lost) > 0:
		return afterCut{}, fmt.Errorf("%w (the last %d acknowledged commits, from %s on, were lost at the cut, which %s allows)", err, len(lost), lost[0].token(), "synchronous=NORMAL")
	case err != nil:
		return afterCut{}, err
	}
	var flight []*wireCommit
	if inflight != nil {
		flight = []*wireCommit{inflight}
	}
	l.branches.after(cut, pending, flight, kept, applied)
	return afterCut{Applied: applied, Lost: len(lost)}, nil
}

// fromBranch looks for got among the tables a prefix of a lost branch
// leaves on the confirmed ones (base, after the commits confirmed); on a
// match the ledger moves onto them and every commit since the last
// recovery (since of them) is lost.
func (l *ledger) fromBranch(ctx context.Context, got *model.Dump, base *model.Reference, confirmed []*wireCommit, since int) (afterCut, bool, error) {
	for i, br := range l.branches.lost {
		ref := base.Clone()
		for n, c := range br.ops {
			if err := ref.Commit(ctx, c.Exe.Clone(), c.batch()); err != nil {
				break // the reference refuses it: no longer prefix can match
			}
			want, err := ref.Dump(ctx)
			if err != nil {
				return afterCut{}, false, fmt.Errorf("reference dump: %w", err)
			}
			if len(model.Diff(want, got, model.DiffOptions{Limit: 1})) > 0 {
				continue
			}
			back := min(n+1, br.acked)
			l.ref, l.pending, l.inflight, l.stage = ref, nil, nil, ""
			l.acked = append(confirmed, br.ops[:back]...)
			l.branches.cameBack(i, n+1)
			return afterCut{Lost: since, CameBack: back, LostAt: br.cut}, true, nil
		}
	}
	return afterCut{}, false, nil
}

// unexplained starts the ledger again from empty tables, for a store that
// kept nothing it promised (lost counts the commits acknowledged since the
// last recovery); the caller empties the file.
func (l *ledger) unexplained(why string, lost int) afterCut {
	*l = ledger{ref: model.NewReference(model.DefaultConfig()), notes: l.notes, total: l.total, branches: l.branches}
	l.branches.forget()
	return afterCut{Lost: lost, Unexplained: why}
}
