package leases

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/storecheck/storecheck/model/runstore"
)

// Recorder wraps a run store and records every call made through its
// Clients. Call and return times come from one clock and are taken under
// one lock, so that they are strictly increasing in the order the recorder
// saw them.
type Recorder struct {
	store runstore.Store
	clock func() int64

	mu     sync.Mutex
	last   int64
	nextID int
	ops    []Op
}

// NewRecorder returns a recorder over store whose timestamps are
// nanoseconds since it was made, on Go's monotonic clock.
func NewRecorder(store runstore.Store) *Recorder {
	base := time.Now()
	return &Recorder{store: store, clock: func() int64 { return time.Since(base).Nanoseconds() }}
}

// NewWallRecorder returns a recorder whose timestamps are the wall clock's
// Unix nanoseconds and whose client ids start at firstID, so that the
// histories of several processes on one machine merge into one.
//
// Decision: processes share no monotonic clock; CLOCK_REALTIME is shared by
// every process of a machine, and a step of it during a run (NTP) could at
// worst make the checker see operations as concurrent that were not, or the
// reverse. The lease-stall scenario runs for seconds.
func NewWallRecorder(store runstore.Store, firstID int) *Recorder {
	return &Recorder{store: store, clock: func() int64 { return time.Now().UnixNano() }, nextID: firstID}
}

// Client returns a new client with a fresh id.
func (r *Recorder) Client() *Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := &Client{r: r, id: r.nextID}
	r.nextID++
	return c
}

// History returns a copy of the operations recorded so far.
func (r *Recorder) History() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ops)
}

// Len returns how many operations have been recorded (and not drained).
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ops)
}

// Drain returns the operations recorded since the last Drain and forgets
// them.
func (r *Recorder) Drain() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.ops
	r.ops = nil
	return out
}

func (r *Recorder) nowLocked() int64 {
	t := r.clock()
	if t <= r.last {
		t = r.last + 1
	}
	r.last = t
	return t
}

// Client records the operations of one sequential client.
type Client struct {
	r  *Recorder
	id int // guarded by r.mu
	// PastLease marks the client's operations as made past the worker's
	// lease (Op.PastLease); the worker sets and clears it.
	PastLease bool
}

func (c *Client) begin() int64 {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	return c.r.nowLocked()
}

// end stamps the return and appends op. An operation with an unknown
// outcome returns at EndOfHistory and moves the client to a new id, since
// porcupine needs each client's operations sequential.
func (c *Client) end(op Op, err error) {
	op.Outcome = classify(err, op.Outcome)
	if err != nil {
		op.Err = err.Error()
	}
	op.PastLease = c.PastLease
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	op.Client = c.id
	op.Return = c.r.nowLocked()
	if op.Outcome == Indeterminate {
		op.Return = EndOfHistory
		c.id = c.r.nextID
		c.r.nextID++
	}
	c.r.ops = append(c.r.ops, op)
}

// classify maps an error to an outcome; ok is the outcome of no error.
func classify(err error, ok Outcome) Outcome {
	switch runstore.Kind(err) {
	case "":
		if ok == "" {
			return OK
		}
		return ok
	case "stale_lease":
		return Stale
	case "conflict":
		return Conflict
	case "not_found":
		return NotFound
	case "invalid_transition", "invalid_argument":
		return Invalid
	}
	if errors.Is(err, runstore.ErrNotApplied) {
		return Failed
	}
	return Indeterminate
}

// Claim calls claim_next and records it.
func (c *Client) Claim(ctx context.Context, worker string, lease time.Duration, now time.Time) (*runstore.Claim, error) {
	op := Op{Kind: Claim, Worker: worker, Lease: int64(lease), Now: now.UnixNano(), Call: c.begin()}
	cl, err := c.r.store.ClaimNext(ctx, worker, lease, now)
	if err == nil && cl == nil {
		op.Outcome = None
	}
	if cl != nil {
		op.Run, op.Token, op.Version, op.Expires = cl.Run.ID, cl.Lease.Token, cl.Run.Version, cl.Lease.ExpiresAt.UnixNano()
	}
	c.end(op, err)
	return cl, err
}

// Renew calls renew_lease and records it.
func (c *Client) Renew(ctx context.Context, runID string, f runstore.Fence, lease time.Duration, now time.Time) (runstore.Lease, error) {
	op := Op{Kind: Renew, Worker: f.Worker, Run: runID, Token: f.Token, Lease: int64(lease), Now: now.UnixNano(), Call: c.begin()}
	l, err := c.r.store.RenewLease(ctx, runID, f, lease, now)
	if err == nil {
		op.Expires = l.ExpiresAt.UnixNano()
	}
	c.end(op, err)
	return l, err
}

// Commit calls commit_checkpoint and records it.
func (c *Client) Commit(ctx context.Context, cp runstore.Checkpoint, f runstore.Fence, expected int64) (runstore.Run, error) {
	op := Op{Kind: Commit, Worker: f.Worker, Run: cp.RunID, Token: f.Token, Now: cp.CreatedAt.UnixNano(),
		Expected: expected, Seq: cp.Sequence, Call: c.begin()}
	run, err := c.r.store.CommitCheckpoint(ctx, cp, f, expected)
	if err == nil {
		op.Version = run.Version
	}
	c.end(op, err)
	return run, err
}

// Finish calls finish_claim and records it.
func (c *Client) Finish(ctx context.Context, req runstore.Finish) (runstore.Run, error) {
	op := Op{Kind: Finish, Worker: req.Fence.Worker, Run: req.RunID, Token: req.Fence.Token, Now: req.Now.UnixNano(),
		Expected: req.ExpectedVersion, Target: string(req.Target), Call: c.begin()}
	run, err := c.r.store.FinishClaim(ctx, req)
	if err == nil {
		op.Version = run.Version
	}
	c.end(op, err)
	return run, err
}

// Requeue calls requeue_expired_leases and records it.
func (c *Client) Requeue(ctx context.Context, now time.Time) ([]string, error) {
	op := Op{Kind: Requeue, Now: now.UnixNano(), Call: c.begin()}
	ids, err := c.r.store.RequeueExpiredLeases(ctx, now)
	op.Requeued = ids
	c.end(op, err)
	return ids, err
}
