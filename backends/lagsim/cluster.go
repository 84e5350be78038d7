package lagsim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/backends/sqlite"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// Cluster is one simulated primary and the replicas opened on it.
type Cluster struct {
	opt     Options
	cfg     model.Config
	path    string // the primary's file, which replicas read (snapshot.go)
	primary *sqlstore.Store
	down    atomic.Bool // the primary is "killed"
	// writes counts the writes that ended on the primary, however they
	// ended, so that a refresh with nothing new to see is skipped.
	writes atomic.Int64
	// pause is held shared by every write to the primary and alone by a
	// compaction of its WAL (wal.go).
	pause       sync.RWMutex
	walBound    int64       // DefaultWALBound; tests set less
	compacting  atomic.Bool // a compaction is under way
	compactions atomic.Int64
	checkpoints atomic.Int64

	mu      sync.Mutex
	members map[string]*member
	closed  bool
}

// member is one client's replica and its link to the primary.
type member struct {
	store  *replica.Store
	reader *snapshot // the snapshot the replica reads; nil for a mutant of two snapshots
	held   holder    // what the replica holds, for the convergence check (position.go)
	cut    atomic.Bool
	// Of a hunt mutant (hunt.go): its link, its refused calls, its
	// schedule.
	wrap          func(*link) model.Store
	onUnreachable func()
	slow          bool
}

// OpenCluster opens (creating if needed) the primary at path, with the
// seed's six tables; replicas are added with NewReplica.
func OpenCluster(ctx context.Context, path string, cfg model.Config, opt Options) (*Cluster, error) {
	if err := opt.Schedule(0).Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", Scheme, err)
	}
	primary, err := sqlite.Open(ctx, path, cfg, sqlite.WithoutAutoCheckpoint(), sqlite.WithStoreOptions(sqlstore.Options{Name: Scheme + " primary", Statements: primaryStatements()}))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Scheme, err)
	}
	return &Cluster{opt: opt, cfg: cfg, path: path, primary: primary, walBound: DefaultWALBound, members: map[string]*member{}}, nil
}

// Options returns the cluster's options.
func (c *Cluster) Options() Options { return c.opt }

// Primary returns the primary as a store of its own: linearizable reads
// for the heal, and the authoritative tables. The cluster owns it.
func (c *Cluster) Primary() model.Store { return primaryHandle{c.primary, c} }

// NewReplica opens a client: a replica of its own (a snapshot of the
// primary held open on one connection, snapshot.go), refreshed on the
// schedule of the given stream, with writes to the primary through a link
// that Cut can break.
func (c *Cluster) NewReplica(ctx context.Context, name string, stream uint64) (*replica.Store, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("%s: replica %s: the cluster is closed", Scheme, name)
	}
	if _, dup := c.members[name]; dup || name == "" {
		return nil, fmt.Errorf("%s: replica name %q is empty or taken", Scheme, name)
	}
	switch c.opt.Mutant {
	case MutantTornReplica:
		return c.newTornReplica(ctx, name, stream)
	case MutantShortSync, MutantPositionAhead:
		return c.newShortReplica(ctx, name, stream)
	}
	if slices.Contains(huntMutants, c.opt.Mutant) {
		return c.newHuntReplica(ctx, name, stream)
	}
	reader, err := openReplica(ctx, c.path, c.cfg, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Scheme, err)
	}
	m := &member{reader: reader, held: reader}
	primary := c.primary
	if c.opt.Mutant == MutantCASOnReplica {
		if primary, err = casOnReplica(ctx, c.primary, reader.Store, c.cfg); err != nil {
			return nil, errors.Join(fmt.Errorf("%s: %w", Scheme, err), reader.Close())
		}
	}
	return c.addMember(ctx, name, stream, m, primary, c.write, reader, reader.refresh)
}

// newTornReplica opens a client of mutant=torn-replica (torn.go): its
// writes that succeed tell the replica that its next refresh is a whole
// one (tornWrites). Its two snapshots are not the member's reader: the WAL
// is never compacted under them (wal.go), and it grows for as long as the
// cluster is open.
func (c *Cluster) newTornReplica(ctx context.Context, name string, stream uint64) (*replica.Store, error) {
	torn, err := openTorn(ctx, c.path, c.cfg, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Scheme, err)
	}
	return c.addMember(ctx, name, stream, &member{held: torn}, c.primary, ownWrites(c.write, torn), torn, torn.refresh)
}

// newShortReplica opens a client of mutant=short-sync (short.go): like a
// torn replica's, its writes that succeed make its next refresh a whole
// one, and its two snapshots are never compacted under (wal.go).
func (c *Cluster) newShortReplica(ctx context.Context, name string, stream uint64) (*replica.Store, error) {
	short, err := openShort(ctx, c.path, c.cfg, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Scheme, err)
	}
	short.lie = c.opt.Mutant == MutantPositionAhead
	return c.addMember(ctx, name, stream, &member{held: short}, c.primary, ownWrites(c.write, short), short, short.refresh)
}

// newHuntReplica opens a client of one of the third blind hunt's mutants
// (hunt.go).
func (c *Cluster) newHuntReplica(ctx context.Context, name string, stream uint64) (*replica.Store, error) {
	h, err := openHunt(ctx, c.path, c.cfg, name, c.opt.Mutant)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Scheme, err)
	}
	m := &member{held: h, onUnreachable: h.unreachable, slow: c.opt.Mutant == MutantLagBeyondBound,
		wrap: func(l *link) model.Store { return huntLink{l, h} }}
	h.primary = c.primary
	h.gate = func() error { return c.reachable(name, m) }
	write := func(fn func() error) error {
		h.beforeWrite()
		return ownWrites(c.write, h)(fn)
	}
	return c.addMember(ctx, name, stream, m, c.primary, write, h, h.refresh)
}

// ownWrites sends the writes of a mutant replica's client through write,
// telling the replica of each that succeeded as soon as the primary has it,
// before write counts it: a scheduled refresh that sees the count, after
// which the client's read-your-writes sync is skipped as having nothing
// new to see, is then a whole one, so the client always reads its own
// writes whole. Told after write returned, such a refresh moved a torn
// replica's side tables back behind the write, and the client read its own
// ack undone.
func ownWrites(write func(func() error) error, r interface{ wrote() }) func(func() error) error {
	return func(fn func() error) error {
		return write(func() error {
			err := fn()
			if err == nil {
				r.wrote()
			}
			return err
		})
	}
}

// addMember starts the replica store of client name on reader, refreshed
// by fresh, its writes sent to primary through write, and makes it a
// member. c.mu is held. On error reader is closed.
func (c *Cluster) addMember(ctx context.Context, name string, stream uint64, m *member, primary *sqlstore.Store, write func(func() error) error, reader model.Store, fresh func(context.Context) error) (*replica.Store, error) {
	gate := func() error { return c.reachable(name, m) }
	l := &link{inner: primary, gate: gate, write: write, latency: c.opt.WriteLatency}
	var to model.Store = l
	if m.wrap != nil {
		to = m.wrap(l)
	}
	schedule := c.opt.Schedule(stream)
	if m.slow {
		// BUG (lag-beyond-bound): ten times the declared interval, and
		// every 100 ms where every read should sync.
		schedule.Interval = max(10*schedule.Interval, 100*time.Millisecond)
	}
	st, err := replica.New(ctx, replica.Config{
		Name:           Scheme,
		Replica:        name,
		Primary:        to,
		Reader:         reader,
		Sync:           c.syncer(fresh, gate),
		Schedule:       schedule,
		ReadYourWrites: c.opt.ReadYourWrites,
		// libSQL's embedded replica syncs after every statement it sends
		// to the primary, a commit that conflicted included.
		SyncAfterConflict: true,
		Closers:           []func() error{func() error { c.forget(name); return nil }},
	})
	if err != nil {
		return nil, errors.Join(err, reader.Close())
	}
	m.store = st
	c.members[name] = m
	return st, nil
}

// syncer returns one replica's sync: a refresh from the primary through
// the replica's gate, skipped when no write has ended on the primary since
// the last refresh began (a write counted before a refresh began had
// committed before it began, so the snapshot holds it).
func (c *Cluster) syncer(fresh func(context.Context) error, gate func() error) func(context.Context) error {
	copied := int64(-1) // the count when the last refresh began; syncs of a replica are serialised
	return func(ctx context.Context) error {
		if err := gate(); err != nil {
			return err
		}
		n := c.writes.Load()
		if n == copied {
			return nil
		}
		if err := fresh(ctx); errors.Is(err, errPartial) {
			return nil // moved, but not to what the count says: the next sync is not skipped
		} else if err != nil {
			return err
		}
		copied = n
		return nil
	}
}

// reachable is the link's state: nil when the client reaches the primary.
func (c *Cluster) reachable(name string, m *member) error {
	var err error
	switch {
	case c.down.Load():
		err = fmt.Errorf("primary is down (simulated kill): %w", errUnreachable)
	case m.cut.Load():
		err = fmt.Errorf("replica %s is cut from the primary (simulated): %w", name, errUnreachable)
	}
	if err != nil && m.onUnreachable != nil {
		m.onUnreachable()
	}
	return err
}

// forget removes a closed replica's entry.
func (c *Cluster) forget(name string) {
	c.mu.Lock()
	delete(c.members, name)
	c.mu.Unlock()
}

// StopPrimary makes the primary unreachable: the simulated kill.
func (c *Cluster) StopPrimary() { c.down.Store(true) }

// StartPrimary makes it reachable again: the simulated restart. Nothing
// committed was lost; the file is the same.
func (c *Cluster) StartPrimary() { c.down.Store(false) }

// Cut breaks one client's link to the primary: its writes and refreshes
// fail, its reads go on from its replica.
func (c *Cluster) Cut(name string) error { return c.setCut(name, true) }

// Heal restores one client's link.
func (c *Cluster) Heal(name string) error { return c.setCut(name, false) }

func (c *Cluster) setCut(name string, cut bool) error {
	m, err := c.member(name)
	if err != nil {
		return err
	}
	m.cut.Store(cut)
	return nil
}

// Close closes every replica still open, then the primary. The primary's
// file stays.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	open := make([]*replica.Store, 0, len(c.members))
	for _, m := range c.members {
		open = append(open, m.store)
	}
	c.mu.Unlock()
	var errs []error
	for _, s := range open {
		errs = append(errs, s.Close())
	}
	errs = append(errs, c.primary.Close())
	return errors.Join(errs...)
}
