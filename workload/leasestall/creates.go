package leasestall

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/storecheck/storecheck/linearizability/leases"
	"github.com/storecheck/storecheck/model/runstore"
)

// The guarantees the create phase checks.
const (
	GuaranteeIdempotent = "idempotent create returns one run"
	GuaranteeOneActive  = "one active run per session"
)

// createOutcome is one racing create's result.
type createOutcome struct {
	key    string
	run    string // the run returned; "" on error
	runKey string // the idempotency key of the run returned
	err    error
}

// raceCreates makes, for every session, clients creates race at once: even
// clients send the same request under the session's shared idempotency key
// (each with its own run id, as a retrying client would), every fourth
// client that request under the shared key in upper case (another key: keys
// are compared exactly), the other odd clients a request of their own under
// their own key. In each session exactly one run may come to exist: every
// create that succeeds returns it, under the key it was asked with, and
// every other is a conflict. It returns the runs created and the violations
// seen.
func raceCreates(ctx context.Context, store runstore.Store, sessions, clients int, now time.Time) ([]string, []leases.Violation, error) {
	var created []string
	var found []leases.Violation
	for s := range sessions {
		session := fmt.Sprintf("session-%02d", s)
		out := make([]createOutcome, clients)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for c := range clients {
			req := runstore.NewRun{ID: fmt.Sprintf("run-%02d-%d", s, c), TenantID: "lease-stall", SessionID: session,
				PlanID: "plan", RevisionID: "rev", IdempotencyKey: session + "/shared", Priority: int64(s % 3),
				State: []byte(`{"seq":0}`), NextNodes: []string{"n1"}, Now: now}
			switch {
			case c%4 == 3:
				req.IdempotencyKey = strings.ToUpper(req.IdempotencyKey)
			case c%2 == 1:
				req.IdempotencyKey, req.Priority = fmt.Sprintf("%s/own-%d", session, c), 10+int64(c)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				run, err := store.CreateRun(ctx, req)
				out[c] = createOutcome{key: req.IdempotencyKey, run: run.ID, runKey: run.IdempotencyKey, err: err}
			}()
		}
		close(start)
		wg.Wait()
		winner, vs, err := judgeCreates(session, out)
		if err != nil {
			return nil, nil, err
		}
		found = append(found, vs...)
		if winner != "" {
			created = append(created, winner)
		}
	}
	return created, found, nil
}

// judgeCreates checks one session's race.
func judgeCreates(session string, out []createOutcome) (string, []leases.Violation, error) {
	var found []leases.Violation
	runsSeen := map[string]bool{}
	byKey := map[string]string{}
	for _, o := range out {
		switch runstore.Kind(o.err) {
		case "":
		case "conflict":
			continue
		default:
			return "", nil, fmt.Errorf("create in %s under key %q: %w", session, o.key, o.err)
		}
		runsSeen[o.run] = true
		if o.runKey != o.key {
			found = append(found, leases.Violation{Guarantee: GuaranteeIdempotent,
				Detail: fmt.Sprintf("a create under key %q returned run %q, created under key %q (keys must be compared exactly)", o.key, o.run, o.runKey)})
		}
		if prev, ok := byKey[o.key]; ok && prev != o.run {
			found = append(found, leases.Violation{Guarantee: GuaranteeIdempotent,
				Detail: fmt.Sprintf("key %q returned runs %q and %q", o.key, prev, o.run)})
		}
		byKey[o.key] = o.run
	}
	if len(runsSeen) > 1 {
		found = append(found, leases.Violation{Guarantee: GuaranteeOneActive,
			Detail: fmt.Sprintf("%d racing creates in %s all succeeded with different runs %v", len(runsSeen), session, keys(runsSeen))})
	}
	if names := keys(runsSeen); len(names) > 0 {
		return names[0], found, nil
	}
	return "", append(found, leases.Violation{Guarantee: GuaranteeOneActive,
		Detail: fmt.Sprintf("no create in the empty session %s succeeded", session)}), nil
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
