package rapidrun

import (
	"reflect"
	"runtime"
	"slices"

	"pgregory.net/rapid"
)

// shrinkBudget bounds minimisation by test cases rather than by time: once
// a test case has failed, at most runs more run while rapid minimises, and
// then rapid is stopped and the smallest failing case it had confirmed is
// reported. Which candidates ran depends only on the seed and the store's
// answers, not on the machine's speed, so the same seed shrinks to the same
// sequence on a loaded machine.
//
// rapid confirms every smaller failing case it accepts by running it a
// second time; a failing run followed by a run that fails with the same
// message and the same steps is such a confirmation, and its case becomes
// the smallest found. rapid's last run, which logs the minimal case's
// output through the TB, is never counted: a run whose log reaches tb is
// that one (shrinking candidates log nowhere).
type shrinkBudget struct {
	runs    int
	tb      *captureTB
	caseLog func() []string

	cases   int // test cases run up to and including the first failure
	after   int // test cases run since
	failed  bool
	stopped bool
	last    *failedCase // the run just before, when it failed
	best    *failedCase // the smallest failing case rapid confirmed
	bestAt  int         // the re-run (after) that confirmed best; 0 for the first failure
	// shortAt is the re-run that confirmed the first of the cases since
	// whose length (in steps) has not changed: a budget that stops at or
	// after it reports a case as long as best. 0 for the first failure.
	shortAt int
}

// failedCase is what one failing test case showed.
type failedCase struct {
	msg   string
	steps []string
}

func (b *shrinkBudget) wrap(prop func(*rapid.T)) func(*rapid.T) {
	return func(t *rapid.T) {
		if !b.failed {
			b.cases++
		} else if !b.tb.reaches(t) {
			if b.after++; b.after > b.runs {
				b.stopped = true
				runtime.Goexit() // ends rapid.Check; deferred cleanups still run
			}
		}
		defer b.observe(t)
		prop(t)
	}
}

// observe records how the test case t ran; it runs while a failure is
// still unwinding, and does not recover it (rapid tells failures apart by
// where they were raised).
func (b *shrinkBudget) observe(t *rapid.T) {
	if !t.Failed() {
		b.last = nil
		return
	}
	c := &failedCase{msg: FailureMessage(t)}
	if b.caseLog != nil {
		c.steps = b.caseLog()
	}
	if b.best == nil || b.last != nil && b.last.msg == c.msg && slices.Equal(b.last.steps, c.steps) {
		if b.best == nil || len(c.steps) != len(b.best.steps) {
			b.shortAt = b.after
		}
		b.best, b.bestAt = c, b.after
	}
	b.last, b.failed = c, true
}

// report writes to the TB what rapid would have written for the smallest
// confirmed case, had it finished: the failure line, then the case's output.
func (b *shrinkBudget) report() {
	c := b.best
	if c == nil {
		return
	}
	b.tb.Errorf("[rapid] failed after %d tests: %s\nminimisation stopped after %d test cases (the shrink budget)\nFailed test output:", b.cases-1, c.msg, b.runs)
	for _, l := range c.steps {
		b.tb.Log(l)
	}
	if c.msg != "" {
		b.tb.Log(c.msg)
	}
}

// FailureMessage is the message t failed with, "" when it did not fail.
// rapid keeps it unexported; reflection reads it (the field is checked by
// this package's tests against the rapid version go.mod pins).
func FailureMessage(t *rapid.T) string {
	f := reflect.ValueOf(t).Elem().FieldByName("failed")
	if !f.IsValid() || f.Kind() != reflect.String {
		return "the test case failed"
	}
	return f.String()
}
