package linearizability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// gatedStore blocks Load until released, and fails Commit with a chosen
// error; everything else is the reference model.
type gatedStore struct {
	*model.Reference
	entered, release chan struct{}
	commitErr        error
}

func (s *gatedStore) Load(ctx context.Context, id string) (*model.Execution, error) {
	if s.entered != nil {
		s.entered <- struct{}{}
		<-s.release
	}
	return s.Reference.Load(ctx, id)
}

func (s *gatedStore) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	if s.commitErr != nil {
		return s.commitErr
	}
	return s.Reference.Commit(ctx, exe, b)
}

func witnessed(id, token, prev string, version int64) *model.Execution {
	return &model.Execution{ID: id, DefinitionID: "d", Version: version, Status: "running",
		Extra: map[string]json.RawMessage{TokenField: jsonString(token), PrevField: jsonString(prev)}}
}

func TestRecorderRefusesOverlap(t *testing.T) {
	ctx := context.Background()
	st := &gatedStore{Reference: model.NewReference(model.DefaultConfig()), entered: make(chan struct{}), release: make(chan struct{})}
	rec := NewRecorder(st)
	c := rec.Client()
	done := make(chan error)
	go func() {
		_, err := c.Load(ctx, "e1")
		done <- err
	}()
	<-st.entered // the first load is in flight
	if _, err := c.IsProcessed(ctx, "e1", "x"); !errors.Is(err, ErrOverlap) {
		t.Fatalf("second operation on a busy client: got %v, want ErrOverlap", err)
	}
	if err := c.Commit(ctx, witnessed("e1", "t1", "", 0), model.Batch{}); !errors.Is(err, ErrOverlap) {
		t.Fatalf("commit on a busy client: got %v, want ErrOverlap", err)
	}
	close(st.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h := rec.History()
	if len(h.Ops) != 1 || h.Ops[0].Kind != KindLoad {
		t.Fatalf("recorded %+v, want only the first load", h.Ops)
	}
	if exe, _ := st.Reference.Load(ctx, "e1"); exe != nil {
		t.Fatal("the refused commit reached the store")
	}
	st.entered = nil
	if _, err := c.Load(ctx, "e1"); err != nil { // the client is free again
		t.Fatal(err)
	}
}

func TestRecorderIndeterminateRotatesClient(t *testing.T) {
	ctx := context.Background()
	st := &gatedStore{Reference: model.NewReference(model.DefaultConfig()), commitErr: errors.New("connection reset")}
	rec := NewRecorder(st)
	c := rec.Client()
	other := rec.Client()
	first := c.ID()
	if err := c.Commit(ctx, witnessed("e1", "t1", "", 0), model.Batch{}); err == nil {
		t.Fatal("commit did not fail")
	}
	if c.ID() == first || c.ID() == other.ID() {
		t.Fatalf("client id %d after an indeterminate commit; want a new id (was %d, other client %d)", c.ID(), first, other.ID())
	}
	if _, err := c.Load(ctx, "e1"); err != nil {
		t.Fatal(err)
	}
	h := rec.History()
	if got := h.Ops[0]; got.Output.Outcome != OutcomeIndeterminate || got.Return != EndOfHistory || got.Client != first ||
		got.Output.Observed <= got.Call || got.Output.Error != "connection reset" {
		t.Fatalf("indeterminate commit recorded as %+v", got)
	}
	if got := h.Ops[1]; got.Client != c.ID() || got.Call <= h.Ops[0].Output.Observed {
		t.Fatalf("next operation recorded as %+v", got)
	}
	if err := Validate(h); err != nil {
		t.Fatal(err)
	}
}

func TestRecorderClassifiesErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		err  error
		want Outcome
	}{
		{nil, OutcomeOK},
		{&model.StoreConflict{ID: "e1", Expected: 0, Found: model.Ptr(int64(3))}, OutcomeConflict},
		{fmt.Errorf("begin: %w", model.ErrNotApplied), OutcomeFailed},
		{fmt.Errorf("bad: %w", model.ErrInvalidArgument), OutcomeFailed},
		{context.DeadlineExceeded, OutcomeIndeterminate},
	}
	for _, tt := range tests {
		st := &gatedStore{Reference: model.NewReference(model.DefaultConfig()), commitErr: tt.err}
		rec := NewRecorder(st)
		_ = rec.Client().Commit(ctx, witnessed("e1", "t1", "", 0), model.Batch{})
		op := rec.History().Ops[0]
		if op.Output.Outcome != tt.want {
			t.Errorf("%v: recorded %s, want %s", tt.err, op.Output.Outcome, tt.want)
		}
		if tt.want == OutcomeConflict && (op.Output.Found == nil || *op.Output.Found != 3) {
			t.Errorf("conflict recorded without its found version: %+v", op.Output)
		}
	}
	// A failed read has no effect: failed, never indeterminate.
	if out := classify(KindLoad, errors.New("io")); out.Outcome != OutcomeFailed {
		t.Errorf("failed load recorded as %s", out.Outcome)
	}
}

// TestRecorderHistoryChecks records a short sequential run through every
// client method, heals, and checks it.
func TestRecorderHistoryChecks(t *testing.T) {
	ctx := context.Background()
	ref := model.NewReference(model.Config{TraceMax: 2})
	rec := NewRecorder(ref)
	c := rec.Client()
	exe := witnessed("e1", "t1", "", 0)
	b := model.Batch{
		Emits:            []model.Emit{{Event: model.Event{ID: "t1/e0", Name: "go"}}},
		ProcessedEventID: model.Ptr("t1/p"),
		Timers:           []model.TimerOp{{Action: model.TimerSchedule, Path: "a", FireAt: 5}},
		Spawns:           []model.Spawn{{ChildID: "t1/s0", RootPath: "r"}},
		Trace:            json.RawMessage(`{"token":"t1"}`),
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Commit(ctx, exe, b))
	must(c.Save(ctx, witnessed("e1", "t2", "t1", 1)))
	_, err := c.Load(ctx, "e1")
	must(err)
	_, _, err = c.LoadForEvent(ctx, "e1", "t1/p")
	must(err)
	must(c.AppendTrace(ctx, "e1", json.RawMessage(`{"token":"t3"}`)))
	must(c.AppendTrace(ctx, "e1", json.RawMessage(`{"token":"t4"}`)))
	_, err = c.ReadTrace(ctx, "e1")
	must(err)
	entries, err := c.PendingOutbox(ctx)
	must(err)
	must(c.AckOutbox(ctx, entries[0].Seq))
	spawns, err := c.PendingSpawns(ctx)
	must(err)
	must(c.AckSpawn(ctx, spawns[0].Seq))
	_, err = c.DueTimers(ctx, 10)
	must(err)
	must(c.DeleteTimer(ctx, "e1", "a", 5))

	if err := Heal(ctx, rec.HealClient(), rec.History()); err != nil {
		t.Fatal(err)
	}
	h := rec.History()
	h.Meta.TraceMax = 2
	rep, err := Check(ctx, h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != Ok || len(rep.Notes) > 0 {
		t.Fatalf("verdict %s: %v; notes %v", rep.Verdict, rep.Err, rep.Notes)
	}
}

// Clients recording side by side: the history is in return order, every
// timestamp is distinct, each client's operations are sequential, and a
// history taken while they run is a prefix of the final one (nothing that
// returned before its last operation is missing from it).
func TestRecorderConcurrentClients(t *testing.T) {
	ctx := context.Background()
	rec := NewRecorder(model.NewReference(model.DefaultConfig()))
	const clients, each = 8, 300
	done := make(chan struct{})
	var snapshots []History
	go func() {
		defer close(done)
		for rec.Len() < clients*each && len(snapshots) < 200 {
			snapshots = append(snapshots, rec.History())
		}
	}()
	errs := make(chan error, clients)
	for i := range clients {
		go func() {
			c := rec.Client()
			for j := range each {
				if _, err := c.Load(ctx, fmt.Sprintf("e%d", (i+j)%5)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	<-done
	final := rec.History().Ops
	if len(final) != clients*each || rec.Len() != len(final) {
		t.Fatalf("%d operations, Len %d; want %d", len(final), rec.Len(), clients*each)
	}
	seen := map[int64]bool{}
	lastReturn := map[int]int64{}
	for i, op := range final {
		if i > 0 && op.Return <= final[i-1].Return {
			t.Fatalf("op %d returned at %d, not after op %d at %d", i, op.Return, i-1, final[i-1].Return)
		}
		if seen[op.Call] || seen[op.Return] || op.Call >= op.Return {
			t.Fatalf("op %d: call %d, return %d: a time reused or out of order", i, op.Call, op.Return)
		}
		seen[op.Call], seen[op.Return] = true, true
		if op.Call <= lastReturn[op.Client] {
			t.Fatalf("client %d: op %d called at %d before its previous one returned (%d)", op.Client, i, op.Call, lastReturn[op.Client])
		}
		lastReturn[op.Client] = op.Return
	}
	if len(snapshots) < 2 {
		t.Logf("only %d histories taken while the clients ran", len(snapshots))
	}
	for _, h := range snapshots {
		for i, op := range h.Ops {
			if op.Return != final[i].Return || op.Client != final[i].Client {
				t.Fatalf("a history taken during the run is not a prefix of the final one at op %d", i)
			}
		}
	}
}

// TestOpLogKeepsOrderAcrossChunks appends around the chunk boundaries and
// reads every operation back once, in order.
func TestOpLogKeepsOrderAcrossChunks(t *testing.T) {
	for _, n := range []int{0, 1, opChunk - 1, opChunk, opChunk + 1, 3*opChunk + 7} {
		var l opLog
		for i := range n {
			l.append(&Operation{Call: int64(i)})
		}
		all := l.all()
		if l.n != n || len(all) != n {
			t.Fatalf("%d appended: n %d, all %d", n, l.n, len(all))
		}
		for i, op := range all {
			if op.Call != int64(i) {
				t.Fatalf("%d appended: operation %d is the one appended %d-th", n, i, op.Call)
			}
		}
	}
}

// TestRecordKeepsEveryField changes each field of an operation in turn, the
// fields of its Input and Output one by one, and reads it back through the
// opLog's record: whatever the field, and whether the record keeps the
// operation in place or whole, the operation read back is the one
// recorded. A field added to Operation that compact forgets fails here.
func TestRecordKeepsEveryField(t *testing.T) {
	plain := Operation{
		Client: 3, Kind: KindCommit, Execution: "e", Call: 10, Return: 20, Heal: true,
		Input:  Input{Expected: 4, Data: "tok#00000001", Prev: "p"},
		Output: Output{Outcome: OutcomeOK, Exists: true, Version: 5, Data: "tok#00000002", Processed: true},
	}
	if r := compact(&plain); r.full != nil {
		t.Fatalf("a plain operation is kept whole, not in place: %+v", plain)
	} else if got := r.operation(); !reflect.DeepEqual(got, plain) {
		t.Fatalf("plain operation read back as\n%+v\nnot\n%+v", got, plain)
	}
	changed := 0
	var visit func(v reflect.Value, path string)
	visit = func(v reflect.Value, path string) {
		for i := range v.NumField() {
			f, name := v.Field(i), path+v.Type().Field(i).Name
			if f.Kind() == reflect.Struct {
				visit(f, name+".")
				continue
			}
			old := reflect.New(f.Type()).Elem()
			old.Set(f)
			change(t, f, name)
			changed++
			r := compact(&plain)
			if got := r.operation(); !reflect.DeepEqual(got, plain) {
				t.Errorf("with %s changed, the operation read back is\n%+v\nnot\n%+v", name, got, plain)
			}
			f.Set(old)
		}
	}
	visit(reflect.ValueOf(&plain).Elem(), "")
	if changed < 25 {
		t.Fatalf("only %d fields changed: the walk missed some", changed)
	}
}

// change sets f to a value other than its own.
func change(t *testing.T, f reflect.Value, name string) {
	switch f.Kind() {
	case reflect.String:
		f.SetString(f.String() + "x")
	case reflect.Bool:
		f.SetBool(!f.Bool())
	case reflect.Int, reflect.Int64:
		f.SetInt(f.Int() + 1)
	case reflect.Float64:
		f.SetFloat(f.Float() + 0.5)
	case reflect.Pointer:
		f.Set(reflect.New(f.Type().Elem()))
	case reflect.Slice:
		f.Set(reflect.MakeSlice(f.Type(), 1, 1))
	default:
		t.Fatalf("field %s: no way to change a %s", name, f.Kind())
	}
}
