package replicalag

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
)

// Result is what a sweep found.
type Result struct {
	// Kind says what the replicas were; Simulation whether simulated.
	Kind       string `json:"kind"`
	Simulation bool   `json:"simulation"`
	Seed       uint64 `json:"seed"`
	// Levels are the sweep's levels in order; Faults the fault phase, nil
	// when it did not run.
	Levels []*LevelResult `json:"levels"`
	Faults *LevelResult   `json:"faults,omitempty"`
	// Verdict is Illegal if any phase broke a guarantee, Unknown if a
	// checker ran out of time and none did, Ok otherwise.
	Verdict linearizability.Verdict `json:"verdict"`
	// Guarantee names the first guarantee broken; Reason the first
	// violation, with its phase.
	Guarantee string `json:"guarantee,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// Digest identifies the seeded schedule: the plans, backoffs, sync
	// waits and fault plan. Equal seeds and settings, equal digests.
	Digest string `json:"schedule_digest"`
}

// ErrNotOpened marks a sweep that could not open its cluster: the backend
// is not there. errors.Is tells a scenario to report NOT RUN.
var ErrNotOpened = errNotOpened

// Run runs the sweep on t: every level in order, then the fault phase. A
// broken guarantee is a Result with the verdict Illegal; the error is for
// the harness (a cluster that cannot be opened, wrapped with ErrNotOpened;
// ctx ending; artifacts that cannot be written).
func Run(ctx context.Context, t *Target, cfg Config) (*Result, error) {
	cfg, err := cfg.normalize(t)
	if err != nil {
		return nil, err
	}
	res := &Result{Kind: t.Kind, Simulation: t.Simulation, Seed: cfg.Seed, Digest: Digest(t, cfg)}
	phases := make([]phase, 0, len(cfg.Levels)+len(t.Links)+1)
	for i, lag := range cfg.Levels {
		phases = append(phases, phase{index: i, name: Label(lag), lag: lag, updates: cfg.perLevel(), time: cfg.LevelTime})
	}
	top := cfg.Levels[len(cfg.Levels)-1]
	for j, rate := range t.Links {
		// At the top lag, over a slowed link: every sync takes longer.
		phases = append(phases, phase{index: len(cfg.Levels) + 1 + j, name: LinkLabel(rate), lag: top, link: rate, updates: cfg.perLevel(), time: cfg.LevelTime})
	}
	if cfg.Faults {
		phases = append(phases, phase{index: len(cfg.Levels), name: "faults", lag: top, updates: 4 * cfg.perLevel(), time: cfg.LevelTime, faults: true})
	}
	for _, ph := range phases {
		lr, err := runPhase(ctx, t, &cfg, ph)
		if err != nil {
			return res, err
		}
		if ph.faults {
			res.Faults = lr
		} else {
			res.Levels = append(res.Levels, lr)
		}
		res.judge(lr)
	}
	if cfg.OutDir != "" {
		if err := res.write(evidence.At(cfg.OutDir)); err != nil {
			return res, err
		}
	}
	return res, nil
}

// judge folds one phase's verdict into the sweep's.
func (r *Result) judge(lr *LevelResult) {
	switch {
	case lr.Verdict == linearizability.Illegal && r.Verdict != linearizability.Illegal:
		r.Verdict = linearizability.Illegal
		if len(lr.Guarantees) > 0 {
			r.Guarantee = lr.Guarantees[0]
		}
		if len(lr.Violations) > 0 {
			r.Reason = fmt.Sprintf("%s: %s", lr.Name, lr.Violations[0])
		}
	case lr.Verdict == linearizability.Unknown && r.Verdict != linearizability.Illegal:
		r.Verdict, r.Reason = linearizability.Unknown, lr.Name+": the linearizability checker timed out"
	case r.Verdict == "":
		r.Verdict = linearizability.Ok
	}
}

// Metrics are the sweep's figures: every phase's, prefixed with its name
// ("lag_200ms_conflict_rate", "faults_lost_updates"), and the totals.
func (r *Result) Metrics() map[string]float64 {
	m := map[string]float64{"levels": float64(len(r.Levels))}
	lost := 0
	for _, lr := range r.phases() {
		for k, v := range lr.metrics() {
			m[k] = v
		}
		lost += lr.LostUpdates
	}
	m["lost_updates"] = float64(lost)
	if r.Simulation {
		m["simulation"] = 1
	} else {
		m["simulation"] = 0
	}
	return m
}

// phases lists the levels, then the fault phase.
func (r *Result) phases() []*LevelResult {
	out := append([]*LevelResult(nil), r.Levels...)
	if r.Faults != nil {
		out = append(out, r.Faults)
	}
	return out
}

// Digest hashes the seeded schedule a sweep on t with cfg follows: per
// level, every client's targets and first backoffs and every replica's
// first sync waits; and the fault plan. It runs nothing.
func Digest(t *Target, cfg Config) string {
	cfg, err := cfg.normalize(t)
	if err != nil {
		return ""
	}
	h := sha256.New()
	put := func(v int64) { _ = binary.Write(h, binary.LittleEndian, v) }
	names := make([]string, cfg.Clients)
	for i := range names {
		names[i] = fmt.Sprintf("r%d", i)
	}
	for li, lag := range cfg.Levels {
		put(int64(lag))
		for i, p := range newPlans(cfg.Seed, li, cfg.Clients, cfg.perLevel(), cfg.Executions) {
			for _, e := range p.targets {
				put(int64(e))
			}
			for a := 2; a <= cfg.MaxAttempts; a++ {
				put(int64(p.backoff(0, a)))
			}
			s := replica.Schedule{Interval: lag, Jitter: t.Jitter, Seed: cfg.Seed, Stream: stream(li, i, useSchedule)}
			for _, w := range s.Waits(16) {
				put(int64(w))
			}
		}
	}
	for j, rate := range t.Links {
		put(rate)
		for _, p := range newPlans(cfg.Seed, len(cfg.Levels)+1+j, cfg.Clients, cfg.perLevel(), cfg.Executions) {
			for _, e := range p.targets {
				put(int64(e))
			}
		}
	}
	if cfg.Faults {
		for _, s := range faultPlan(cfg.Seed, names, faultsOf(t)) {
			h.Write([]byte(s.Fault + "/" + s.Target))
			put(int64(s.At))
			put(int64(s.For))
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// IsNotOpened reports whether err says the backend could not be opened.
func IsNotOpened(err error) bool { return errors.Is(err, errNotOpened) }
