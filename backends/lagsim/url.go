package lagsim

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/replica"
)

// Scheme is the URL scheme, without its colon.
const Scheme = "lagsim"

// The mutants: the CAS decided on the replica, a replica that shows the
// rows of its newest commits without their side-writes (torn.go), and a
// replica whose sync reports success but stops short (short.go).
const (
	MutantCASOnReplica = "cas-on-replica"
	MutantTornReplica  = "torn-replica"
	MutantShortSync    = "short-sync"
)

// mutants are the known mutants, in the order errors list them.
var mutants = append([]string{MutantCASOnReplica, MutantTornReplica, MutantShortSync, MutantPositionAhead}, huntMutants...)

// MaxLag bounds the lag a URL may ask for.
const MaxLag = time.Minute

// Options configure a simulated cluster.
type Options struct {
	// Lag is the mean time between two refreshes of a replica; 0 refreshes
	// before every read.
	Lag time.Duration
	// Jitter spreads each wait over Lag·[1−Jitter, 1+Jitter].
	Jitter float64
	// ReadYourWrites refreshes a client's replica after each of its writes.
	ReadYourWrites bool
	// Seed seeds the refresh schedules.
	Seed uint64
	// Mutant is "" or one of the mutants.
	Mutant string
	// WriteLatency is the simulated time a write spends on the wire to
	// the primary and back: half before the primary decides it, half
	// after. Real embedded replicas delegate each statement of a commit
	// over the network; 0 simulates a primary on the same machine.
	WriteLatency time.Duration
}

// DefaultOptions are a URL's defaults: no lag, go-libsql's read-your-writes.
func DefaultOptions() Options {
	return Options{Jitter: replica.DefaultJitter, ReadYourWrites: true, Seed: 1}
}

// Schedule is replica stream's refresh schedule under these options.
func (o Options) Schedule(stream uint64) replica.Schedule {
	return replica.Schedule{Interval: o.Lag, Jitter: o.Jitter, Seed: o.Seed, Stream: stream}
}

// Target is a parsed lagsim URL.
type Target struct {
	// Path is the primary's database file.
	Path string
	Options
}

// ParseURL reads the part of a lagsim URL after "lagsim:".
func ParseURL(rest string) (Target, error) {
	path, query, _ := strings.Cut(rest, "?")
	t := Target{Path: path, Options: DefaultOptions()}
	if path == dbfile.Memory {
		return t, fmt.Errorf("%s: the primary must be a file (a replica is refreshed from it), not %s", Scheme, dbfile.Memory)
	}
	if err := dbfile.CheckPath(Scheme, path); err != nil {
		return t, err
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return t, fmt.Errorf("%s: bad parameters: %w", Scheme, err)
	}
	for k, v := range values {
		if len(v) != 1 {
			return t, fmt.Errorf("%s: parameter %q given %d times", Scheme, k, len(v))
		}
		if err := t.set(k, v[0]); err != nil {
			return t, fmt.Errorf("%s: %s: %w", Scheme, k, err)
		}
	}
	return t, nil
}

// set applies one URL parameter.
func (t *Target) set(k, v string) error {
	var err error
	switch k {
	case "lag":
		t.Lag, err = time.ParseDuration(v)
		if err == nil && (t.Lag < 0 || t.Lag > MaxLag) {
			err = fmt.Errorf("must be within 0..%v, got %v", MaxLag, t.Lag)
		}
	case "jitter":
		t.Jitter, err = strconv.ParseFloat(v, 64)
		if err == nil {
			err = t.Schedule(0).Check()
		}
	case "read_your_writes":
		t.ReadYourWrites, err = strconv.ParseBool(v)
	case "seed":
		t.Seed, err = strconv.ParseUint(v, 10, 64)
	case "write_latency":
		t.WriteLatency, err = time.ParseDuration(v)
		if err == nil && (t.WriteLatency < 0 || t.WriteLatency > MaxLag) {
			err = fmt.Errorf("must be within 0..%v, got %v", MaxLag, t.WriteLatency)
		}
	case "mutant":
		if !slices.Contains(mutants, v) {
			err = fmt.Errorf("unknown mutant %q (known: %s)", v, strings.Join(mutants, ", "))
		}
		t.Mutant = v
	default:
		err = fmt.Errorf("unknown parameter (known: lag, jitter, read_your_writes, seed, mutant, write_latency)")
	}
	return err
}

// Validate checks a lagsim URL's rest without opening anything.
func Validate(rest string) error {
	_, err := ParseURL(rest)
	return err
}
