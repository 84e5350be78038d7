package procfault

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// tables indexes a dump by the witnesses the crash-mode commits write.
type tables struct {
	execs     map[string]model.ExecutionRow
	tokens    map[string]string // execution id → token of its stored data
	emits     map[string]bool   // outbox event ids
	processed map[model.ProcessedRow]bool
	spawns    map[string]bool     // spawn child ids
	timers    map[timerAt]float64 // fire_at per (execution, path)
	traces    map[traceOf]bool    // trace entries by token
}

type timerAt struct{ exec, path string }
type traceOf struct{ exec, token string }

// indexTables reads the witnesses out of d. Rows it cannot read (JSON that
// is not an event or an object) are left out, and so read as missing.
func indexTables(d *model.Dump) *tables {
	t := &tables{
		execs: map[string]model.ExecutionRow{}, tokens: map[string]string{}, emits: map[string]bool{},
		processed: map[model.ProcessedRow]bool{}, spawns: map[string]bool{},
		timers: map[timerAt]float64{}, traces: map[traceOf]bool{},
	}
	for _, r := range d.Executions {
		t.execs[r.ID] = r
		var exe model.Execution
		if json.Unmarshal([]byte(r.Data), &exe) == nil {
			t.tokens[r.ID] = witnessToken(&exe)
		}
	}
	for _, r := range d.Outbox {
		if ev, err := model.ParseEvent(r.Event); err == nil {
			t.emits[ev.ID] = true
		}
	}
	for _, r := range d.Processed {
		t.processed[r] = true
	}
	for _, r := range d.Spawns {
		t.spawns[r.ChildID] = true
	}
	for _, r := range d.Timers {
		t.timers[timerAt{r.ExecutionID, r.Path}] = r.FireAt
	}
	for _, r := range d.Trace {
		var entry map[string]any
		if json.Unmarshal([]byte(r.Entry), &entry) == nil {
			if tok, ok := entry[linearizability.TokenField].(string); ok {
				t.traces[traceOf{r.ExecutionID, tok}] = true
			}
		}
	}
	return t
}

// part is one side-write of a commit and whether the tables hold it.
type part struct {
	what    string
	present bool
}

// parts lists the side-writes of c that later commits cannot undo (emits,
// the dedupe marker, spawns) and, with final, those that only the last
// commit of an execution is sure to show (its scheduled timers, where no
// later op of c cancels them, and its trace step).
func (t *tables) parts(c *wireCommit, final bool) []part {
	id := c.Exe.ID
	var out []part
	for _, e := range c.Emits {
		out = append(out, part{"emit " + e.Event.ID, t.emits[e.Event.ID]})
	}
	if c.Processed != nil {
		out = append(out, part{"dedupe marker " + *c.Processed, t.processed[model.ProcessedRow{ExecutionID: id, EventID: *c.Processed}]})
	}
	for _, s := range c.Spawns {
		out = append(out, part{"spawn " + s.ChildID, t.spawns[s.ChildID]})
	}
	if !final {
		return out
	}
	last := map[string]int{} // path → index of the commit's last op on it
	for i, op := range c.Timers {
		last[op.Path] = i
	}
	for i, op := range c.Timers {
		if last[op.Path] == i && op.Action == model.TimerSchedule {
			at, ok := t.timers[timerAt{id, op.Path}]
			out = append(out, part{"timer " + op.Path + " at " + strconv.FormatFloat(op.FireAt, 'f', -1, 64), ok && at == op.FireAt})
		}
	}
	if len(c.Trace) > 0 {
		out = append(out, part{"trace step", t.traces[traceOf{id, c.token()}]})
	}
	return out
}

// durable checks that an acknowledged commit survived: its execution is at
// its version or later, and its emits, dedupe marker and spawns exist.
func (t *tables) durable(c *wireCommit) error {
	want := c.Exe.Version + 1
	row, ok := t.execs[c.Exe.ID]
	if !ok || row.Version < want {
		stored := "no row"
		if ok {
			stored = fmt.Sprintf("version %d", row.Version)
		}
		return broke(ErrDurability, "acknowledged commit %s (execution %s at version %d) is lost after the crash: the store holds %s", c.token(), c.Exe.ID, want, stored)
	}
	for _, p := range t.parts(c, false) {
		if !p.present {
			return broke(ErrDurability, "acknowledged commit %s (execution %s at version %d): its %s is missing after the crash", c.token(), c.Exe.ID, want, p.what)
		}
	}
	return nil
}

// atomic checks that the commit in flight at the crash is all or nothing:
// its execution advanced to it exactly when all of its side-writes exist.
// stage says how far the worker saw it get. It returns whether it applied.
func (t *tables) atomic(c *wireCommit, stage string) (bool, error) {
	applied := t.tokens[c.Exe.ID] == c.token()
	var wrong []string
	for _, p := range t.parts(c, true) {
		if p.present != applied {
			wrong = append(wrong, p.what)
		}
	}
	if len(wrong) == 0 {
		return applied, nil
	}
	when := "was called"
	if stage == msgPreCommit {
		when = "had reached its BeforeCommit hook"
	}
	if applied {
		return true, broke(ErrAtomicity, "commit %s %s when the worker was killed; its execution %s advanced to version %d but its %s missing",
			c.token(), when, c.Exe.ID, c.Exe.Version+1, strings.Join(wrong, ", ")+plural(len(wrong), " is", " are"))
	}
	return false, broke(ErrAtomicity, "commit %s %s when the worker was killed; its execution %s did not advance to version %d but its %s",
		c.token(), when, c.Exe.ID, c.Exe.Version+1, strings.Join(wrong, ", ")+plural(len(wrong), " exists", " exist"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
