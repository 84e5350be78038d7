package model

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Reference is the executable specification of the execution store: an
// in-memory Store that does exactly what docs/CONTRACT.md §1 says, one operation at a
// time under a lock. It is also the `memory:` backend.
type Reference struct {
	mu       sync.Mutex
	traceMax int
	st       refState
}

// refState is the six tables. Values are kept in the same canonical form a
// Dump uses, so a dump is a copy and a comparison is string equality.
type refState struct {
	execs  map[string]ExecutionRow
	outbox []OutboxRow // ascending seq
	// outboxSeq is the last seq issued; AUTOINCREMENT never reuses one.
	// Decision: one counter for every execution, as the seeds'
	// AUTOINCREMENT column is, advanced inside the commit: the pending
	// queues list the entries in the order the commits took effect in,
	// across executions, not per execution (docs/CONTRACT.md §1, property 6).
	outboxSeq int64
	processed map[ProcessedRow]struct{}
	timers    map[timerKey]float64
	spawns    []SpawnRow // ascending seq
	spawnSeq  int64
	trace     map[string][]TraceRow // per execution, ascending idx
}

type timerKey struct{ execID, path string }

// NewReference returns an empty reference store.
func NewReference(cfg Config) *Reference {
	r := &Reference{traceMax: cfg.TraceMax}
	r.st = emptyState()
	return r
}

func emptyState() refState {
	return refState{
		execs:     map[string]ExecutionRow{},
		processed: map[ProcessedRow]struct{}{},
		timers:    map[timerKey]float64{},
		trace:     map[string][]TraceRow{},
	}
}

// Clone returns an independent copy with the same tables and configuration.
func (r *Reference) Clone() *Reference {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := &Reference{traceMax: r.traceMax}
	c.st = refState{
		execs:     maps.Clone(r.st.execs),
		outbox:    slices.Clone(r.st.outbox),
		outboxSeq: r.st.outboxSeq,
		processed: maps.Clone(r.st.processed),
		timers:    maps.Clone(r.st.timers),
		spawns:    slices.Clone(r.st.spawns),
		spawnSeq:  r.st.spawnSeq,
		trace:     make(map[string][]TraceRow, len(r.st.trace)),
	}
	for k, v := range r.st.trace {
		c.st.trace[k] = slices.Clone(v)
	}
	return c
}

// Reset empties every table, seq counters included.
func (r *Reference) Reset(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st = emptyState()
	return nil
}

// SetTraceMax changes the trace cap for later appends.
func (r *Reference) SetTraceMax(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.traceMax = n
}

// Close does nothing; the reference holds no resources.
func (r *Reference) Close() error { return nil }

// preparedCommit is a batch turned into the rows it would write, so that an
// invalid batch is rejected before any table changes.
type preparedCommit struct {
	data      string
	rows      BatchRows
	processed *string
	timers    []TimerOp
}

// EncodeNext returns the JSON a successful commit of exe stores: exe at version
// exe.Version+1, in canonical form. Backends use it so that every store writes
// the same bytes for the same execution (the rqlite protocol guards its
// side-writes on those exact bytes).
func EncodeNext(exe *Execution) (string, error) {
	next := *exe
	next.Version = exe.Version + 1
	// MarshalJSON directly: json.Marshal would HTML-escape its output, and
	// the stored bytes must be canonical.
	raw, err := next.MarshalJSON()
	if err != nil {
		return "", fmt.Errorf("encode execution %q: %w", exe.ID, err)
	}
	return string(raw), nil
}

// BatchRows is a commit's batch in the canonical form the tables store it.
type BatchRows struct {
	Emits  []OutboxRow // Seq unset: the outbox numbers them
	Spawns []SpawnRow  // Seq unset
	// Trace is the canonical trace step, or nil for none.
	Trace *string
}

// PrepareBatch checks b for a commit of the execution id and encodes its
// rows canonically, exactly as Reference.Commit does, so that a backend that
// prepares its batch with it writes the reference's bytes and rejects what
// the reference rejects before it writes anything. Errors name the part of
// the batch ("emit 0: …", "timer op 1: …", "spawn 2 context: …", "trace
// entry: …") but not the commit; the caller adds that.
func PrepareBatch(id string, b Batch) (BatchRows, error) {
	var rows BatchRows
	for i, e := range b.Emits {
		ev, err := e.Event.Canonical()
		if err != nil {
			return BatchRows{}, fmt.Errorf("emit %d: %w", i, err)
		}
		rows.Emits = append(rows.Emits, OutboxRow{TargetID: clonePtr(e.TargetID), Event: ev})
	}
	for i, t := range b.Timers {
		if t.Action != TimerSchedule && t.Action != TimerCancel {
			return BatchRows{}, fmt.Errorf("timer op %d: unknown action %q", i, t.Action)
		}
	}
	for i, s := range b.Spawns {
		c, err := CanonicalObject(s.Context, fmt.Sprintf("spawn %d context", i))
		if err != nil {
			return BatchRows{}, err
		}
		rows.Spawns = append(rows.Spawns, SpawnRow{ParentID: id, ChildID: s.ChildID, RootPath: s.RootPath, Context: c})
	}
	if b.Trace != nil {
		c, err := CanonicalObject(b.Trace, "trace entry")
		if err != nil {
			return BatchRows{}, err
		}
		rows.Trace = &c
	}
	return rows, nil
}

// prepareCommit encodes exe at its next version and the batch in canonical
// form, rejecting an invalid batch before any table changes.
func prepareCommit(exe *Execution, b Batch) (preparedCommit, error) {
	data, err := EncodeNext(exe)
	if err != nil {
		return preparedCommit{}, fmt.Errorf("commit: %w", err)
	}
	rows, err := PrepareBatch(exe.ID, b)
	if err != nil {
		return preparedCommit{}, fmt.Errorf("commit %q: %w", exe.ID, err)
	}
	return preparedCommit{data: data, rows: rows, processed: b.ProcessedEventID, timers: b.Timers}, nil
}

// Commit implements Store.
func (r *Reference) Commit(_ context.Context, exe *Execution, b Batch) error {
	p, err := prepareCommit(exe, b)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := exe.Version
	row, exists := r.st.execs[exe.ID]
	switch {
	case exists && row.Version == old:
		// The stored definition_id is kept: the seeds' UPDATE sets only data
		// and version. Decision: an engine never moves an execution to another
		// definition, so the column and the JSON cannot disagree in practice.
		row.Data, row.Version = p.data, old+1
	case !exists && old == 0:
		row = ExecutionRow{ID: exe.ID, DefinitionID: exe.DefinitionID, Data: p.data, Version: 1}
	default:
		// Decision: a commit that loses its CAS writes nothing, even when the
		// state it brings is byte-identical to the stored row. The rqlite
		// seed calls that case "benign double delivery" and lets its guard
		// (side-writes on `data = ours`) apply the loser's outbox, dedupe,
		// spawn and trace writes; docs/CONTRACT.md property 3 does not, and an
		// extra outbox or trace row is not idempotent. storecheck holds
		// backends to property 3 and reports the seed's behaviour as a
		// finding (backends/rqlite offers guard=prestate, which closes it).
		conflict := &StoreConflict{ID: exe.ID, Expected: old}
		if exists {
			conflict.Found = Ptr(row.Version)
		}
		return conflict
	}
	r.st.execs[exe.ID] = row
	for _, e := range p.rows.Emits {
		r.st.outboxSeq++
		e.Seq = r.st.outboxSeq
		r.st.outbox = append(r.st.outbox, e)
	}
	if p.processed != nil {
		r.st.processed[ProcessedRow{ExecutionID: exe.ID, EventID: *p.processed}] = struct{}{}
	}
	for _, s := range p.rows.Spawns {
		r.st.spawnSeq++
		s.Seq = r.st.spawnSeq
		r.st.spawns = append(r.st.spawns, s)
	}
	for _, t := range p.timers {
		key := timerKey{exe.ID, t.Path}
		if t.Action == TimerSchedule {
			r.st.timers[key] = t.FireAt
		} else {
			delete(r.st.timers, key)
		}
	}
	if p.rows.Trace != nil {
		r.appendTraceLocked(exe.ID, *p.rows.Trace)
	}
	exe.Version = old + 1
	return nil
}

// Save implements Store.
func (r *Reference) Save(ctx context.Context, exe *Execution) error {
	return r.Commit(ctx, exe, Batch{})
}

// Load implements Store.
func (r *Reference) Load(_ context.Context, id string) (*Execution, error) {
	r.mu.Lock()
	row, ok := r.st.execs[id]
	r.mu.Unlock()
	if !ok {
		return nil, nil
	}
	return decodeExecution(row.Data)
}

func decodeExecution(data string) (*Execution, error) {
	e, err := DecodeExecution([]byte(data))
	if err != nil {
		return nil, fmt.Errorf("load: stored execution is not valid: %w", err)
	}
	return e, nil
}

// LoadForEvent implements Store.
func (r *Reference) LoadForEvent(_ context.Context, id, eventID string) (*Execution, bool, error) {
	r.mu.Lock()
	row, ok := r.st.execs[id]
	_, done := r.st.processed[ProcessedRow{ExecutionID: id, EventID: eventID}]
	r.mu.Unlock()
	if !ok {
		// The seeds return (none, false) for a missing execution even when a
		// marker exists: the flag is read only alongside a row.
		return nil, false, nil
	}
	e, err := decodeExecution(row.Data)
	return e, done, err
}

// ListExecutions implements Store.
func (r *Reference) ListExecutions(_ context.Context, f ListFilter) (Page, error) {
	if err := CheckLimit(f.Limit); err != nil {
		return Page{}, err
	}
	off, err := DecodeOffsetCursor(f.Cursor)
	if err != nil {
		return Page{}, err
	}
	r.mu.Lock()
	rows := slices.Collect(maps.Values(r.st.execs))
	r.mu.Unlock()
	slices.SortFunc(rows, func(a, b ExecutionRow) int { return strings.Compare(a.ID, b.ID) })
	var matched []ExecutionSummary
	for _, row := range rows {
		e, err := decodeExecution(row.Data)
		if err != nil {
			return Page{}, err
		}
		if !f.matches(row.DefinitionID, e) {
			continue
		}
		s := e.Summary()
		// The summary's id, definition_id and version come from the columns,
		// the rest from the JSON, as in the seeds' SELECT.
		s.ID, s.DefinitionID, s.Version = row.ID, row.DefinitionID, row.Version
		matched = append(matched, s)
	}
	var page Page
	if off < len(matched) {
		end := min(off+f.Limit, len(matched))
		page.Items = matched[off:end]
		if end < len(matched) {
			page.Next = EncodeOffsetCursor(end)
		}
	}
	return page, nil
}

func (f ListFilter) matches(definitionID string, e *Execution) bool {
	if f.DefinitionID != nil && *f.DefinitionID != definitionID {
		return false
	}
	if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, e.Status) {
		return false
	}
	if f.RootsOnly && e.ParentID != nil {
		return false
	}
	return true
}

// IsProcessed implements Store.
func (r *Reference) IsProcessed(_ context.Context, id, eventID string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.st.processed[ProcessedRow{ExecutionID: id, EventID: eventID}]
	return ok, nil
}

// PendingOutbox implements Store.
func (r *Reference) PendingOutbox(context.Context) ([]OutboxEntry, error) {
	r.mu.Lock()
	rows := slices.Clone(r.st.outbox)
	r.mu.Unlock()
	out := make([]OutboxEntry, 0, len(rows))
	for _, row := range rows {
		ev, err := ParseEvent(row.Event)
		if err != nil {
			return nil, err
		}
		out = append(out, OutboxEntry{Seq: row.Seq, TargetID: clonePtr(row.TargetID), Event: ev})
	}
	return out, nil
}

// AckOutbox implements Store.
func (r *Reference) AckOutbox(_ context.Context, seq int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.outbox = slices.DeleteFunc(r.st.outbox, func(o OutboxRow) bool { return o.Seq == seq })
	return nil
}

// PendingSpawns implements Store.
func (r *Reference) PendingSpawns(context.Context) ([]SpawnEntry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]SpawnEntry, 0, len(r.st.spawns))
	for _, s := range r.st.spawns {
		out = append(out, SpawnEntry{Seq: s.Seq, ParentID: s.ParentID, ChildID: s.ChildID, RootPath: s.RootPath, Context: json.RawMessage(s.Context)})
	}
	return out, nil
}

// AckSpawn implements Store.
func (r *Reference) AckSpawn(_ context.Context, seq int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.spawns = slices.DeleteFunc(r.st.spawns, func(s SpawnRow) bool { return s.Seq == seq })
	return nil
}

// DueTimers implements Store.
func (r *Reference) DueTimers(_ context.Context, now float64) ([]DueTimer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []DueTimer
	for k, at := range r.st.timers {
		if at <= now {
			out = append(out, DueTimer{ExecutionID: k.execID, Path: k.path, FireAt: at})
		}
	}
	// Decision: the seeds order by fire_at only; among equal fire_at the order
	// is unspecified. The reference breaks ties by (execution_id, path) and the
	// suite compares tied timers as a set (SameDueTimers).
	SortDueTimers(out)
	return out, nil
}

// SortDueTimers orders timers soonest first, ties by execution id and path.
func SortDueTimers(ts []DueTimer) {
	slices.SortFunc(ts, func(a, b DueTimer) int {
		return cmp.Or(cmp.Compare(a.FireAt, b.FireAt), strings.Compare(a.ExecutionID, b.ExecutionID), strings.Compare(a.Path, b.Path))
	})
}

// DeleteTimer implements Store.
func (r *Reference) DeleteTimer(_ context.Context, id, path string, fireAt float64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := timerKey{id, path}
	if at, ok := r.st.timers[key]; ok && at == fireAt {
		delete(r.st.timers, key)
	}
	return nil
}

// AppendTrace implements Store.
func (r *Reference) AppendTrace(_ context.Context, id string, entry json.RawMessage) error {
	c, err := CanonicalObject(entry, "trace entry")
	if err != nil {
		return fmt.Errorf("append trace %q: %w", id, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// Decision: like the seeds' SQL, a standalone append does not require the
	// execution to exist.
	r.appendTraceLocked(id, c)
	return nil
}

// appendTraceLocked adds the step at max(idx)+1 (0 for the first), then, with a
// cap, deletes every row with idx <= max(idx) - cap. The newest row always
// survives a trim, so indices never go back.
func (r *Reference) appendTraceLocked(id, entry string) {
	rows := r.st.trace[id]
	idx := int64(0)
	if len(rows) > 0 {
		idx = rows[len(rows)-1].Idx + 1
	}
	rows = append(rows, TraceRow{ExecutionID: id, Idx: idx, Entry: entry})
	if r.traceMax > 0 {
		cut := idx - int64(r.traceMax)
		rows = slices.DeleteFunc(rows, func(t TraceRow) bool { return t.Idx <= cut })
	}
	r.st.trace[id] = rows
}

// ReadTrace implements Store.
func (r *Reference) ReadTrace(_ context.Context, id string) ([]TraceEntry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rows := r.st.trace[id]
	out := make([]TraceEntry, 0, len(rows))
	for _, t := range rows {
		out = append(out, TraceEntry{Index: t.Idx, Entry: json.RawMessage(t.Entry)})
	}
	return out, nil
}

// Dump implements Dumper.
func (r *Reference) Dump(context.Context) (*Dump, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := &Dump{
		Executions: slices.Collect(maps.Values(r.st.execs)),
		Outbox:     slices.Clone(r.st.outbox),
		Processed:  slices.Collect(maps.Keys(r.st.processed)),
		Spawns:     slices.Clone(r.st.spawns),
	}
	for k, at := range r.st.timers {
		d.Timers = append(d.Timers, TimerRow{ExecutionID: k.execID, Path: k.path, FireAt: at})
	}
	for _, rows := range r.st.trace {
		d.Trace = append(d.Trace, rows...)
	}
	for i := range d.Outbox {
		d.Outbox[i].TargetID = clonePtr(d.Outbox[i].TargetID)
	}
	d.Sort()
	return d, nil
}

var (
	_ Store          = (*Reference)(nil)
	_ Dumper         = (*Reference)(nil)
	_ Resetter       = (*Reference)(nil)
	_ TraceMaxSetter = (*Reference)(nil)
)
