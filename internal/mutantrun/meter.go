package mutantrun

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/model"
)

// maxMarks bounds the resets a meter remembers.
const maxMarks = 1 << 16

// meter counts the store calls of one run and remembers when each reset
// happened: the conformance harness resets its store before every test
// case, so the resets tell how far the run was when a case began.
type meter struct {
	start time.Time
	ops   atomic.Int64

	mu    sync.Mutex
	marks []mark // one per reset, in order
}

// mark is the run's progress at one reset.
type mark struct {
	ops int64
	at  time.Duration
}

func newMeter() *meter { return &meter{start: time.Now()} }

func (m *meter) op() { m.ops.Add(1) }

func (m *meter) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.marks) < maxMarks {
		m.marks = append(m.marks, mark{m.ops.Load(), time.Since(m.start)})
	}
}

// failedAfter reads how many cases passed before the failing one from
// rapid's failure message ("failed after 3 tests: …").
var failedAfter = regexp.MustCompile(`(?:failed|panic) after (\d+) tests`)

// untilCaught returns the store calls and time the conformance property
// spent before its first failing case ended: the reset that began the first
// shrinking re-run. ok is false when the reason or the resets do not say.
func (m *meter) untilCaught(reason string) (ops int64, at time.Duration, ok bool) {
	sub := failedAfter.FindStringSubmatch(reason)
	if sub == nil {
		return 0, 0, false
	}
	passed, err := strconv.Atoi(sub[1])
	if err != nil {
		return 0, 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// marks[passed] began the failing case; marks[passed+1] began shrinking.
	if passed+1 >= len(m.marks) {
		return 0, 0, false
	}
	mk := m.marks[passed+1]
	return mk.ops, mk.at, true
}

// reusable is what a store must offer to be metered: everything the
// conformance harness and the workload use.
type reusable interface {
	model.Store
	model.Resetter
	model.TraceMaxSetter
	model.Dumper
}

// metered counts every model.Store call of a store and records its resets.
type metered struct {
	s reusable
	m *meter
}

// wrap returns s metered by m, or s itself when it lacks one of the
// interfaces a metered store passes on.
func (m *meter) wrap(s model.Store) model.Store {
	r, ok := s.(reusable)
	if !ok {
		return s
	}
	return &metered{s: r, m: m}
}

func (w *metered) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	w.m.op()
	return w.s.Commit(ctx, exe, b)
}

func (w *metered) Save(ctx context.Context, exe *model.Execution) error {
	w.m.op()
	return w.s.Save(ctx, exe)
}

func (w *metered) Load(ctx context.Context, id string) (*model.Execution, error) {
	w.m.op()
	return w.s.Load(ctx, id)
}

func (w *metered) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	w.m.op()
	return w.s.LoadForEvent(ctx, id, eventID)
}

func (w *metered) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	w.m.op()
	return w.s.ListExecutions(ctx, f)
}

func (w *metered) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	w.m.op()
	return w.s.IsProcessed(ctx, id, eventID)
}

func (w *metered) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	w.m.op()
	return w.s.PendingOutbox(ctx)
}

func (w *metered) AckOutbox(ctx context.Context, seq int64) error {
	w.m.op()
	return w.s.AckOutbox(ctx, seq)
}

func (w *metered) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	w.m.op()
	return w.s.PendingSpawns(ctx)
}

func (w *metered) AckSpawn(ctx context.Context, seq int64) error {
	w.m.op()
	return w.s.AckSpawn(ctx, seq)
}

func (w *metered) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	w.m.op()
	return w.s.DueTimers(ctx, now)
}

func (w *metered) DeleteTimer(ctx context.Context, id, path string, fireAt float64) error {
	w.m.op()
	return w.s.DeleteTimer(ctx, id, path, fireAt)
}

func (w *metered) AppendTrace(ctx context.Context, id string, entry json.RawMessage) error {
	w.m.op()
	return w.s.AppendTrace(ctx, id, entry)
}

func (w *metered) ReadTrace(ctx context.Context, id string) ([]model.TraceEntry, error) {
	w.m.op()
	return w.s.ReadTrace(ctx, id)
}

// Reset implements model.Resetter and marks the start of a test case.
func (w *metered) Reset(ctx context.Context) error {
	w.m.reset()
	return w.s.Reset(ctx)
}

func (w *metered) SetTraceMax(n int) { w.s.SetTraceMax(n) }

func (w *metered) Dump(ctx context.Context) (*model.Dump, error) { return w.s.Dump(ctx) }

func (w *metered) Close() error { return w.s.Close() }
