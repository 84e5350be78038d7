package runstore

import (
	"encoding/json"
	"fmt"
)

// Invariants checks what must hold of any store's tables, whatever
// operations ran: event and checkpoint sequences are 1, 2, 3… per run with no
// gap; a session holds at most one active run; every event, checkpoint,
// interrupt and lease belongs to a run; the run.claimed events of a run carry
// fencing tokens 1, 2, 3… in order, the last being the lease's token. Each
// problem is one line naming the guarantee; d must be sorted.
func Invariants(d *Dump) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	runs := map[string]RunRow{}
	active := map[string]string{} // session → active run
	for _, r := range d.Runs {
		runs[r.ID] = r
		if !r.Status.Active() {
			continue
		}
		if other, ok := active[r.SessionID]; ok {
			add("one active run per session: session %q has active runs %q and %q", r.SessionID, other, r.ID)
		}
		active[r.SessionID] = r.ID
	}
	tokens := map[string]int64{} // run → last claimed token
	var prev EventRow
	for i, e := range d.Events {
		if _, ok := runs[e.RunID]; !ok {
			add("run_events: event %d belongs to no run %q", e.Sequence, e.RunID)
		}
		want := int64(1)
		if i > 0 && prev.RunID == e.RunID {
			want = prev.Sequence + 1
		}
		if e.Sequence != want {
			add("event sequence without gaps: run %q has event %d where %d was due", e.RunID, e.Sequence, want)
		}
		prev = e
		if e.Type == EventClaimed {
			var data struct {
				Token int64 `json:"fencing_token"`
			}
			if err := json.Unmarshal([]byte(e.Data), &data); err != nil {
				add("run_events: run.claimed event %d of run %q has unreadable data %s", e.Sequence, e.RunID, e.Data)
				continue
			}
			if data.Token != tokens[e.RunID]+1 {
				add("fencing tokens strictly increase: run %q was claimed with token %d after token %d (event %d)", e.RunID, data.Token, tokens[e.RunID], e.Sequence)
			}
			tokens[e.RunID] = data.Token
		}
	}
	var prevCP CheckpointRow
	for i, c := range d.Checkpoints {
		if _, ok := runs[c.RunID]; !ok {
			add("checkpoints: checkpoint %q belongs to no run %q", c.ID, c.RunID)
		}
		want := int64(1)
		if i > 0 && prevCP.RunID == c.RunID {
			want = prevCP.Sequence + 1
		}
		if c.Sequence != want {
			add("checkpoint sequence without gaps: run %q has checkpoint %d where %d was due", c.RunID, c.Sequence, want)
		}
		prevCP = c
	}
	for _, in := range d.Interrupts {
		if _, ok := runs[in.RunID]; !ok {
			add("interrupts: interrupt %q belongs to no run %q", in.ID, in.RunID)
		}
	}
	for _, l := range d.Leases {
		if _, ok := runs[l.RunID]; !ok {
			add("run_leases: lease of no run %q", l.RunID)
		}
		if l.Token != tokens[l.RunID] {
			add("fencing tokens strictly increase: run %q's lease holds token %d but its last run.claimed event granted %d", l.RunID, l.Token, tokens[l.RunID])
		}
	}
	return out
}
