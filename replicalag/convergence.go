package replicalag

import (
	"context"
	"fmt"
	"strings"

	"github.com/storecheck/storecheck/model"
)

// guaranteeConvergence names the guarantee converge checks.
const guaranteeConvergence = "replica convergence"

// converge checks, after the heal synced every replica, that each is at
// the primary's replication position and holds exactly the primary's six
// tables (outbox and spawn seqs included: a replica is a copy of the
// primary's file, not a store of its own). It returns the violations, in
// words, and what it could not check.
func converge(ctx context.Context, cl Cluster, names []string) (violations, notes []string) {
	pos, ok := cl.(Positioner)
	if !ok {
		return nil, nil
	}
	primary, ok := cl.Primary().(model.Dumper)
	if !ok {
		return nil, []string{"the primary cannot dump its tables: replica tables not compared"}
	}
	want, err := primary.Dump(ctx)
	if err != nil {
		return nil, []string{fmt.Sprintf("dump the primary: %v: replica tables not compared", err)}
	}
	at, err := pos.PrimaryPosition(ctx)
	if err != nil {
		notes = append(notes, fmt.Sprintf("the primary's replication index could not be read (%v): positions not compared", err))
	}
	for _, name := range names {
		if err == nil {
			switch got, ok := pos.Position(name); {
			case !ok:
				violations = append(violations, fmt.Sprintf("%s: replica %s reports no replication position after the heal's sync", guaranteeConvergence, name))
			case got != at:
				violations = append(violations, fmt.Sprintf("%s: replica %s is at replication position %d after the heal's sync, the primary at %d", guaranteeConvergence, name, got, at))
			}
		}
		got, derr := pos.LocalDump(ctx, name)
		if derr != nil {
			violations = append(violations, fmt.Sprintf("%s: replica %s cannot be read after the heal: %v", guaranteeConvergence, name, derr))
			continue
		}
		if diff := model.Diff(want, got, model.DiffOptions{ExactSeqs: true, Limit: 3}); len(diff) > 0 {
			violations = append(violations, fmt.Sprintf("%s: replica %s differs from the primary after the heal: %s", guaranteeConvergence, name, strings.Join(diff, "; ")))
		}
	}
	return violations, notes
}
