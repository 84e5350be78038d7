package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/internal/wait"
)

// Schedule says which faults to inject, how often and for how long.
type Schedule struct {
	// Faults are injected one at a time: in order, round and round, when
	// InOrder; else each picked at random.
	Faults  []Fault
	InOrder bool
	// Interval is the quiet time before each fault; Duration how long each
	// holds before it is healed. Jitter (0..1) varies both by up to that
	// fraction either way, drawn from Seed.
	Interval, Duration time.Duration
	Jitter             float64
	Seed               uint64
	// Max bounds the number of faults; 0 means 1000.
	Max int
}

// healTimeout and injectTimeout bound one heal and one injection, which
// run to their end even after the schedule's context has ended.
const (
	healTimeout   = 2 * time.Minute
	injectTimeout = 2 * time.Minute
)

// Available reports why some fault of the schedule cannot run on c.
func (s Schedule) Available(c Cluster) error {
	if len(s.Faults) == 0 {
		return errors.New("the schedule has no faults")
	}
	for _, f := range s.Faults {
		if err := f.Available(c); err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
	}
	return nil
}

// Hooks let a caller follow the schedule; nil fields are skipped.
type Hooks struct {
	// Injected is called once a fault is in place, Healed once it is gone.
	Injected func(name, target string)
	Healed   func(name, target string)
}

// Run injects the schedule's faults into c until ctx ends, each recorded
// in tl with times from now. Every fault is healed when its window ends,
// or at once when ctx ends; Run returns only when none it injected is left
// in place (a heal that failed is tried again at the end). The error joins
// the faults that could not be injected or healed.
func (s Schedule) Run(ctx context.Context, c Cluster, now func() int64, tl *evidence.Timeline, hooks Hooks) error {
	rng := rand.New(rand.NewPCG(s.Seed, 0xfa11))
	limit := s.Max
	if limit == 0 {
		limit = 1000
	}
	var errs []error
	var unhealed []func(context.Context) error
	for i := 0; i < limit && len(s.Faults) > 0; i++ {
		if !wait.Sleep(ctx, s.jittered(rng, s.Interval)) {
			break
		}
		f := s.Faults[i%len(s.Faults)]
		if !s.InOrder {
			f = s.Faults[rng.IntN(len(s.Faults))]
		}
		ev := evidence.Fault{Fault: f.Name(), StartNS: now()}
		inj, err := inject(ctx, f, c, rng)
		ev.Target, ev.Detail, ev.Metrics = inj.Target, inj.Detail, inj.Metrics
		if err != nil {
			ev.Error, ev.NotInjected = err.Error(), true
			errs = append(errs, fmt.Errorf("inject %s: %w", f.Name(), err))
		} else if hooks.Injected != nil {
			hooks.Injected(f.Name(), inj.Target)
		}
		if err == nil {
			wait.Sleep(ctx, s.jittered(rng, s.Duration))
		}
		if inj.Heal != nil {
			if herr := heal(ctx, inj.Heal); herr != nil {
				ev.Error = joinText(ev.Error, "heal: "+herr.Error())
				errs = append(errs, fmt.Errorf("heal %s of %s: %w", f.Name(), inj.Target, herr))
				unhealed = append(unhealed, inj.Heal)
			}
		}
		ev.EndNS = now()
		if hooks.Healed != nil {
			hooks.Healed(f.Name(), inj.Target)
		}
		if werr := tl.Add(ev); werr != nil {
			errs = append(errs, werr)
		}
	}
	// The final heal: whatever a window's heal could not undo.
	for _, h := range unhealed {
		if err := heal(ctx, h); err != nil {
			errs = append(errs, fmt.Errorf("final heal: %w", err))
		}
	}
	return errors.Join(errs...)
}

// inject runs f.Inject to its end even if ctx ends meanwhile: a fault cut
// off halfway (a docker stop abandoned while the daemon goes on stopping)
// would leave the cluster in a state its heal does not expect.
func inject(ctx context.Context, f Fault, on any, rng *rand.Rand) (Injection, error) {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), injectTimeout)
	defer cancel()
	return f.Inject(ictx, on, rng)
}

// heal runs h with a context of its own: it must run after ctx ended too.
func heal(ctx context.Context, h func(context.Context) error) error {
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healTimeout)
	defer cancel()
	return h(hctx)
}

// jittered varies d by up to ±Jitter·d.
func (s Schedule) jittered(rng *rand.Rand, d time.Duration) time.Duration {
	if s.Jitter <= 0 || d <= 0 {
		return d
	}
	j := min(s.Jitter, 1)
	return time.Duration(float64(d) * (1 + j*(2*rng.Float64()-1)))
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
