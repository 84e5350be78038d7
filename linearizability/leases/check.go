package leases

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// Verdict is the outcome of checking a history.
type Verdict string

// The verdicts. Unknown is never to be read as Ok.
const (
	Ok      Verdict = "Ok"
	Illegal Verdict = "Illegal"
	Unknown Verdict = "Unknown"
)

// The guarantees the checks establish, as violations name them.
const (
	// GuaranteePastLease: a worker whose lease expired (it stalled, or the
	// clock passed it) has lost it: whatever it tries is rejected.
	GuaranteePastLease = "expired lease rejected"
	// GuaranteeStaleToken: once a claim of token t has returned, no
	// operation with a token below t succeeds.
	GuaranteeStaleToken = "stale fencing token rejected"
	// GuaranteeTokens: the claims of a run get strictly increasing tokens.
	GuaranteeTokens = "fencing tokens strictly increase"
	// GuaranteeRegister: each run's history linearizes against the
	// contract's lease/claim register, so no run is ever held by two live
	// leases.
	GuaranteeRegister = "one live lease per run"
)

// Violation is one broken guarantee and what shows it.
type Violation struct {
	Guarantee string
	Detail    string
}

func (v Violation) String() string { return v.Guarantee + ": " + v.Detail }

// Report is the result of Check.
type Report struct {
	Verdict    Verdict
	Violations []Violation
	// Ops is the number of operations; Runs the number of runs porcupine
	// checked; Illegal the runs it found no linearization for.
	Ops, Runs int
	Illegal   []string
	// Notes say what was not checked and why.
	Notes []string
	// Info is porcupine's linearization of each illegal run, for
	// porcupine.Visualize.
	Info map[string]porcupine.LinearizationInfo
}

// Guarantee names the first guarantee broken, or "".
func (r *Report) Guarantee() string {
	if len(r.Violations) == 0 {
		return ""
	}
	return r.Violations[0].Guarantee
}

// Options tunes Check.
type Options struct {
	// Timeout bounds porcupine on each run; 0 means a minute.
	Timeout time.Duration
}

// maxViolations caps the violations one check reports.
const maxViolations = 50

// Check runs the direct checks and then porcupine on each run's history.
// The history must contain every operation that touched its runs after
// they were created.
func Check(ctx context.Context, ops []Op, opt Options) *Report {
	if opt.Timeout == 0 {
		opt.Timeout = time.Minute
	}
	r := &Report{Ops: len(ops), Info: map[string]porcupine.LinearizationInfo{}}
	add := func(g, format string, a ...any) {
		if len(r.Violations) < maxViolations {
			r.Violations = append(r.Violations, Violation{Guarantee: g, Detail: fmt.Sprintf(format, a...)})
		}
	}
	// Root causes first: a token that did not grow makes a stale fence
	// look current, which makes an expired lease usable.
	claims := claimsByRun(ops)
	checkTokens(claims, add)
	checkStaleTokens(ops, claims, add)
	checkPastLease(ops, add)
	parts, skip := partition(ops)
	r.Notes = append(r.Notes, skip...)
	undecided := len(skip) > 0
	if len(skip) == 0 {
		for _, run := range sortedKeys(parts) {
			if ctx.Err() != nil {
				r.Notes = append(r.Notes, "porcupine stage interrupted")
				undecided = true
				break
			}
			r.Runs++
			res, info := porcupine.CheckOperationsVerbose(newModel(), parts[run], opt.Timeout)
			switch res {
			case porcupine.Illegal:
				r.Illegal = append(r.Illegal, run)
				r.Info[run] = info
				add(GuaranteeRegister, "run %s: its %d operations do not linearize against the lease/claim register", run, len(parts[run]))
			case porcupine.Unknown:
				undecided = true
				r.Notes = append(r.Notes, fmt.Sprintf("run %s: porcupine timed out after %v", run, opt.Timeout))
			}
		}
	}
	switch {
	case len(r.Violations) > 0:
		r.Verdict = Illegal
	case undecided:
		r.Verdict = Unknown
	default:
		r.Verdict = Ok
	}
	return r
}

// claimsByRun returns every successful claim, per run, by return time.
func claimsByRun(ops []Op) map[string][]Op {
	out := map[string][]Op{}
	for _, op := range ops {
		if op.Kind == Claim && op.Outcome == OK {
			out[op.Run] = append(out[op.Run], op)
		}
	}
	for _, cs := range out {
		slices.SortFunc(cs, func(a, b Op) int { return cmp.Compare(a.Return, b.Return) })
	}
	return out
}

func checkPastLease(ops []Op, add func(string, string, ...any)) {
	for _, op := range ops {
		if op.PastLease && op.Fenced() && op.Outcome == OK {
			add(GuaranteePastLease, "%s succeeded after the lease its worker was granted had expired", op)
		}
	}
}

func checkStaleTokens(ops []Op, claims map[string][]Op, add func(string, string, ...any)) {
	for _, op := range ops {
		if !op.Fenced() || op.Outcome != OK {
			continue
		}
		for _, c := range claims[op.Run] {
			if c.Return < op.Call && c.Token > op.Token {
				add(GuaranteeStaleToken, "%s succeeded after %s had returned", op, c)
				break
			}
		}
	}
}

func checkTokens(claims map[string][]Op, add func(string, string, ...any)) {
	for _, run := range sortedKeys(claims) {
		cs := claims[run]
		for i, a := range cs {
			for _, b := range cs[i+1:] {
				if a.Token == b.Token || (a.Return < b.Call && b.Token <= a.Token) {
					add(GuaranteeTokens, "run %s: %s, then %s", run, a, b)
				}
			}
		}
	}
}

// partition splits the history per run for porcupine: a successful claim
// belongs to the run it returned, a successful requeue to every run it
// returned (one copy each), the fenced operations to their run. Claims
// that found nothing and operations that provably changed nothing are left
// out. A claim or requeue whose outcome is unknown cannot be placed, and
// makes the porcupine stage skip; its reason is returned.
func partition(ops []Op) (map[string][]porcupine.Operation, []string) {
	parts := map[string][]porcupine.Operation{}
	unplaced := 0
	put := func(run string, op Op) {
		o := op
		parts[run] = append(parts[run], porcupine.Operation{ClientId: op.Client, Input: &o, Call: op.Call, Output: nil, Return: op.Return})
	}
	for _, op := range ops {
		switch {
		case op.Outcome == Failed || op.Outcome == None:
		case (op.Kind == Claim || op.Kind == Requeue) && op.Outcome == Indeterminate:
			unplaced++
		case op.Kind == Claim && op.Outcome == OK:
			put(op.Run, op)
		case op.Kind == Requeue && op.Outcome == OK:
			for _, run := range op.Requeued {
				one := op
				one.Run, one.Requeued = run, nil
				put(run, one)
			}
		case op.Fenced():
			put(op.Run, op)
		}
	}
	if unplaced > 0 {
		return nil, []string{fmt.Sprintf("porcupine stage skipped: %d claims or requeues have an unknown outcome and cannot be placed in a run", unplaced)}
	}
	return parts, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
