package linearizability

import (
	"fmt"
	"sync"
	"time"

	"github.com/storecheck/storecheck/model"
)

// Recorder wraps a model.Store and records every call made through its
// Clients. Call and return times come from one monotonic base clock and are
// taken under one lock, so that they are strictly increasing in the order the
// recorder saw the events.
type Recorder struct {
	store model.Store
	base  time.Time // carries Go's monotonic clock reading

	mu     sync.Mutex
	last   int64 // last timestamp handed out
	nextID int   // next porcupine client id
	ops    opLog
}

// NewRecorder returns a recorder over store, with its base time now.
func NewRecorder(store model.Store) *Recorder {
	return &Recorder{store: store, base: time.Now()}
}

// Client returns a new client with a fresh id.
func (r *Recorder) Client() *Client { return r.NewClient(ClientOptions{}) }

// HealClient returns a new client whose operations are marked Heal: the
// final reads, taken with no faults, that the global checks read as the
// final tables.
func (r *Recorder) HealClient() *Client { return r.NewClient(ClientOptions{Heal: true}) }

// sibling returns a new client made as c was, with a fresh id.
func (c *Client) sibling() *Client {
	return c.r.NewClient(ClientOptions{Store: c.store, Replica: c.replica, ReadYourWrites: c.ryw, Heal: c.heal})
}

// ClientOptions say how a client's operations are made and marked.
type ClientOptions struct {
	// Store, when set, is the store the client calls instead of the
	// recorder's: an embedded replica's own handle, say.
	Store model.Store
	// Replica names the replica Store reads from; its reads are then
	// checked as replica reads (see Operation.Replica).
	Replica string
	// ReadYourWrites says the replica promises its client's own writes.
	ReadYourWrites bool
	// Heal marks the client's operations as heal reads.
	Heal bool
}

// NewClient returns a new client with a fresh id, made as opt says.
func (r *Recorder) NewClient(opt ClientOptions) *Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	store := opt.Store
	if store == nil {
		store = r.store
	}
	c := &Client{r: r, store: store, id: r.nextID, heal: opt.Heal, replica: opt.Replica, ryw: opt.ReadYourWrites && opt.Replica != ""}
	r.nextID++
	return c
}

// Now returns the recorder's clock: nanoseconds since its base time, on
// the scale of every call and return it records (for a fault log).
func (r *Recorder) Now() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nowLocked()
}

// History returns a copy of the operations recorded so far, in the order
// they returned.
func (r *Recorder) History() History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return History{Meta: DefaultMeta(), Ops: r.ops.all()}
}

// Len returns how many operations have been recorded.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ops.n
}

// nowLocked returns nanoseconds since the base time, strictly greater than
// any timestamp handed out before. r.mu must be held.
func (r *Recorder) nowLocked() int64 {
	t := time.Since(r.base).Nanoseconds()
	if t <= r.last {
		t = r.last + 1
	}
	r.last = t
	return t
}

// Client records operations of one logical client. Its operations must be
// sequential: starting one while another is in flight is refused with
// ErrOverlap and records nothing. After an indeterminate operation the
// client continues under a new id.
type Client struct {
	r       *Recorder
	store   model.Store
	heal    bool
	replica string
	ryw     bool

	// id and busy are guarded by r.mu.
	id   int
	busy bool
}

// ID returns the client's current porcupine client id.
func (c *Client) ID() int {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	return c.id
}

// begin marks the client busy and returns the call time, or ErrOverlap.
func (c *Client) begin(kind Kind) (int64, error) {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	if c.busy {
		return 0, fmt.Errorf("client %d: %s while another operation is in flight: %w (%w)", c.id, kind, ErrOverlap, ErrNotRecorded)
	}
	c.busy = true
	return c.r.nowLocked(), nil
}

// finish stamps the return, appends op and frees the client. An
// indeterminate operation returns at EndOfHistory and moves the client to a
// new id, since porcupine needs each client's operations sequential and this
// one never ends.
func (c *Client) finish(op Operation) {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	t := c.r.nowLocked()
	op.Client, op.Heal = c.id, c.heal
	op.Replica, op.ReadYourWrites = c.replica, c.ryw
	op.Return = t
	if op.Output.Outcome == OutcomeIndeterminate {
		op.Return, op.Output.Observed = EndOfHistory, t
		c.id = c.r.nextID
		c.r.nextID++
	}
	c.r.ops.append(&op)
	c.busy = false
}

// opLog holds the recorded operations in chunks of a fixed capacity, so that
// recording one never moves those before it: a single growing slice would
// copy them all, under the recorder's lock and with every client waiting,
// each time it doubled. It keeps each as a record, a third of an
// Operation's size: appending whole Operations was a sixth of the
// recorder's cost, not counting the GC that scanned them
// (docs/PERFORMANCE.md).
type opLog struct {
	chunks [][]record
	n      int
}

// opChunk is how many operations one chunk holds.
const opChunk = 256

func (l *opLog) append(op *Operation) {
	if k := len(l.chunks); k == 0 || len(l.chunks[k-1]) == opChunk {
		l.chunks = append(l.chunks, make([]record, 0, opChunk))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, compact(op))
	l.n++
}

// all returns a copy of the operations, in the order they were appended.
func (l *opLog) all() []Operation {
	out := make([]Operation, 0, l.n)
	for _, c := range l.chunks {
		for i := range c {
			out = append(out, c[i].operation())
		}
	}
	return out
}

// record is an operation as the opLog keeps it. The fields a plain load,
// commit or save sets — nearly every operation of a run — are kept in
// place; any other operation is kept whole in full.
type record struct {
	full *Operation // the whole operation, when it is not plain

	kind      Kind
	outcome   Outcome
	execution string
	inData    string // Input.Data
	inPrev    string // Input.Prev
	outData   string // Output.Data
	expected  int64  // Input.Expected
	version   int64  // Output.Version
	call, ret int64
	client    int
	exists    bool // Output.Exists
	processed bool // Output.Processed
	heal      bool
}

// compact returns op's record: in place when op sets no field beyond those
// a record holds, else a copy of it whole.
func compact(op *Operation) record {
	in, out := &op.Input, &op.Output
	plain := op.Replica == "" && !op.ReadYourWrites &&
		in.EventID == "" && in.Emits == nil && in.Timers == nil && in.Spawns == nil &&
		in.Trace == "" && in.Seq == 0 && in.Path == "" && in.FireAt == 0 && in.Now == 0 &&
		out.Found == nil && out.Trace == nil && out.Outbox == nil && out.Spawns == nil &&
		out.Timers == nil && out.Error == "" && out.Observed == 0
	if !plain {
		full := *op
		return record{full: &full}
	}
	return record{
		kind: op.Kind, outcome: out.Outcome, execution: op.Execution,
		inData: in.Data, inPrev: in.Prev, outData: out.Data,
		expected: in.Expected, version: out.Version, call: op.Call, ret: op.Return,
		client: op.Client, exists: out.Exists, processed: out.Processed, heal: op.Heal,
	}
}

// operation returns the operation r was made from.
func (r *record) operation() Operation {
	if r.full != nil {
		return *r.full
	}
	return Operation{
		Client: r.client, Kind: r.kind, Execution: r.execution,
		Input:  Input{Expected: r.expected, Data: r.inData, Prev: r.inPrev},
		Output: Output{Outcome: r.outcome, Exists: r.exists, Version: r.version, Data: r.outData, Processed: r.processed},
		Call:   r.call, Return: r.ret, Heal: r.heal,
	}
}
