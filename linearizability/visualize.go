package linearizability

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// maxVisualExecutions caps how many executions one visualization draws.
const maxVisualExecutions = 20

// Visualize writes porcupine's self-contained HTML visualization of the
// executions a report found something wrong with (every execution, up to
// twenty, when it names none), annotated with the indeterminate operations,
// the heal phase and the violations.
func Visualize(ctx context.Context, w io.Writer, h History, rep *Report, opt Options) error {
	return VisualizeWindows(ctx, w, h, rep, opt, nil)
}

// Window is a span of a history's time to mark on its visualization, such
// as an injected fault. Start and End are on the history's clock; End 0
// means it lasted to the end of the history.
type Window struct {
	Name, Details string
	Start, End    int64
}

// VisualizeWindows is Visualize with windows drawn as well, in a row of
// their own ("faults").
func VisualizeWindows(ctx context.Context, w io.Writer, h History, rep *Report, opt Options, windows []Window) error {
	execs := visualExecutions(h, rep)
	_, res, err := prepareGlobal(h, &Report{})
	if err != nil {
		return err
	}
	var ops []porcupine.Operation
	for _, op := range porcupineOps(h.Ops, res) {
		if execs[keyOf(op).exec] {
			ops = append(ops, op)
		}
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	m := newModel(h.Meta.TraceMax)
	_, info := porcupine.CheckOperationsVerbose(m, ops, timeout)
	info.AddAnnotations(annotations(h, rep, execs))
	info.AddAnnotations(windowAnnotations(h, windows))
	if err := porcupine.Visualize(m, info, w); err != nil {
		return fmt.Errorf("visualize history: %w", err)
	}
	return nil
}

// windowAnnotations draws each window in the "faults" row; one still open
// ends with the last return of the history.
func windowAnnotations(h History, windows []Window) []porcupine.Annotation {
	var end int64
	for _, op := range h.Ops {
		if op.Return != EndOfHistory {
			end = max(end, op.Return)
		}
	}
	out := make([]porcupine.Annotation, 0, len(windows))
	for _, w := range windows {
		stop := w.End
		if stop == 0 {
			stop = max(end, w.Start)
		}
		out = append(out, porcupine.Annotation{
			Tag: "faults", Start: w.Start, End: stop, Description: w.Name, Details: w.Details,
			BackgroundColor: "#cfe0fb",
		})
	}
	return out
}

// VisualizeFile writes Visualize's HTML to path.
func VisualizeFile(ctx context.Context, path string, h History, rep *Report, opt Options) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("visualize history: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("visualize history: %w", cerr)
		}
	}()
	return Visualize(ctx, f, h, rep, opt)
}

// visualExecutions picks the executions to draw.
func visualExecutions(h History, rep *Report) map[string]bool {
	execs := map[string]bool{}
	if rep != nil {
		for _, p := range rep.Illegal {
			execs[p[:strings.LastIndexByte(p, '/')]] = true
		}
		for _, v := range rep.Violations {
			if v.Execution != "" && len(execs) < maxVisualExecutions {
				execs[v.Execution] = true
			}
		}
	}
	if len(execs) > 0 {
		return execs
	}
	var all []string
	seen := map[string]bool{}
	for _, op := range h.Ops {
		if op.Execution != "" && !seen[op.Execution] {
			seen[op.Execution] = true
			all = append(all, op.Execution)
		}
	}
	for _, e := range all[:min(len(all), maxVisualExecutions)] {
		execs[e] = true
	}
	return execs
}

// annotations marks the indeterminate operations (from call to when their
// error came back), the heal phase, and each violation at the end.
func annotations(h History, rep *Report, execs map[string]bool) []porcupine.Annotation {
	var out []porcupine.Annotation
	var healStart, healEnd, end int64 = -1, -1, 0
	for _, op := range h.Ops {
		if op.Output.Outcome != OutcomeIndeterminate {
			end = max(end, op.Return)
		}
		if op.Heal {
			if healStart < 0 || op.Call < healStart {
				healStart = op.Call
			}
			healEnd = max(healEnd, op.Return)
		}
		if op.Output.Outcome == OutcomeIndeterminate && execs[op.Execution] {
			out = append(out, porcupine.Annotation{
				ClientId: op.Client, Start: op.Call, End: max(op.Output.Observed, op.Call),
				Description: "indeterminate " + string(op.Kind), Details: op.Output.Error,
				BackgroundColor: "#fde2b8",
			})
		}
	}
	if healStart >= 0 {
		out = append(out, porcupine.Annotation{
			Tag: "heal", Start: healStart, End: healEnd,
			Description: "heal: final reads, no faults", BackgroundColor: "#d7f0d2",
		})
	}
	if rep != nil {
		for i, v := range rep.Violations {
			if i == maxVisualExecutions {
				break
			}
			out = append(out, porcupine.Annotation{
				Tag: "violations", Start: end + 1 + int64(i), Description: v.Guarantee.Error(), Details: v.Error(),
				BackgroundColor: "#f7c6c6",
			})
		}
	}
	return out
}
