//go:build cgo

package libsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	golibsql "github.com/tursodatabase/go-libsql"

	"github.com/storecheck/storecheck/backends/internal/listening"
	"github.com/storecheck/storecheck/backends/internal/tmpfs"
	"github.com/storecheck/storecheck/backends/libsql/sqld"
	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/worker"
)

// remoteIdle is how long a remote (Hrana) connection may idle in the pool:
// well below the time after which sqld expires an idle stream.
const remoteIdle = 2 * time.Second

// ReplicaCluster is an sqld primary and the go-libsql embedded replicas
// opened on it. Every client has a replica file and a link to the primary
// of its own — a loopback proxy, which a fault can cut — and reads from
// its replica and writes through it, as an application would: go-libsql
// runs a plain read on the replica and delegates every statement of a
// transaction to the primary, so the compare-and-swap is decided there.
type ReplicaCluster struct {
	target   ReplicaTarget
	cfg      model.Config
	opt      ClusterOptions
	token    string
	url      string         // the primary's address
	primary  boundedStore   // a connection of its own: heal reads, reset
	primLink *replicaMember // the primary connection's link (its proxy)
	dir      string         // replica files; removed on Close
	iptables bool           // cut links with iptables rather than in-process

	mu        sync.Mutex
	members   map[string]*replicaMember
	procs     map[string]*replicaProcess // replica clients in processes of their own
	closed    bool
	positions sync.Map     // replica name → int64 frame number of its last sync
	restarted atomic.Int64 // primary restarts so far
}

// replicaMember is one client's replica store and link.
type replicaMember struct {
	store *replica.Store
	path  string         // the embedded replica's file
	proxy *sqld.Proxy    // nil when the primary is not plain http
	drop  *sqld.DropRule // nil without a proxy
}

// ClusterOptions say which primary a ReplicaCluster syncs from, and how.
type ClusterOptions struct {
	// Primary is a running primary's address. Server, when set, is a
	// primary storecheck started (its URL and token win); the cluster can
	// kill, pause and restart it, and closes it when OwnServer says so.
	Primary   string
	Server    *Primary
	OwnServer bool
	// Interval is the replicas' mean sync interval; Seed seeds their
	// jitter.
	Interval time.Duration
	Seed     uint64
	// Writer, when set, is a deliberately broken writer (see Writer), and
	// Reader a deliberately broken reader (see Reader); nil for the real
	// backend.
	Writer Writer
	Reader Reader
	// Workers starts worker processes (the replica-process fault); nil
	// means the cluster starts none.
	Workers *worker.Command
}

// OpenReplicaCluster connects to the primary, creates the six tables
// there, empties them, and makes a folder for the replica files next to
// t.Path.
func OpenReplicaCluster(ctx context.Context, t ReplicaTarget, cfg model.Config, opt ClusterOptions) (*ReplicaCluster, error) {
	c := &ReplicaCluster{target: t, cfg: cfg, opt: opt, token: t.Token(), url: opt.Primary, members: map[string]*replicaMember{}, procs: map[string]*replicaProcess{}}
	if opt.Server != nil {
		c.url, c.token = opt.Server.URL(), opt.Server.Token()
	}
	if c.url == "" {
		return nil, fmt.Errorf("%s: no primary to connect to", ReplicaScheme)
	}
	if opt.Server == nil {
		if err := primaryListens(ctx, c.url); err != nil {
			return nil, fmt.Errorf("%s: %w", ReplicaScheme, err)
		}
	}
	c.iptables = sqld.IptablesAvailable() == nil
	link, via, err := c.link("primary")
	if err != nil {
		return nil, err
	}
	g := link.newGuard("primary")
	remote, err := c.openRemote(ctx, g, via, "primary")
	if err != nil {
		return nil, errors.Join(err, link.closeLink())
	}
	primary := boundedStore{remote, g}
	closePrimary := func() error { return errors.Join(primary.Close(), link.closeLink()) }
	if err := primary.Reset(ctx); err != nil {
		return nil, errors.Join(c.scrub(fmt.Errorf("%s: empty the primary: %w", ReplicaScheme, err)), closePrimary())
	}
	// Named with this process's id: a run killed before Close leaves the
	// folder behind, and the next run here removes it (tmpfs.MkdirTemp).
	dir, err := tmpfs.MkdirTemp(filepath.Dir(t.Path), ".storecheck-replicas-")
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%s: replica folder: %w", ReplicaScheme, err), closePrimary())
	}
	c.primary, c.primLink, c.dir = primary, link, dir
	return c, nil
}

// scrub keeps the token out of an error.
func (c *ReplicaCluster) scrub(err error) error { return scrub(err, c.token) }

// openRemote opens a store over a remote connection to base, the token
// passed as go-libsql expects it (a DSN parameter that never leaves this
// function; every error is scrubbed of it). Creating the tables is a
// go-libsql call like any other, bounded by g (bounded.go): a primary that
// accepts and never answers would hold it for ever.
func (c *ReplicaCluster) openRemote(ctx context.Context, g *guard, base, name string) (*sqlstore.Store, error) {
	dsn := base
	if c.token != "" {
		dsn += "?authToken=" + url.QueryEscape(c.token)
	}
	conn, err := newInitConnector(dsn, nil)
	if err != nil {
		return nil, c.scrub(fmt.Errorf("%s: connect to the %s: %w", ReplicaScheme, name, sqlstore.OneLine(err)))
	}
	// A pooled connection whose stream sqld dropped (idle, restarted) is
	// retired rather than reused (remoteconn.go); the pool also closes
	// connections idle for a while, well before sqld's 10 s expiry.
	db := sql.OpenDB(remoteConnector{conn})
	db.SetConnMaxIdleTime(remoteIdle)
	s, err := guarded(ctx, g, "create schema", func() (*sqlstore.Store, error) {
		return sqlstore.New(ctx, db, c.cfg, sqlstore.Options{Name: ReplicaScheme + " " + name})
	})
	if err != nil {
		abandoned := errors.Is(err, errAbandoned)
		err = c.scrub(fmt.Errorf("%s: open the %s: %w", ReplicaScheme, name, sqlstore.OneLine(err)))
		if abandoned {
			// The call may still run in libSQL: the database is not
			// closed under it, but left to the process's exit.
			return nil, err
		}
		return nil, errors.Join(err, db.Close())
	}
	return s, nil
}

// Primary returns the primary over a direct connection, for the heal's
// reads. The cluster owns it.
func (c *ReplicaCluster) Primary() model.Store { return unclosable{c.primary} }

// NewReplica opens one client: an embedded replica in the cluster's
// folder, syncing on the schedule of the given stream.
func (c *ReplicaCluster) NewReplica(ctx context.Context, name string, stream uint64) (*replica.Store, error) {
	if name == "" || filepath.Base(name) != name {
		return nil, fmt.Errorf("%s: replica name %q is not a plain file name", ReplicaScheme, name)
	}
	return c.newReplicaAt(ctx, name, stream, filepath.Join(c.dir, name+".db"))
}

// newReplicaAt opens a client whose replica file is path.
func (c *ReplicaCluster) newReplicaAt(ctx context.Context, name string, stream uint64, path string) (_ *replica.Store, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("%s: replica %s: the cluster is closed", ReplicaScheme, name)
	}
	if _, dup := c.members[name]; dup {
		return nil, fmt.Errorf("%s: replica %s exists", ReplicaScheme, name)
	}
	m, via, err := c.link(name)
	if err != nil {
		return nil, err
	}
	closers := []func() error{m.closeLink}
	defer func() {
		if err != nil {
			for i := len(closers) - 1; i >= 0; i-- {
				err = errors.Join(err, closers[i]())
			}
		}
	}()
	g := m.newGuard("replica " + name)
	embedded, sync, err := c.openEmbedded(ctx, name, path, via, g)
	if err != nil {
		return nil, err
	}
	local := boundedStore{embedded, g}
	var writer model.Store = local
	if c.opt.Writer != nil {
		file := func(ctx context.Context) (*sqlstore.Store, error) {
			st, err := openFile(ctx, path, c.cfg, ReplicaScheme+" replica "+name+" (its own file, read-write)")
			if err == nil {
				closers = append(closers, st.Close)
			}
			return st, err
		}
		w, err := c.opt.Writer(ctx, embedded, embedded.DB(), file, c.cfg)
		if err != nil {
			return nil, errors.Join(err, local.Close())
		}
		writer = boundedStore{w, g}
	}
	var reader model.Store = local
	if c.opt.Reader != nil {
		// The broken reader wraps the real, bounded, replica and writer:
		// every go-libsql call it makes is still bounded by the link's
		// guard.
		file := func(context.Context) (*sql.DB, error) {
			db, err := openReadOnly(path)
			if err == nil {
				closers = append(closers, db.Close)
			}
			return db, err
		}
		r, w, err := c.opt.Reader(ctx, local, writer, unclosable{c.primary}, file, c.cfg)
		if err != nil {
			return nil, errors.Join(err, local.Close())
		}
		reader, writer = r, w
	}
	st, err := replica.New(ctx, replica.Config{
		// Writes go where go-libsql sends them: every statement of a
		// transaction on an embedded replica is delegated to the primary
		// and runs there, so the compare-and-swap is decided on the
		// primary's state; with read-your-writes the replica then syncs
		// before the statement returns (WriterSyncs).
		Name: ReplicaScheme, Replica: name, Primary: writer, Reader: reader, Authority: c.primary, Sync: sync,
		Schedule:       c.target.Schedule(c.opt.Interval, c.opt.Seed, stream),
		ReadYourWrites: c.target.ReadYourWrites, WriterSyncs: true,
		Closers: append(closers, func() error { return c.forget(name, path) }),
	})
	if err != nil {
		return nil, errors.Join(c.scrub(err), reader.Close())
	}
	closers = nil // the store owns them now
	m.store, m.path = st, path
	c.members[name] = m
	return st, nil
}

// link gives client name a link of its own to the primary, a loopback
// proxy that a fault can cut, and returns the member and the URL to reach
// the primary through it (the primary's own when it is not plain http).
func (c *ReplicaCluster) link(name string) (*replicaMember, string, error) {
	m := &replicaMember{}
	u, err := url.Parse(c.url)
	if err != nil || u.Scheme != "http" {
		return m, c.url, nil
	}
	if m.proxy, err = sqld.NewProxy(hostPort(u)); err != nil {
		return nil, "", fmt.Errorf("%s: link of %s: %w", ReplicaScheme, name, err)
	}
	m.drop = sqld.NewDropRule(m.proxy.Port())
	return m, "http://" + m.proxy.Addr(), nil
}

// guard bounds the calls over this link (see bounded.go): one whose
// deadline passes drops the link's connections.
func (m *replicaMember) newGuard(name string) *guard {
	g := &guard{name: ReplicaScheme + " " + name}
	if m.proxy != nil {
		g.drop = m.proxy.Drop
	}
	return g
}

// closeLink removes the member's proxy and rule.
func (m *replicaMember) closeLink() error {
	if m.proxy == nil {
		return nil
	}
	return errors.Join(m.proxy.Close(), m.drop.Remove(context.Background()))
}

// openEmbedded opens go-libsql's embedded replica at path, syncing from
// via, and a store on it: its reads are the replica's, its transactions
// run on the primary. Its syncs are storecheck's (Connector.Sync on the
// replica's schedule), not go-libsql's own WithSyncInterval loop, which
// cannot be paused for a stall and prints its errors to stdout. The sync
// remembers the replication position (frame number) it reached.
func (c *ReplicaCluster) openEmbedded(ctx context.Context, name, path, via string, g *guard) (*sqlstore.Store, func(context.Context) error, error) {
	opts := []golibsql.Option{golibsql.WithReadYourWrites(c.target.ReadYourWrites)}
	if c.token != "" {
		opts = append(opts, golibsql.WithAuthToken(c.token))
	}
	conn, err := golibsql.NewEmbeddedReplicaConnector(path, via, opts...)
	if err != nil {
		return nil, nil, c.scrub(fmt.Errorf("%s: replica %s: %w", ReplicaScheme, name, sqlstore.OneLine(err)))
	}
	db := sql.OpenDB(conn) // closing db closes the connector
	store, err := sqlstore.New(ctx, db, c.cfg, sqlstore.Options{Name: ReplicaScheme + " replica " + name, SkipSchema: true})
	if err != nil {
		return nil, nil, errors.Join(c.scrub(err), db.Close())
	}
	sync := func(ctx context.Context) error {
		return guardedErr(ctx, g, "sync", func() error {
			r, err := conn.Sync()
			if err == nil {
				c.positions.Store(name, int64(r.FrameNo))
			}
			return c.scrub(sqlstore.OneLine(err))
		})
	}
	return store, sync, nil
}

// hostPort is u's host with its port, the scheme's default if none.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// forget removes a closed replica's files and entry.
func (c *ReplicaCluster) forget(name, path string) error {
	c.mu.Lock()
	delete(c.members, name)
	c.mu.Unlock()
	return removeReplicaFiles(path)
}

// removeReplicaFiles removes an embedded replica's file and the files
// go-libsql keeps beside it.
func removeReplicaFiles(path string) error {
	var errs []error
	for _, suffix := range []string{"", "-wal", "-shm", "-info", "-client_wal_index"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// member finds a client by name.
func (c *ReplicaCluster) member(name string) (*replicaMember, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.members[name]
	if !ok {
		return nil, fmt.Errorf("%s: no replica %q", ReplicaScheme, name)
	}
	return m, nil
}

// CutReplica cuts one client from the primary: an iptables DROP rule on
// its link's port where root and iptables allow, else its proxy drops
// every connection.
func (c *ReplicaCluster) CutReplica(ctx context.Context, name string) error {
	m, err := c.member(name)
	if err != nil {
		return err
	}
	if m.proxy == nil {
		return fmt.Errorf("%s: replica %s has no link of its own to cut (the primary is not plain http)", ReplicaScheme, name)
	}
	if c.iptables {
		return m.drop.Add(ctx)
	}
	m.proxy.Cut()
	return nil
}

// HealReplica restores one client's link.
func (c *ReplicaCluster) HealReplica(ctx context.Context, name string) error {
	m, err := c.member(name)
	if err != nil {
		return err
	}
	if m.proxy == nil {
		return nil
	}
	m.proxy.Heal()
	return m.drop.Remove(ctx)
}

// KillPrimary kills the primary storecheck started.
func (c *ReplicaCluster) KillPrimary(ctx context.Context) error {
	if c.opt.Server == nil {
		return fmt.Errorf("%s: the primary was given by URL; storecheck kills only what it started", ReplicaScheme)
	}
	return c.opt.Server.Kill(ctx)
}

// RestartPrimary starts it again on the same data and address.
func (c *ReplicaCluster) RestartPrimary(ctx context.Context) error {
	if c.opt.Server == nil {
		return fmt.Errorf("%s: the primary was given by URL; storecheck restarts only what it started", ReplicaScheme)
	}
	c.restarted.Add(1)
	return c.opt.Server.Restart(ctx)
}

// restarts counts the primary's restarts so far.
func (c *ReplicaCluster) restarts() int { return int(c.restarted.Load()) }

// PausePrimary freezes the primary storecheck started (SIGSTOP): its
// sockets stay open and nothing answers. ResumePrimary thaws it.
func (c *ReplicaCluster) PausePrimary(ctx context.Context) error {
	p, err := c.pauser()
	if err != nil {
		return err
	}
	return p.Pause(ctx)
}

// ResumePrimary ends PausePrimary.
func (c *ReplicaCluster) ResumePrimary(ctx context.Context) error {
	p, err := c.pauser()
	if err != nil {
		return err
	}
	return p.Resume(ctx)
}

func (c *ReplicaCluster) pauser() (sqld.Pauser, error) {
	if c.opt.Server == nil {
		return nil, fmt.Errorf("%s: the primary was given by URL; storecheck pauses only what it started", ReplicaScheme)
	}
	p, ok := c.opt.Server.Server.(sqld.Pauser)
	if !ok {
		return nil, fmt.Errorf("%s: %s cannot be paused", ReplicaScheme, c.opt.Server.Provider)
	}
	return p, nil
}

// Close closes every client still open (removing its files, proxy and
// rule), the direct connection and the replicas' folder. A server passed
// in ClusterOptions stays up.
func (c *ReplicaCluster) Close() error {
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
	procs := c.procs
	c.procs = nil
	c.mu.Unlock()
	var errs []error
	for _, rp := range procs {
		rp.proc.Close()
		errs = append(errs, rp.member.closeLink())
	}
	for _, s := range open {
		errs = append(errs, s.Close())
	}
	errs = append(errs, c.primary.Close(), c.primLink.closeLink())
	if err := os.RemoveAll(c.dir); err != nil {
		errs = append(errs, err)
	}
	if c.opt.OwnServer && c.opt.Server != nil {
		errs = append(errs, c.opt.Server.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return c.scrub(fmt.Errorf("%s: close: %w", ReplicaScheme, err))
	}
	return nil
}

// unclosable is the primary handed out by Primary: Close is the cluster's.
type unclosable struct{ boundedStore }

func (unclosable) Close() error { return nil }

// primaryListens says, within listening.RefusedWait, that nothing listens
// at a primary given by URL, rather than the replica's "channel closed"
// through the proxy; other failures are left to the connection.
func primaryListens(ctx context.Context, primary string) error {
	u, err := url.Parse(primary)
	if err != nil || u.Hostname() == "" {
		return nil // the connection says what is wrong with it
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "libsql": "443", "wss": "443"}[u.Scheme]
		if port == "" {
			port = "80"
		}
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	if err := listening.Await(ctx, []string{addr}, listening.RefusedWait, "sqld"); err != nil {
		return fmt.Errorf("primary=%s: %w", u.Redacted(), err)
	}
	return nil
}
