package linearizability

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// The simulator generates legal histories fast and deterministically: simulated
// clients start operations, apply them to a model.Reference at a later tick
// (their linearization point) and return at a later tick still, so intervals
// overlap freely while every result is one a correct store could give.

// simConfig shapes a simulated history.
type simConfig struct {
	ops, clients, execs, traceMax int
	seed                          uint64
	// indeterminate is the share of writes recorded as indeterminate; half
	// of those take effect.
	indeterminate float64
}

// simClient is one simulated client.
type simClient struct {
	idx, id  int
	n        int // attempts started, for tokens
	busy     bool
	applied  bool
	indet    bool
	lost     bool
	op       Operation
	apply    func() Output
	known    map[string]knownRow
	eventIDs map[string][]string
}

type knownRow struct {
	version int64
	token   string
}

// sim is one simulation run.
type sim struct {
	t       testing.TB
	cfg     simConfig
	rng     *rand.Rand
	ref     *model.Reference
	now     int64
	nextID  int
	ops     []Operation
	clients []*simClient
}

// simulate returns a legal history of cfg.ops operations plus heal reads.
func simulate(t testing.TB, cfg simConfig) History {
	s := &sim{t: t, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.seed, 7)), ref: model.NewReference(model.Config{TraceMax: cfg.traceMax})}
	for i := range cfg.clients {
		s.clients = append(s.clients, &simClient{idx: i, id: i, known: map[string]knownRow{}, eventIDs: map[string][]string{}})
	}
	s.nextID = cfg.clients
	started := 0
	for tick := 0; tick < 10*cfg.ops+100*cfg.clients; tick++ {
		c := s.clients[s.rng.IntN(len(s.clients))]
		s.now++
		switch {
		case !c.busy && started < cfg.ops:
			s.start(c)
			started++
		case c.busy && !c.applied:
			if c.lost {
				c.op.Output = Output{Outcome: OutcomeIndeterminate}
			} else {
				c.op.Output = c.apply()
			}
			c.applied = true
		case c.busy:
			s.finish(c)
		}
		if started == cfg.ops && s.idle() {
			break
		}
	}
	if !s.idle() {
		t.Fatalf("simulation did not finish within its tick budget")
	}
	s.heal()
	return History{Meta: Meta{TraceMax: cfg.traceMax, Seed: cfg.seed, Scenario: "simulated"}, Ops: s.ops}
}

func (s *sim) idle() bool {
	for _, c := range s.clients {
		if c.busy {
			return false
		}
	}
	return true
}

// finish returns c's operation; an indeterminate one moves c to a new id.
func (s *sim) finish(c *simClient) {
	op := c.op
	op.Client, op.Return = c.id, s.now
	if c.indet {
		op.Output = Output{Outcome: OutcomeIndeterminate, Error: "simulated timeout", Observed: s.now}
		op.Return = EndOfHistory
		c.id = s.nextID
		s.nextID++
	}
	s.ops = append(s.ops, op)
	c.busy, c.applied, c.indet, c.lost = false, false, false, false
}

// start picks c's next operation and what it will do at its linearization
// point.
func (s *sim) start(c *simClient) {
	ctx := context.Background()
	exec := fmt.Sprintf("e%d", s.rng.IntN(s.cfg.execs))
	c.busy = true
	c.op = Operation{Execution: exec, Call: s.now}
	c.n++
	token := fmt.Sprintf("s%d-%d", c.idx, c.n)
	write := func() {
		if s.rng.Float64() < s.cfg.indeterminate {
			c.indet, c.lost = true, s.rng.IntN(2) == 0
		}
	}
	switch r := s.rng.IntN(100); {
	case r < 40:
		kind := KindCommit
		if r < 5 {
			kind = KindSave
		}
		row, ok := c.known[exec]
		if !ok || s.rng.IntN(4) == 0 { // learn the current row, as a real client would by loading
			row = s.current(exec)
		}
		exe, b := simCommit(exec, token, row, kind == KindSave, s.rng)
		in, err := commitInput(exe, b)
		if err != nil {
			s.t.Fatal(err)
		}
		if b.ProcessedEventID != nil {
			c.eventIDs[exec] = append(c.eventIDs[exec], *b.ProcessedEventID)
		}
		c.op.Kind, c.op.Input = kind, in
		write()
		c.apply = func() Output {
			err := s.ref.Commit(ctx, exe, b)
			if err == nil && !c.indet {
				c.known[exec] = knownRow{row.version + 1, token}
			}
			return classify(kind, err)
		}
	case r < 60:
		c.op.Kind = KindLoad
		c.apply = func() Output {
			exe, err := s.ref.Load(ctx, exec)
			out, err2 := loadOutput(exe, false)
			if err != nil || err2 != nil {
				s.t.Fatal(err, err2)
			}
			if exe != nil {
				c.known[exec] = knownRow{exe.Version, tokenOf(exe)}
			}
			return out
		}
	case r < 75:
		c.op.Kind = KindLoadForEvent
		if s.rng.IntN(2) == 0 {
			c.op.Kind = KindIsProcessed
		}
		c.op.Input.EventID = token + "/p"
		if ids := c.eventIDs[exec]; len(ids) > 0 && s.rng.IntN(3) > 0 {
			c.op.Input.EventID = ids[s.rng.IntN(len(ids))]
		}
		kind, event := c.op.Kind, c.op.Input.EventID
		c.apply = func() Output {
			if kind == KindIsProcessed {
				done, _ := s.ref.IsProcessed(ctx, exec, event)
				return Output{Outcome: OutcomeOK, Processed: done}
			}
			exe, done, _ := s.ref.LoadForEvent(ctx, exec, event)
			out, err := loadOutput(exe, done)
			if err != nil {
				s.t.Fatal(err)
			}
			return out
		}
	case r < 88:
		c.op.Kind = KindReadTrace
		c.apply = func() Output {
			entries, _ := s.ref.ReadTrace(ctx, exec)
			items, err := traceItems(entries)
			if err != nil {
				s.t.Fatal(err)
			}
			return Output{Outcome: OutcomeOK, Trace: items}
		}
	default:
		entry := json.RawMessage(fmt.Sprintf(`{"token":%q,"kind":"append"}`, token))
		id, err := ObjectID(entry)
		if err != nil {
			s.t.Fatal(err)
		}
		c.op.Kind, c.op.Input.Trace = KindAppendTrace, id
		write()
		c.apply = func() Output { return classify(KindAppendTrace, s.ref.AppendTrace(ctx, exec, entry)) }
	}
}

// current reads the reference's row directly: what a client learns by a
// load, without recording one.
func (s *sim) current(exec string) knownRow {
	exe, _ := s.ref.Load(context.Background(), exec)
	if exe == nil {
		return knownRow{}
	}
	return knownRow{exe.Version, tokenOf(exe)}
}

func tokenOf(exe *model.Execution) string {
	var tok string
	_ = json.Unmarshal(exe.Extra[TokenField], &tok)
	return tok
}

// simCommit builds a commit with unique witnesses from the row the client
// believes is stored.
func simCommit(exec, token string, row knownRow, save bool, rng *rand.Rand) (*model.Execution, model.Batch) {
	exe := &model.Execution{
		ID: exec, DefinitionID: "sim", Version: row.version, Status: "running", ActivePath: "s",
		Extra: map[string]json.RawMessage{TokenField: jsonString(token), PrevField: jsonString(row.token)},
	}
	if save {
		return exe, model.Batch{}
	}
	var b model.Batch
	if rng.IntN(2) == 0 {
		b.ProcessedEventID = model.Ptr(token + "/p")
	}
	for i := range rng.IntN(3) {
		b.Emits = append(b.Emits, model.Emit{Event: model.Event{ID: fmt.Sprintf("%s/e%d", token, i), Name: "tick"}})
	}
	if rng.IntN(2) == 0 {
		b.Trace = json.RawMessage(fmt.Sprintf(`{"token":%q,"kind":"commit"}`, token))
	}
	return exe, b
}

func jsonString(s string) json.RawMessage {
	raw, _ := json.Marshal(s)
	return raw
}

// heal appends the final reads, one after another, by a fresh client.
func (s *sim) heal() {
	ctx := context.Background()
	id := s.nextID
	s.nextID++
	add := func(op Operation) {
		s.now++
		op.Client, op.Call, op.Heal = id, s.now, true
		s.now++
		op.Return = s.now
		s.ops = append(s.ops, op)
	}
	events := map[procKey]bool{}
	for _, op := range s.ops {
		if op.Kind == KindCommit && op.Input.EventID != "" {
			events[procKey{op.Execution, op.Input.EventID}] = true
		}
	}
	for i := range s.cfg.execs {
		exec := fmt.Sprintf("e%d", i)
		exe, _ := s.ref.Load(ctx, exec)
		out, err := loadOutput(exe, false)
		if err != nil {
			s.t.Fatal(err)
		}
		add(Operation{Kind: KindLoad, Execution: exec, Output: out})
		entries, _ := s.ref.ReadTrace(ctx, exec)
		items, err := traceItems(entries)
		if err != nil {
			s.t.Fatal(err)
		}
		add(Operation{Kind: KindReadTrace, Execution: exec, Output: Output{Outcome: OutcomeOK, Trace: items}})
	}
	outbox, _ := s.ref.PendingOutbox(ctx)
	add(Operation{Kind: KindPendingOutbox, Output: Output{Outcome: OutcomeOK, Outbox: outboxItems(outbox)}})
	spawns, _ := s.ref.PendingSpawns(ctx)
	add(Operation{Kind: KindPendingSpawns, Output: Output{Outcome: OutcomeOK, Spawns: spawnItems(spawns)}})
	timers, _ := s.ref.DueTimers(ctx, math.MaxFloat64)
	add(Operation{Kind: KindDueTimers, Input: Input{Now: math.MaxFloat64}, Output: Output{Outcome: OutcomeOK, Timers: timerItems(timers)}})
	for k := range events {
		done, _ := s.ref.IsProcessed(ctx, k.exec, k.event)
		add(Operation{Kind: KindIsProcessed, Execution: k.exec, Input: Input{EventID: k.event}, Output: Output{Outcome: OutcomeOK, Processed: done}})
	}
}
