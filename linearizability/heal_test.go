package linearizability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storecheck/storecheck/model"
)

// probedStore answers is_processed after a pause, as a server's round trip
// does, counting the lookups going at once; it fails every lookup of
// failEvent.
type probedStore struct {
	*model.Reference
	failEvent string
	now, peak atomic.Int64
}

func (s *probedStore) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	n := s.now.Add(1)
	defer s.now.Add(-1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	time.Sleep(2 * time.Millisecond)
	if eventID == s.failEvent {
		return false, errors.New("no answer (the test's)")
	}
	return s.Reference.IsProcessed(ctx, id, eventID)
}

// committed records commits of one execution, each marking its own event
// processed, and returns the recorder.
func committed(t *testing.T, st model.Store, commits int) *Recorder {
	t.Helper()
	ctx := context.Background()
	rec := NewRecorder(st)
	c := rec.Client()
	for i := range commits {
		exe, err := c.Load(ctx, "e1")
		if err != nil {
			t.Fatal(err)
		}
		if exe == nil {
			exe = &model.Execution{ID: "e1", DefinitionID: "d", Status: "running"}
		}
		ev := fmt.Sprintf("ev-%d", i)
		if err := c.Commit(ctx, exe, model.Batch{ProcessedEventID: &ev}); err != nil {
			t.Fatal(err)
		}
	}
	return rec
}

// TestHealProbesSideBySide: the processed event ids are looked up by
// several heal clients at once, each id once, and the history with them
// checks as before.
func TestHealProbesSideBySide(t *testing.T) {
	ctx := context.Background()
	st := &probedStore{Reference: model.NewReference(model.DefaultConfig())}
	rec := committed(t, st, 60)
	if err := Heal(ctx, rec.HealClient(), rec.History()); err != nil {
		t.Fatal(err)
	}
	if p := st.peak.Load(); p < 2 || p > healProbers {
		t.Errorf("%d lookups at once; want 2..%d", p, healProbers)
	}
	h := rec.History()
	looked := map[string]int{}
	clients := map[int]bool{}
	for _, op := range h.Ops {
		if op.Heal && op.Kind == KindIsProcessed && op.Output.Outcome == OutcomeOK {
			looked[op.Input.EventID]++
			clients[op.Client] = true
		}
	}
	for i := range 60 {
		if n := looked[fmt.Sprintf("ev-%d", i)]; n != 1 {
			t.Errorf("ev-%d looked up %d times by the heal; want once", i, n)
		}
	}
	if len(clients) != healProbers {
		t.Errorf("%d heal clients looked the events up; want %d", len(clients), healProbers)
	}
	rep, err := Check(ctx, h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != Ok {
		t.Fatalf("verdict %s: %v", rep.Verdict, rep.Err)
	}
}

// TestHealProbeThatFails: a lookup the store never answers makes the heal
// fail as not recovered once the bound has passed, naming that read.
func TestHealProbeThatFails(t *testing.T) {
	st := &probedStore{Reference: model.NewReference(model.DefaultConfig()), failEvent: "ev-7"}
	rec := committed(t, st, 40)
	err := HealWithin(context.Background(), rec.HealClient(), rec.History(), 200*time.Millisecond)
	if !errors.Is(err, ErrNotRecovered) {
		t.Fatalf("heal: %v; want ErrNotRecovered", err)
	}
	// Five reads come before the lookups (load, trace, outbox, spawns,
	// timers); ev-7's is the eighth lookup.
	if want := "heal read 13 of 45"; !strings.Contains(err.Error(), want) {
		t.Errorf("heal: %v; want it to name %q", err, want)
	}
}

// lateStore answers the commit of the execution whose token is late with
// an error that leaves its outcome unknown, and applies it after all: once
// the next load has returned, as a write held in a frozen server lands
// when the server is thawed, during the heal.
type lateStore struct {
	*model.Reference
	mu      sync.Mutex
	pending func()
}

func (s *lateStore) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	if tokenOfExe(exe) != "late" {
		return s.Reference.Commit(ctx, exe, b)
	}
	held := *exe
	s.mu.Lock()
	s.pending = func() { _ = s.Reference.Commit(context.WithoutCancel(ctx), &held, b) }
	s.mu.Unlock()
	return errors.New("request timed out (the test's); it may still be applied")
}

func (s *lateStore) Load(ctx context.Context, id string) (*model.Execution, error) {
	exe, err := s.Reference.Load(ctx, id)
	s.mu.Lock()
	land := s.pending
	s.pending = nil
	s.mu.Unlock()
	if land != nil {
		land()
	}
	return exe, err
}

func tokenOfExe(exe *model.Execution) string {
	var tok string
	_ = json.Unmarshal(exe.Extra[TokenField], &tok)
	return tok
}

// TestHealSettlesAfterALateWrite: a commit whose outcome was unknown lands
// between the heal's load of its execution and its outbox read. The store
// is correct; read once, the heal shows the commit's emit beside a row
// without it, a part of a commit. The heal reads the tables again until
// two rounds agree, and the last round holds the commit whole.
func TestHealSettlesAfterALateWrite(t *testing.T) {
	ctx := context.Background()
	st := &lateStore{Reference: model.NewReference(model.DefaultConfig())}
	rec := NewRecorder(st)
	c := rec.Client()
	emit := func(id string) model.Batch {
		return model.Batch{ProcessedEventID: &id, Emits: []model.Emit{{Event: model.Event{ID: id + "/e", Name: "n", Data: json.RawMessage(`{}`)}}}}
	}
	if err := c.Commit(ctx, witnessed("e1", "t1", "", 0), emit("t1")); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx, witnessed("e1", "late", "t1", 1), emit("late")); err == nil {
		t.Fatal("the late commit answered")
	}
	if err := Heal(ctx, rec.HealClient(), rec.History()); err != nil {
		t.Fatal(err)
	}
	h := rec.History()
	if !slices.ContainsFunc(h.Ops, func(op Operation) bool { return op.Output.Outcome == OutcomeIndeterminate }) {
		t.Fatal("the late commit was not recorded as indeterminate")
	}
	rep, err := Check(ctx, h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != Ok {
		t.Fatalf("a correct store failed: %s %v", rep.Verdict, rep.Err)
	}
	loads := 0
	for _, op := range h.Ops {
		if op.Heal && op.Kind == KindLoad {
			loads++
		}
	}
	if loads < 2 {
		t.Errorf("%d heal loads; want a round more after the late write", loads)
	}
}

// TestHealEndedReadsOnce: when every writer has ended, a write of unknown
// outcome cannot land any more, and HealEnded reads the tables once; Heal,
// which cannot know that, reads them until two rounds agree.
func TestHealEndedReadsOnce(t *testing.T) {
	for _, c := range []struct {
		name  string
		heal  func(context.Context, *Client, History) error
		loads int
	}{
		{"HealEnded", HealEnded, 1},
		{"Heal", Heal, 2},
	} {
		ctx := context.Background()
		rec := NewRecorder(model.NewReference(model.DefaultConfig()))
		if err := rec.Client().Commit(ctx, witnessed("e1", "t1", "", 0), model.Batch{}); err != nil {
			t.Fatal(err)
		}
		h := rec.History()
		// A write of unknown outcome, by a writer that has ended.
		h.Ops = append(h.Ops, Operation{Kind: KindCommit, Execution: "e1", Output: Output{Outcome: OutcomeIndeterminate}})
		if err := c.heal(ctx, rec.HealClient(), h); err != nil {
			t.Fatal(err)
		}
		loads := 0
		for _, op := range rec.History().Ops {
			if op.Heal && op.Kind == KindLoad {
				loads++
			}
		}
		if loads != c.loads {
			t.Errorf("%s: %d heal loads of e1, want %d", c.name, loads, c.loads)
		}
	}
}
