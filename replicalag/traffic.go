package replicalag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/internal/wait"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// Seed streams: every random choice of a level draws from a generator
// seeded with (seed, stream), the stream naming the level, the client and
// the use, so that no choice shifts another.
const (
	useTargets uint64 = iota + 1
	useBackoff
	useSchedule
	useFaults
)

// stream names one generator: level li, client ci, use u.
func stream(li, ci int, u uint64) uint64 { return uint64(li)<<40 | uint64(ci)<<8 | u }

// clientPlan is one client's seeded schedule: the execution index each of
// its updates targets. Its backoff jitter is drawn per (update, attempt).
type clientPlan struct {
	seed    uint64
	level   int
	idx     int
	targets []int
}

// newPlans splits updates over clients, each update on a seeded execution.
func newPlans(seed uint64, level, clients, updates, execs int) []clientPlan {
	plans := make([]clientPlan, clients)
	for i := range plans {
		n := updates / clients
		if i < updates%clients {
			n++
		}
		rng := rand.New(rand.NewPCG(seed, stream(level, i, useTargets)))
		p := clientPlan{seed: seed, level: level, idx: i, targets: make([]int, n)}
		for k := range p.targets {
			p.targets[k] = rng.IntN(execs)
		}
		plans[i] = p
	}
	return plans
}

// backoff is the wait before attempt (≥ 2) of update k: BackoffBase
// doubled per attempt, capped, times a seeded factor in [0.5, 1.5).
func (p clientPlan) backoff(k, attempt int) time.Duration {
	rng := rand.New(rand.NewPCG(p.seed^uint64(k)<<20^uint64(attempt), stream(p.level, p.idx, useBackoff)))
	d := BackoffBase << min(attempt-2, 10)
	d = min(d, BackoffCap)
	return time.Duration((0.5 + rng.Float64()) * float64(d))
}

// clientStats counts one client's updates: started, done, given up, and
// the commit attempts beyond the first that the done ones needed; and its
// outbox reads.
type clientStats struct {
	updates, done, gaveUp, retries int
	outboxReads                    int
}

// Outbox reads: on the first attempt of every OutboxEvery-th update, up to
// OutboxReads times a level, a client reads the outbox from its replica
// between its load and its commit. Each lists every emit of the level so
// far (nothing acknowledges them), so the bound keeps a long level from
// reading a growing outbox again and again; and most updates keep the
// engine's step as it is, so the conflict figures stay the step's.
const (
	OutboxEvery = 4
	OutboxReads = 8
)

// client is one engine worker on its own replica. Now and then it reads
// the outbox from its replica too (readOutbox).
type client struct {
	plan    clientPlan
	c       *linearizability.Client
	execs   []string
	tries   int
	timeout time.Duration
	n       int // commit attempts, for tokens
	stats   clientStats
}

// maxRounds bounds how many times a client of the fault phase takes its
// plan's updates again while the faults go on; againPause spaces the
// updates of those rounds: they are there to span the faults, not to load
// the store (unspaced, they doubled a simulated sweep's operations and its
// CPU).
const (
	maxRounds  = 16
	againPause = 5 * time.Millisecond
)

// run takes the plan's updates until they are done, the deadline passes or
// ctx ends; with again (the fault phase), it takes them again, as updates
// k+n, k+2n, …, againPause apart, up to maxRounds times, until the deadline: the traffic
// must go on until the last fault has healed and faultTail after it, not
// stop before a fault that comes late in the plan (on a fast store, a
// simulated one, the plan's updates were done before the primary was
// killed, and a replica that came back older after the restart was read by
// no one). Store errors are recorded, not returned; the error is a harness
// failure (a call the recorder refused).
func (cl *client) run(ctx context.Context, deadline time.Time, again bool, progress *atomic.Int64) error {
	n := len(cl.plan.targets)
	for round := 0; round == 0 || again && round < maxRounds; round++ {
		for k, e := range cl.plan.targets {
			if ctx.Err() != nil || !time.Now().Before(deadline) {
				return nil
			}
			if round > 0 && !wait.Sleep(ctx, againPause) {
				return nil
			}
			if err := cl.update(ctx, round*n+k, cl.execs[e]); err != nil {
				return fmt.Errorf("client %d: %w", cl.plan.idx, err)
			}
			if progress != nil {
				progress.Add(1)
			}
		}
	}
	return nil
}

// update is the engine's step for one event: load_for_event from the
// replica, and unless the event is processed, commit the next version with
// it on the primary; on any failure back off and start again, up to the
// bound.
func (cl *client) update(ctx context.Context, k int, exec string) error {
	event := fmt.Sprintf("c%d-u%d", cl.plan.idx, k)
	cl.stats.updates++
	tried := 0 // commit attempts of this update
	for attempt := 1; attempt <= cl.tries; attempt++ {
		if attempt > 1 && !wait.Sleep(ctx, cl.plan.backoff(k, attempt)) {
			return nil
		}
		octx, cancel := context.WithTimeout(ctx, cl.timeout)
		exe, done, err := cl.c.LoadForEvent(octx, exec, event)
		cancel()
		switch {
		case errors.Is(err, linearizability.ErrNotRecorded):
			return err
		case err != nil:
			continue
		case done: // an earlier attempt whose outcome was unknown won
			cl.stats.done++
			cl.stats.retries += tried - 1
			return nil
		}
		if attempt == 1 && k%OutboxEvery == 0 {
			if err := cl.readOutbox(ctx); err != nil {
				return err
			}
		}
		tried++
		err = cl.commit(ctx, exec, event, exe)
		switch {
		case err == nil:
			cl.stats.done++
			cl.stats.retries += tried - 1
			return nil
		case errors.Is(err, linearizability.ErrNotRecorded):
			return err
		}
	}
	cl.stats.gaveUp++
	return nil
}

// readOutbox reads the outbox from the client's replica, up to OutboxReads
// times a level. What it lists is held, with the replica's loads before
// and after it, to the states the commits' prefixes produce (package
// linearizability, prefix.go): a replica that has shown a commit's row and
// then lists the outbox without its emit, or the other way round, shows
// part of a commit. Read right after a load, it finds a replica that
// applied the load's commits in part. A failed read is recorded, not
// returned.
func (cl *client) readOutbox(ctx context.Context) error {
	if cl.stats.outboxReads >= OutboxReads || ctx.Err() != nil {
		return nil
	}
	cl.stats.outboxReads++
	octx, cancel := context.WithTimeout(ctx, cl.timeout)
	defer cancel()
	if _, err := cl.c.PendingOutbox(octx); errors.Is(err, linearizability.ErrNotRecorded) {
		return err
	}
	return nil
}

// commit writes the version after exe (nil: create it), carrying the
// event and one emit, both unique witnesses of this attempt.
func (cl *client) commit(ctx context.Context, exec, event string, exe *model.Execution) error {
	cl.n++
	token := fmt.Sprintf("c%d-%d", cl.plan.idx, cl.n)
	from, prev := int64(0), ""
	if exe != nil {
		from, prev = exe.Version, tokenOf(exe)
	}
	next := &model.Execution{
		ID: exec, DefinitionID: "storecheck", Version: from, Status: "running",
		ActivePath: fmt.Sprintf("root/s%d", (from+1)%4),
		Context:    json.RawMessage(fmt.Sprintf(`{"n":%d}`, from+1)),
		Extra: map[string]json.RawMessage{
			linearizability.TokenField: jsonString(token),
			linearizability.PrevField:  jsonString(prev),
		},
	}
	b := model.Batch{
		ProcessedEventID: &event,
		Emits:            []model.Emit{{Event: model.Event{ID: token + "/e0", Name: "advanced", Data: json.RawMessage(`{}`)}}},
	}
	octx, cancel := context.WithTimeout(ctx, cl.timeout)
	defer cancel()
	return cl.c.Commit(octx, next, b)
}

// tokenOf reads the witness token of a loaded execution; "" when none.
func tokenOf(exe *model.Execution) string {
	var tok string
	if raw, ok := exe.Extra[linearizability.TokenField]; ok {
		_ = json.Unmarshal(raw, &tok)
	}
	return tok
}

func jsonString(s string) json.RawMessage {
	raw, _ := json.Marshal(s)
	return raw
}
