package rapidrun

import (
	"sync"
	"time"
)

// rapid reads its settings from the process's flag set (rapid.seed,
// rapid.checks, …), of which there is one per process, so runs that want
// different settings cannot go side by side. What rapid reads, and when
// (pgregory.net/rapid v1.3.0): rapid.seed and rapid.checks once, as
// rapid.Check starts and before it first calls the property;
// rapid.steps in every test case (T.Repeat); rapid.shrinktime as
// minimisation starts; rapid.nofailfile after a failure. So runs whose
// settings are the same but for the seed may go side by side, provided a
// run sets rapid.seed only once every run going has read its own — once
// each has called its property — and nothing else is written while any
// goes. The gate admits runs on those terms, in the order they asked.
//
// It is package state because the flag set it guards is the process's.
var gate = newSettingsGate()

// settings is what runs going side by side must share: every rapid
// setting but the seed.
type settings struct {
	checks, steps int
	shrinkTime    time.Duration
}

// settingsOf is cfg's settings, its zero fields at their defaults (Config).
func settingsOf(cfg Config) settings {
	return settings{checks: orDefault(cfg.Checks, 100), steps: orDefault(cfg.Steps, 30),
		shrinkTime: orDefault(cfg.ShrinkTime, 30*time.Second)}
}

// settingsGate admits runs into rapid.Check.
type settingsGate struct {
	mu      sync.Mutex
	changed *sync.Cond
	active  int      // runs inside rapid.Check
	current settings // theirs, while active > 0
	// seedUnread says a run has set rapid.seed and not yet called its
	// property: rapid may not have read the seed yet.
	seedUnread bool
	// asked and admitted number the runs in the order they asked; a run
	// is admitted only after every run that asked before it.
	asked, admitted uint64
	restore         func() // puts the flags back when the last run leaves
}

func newSettingsGate() *settingsGate {
	g := &settingsGate{}
	g.changed = sync.NewCond(&g.mu)
	return g
}

// enter waits until cfg's run may go — every run that asked before it
// admitted, no seed unread, and the runs going (if any) on cfg's settings
// — and points rapid's flags at cfg: all of them when no run goes, only
// the seed otherwise. It returns seedRead, to call once rapid has read the
// seed (the run's property was called, or rapid.Check returned), and
// leave, to call when rapid.Check has returned; both may be called more
// than once.
func (g *settingsGate) enter(cfg Config) (seedRead, leave func(), err error) {
	want := settingsOf(cfg)
	g.mu.Lock()
	defer g.mu.Unlock()
	turn := g.asked
	g.asked++
	for g.admitted != turn || g.seedUnread || g.active > 0 && g.current != want {
		g.changed.Wait()
	}
	g.admitted++
	defer g.changed.Broadcast() // the next in turn may now look
	if g.active == 0 {
		restore, err := setFlags(cfg)
		if err != nil {
			return nil, nil, err
		}
		g.restore, g.current = restore, want
	} else if err := setSeed(cfg.Seed); err != nil {
		return nil, nil, err
	}
	g.active++
	g.seedUnread = true
	read := sync.OnceFunc(func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.seedUnread = false
		g.changed.Broadcast()
	})
	leave = sync.OnceFunc(func() {
		read()
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.active--; g.active == 0 {
			g.restore()
			g.restore = nil
		}
		g.changed.Broadcast()
	})
	return read, leave, nil
}
