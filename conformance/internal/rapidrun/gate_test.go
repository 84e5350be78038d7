package rapidrun

import (
	"flag"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// drawing is a passing property that records what it drew, case by case,
// and how many runs were inside a property at once.
func drawing(drawn *[]int, inside, most *atomic.Int32) func(*rapid.T) {
	return func(t *rapid.T) {
		n := inside.Add(1)
		defer inside.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		*drawn = append(*drawn, rapid.IntRange(0, 1<<30).Draw(t, "x"))
		time.Sleep(time.Millisecond) // long enough for the other runs to start
	}
}

// Runs on the same settings go side by side, and each draws what its seed
// draws alone: a run's seed is never overwritten before rapid has read it.
func TestRunsOnOneSettingGoSideBySideWithTheirOwnSeeds(t *testing.T) {
	const runs = 6
	var inside, most atomic.Int32
	alone := make([][]int, runs)
	for i := range runs {
		if _, err := Run(Config{Name: "alone", Seed: uint64(i + 1), Checks: 20}, drawing(&alone[i], &inside, &most)); err != nil {
			t.Fatal(err)
		}
	}
	most.Store(0)
	together := make([][]int, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			out, err := Run(Config{Name: "together", Seed: uint64(i + 1), Checks: 20}, drawing(&together[i], &inside, &most))
			if err != nil || !out.Passed {
				t.Errorf("seed %d: %v, %+v", i+1, err, out)
			}
		})
	}
	wg.Wait()
	for i := range runs {
		if len(alone[i]) != 20 || !slices.Equal(alone[i], together[i]) {
			t.Errorf("seed %d drew %v alone and %v beside the others", i+1, alone[i], together[i])
		}
	}
	if most.Load() < 2 {
		t.Errorf("at most %d run was inside its property at once: runs on one setting did not go side by side", most.Load())
	}
}

// Runs on other settings never go side by side: while a run goes, rapid's
// flags say its settings, and no run of another setting is inside its
// property.
func TestRunsOnOtherSettingsWaitForEachOther(t *testing.T) {
	before := seedFlag()
	configs := []Config{{Checks: 5, Steps: 10}, {Checks: 7, Steps: 40}, {Checks: 5, Steps: 10, ShrinkTime: time.Second}}
	inside := make([]atomic.Int32, len(configs))
	var wg sync.WaitGroup
	for i := range 12 {
		k := i % len(configs)
		cfg := configs[k]
		cfg.Name, cfg.Seed = fmt.Sprintf("setting %d", k), uint64(i+1)
		wg.Go(func() {
			_, err := Run(cfg, func(rt *rapid.T) {
				inside[k].Add(1)
				defer inside[k].Add(-1)
				for j := range inside {
					if j != k && inside[j].Load() > 0 {
						t.Errorf("a run on setting %d went beside one on setting %d", k, j)
					}
				}
				want := flagValues(cfg)
				got := fmt.Sprintf("%s %s %s", flag.Lookup("rapid.checks").Value, flag.Lookup("rapid.steps").Value, flag.Lookup("rapid.shrinktime").Value)
				if w := fmt.Sprintf("%s %s %s", want["rapid.checks"], want["rapid.steps"], want["rapid.shrinktime"]); got != w {
					t.Errorf("a run on setting %d saw rapid's flags say %q, want %q", k, got, w)
				}
				time.Sleep(time.Millisecond)
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := seedFlag(); got != before {
		t.Errorf("rapid.seed is %s after the runs, want it put back to %s", got, before)
	}
}

// entered runs g.enter(cfg) on a goroutine of its own and delivers its
// seedRead and leave once it returns.
func entered(t *testing.T, g *settingsGate, cfg Config) <-chan [2]func() {
	c := make(chan [2]func(), 1)
	go func() {
		read, leave, err := g.enter(cfg)
		if err != nil {
			t.Error(err)
		}
		c <- [2]func(){read, leave}
	}()
	return c
}

// admittedIn reports whether the run waiting on c is admitted within d,
// and its functions if so.
func admittedIn(c <-chan [2]func(), d time.Duration) ([2]func(), bool) {
	select {
	case f := <-c:
		return f, true
	case <-time.After(d):
		return [2]func(){}, false
	}
}

// admitWithin bounds the wait for a run the gate must admit: generous,
// since only a wrong gate ever waits it out. The 50 ms windows in which a
// run must not be admitted can only let a wrong gate pass, never fail a
// right one.
const admitWithin = 10 * time.Second

// keepRapidFlags puts rapid's flags back as they are now when the test
// ends: a test that fails with runs still inside its own gate would leave
// them at its settings for the tests after it.
func keepRapidFlags(t *testing.T) {
	old := map[string]string{}
	for name := range flagValues(Config{Seed: 1}) {
		old[name] = flag.Lookup(name).Value.String()
	}
	t.Cleanup(func() {
		for name, v := range old {
			_ = flag.Set(name, v)
		}
	})
}

func seedFlag() string { return flag.Lookup("rapid.seed").Value.String() }

// The gate's terms, one at a time: a run on the same settings waits until
// the run before it has read its seed, then sets its own; a run on other
// settings waits until every run going has left; and a run that asked
// later, even on the going runs' settings, waits behind it.
func TestGateTerms(t *testing.T) {
	before := seedFlag() + " " + flag.Lookup("rapid.checks").Value.String()
	keepRapidFlags(t)
	g := newSettingsGate()
	a := Config{Seed: 11, Checks: 3}
	other := Config{Seed: 12, Checks: 4}
	same := Config{Seed: 13, Checks: 3}

	fa, ok := admittedIn(entered(t, g, a), admitWithin)
	if !ok {
		t.Fatal("the first run was not admitted")
	}
	if seedFlag() != "11" {
		t.Fatalf("rapid.seed is %s once the first run is admitted, want 11", seedFlag())
	}
	waitSame := entered(t, g, Config{Seed: 14, Checks: 3})
	if _, ok := admittedIn(waitSame, 50*time.Millisecond); ok {
		t.Fatal("a run on the same settings was admitted before the first had read its seed")
	}
	if seedFlag() != "11" {
		t.Fatalf("rapid.seed became %s before the first run read it", seedFlag())
	}
	fa[0]() // the first run's property was called
	fs, ok := admittedIn(waitSame, admitWithin)
	if !ok || seedFlag() != "14" {
		t.Fatalf("once the seed was read a run on the same settings was admitted %v, rapid.seed %s (want 14)", ok, seedFlag())
	}
	fs[0]()

	waitOther := entered(t, g, other)
	time.Sleep(20 * time.Millisecond) // it asks before the next
	waitLater := entered(t, g, same)
	if _, ok := admittedIn(waitOther, 50*time.Millisecond); ok {
		t.Fatal("a run on other settings was admitted while two runs went")
	}
	if _, ok := admittedIn(waitLater, 50*time.Millisecond); ok {
		t.Fatal("a run on the going runs' settings went ahead of one that asked before it")
	}
	fa[1]()
	fs[1]()
	fo, ok := admittedIn(waitOther, admitWithin)
	if want := flagValues(other)["rapid.checks"]; !ok || flag.Lookup("rapid.checks").Value.String() != want {
		t.Fatalf("once the runs left a run on other settings was admitted %v, rapid.checks %s (want %s)", ok, flag.Lookup("rapid.checks").Value, want)
	}
	fo[1]() // leave calls seedRead itself
	fl, ok := admittedIn(waitLater, admitWithin)
	if !ok {
		t.Fatal("the last run was never admitted")
	}
	fl[1]()
	if after := seedFlag() + " " + flag.Lookup("rapid.checks").Value.String(); after != before {
		t.Errorf("after the last run left rapid.seed and rapid.checks are %s, want them put back (%s)", after, before)
	}
}

// A Config says how many test cases run, also in a test binary run with
// go test -short, where rapid alone would run a fifth of them (and half
// the steps): `storecheck run --checks 3` in a -short test is three cases,
// not none.
func TestAConfigRunsItsChecksUnderShort(t *testing.T) {
	for _, short := range []string{"true", "false"} {
		old := flag.Lookup("test.short").Value.String()
		if err := flag.Set("test.short", short); err != nil {
			t.Fatal(err)
		}
		cases, steps := 0, ""
		_, err := Run(Config{Name: "short", Seed: 3, Checks: 3, Steps: 7}, func(*rapid.T) {
			cases++
			steps = flag.Lookup("rapid.steps").Value.String()
		})
		_ = flag.Set("test.short", old)
		if err != nil {
			t.Fatal(err)
		}
		wantSteps := "7"
		if short == "true" {
			wantSteps = "14" // rapid halves it: 7 steps on average
		}
		if cases != 3 || steps != wantSteps {
			t.Errorf("-short=%s: %d test cases, rapid.steps %s; want 3 and %s", short, cases, steps, wantSteps)
		}
	}
}
