package mutantrun

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/storecheck/storecheck/backends/lagsim"
	"github.com/storecheck/storecheck/backends/mutants"
)

// Kind says what a subject is expected to do.
type Kind string

const (
	// Mutant is a deliberately broken store: some scenario must fail it.
	Mutant Kind = "mutant"
	// Correct is a store that keeps the contract: no scenario may fail it.
	Correct Kind = "correct"
)

// Subject is one backend the catalogue runs.
type Subject struct {
	// Name is the catalogue name, e.g. "blind-write" or "sqlite".
	Name string
	Kind Kind
	// Breaks is the clause a mutant breaks, in one sentence; for a correct
	// backend, what it is.
	Breaks string
	// URL returns the backend URL of a fresh store whose files, if any, go
	// in dir (a folder the runner owns for one run). URL(".") is the form
	// reports show, which reproduces the run in the current folder.
	URL func(dir string) string
}

// Subjects returns every mutant of the catalogue, the replica simulation's
// torn-replica and short-sync, and every correct backend: the reference model, the SQLite
// and libSQL files, and the replica simulation itself (the replica
// mutants' correct twin, so that their catch is the mutant's, not the
// simulation's).
func Subjects() []Subject {
	var out []Subject
	for _, m := range mutants.Catalogue() {
		if !m.Correct {
			out = append(out, mutantSubject(m))
		}
	}
	out = append(out,
		Subject{Name: lagsim.MutantTornReplica, Kind: Mutant, Breaks: "replica reads are states of one prefix of the commits (stale, never torn): " +
			"the simulated embedded replica applies other clients' commits in two steps with reads in between, its executions and dedupe ledger one refresh ahead of its outbox, spawns, timers and trace, " +
			"while its own writes read back whole, so the sequential suite passes it and only the concurrent histories' prefix rule (replica read) can catch it.",
			URL: func(dir string) string { return lagsimURL(dir, lagsim.MutantTornReplica) }},
		Subject{Name: lagsim.MutantShortSync, Kind: Mutant, Breaks: "a replica's sync brings it to the primary: " +
			"the simulated embedded replica's sync reports success but stops at the primary's state of its previous sync (a sync bounded by the replication index of the round trip before), " +
			"while its own writes read back, so its reads look like more lag until the heal, whose loads find it behind the primary.",
			URL: func(dir string) string { return lagsimURL(dir, lagsim.MutantShortSync) }},
	)
	out = append(out, huntSubjects()...)
	out = append(out,
		Subject{Name: "memory", Kind: Correct, Breaks: "nothing: the in-memory reference model.",
			URL: func(string) string { return "memory:" }},
		Subject{Name: "sqlite", Kind: Correct, Breaks: "nothing: the SQLite store on a fresh file.",
			URL: func(dir string) string { return "sqlite:" + filepath.Join(dir, "store.db") }},
		Subject{Name: "libsql", Kind: Correct, Breaks: "nothing: the libSQL store on a fresh file.",
			URL: func(dir string) string { return "libsql:" + filepath.Join(dir, "store.db") }},
		Subject{Name: lagsim.Scheme, Kind: Correct, Breaks: "nothing: the simulated embedded replicas (one per client, refreshed every " + subjectLag + " on average) of a SQLite primary on a fresh file.",
			URL: func(dir string) string { return lagsimURL(dir, "") }},
	)
	for _, m := range mutants.Catalogue() {
		if m.Correct {
			out = append(out, mutantSubject(m))
		}
	}
	return out
}

// huntSubjects are the replica simulation's mutants of the third blind hunt
// (docs/DETECTION.md, "A third blind hunt: replica reads") that a default
// run catches on every seed of 1–10.
func huntSubjects() []Subject {
	hunt := []struct{ name, breaks string }{
		{lagsim.MutantFlipFlop, "a replica never shows less than it showed before: the simulated replica serves every other read from the snapshot before its newest (two copies behind one name), so it goes back in time; its own writes read back."},
		{lagsim.MutantRYWEarly, "read-your-writes: the sync after a write of the client serves the primary's state from before the write began (the index of the write's start), so the client loads its own commit undone."},
		{lagsim.MutantRYWCommitsOnly, "read-your-writes for every write: the sync after the client's ack_outbox, ack_spawn, delete_timer or append_trace is reported done and does nothing (commits keep theirs), so the client lists what it acknowledged."},
		{lagsim.MutantLostFrames, "a replica applies every commit whole: the outbox inserts whose seq is 3 mod 7 never reach the simulated replica, so it shows later commits without an earlier one's emit."},
		{lagsim.MutantReorderEmits, "a replica applies a commit's statements in order: of two adjacent seqs of one commit, each holds the other's event on the simulated replica (a commit's emits out of batch order)."},
		{lagsim.MutantShardedApply, "replica reads are states of one prefix of the commits: the simulated replica applies each execution's rows in a shard of its own, the two shards synced by turns, so one execution is ahead of another and of the outbox."},
		{lagsim.MutantKeepsDeleted, "replica reads are states of one prefix: the simulated replica's outbox and spawn listings merge every entry they listed before, forgotten only when its own client acknowledged it, so others' acks never reach it."},
		{lagsim.MutantMixedSource, "a replica never shows less than it showed before, of any table: is_processed is answered by the primary and every other read by the replica, so a client told an event is processed then loads a version before it."},
		{lagsim.MutantMidTxnStop, "no reader sees part of a commit: a sync of other clients' commits stops before the last outbox insert of the newest commit that has more than one."},
		{lagsim.MutantPositionAhead, "a replica's sync brings it to the primary and its position says what it holds: short-sync whose reported position is the one its sync saw at the primary, not that of the state it serves."},
	}
	out := make([]Subject, 0, len(hunt))
	for _, m := range hunt {
		out = append(out, Subject{Name: m.name, Kind: Mutant, Breaks: m.breaks, URL: func(dir string) string { return lagsimURL(dir, m.name) }})
	}
	return out
}

// subjectLag is the replicas' mean lag in the replica simulation's
// subjects: the lag docs/DETECTION.md measured torn-replica at.
const subjectLag = "200ms"

// lagsimURL is the replica simulation on a fresh primary file in dir, with
// mutant (none when "").
func lagsimURL(dir, mutant string) string {
	url := lagsim.Scheme + ":" + filepath.Join(dir, "primary.db") + "?lag=" + subjectLag
	if mutant != "" {
		url += "&mutant=" + mutant
	}
	return url
}

// mutantSubject is a catalogue entry opened as mutant:NAME, on a file in a
// folder of its own.
func mutantSubject(m mutants.Mutant) Subject {
	kind := Mutant
	if m.Correct {
		kind = Correct
	}
	url := mutants.Scheme + ":" + m.Name
	if m.OnFile {
		return Subject{Name: m.Name, Kind: kind, Breaks: m.Breaks, URL: func(dir string) string { return url + "?path=" + filepath.Join(dir, "store.db") }}
	}
	return Subject{Name: m.Name, Kind: kind, Breaks: m.Breaks, URL: func(string) string { return url }}
}

// Select returns the subjects named, in catalogue order; the error names an
// unknown one and lists the known.
func Select(all []Subject, names []string) ([]Subject, error) {
	want := map[string]bool{}
	for _, n := range names {
		if !known(all, n) {
			return nil, unknownSubject(all, n)
		}
		want[n] = true
	}
	var out []Subject
	for _, s := range all {
		if want[s.Name] {
			out = append(out, s)
		}
	}
	return out, nil
}

func known(all []Subject, name string) bool {
	for _, s := range all {
		if s.Name == name {
			return true
		}
	}
	return false
}

func unknownSubject(all []Subject, name string) error {
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
	}
	return fmt.Errorf("unknown catalogue entry %q (known: %s)", name, strings.Join(names, ", "))
}
