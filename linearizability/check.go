package linearizability

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Verdict is the outcome of checking a history.
type Verdict string

const (
	// Ok: every partition linearizes and every global check passed.
	Ok Verdict = "Ok"
	// Illegal: some guarantee is broken; Report.Err names which.
	Illegal Verdict = "Illegal"
	// Unknown: the linearizability checker ran out of time on some partition
	// and no other check failed. Never to be read as Ok.
	Unknown Verdict = "Unknown"
)

// Options tunes Check.
type Options struct {
	// Timeout bounds the porcupine stage; 0 means DefaultTimeout. A
	// partition not decided in time makes the verdict Unknown.
	Timeout time.Duration
	// Workers is how many partitions are checked at once; 0 means
	// GOMAXPROCS.
	Workers int
}

// provenTimeout bounds porcupine once a violation is already proven.
const provenTimeout = 10 * time.Second

// DefaultTimeout is the porcupine budget when Options gives none.
const DefaultTimeout = 5 * time.Minute

// maxViolations caps how many violations one report lists.
const maxViolations = 200

// Report is the result of Check.
type Report struct {
	Verdict Verdict
	// Err joins every violation (each a *Violation wrapping its guarantee);
	// nil when none. errors.Is(r.Err, ErrLostUpdate) tells whether that
	// guarantee broke.
	Err        error
	Violations []*Violation
	// Ops is the number of operations; Partitions the number of porcupine
	// partitions checked.
	Ops, Partitions int
	// Illegal and TimedOut name the partitions ("e1/register") porcupine
	// found no linearization for, or gave up on.
	Illegal, TimedOut []string
	// LinearizationTime and GlobalTime are the time spent in porcupine and
	// in the global checks.
	LinearizationTime, GlobalTime time.Duration
	// Notes say what was not checked and why.
	Notes []string
	// Replica describes the reads replicas served; nil when there were
	// none (see replica.go).
	Replica *ReplicaStats
}

// Guarantee names the first guarantee broken, in AllGuarantees' order; ""
// when none.
func (r *Report) Guarantee() string {
	if g := Guarantees(r.Err); len(g) > 0 {
		return g[0]
	}
	return ""
}

// Check validates h's assumptions, finds each execution's winning commits
// from the witnesses (settling indeterminate operations, see resolve.go),
// checks every partition with porcupine, then runs the other global checks.
// The error is for a history that cannot be checked (ErrMalformed); a broken
// guarantee is a verdict, not an error.
func Check(ctx context.Context, h History, opt Options) (*Report, error) {
	if err := Validate(h); err != nil {
		return nil, err
	}
	rep := &Report{Ops: len(h.Ops)}
	start := time.Now()
	g, res, err := prepareGlobal(h, rep)
	if err != nil {
		return nil, err
	}
	rep.GlobalTime = time.Since(start)

	start = time.Now()
	popt := opt
	if len(rep.Violations) > 0 && (popt.Timeout == 0 || popt.Timeout > provenTimeout) {
		// The verdict is already Illegal (a lost update proven from the
		// witnesses); porcupine only adds evidence, so it gets a short leash.
		popt.Timeout = provenTimeout
	}
	// The rows checks read the history and the checker's own tables, never
	// porcupine's: they run beside it, into a report of their own that is
	// merged after porcupine's findings, so the report is the same as if
	// they ran after it.
	rows := &Report{}
	g.rep = rows
	var rowsTime time.Duration
	var rowsErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.Now()
		rowsErr = g.checkRows(ctx)
		rowsTime = time.Since(t)
	}()
	checkPartitions(ctx, h, popt, rep, res)
	rep.LinearizationTime = time.Since(start)
	<-done
	if rowsErr != nil {
		// Cut short (an interrupt): what they did not check is unknown,
		// and a report without it would read as a verdict.
		return nil, fmt.Errorf("linearizability: the checks of the tables and reads stopped before their end: %w", rowsErr)
	}
	g.rep = rep
	rep.GlobalTime += rowsTime
	rep.merge(rows)

	if len(rep.Violations) > 0 {
		errs := make([]error, len(rep.Violations))
		for i, v := range rep.Violations {
			errs[i] = v
		}
		rep.Err = errors.Join(errs...)
	}
	switch {
	case rep.Err != nil:
		rep.Verdict = Illegal
	case len(rep.TimedOut) > 0:
		rep.Verdict = Unknown
	default:
		rep.Verdict = Ok
	}
	return rep, nil
}

// CheckFile loads a JSON-lines history and checks it: the offline re-check
// of a saved run.
func CheckFile(ctx context.Context, path string, opt Options) (*Report, error) {
	h, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	return Check(ctx, h, opt)
}

// merge appends what a later stage found, into its own report, to r.
func (r *Report) merge(later *Report) {
	for _, v := range later.Violations {
		if len(r.Violations) >= maxViolations {
			break
		}
		r.Violations = append(r.Violations, v)
	}
	r.Notes = append(r.Notes, later.Notes...)
	if later.Replica != nil {
		r.Replica = later.Replica
	}
}

// add appends a violation, up to maxViolations.
func (r *Report) add(guarantee error, exec, format string, args ...any) {
	if len(r.Violations) >= maxViolations {
		return
	}
	r.Violations = append(r.Violations, &Violation{Guarantee: guarantee, Execution: exec, Msg: fmt.Sprintf(format, args...)})
}

// Validate checks the assumptions every later stage relies on: each
// operation well formed, and each client's operations sequential, with none
// after an indeterminate one (which never returns).
func Validate(h History) error {
	if h.Meta.TraceMax < 0 {
		return fmt.Errorf("%w: negative trace_max %d", ErrMalformed, h.Meta.TraceMax)
	}
	// A recorded history lists each client's operations in the order
	// they were called: then comparing each with the client's one before
	// it in the history is the whole check, one pass with no sorting.
	last := map[int]int{} // client → index of its latest operation so far
	inOrder := true
	for i := range h.Ops {
		op := &h.Ops[i]
		if err := op.validate(); err != nil {
			return fmt.Errorf("%w: operation %d: %v", ErrMalformed, i, err)
		}
		if j, ok := last[op.Client]; ok && op.Call <= h.Ops[j].returnTime() {
			inOrder = false
		}
		last[op.Client] = i
	}
	if inOrder {
		return nil
	}
	byClient := map[int][]int{}
	for i := range h.Ops {
		byClient[h.Ops[i].Client] = append(byClient[h.Ops[i].Client], i)
	}
	for client, idx := range byClient {
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(h.Ops[a].Call, h.Ops[b].Call) })
		for j := 1; j < len(idx); j++ {
			prev, op := &h.Ops[idx[j-1]], &h.Ops[idx[j]]
			if op.Call <= prev.returnTime() {
				return fmt.Errorf("%w: client %d: operation %d (%s, call %d) overlaps operation %d (%s, return %d)",
					ErrMalformed, client, idx[j], op.Kind, op.Call, idx[j-1], prev.Kind, prev.returnTime())
			}
		}
	}
	return nil
}

// decide returns search's result, or Unknown as soon as ctx is done.
// porcupine's search takes a timeout, not a context, so without this an
// interrupt would wait for the partition being searched — up to the whole
// check's timeout. The abandoned search goes on in the background until
// its own timeout ends it; its result is dropped.
func decide(ctx context.Context, search func() porcupine.CheckResult) porcupine.CheckResult {
	done := make(chan porcupine.CheckResult, 1)
	go func() { done <- search() }()
	select {
	case r := <-done:
		return r
	case <-ctx.Done():
		return porcupine.Unknown
	}
}

// checkPartitions runs porcupine on every partition, Workers at a time,
// within the timeout, and records illegal and undecided partitions.
func checkPartitions(ctx context.Context, h History, opt Options, rep *Report, res resolution) {
	keys, groups := partitionIndex(h.Ops, res)
	rep.Partitions = len(keys)
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	m := newModel(h.Meta.TraceMax)
	m.Partition = nil // each call is one partition already: porcupine need not split it again
	results := make([]porcupine.CheckResult, len(keys))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(keys)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				left := time.Until(deadline)
				if left <= 0 || ctx.Err() != nil {
					results[i] = porcupine.Unknown
					continue
				}
				ops := partitionOps(h.Ops, keys[i], groups[i], res)
				results[i] = decide(ctx, func() porcupine.CheckResult { return porcupine.CheckOperationsTimeout(m, ops, left) })
			}
		}()
	}
	for i := range keys {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, k := range keys {
		switch results[i] {
		case porcupine.Illegal:
			rep.Illegal = append(rep.Illegal, k.String())
			g := ErrLinearizability
			what := "no linearization of its register operations exists (a stale read, a lost update or a wrong conflict)"
			var atNS int64
			if k.part == partTrace {
				g, what = ErrTraceRing, "no linearization of its trace appends and reads exists"
			} else if s := findStaleRead(h.Ops, k.exec); s != nil {
				what, atNS = s.describe(), s.read.Call
			}
			rep.add(g, k.exec, "execution %s: %s", k.exec, what)
			if n := len(rep.Violations); n > 0 && rep.Violations[n-1].Execution == k.exec {
				rep.Violations[n-1].AtNS = atNS
			}
		case porcupine.Unknown:
			rep.TimedOut = append(rep.TimedOut, k.String())
		}
	}
	if n := len(rep.TimedOut); n > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("porcupine did not decide %d partitions within %v: %s", n, timeout, strings.Join(rep.TimedOut, ", ")))
	}
	if err := ctx.Err(); err != nil {
		rep.Notes = append(rep.Notes, "linearizability check stopped early: "+err.Error())
	}
	took := 0 // res.ret also holds acknowledged winners observed before they returned
	for op := range res.ret {
		if op.Output.Outcome == OutcomeIndeterminate {
			took++
		}
	}
	if n := len(res.drop) + took + len(res.anon); n > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d indeterminate operations settled by witnesses: %d had no effect, %d took effect, %d unseen appends counted",
			n, len(res.drop), took, len(res.anon)))
	}
}
