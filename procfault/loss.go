package procfault

import (
	"context"
	"fmt"
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
	// frame that did not reach the disk).
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
		return "only a suffix of the last acknowledged commits may be lost, each whole, the file sound"
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
}

// verifyCut checks the tables a worker recovered after a power cut under
// rule, and confirms what they hold. Under keepAll it is verify. Otherwise
// the surviving commits are the longest prefix of the pending ones whose
// rows are all there; the tables must then be exactly the reference with
// that prefix (and the commit in flight when nothing was lost), which
// rules out a later commit without an earlier one and a part of a commit.
// The lost commits leave the ledger: no later recovery is asked for them.
func (l *ledger) verifyCut(ctx context.Context, rule lossRule, integrity string, got *model.Dump) (afterCut, error) {
	if rule == keepAll {
		applied, err := l.verify(ctx, integrity, got)
		return afterCut{Applied: applied}, err
	}
	since := len(l.pending) // acknowledged since the last recovery
	if integrity != "ok" {
		if rule == keepNothing {
			return l.unexplained(fmt.Sprintf("the file is damaged: integrity check says %q", integrity), since), nil
		}
		return afterCut{}, broke(ErrIntegrity, "PRAGMA integrity_check after the power cut: %s", integrity)
	}
	got.Sort()
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
	switch {
	case err != nil && rule == keepNothing:
		return l.unexplained(err.Error(), since), nil
	case err != nil && len(lost) > 0:
		return afterCut{}, fmt.Errorf("%w (the last %d acknowledged commits, from %s on, were lost at the cut, which %s allows)", err, len(lost), lost[0].token(), "synchronous=NORMAL")
	case err != nil:
		return afterCut{}, err
	}
	return afterCut{Applied: applied, Lost: len(lost)}, nil
}

// unexplained starts the ledger again from empty tables, for a store that
// kept nothing it promised (lost counts the commits acknowledged since the
// last recovery); the caller empties the file.
func (l *ledger) unexplained(why string, lost int) afterCut {
	*l = ledger{ref: model.NewReference(model.DefaultConfig()), notes: l.notes, total: l.total}
	return afterCut{Lost: lost, Unexplained: why}
}
