package workload

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
)

// A client's plan is a pure function of the seed: how many steps it takes
// (its share of the run's step budget), and for each step its kind (from
// the mix) and its execution. Every other random choice a step makes comes
// from a stream derived from (seed, client, step), so what a step happened
// to see (a conflict, a missing row) never shifts what later steps draw:
// two runs with one seed make the same steps with the same choices; only
// the interleaving, and the answers, differ.

// planDigestSteps bounds the steps a digest covers per client: a run bound
// by time rather than steps has a plan as long as the budget allows.
const planDigestSteps = 10_000

// plan is one client's.
type plan struct {
	seed   uint64
	client int
	steps  int   // the client's share of the budget
	pick   []int // cumulative mix weights
	execs  int
}

// newPlan is client idx's plan under cfg (normalized).
func newPlan(cfg *Config, idx int) *plan {
	p := &plan{seed: cfg.Seed, client: idx, steps: share(cfg.Ops, cfg.Clients, idx-cfg.FirstClient), execs: cfg.Executions}
	total := 0
	for _, wt := range cfg.Mix.weights() {
		total += wt
		p.pick = append(p.pick, total)
	}
	return p
}

// share is client i's part of ops steps over clients: equal parts, the
// first ops%clients clients one more.
func share(ops, clients, i int) int {
	n := ops / clients
	if i < ops%clients {
		n++
	}
	return n
}

// at is step i's kind (an index into the mix) and execution (an index into
// the executions).
func (p *plan) at(i int) (kind, exec int) {
	rng := rand.New(rand.NewPCG(p.seed, streamOf(p.client, i, 0)))
	r := rng.IntN(p.pick[len(p.pick)-1])
	for k, upTo := range p.pick {
		if r < upTo {
			kind = k
			break
		}
	}
	return kind, rng.IntN(p.execs)
}

// rngFor is step i's own stream for the choices it makes as it goes.
func (p *plan) rngFor(i int) *rand.Rand {
	return rand.New(rand.NewPCG(p.seed, streamOf(p.client, i, 1)))
}

// streamOf numbers a (client, step, purpose) stream.
func streamOf(client, step, purpose int) uint64 {
	return uint64(client)<<40 | uint64(step)<<2 | uint64(purpose)
}

// PlanDigest identifies the plan of a run under cfg: every client's steps
// (kind and execution), up to planDigestSteps each. Equal seeds and
// settings, equal digests; it runs nothing.
func PlanDigest(cfg Config) string {
	cfg, err := cfg.normalize()
	if err != nil {
		return ""
	}
	h := sha256.New()
	put := func(v int) { _ = binary.Write(h, binary.LittleEndian, int64(v)) }
	put(cfg.Clients)
	put(cfg.Executions)
	for c := range cfg.Clients {
		p := newPlan(&cfg, cfg.FirstClient+c)
		put(p.steps)
		for i := range min(p.steps, planDigestSteps) {
			k, e := p.at(i)
			put(k)
			put(e)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
