package mutants

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// Replica read mutants: deliberately broken readers of a libsql+replica
// client (URL parameter read_mutant=NAME), ports of the simulation's
// replica-read bugs (backends/lagsim: torn.go, hunt.go) to the real
// go-libsql embedded replica of a real sqld. Each gets the client's store
// on its embedded replica (replica: go-libsql's reads of the replica's own
// file), the store its writes go through (writes), the cluster's
// connection to the primary (primary) and a way to open the replica's own
// file read-only on a local connection (file), and only distorts what the
// client reads: the replica syncs, the file and the server are the real
// ones. Each keeps its client's own writes readable, as go-libsql's
// read-your-writes does (the replica syncs after every statement it sent
// to the primary), so that each breaks one clause of docs/CONTRACT.md
// property 10 and keeps the others.
type replicaReadMutant struct {
	breaks string
	reader ReplicaReadOpen
}

// ReplicaReadOpen builds a broken reader, and the writer it learns the
// client's writes from, from the client's real replica, writer and
// primary connection and the replica's own file (see the package comment
// above). The reader's Close closes replica.
type ReplicaReadOpen = func(ctx context.Context, replica, writes, primary model.Store, file OpenReadOnly, cfg model.Config) (reader, writer model.Store, err error)

// OpenReadOnly opens the replica's own file read-only on a local
// connection of libSQL's (nothing delegated), a database of one connection
// that the cluster closes.
type OpenReadOnly = func(ctx context.Context) (*sql.DB, error)

// The replica read mutants.
const (
	ReadFlipFlop     = "flip-flop"
	ReadTornReplica  = "torn-replica"
	ReadKeepsDeleted = "keeps-deleted"
	ReadMixedSource  = "mixed-source"
)

func replicaReadMutants() map[string]replicaReadMutant {
	return map[string]replicaReadMutant{
		ReadFlipFlop: {
			breaks: "a replica never shows less than it showed before: every other read is served from a snapshot of the replica's own file held since the read before it (or the client's last write), older than what the read between showed, so the replica goes back in time; its own writes read back",
			reader: flipFlop,
		},
		ReadTornReplica: {
			breaks: "a replica read is a state some prefix of the commits produces (stale, never torn): executions and the dedupe ledger are read from the replica, the outbox, spawns, timers and trace from a snapshot of its own file held since the previous such read (or the client's last write), so a read shows a commit's row without its side-writes; its own writes read back",
			reader: tornReplica,
		},
		ReadKeepsDeleted: {
			breaks: "what an acknowledgement removed is gone from every later state: the replica's outbox and spawn listings keep every entry they listed before, forgotten only when the client itself acknowledged it, so other clients' acks never reach them",
			reader: keepsDeleted,
		},
		ReadMixedSource: {
			breaks: "a replica never shows less than it showed before, of any table: is_processed is answered by the primary and every other read by the replica, so a client told an event is processed then loads a version from before it",
			reader: mixedSource,
		},
	}
}

// ReplicaReadNames lists the replica read mutants.
func ReplicaReadNames() []string { return names(replicaReadMutants()) }

// ReplicaReadBreaks says what replica read mutant name breaks, or an error
// naming the known ones.
func ReplicaReadBreaks(name string) (string, error) {
	m, err := find(replicaReadMutants(), "replica read mutant", name)
	return m.breaks, err
}

// ReplicaReader returns the reader of replica read mutant name.
func ReplicaReader(name string) (ReplicaReadOpen, error) {
	m, err := find(replicaReadMutants(), "replica read mutant", name)
	return m.reader, err
}

// ownWrites is the client's writer, unchanged, that tells wrote of each of
// the client's writes that succeeded, after it returned: by then go-libsql
// has synced the replica past it (read-your-writes).
type ownWrites struct {
	model.Store
	wrote func(ctx context.Context, ack ownAck)
}

// ownAck is what a write acknowledged: an outbox entry or a spawn, by seq
// (queue 0 for anything else).
type ownAck struct {
	queue int // 0 none, 1 outbox, 2 spawns
	seq   int64
}

func (w ownWrites) done(ctx context.Context, err error, ack ownAck) error {
	if err == nil {
		w.wrote(ctx, ack)
	}
	return err
}

func (w ownWrites) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	return w.done(ctx, w.Store.Commit(ctx, exe, b), ownAck{})
}

func (w ownWrites) Save(ctx context.Context, exe *model.Execution) error {
	return w.done(ctx, w.Store.Save(ctx, exe), ownAck{})
}

func (w ownWrites) AckOutbox(ctx context.Context, seq int64) error {
	return w.done(ctx, w.Store.AckOutbox(ctx, seq), ownAck{1, seq})
}

func (w ownWrites) AckSpawn(ctx context.Context, seq int64) error {
	return w.done(ctx, w.Store.AckSpawn(ctx, seq), ownAck{2, seq})
}

func (w ownWrites) DeleteTimer(ctx context.Context, id, path string, fireAt float64) error {
	return w.done(ctx, w.Store.DeleteTimer(ctx, id, path, fireAt), ownAck{})
}

func (w ownWrites) AppendTrace(ctx context.Context, id string, entry json.RawMessage) error {
	return w.done(ctx, w.Store.AppendTrace(ctx, id, entry), ownAck{})
}

// SetTraceMax reaches the writer, which trims the ring.
func (w ownWrites) SetTraceMax(n int) {
	if t, ok := w.Store.(model.TraceMaxSetter); ok {
		t.SetTraceMax(n)
	}
}

// held is a snapshot of the replica's own file: its one read-only
// connection holds a read transaction open. The replica file is in WAL
// mode, where a read transaction sees the file as it was at its first
// read whatever the replica syncs since (go-libsql's sync goes on beside
// it), so the snapshot is a state the real replica held, older than the
// replica's now. Every read of it runs on that connection, in that
// transaction (lagsim's snapshot.go does the same on the primary's file).
type held struct {
	mu sync.RWMutex // reads share it, take holds it alone
	st *sqlstore.Store
}

// Statements of the held snapshot.
const (
	heldEnd   = "ROLLBACK"
	heldBegin = "BEGIN"
	heldTake  = "SELECT count(*) FROM executions" // a deferred transaction's snapshot is its first read's
	heldSave  = "SAVEPOINT replica_read"          // a dump's reads, inside the held transaction
	heldFree  = "RELEASE replica_read"
)

// openHeld opens the replica's own file and holds its current state.
func openHeld(ctx context.Context, file OpenReadOnly, cfg model.Config, name string) (*held, error) {
	db, err := file(ctx)
	if err != nil {
		return nil, err
	}
	st := sqlstore.SQLite()
	st.BeginRead, st.CommitTx, st.RollbackTx = heldSave, heldFree, heldFree
	store, err := sqlstore.New(ctx, db, cfg, sqlstore.Options{Name: name, Statements: &st, SkipSchema: true})
	if err != nil {
		return nil, err
	}
	h := &held{st: store}
	if err := h.take(ctx); err != nil {
		return nil, errors.Join(err, store.Close())
	}
	return h, nil
}

// take ends the snapshot held and holds the file's current state.
func (h *held) take(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	ctx = context.WithoutCancel(ctx) // local statements; stopping between them would hold none
	conn, err := h.st.DB().Conn(ctx)
	if err != nil {
		return fmt.Errorf("snapshot of the replica's file: %w", err)
	}
	defer conn.Close()
	_, _ = conn.ExecContext(ctx, heldEnd) // the first take holds nothing
	if _, err := conn.ExecContext(ctx, heldBegin); err != nil {
		return fmt.Errorf("snapshot of the replica's file: begin: %w", err)
	}
	var n int64
	if err := conn.QueryRowContext(ctx, heldTake).Scan(&n); err != nil {
		return fmt.Errorf("snapshot of the replica's file: take: %w", err)
	}
	return nil
}

// heldRead runs fn on the held snapshot.
func heldRead[T any](h *held, fn func(s model.Store) (T, error)) (T, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return fn(h.st)
}

func (h *held) Close() error { return h.st.Close() }

// readers is a read mutant's two sources: the replica (go-libsql's reads)
// and its held snapshot. pick says, for each read, which one answers, and
// then, whether the snapshot is taken again after it.
type readers struct {
	model.Store // the replica: its writes are never called (they go to the writer), Close
	old         *held
	pick        func(table string) (fromOld, retake bool)
}

// openReaders builds a reader over replica and a held snapshot of its
// file, and the writer that takes the snapshot again after each of the
// client's writes (which the replica holds by then, so the snapshot does
// too: the client reads its own writes from either source).
func openReaders(ctx context.Context, replica, writes model.Store, file OpenReadOnly, cfg model.Config, name string, pick func(string) (bool, bool)) (model.Store, model.Store, error) {
	old, err := openHeld(ctx, file, cfg, name)
	if err != nil {
		return nil, nil, err
	}
	r := &readers{Store: replica, old: old, pick: pick}
	w := ownWrites{Store: writes, wrote: func(ctx context.Context, _ ownAck) {
		// A snapshot not taken leaves the previous one: its reads may then
		// miss the client's own write, which is the bug made worse, and
		// the error is not the client's to see.
		_ = old.take(ctx)
	}}
	return r, w, nil
}

// read answers one read on table from the source pick says.
func read[T any](ctx context.Context, r *readers, table string, fn func(s model.Store) (T, error)) (T, error) {
	fromOld, retake := r.pick(table)
	if !fromOld {
		return fn(r.Store)
	}
	out, err := heldRead(r.old, fn)
	if retake {
		_ = r.old.take(ctx) // see openReaders
	}
	return out, err
}

func (r *readers) Load(ctx context.Context, id string) (*model.Execution, error) {
	return read(ctx, r, "executions", func(s model.Store) (*model.Execution, error) { return s.Load(ctx, id) })
}

func (r *readers) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	type answer struct {
		exe  *model.Execution
		done bool
	}
	a, err := read(ctx, r, "executions", func(s model.Store) (answer, error) {
		exe, done, err := s.LoadForEvent(ctx, id, eventID)
		return answer{exe, done}, err
	})
	return a.exe, a.done, err
}

func (r *readers) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	return read(ctx, r, "executions", func(s model.Store) (model.Page, error) { return s.ListExecutions(ctx, f) })
}

func (r *readers) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	return read(ctx, r, "processed_events", func(s model.Store) (bool, error) { return s.IsProcessed(ctx, id, eventID) })
}

func (r *readers) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	return read(ctx, r, "outbox", func(s model.Store) ([]model.OutboxEntry, error) { return s.PendingOutbox(ctx) })
}

func (r *readers) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	return read(ctx, r, "spawns", func(s model.Store) ([]model.SpawnEntry, error) { return s.PendingSpawns(ctx) })
}

func (r *readers) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	return read(ctx, r, "timers", func(s model.Store) ([]model.DueTimer, error) { return s.DueTimers(ctx, now) })
}

func (r *readers) ReadTrace(ctx context.Context, id string) ([]model.TraceEntry, error) {
	return read(ctx, r, "trace", func(s model.Store) ([]model.TraceEntry, error) { return s.ReadTrace(ctx, id) })
}

// Close closes the snapshot and the replica.
func (r *readers) Close() error { return errors.Join(r.old.Close(), r.Store.Close()) }

// AfterReset takes the snapshot again once the store was emptied and the
// replica synced (backends/replica.ResetObserver): the suite's reset
// between its test cases is no write of the client's, and a snapshot from
// before it would show a test case the tables of the one before.
func (r *readers) AfterReset(ctx context.Context) error { return r.old.take(ctx) }

// flipFlop serves every other read from the held snapshot, and takes it
// again after each such read: each snapshot read shows the replica as it
// was before the read between, which showed the replica's now.
func flipFlop(ctx context.Context, replica, writes, _ model.Store, file OpenReadOnly, cfg model.Config) (model.Store, model.Store, error) {
	var reads atomic.Uint64
	return openReaders(ctx, replica, writes, file, cfg, "libsql+replica (read mutant "+ReadFlipFlop+")", func(string) (bool, bool) {
		// BUG: every other read, the state before.
		old := reads.Add(1)%2 == 0
		return old, old
	})
}

// tornReplica reads executions and the dedupe ledger from the replica, and
// the outbox, spawns, timers and trace from the held snapshot, taken again
// after each such read: those tables are a read behind the rows.
func tornReplica(ctx context.Context, replica, writes, _ model.Store, file OpenReadOnly, cfg model.Config) (model.Store, model.Store, error) {
	return openReaders(ctx, replica, writes, file, cfg, "libsql+replica (read mutant "+ReadTornReplica+")", func(table string) (bool, bool) {
		// BUG: the side tables come from an older state than the rows.
		side := table != "executions" && table != "processed_events"
		return side, side
	})
}

// keepsDeleted lists, beside what the replica lists, every outbox entry
// and spawn it listed before, until its own client acknowledges it.
func keepsDeleted(_ context.Context, replica, writes, _ model.Store, _ OpenReadOnly, _ model.Config) (model.Store, model.Store, error) {
	k := &keeper{Store: replica, outbox: map[int64]model.OutboxEntry{}, spawns: map[int64]model.SpawnEntry{}, ownOutbox: map[int64]bool{}, ownSpawns: map[int64]bool{}}
	w := ownWrites{Store: writes, wrote: func(_ context.Context, a ownAck) {
		k.mu.Lock()
		defer k.mu.Unlock()
		switch a.queue {
		case 1:
			k.ownOutbox[a.seq] = true
		case 2:
			k.ownSpawns[a.seq] = true
		}
	}}
	return k, w, nil
}

type keeper struct {
	model.Store // the replica
	mu          sync.Mutex
	outbox      map[int64]model.OutboxEntry
	spawns      map[int64]model.SpawnEntry
	ownOutbox   map[int64]bool
	ownSpawns   map[int64]bool
}

func (k *keeper) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	now, err := k.Store.PendingOutbox(ctx)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return keep(k.outbox, k.ownOutbox, now, func(e model.OutboxEntry) int64 { return e.Seq }), nil
}

func (k *keeper) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	now, err := k.Store.PendingSpawns(ctx)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return keep(k.spawns, k.ownSpawns, now, func(e model.SpawnEntry) int64 { return e.Seq }), nil
}

// keep is keeps-deleted's listing: what the replica lists now merged into
// everything it listed before (seen), less what its own client
// acknowledged, by seq.
func keep[T any](seen map[int64]T, own map[int64]bool, now []T, seq func(T) int64) []T {
	for _, e := range now {
		seen[seq(e)] = e
	}
	var out []T
	for s, e := range seen {
		if !own[s] { // BUG: others' acks never remove what was listed
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(x, y T) int { return cmp.Compare(seq(x), seq(y)) })
	return out
}

// mixedSource answers is_processed on the primary, every other read on the
// replica.
func mixedSource(_ context.Context, replica, writes, primary model.Store, _ OpenReadOnly, _ model.Config) (model.Store, model.Store, error) {
	return &mixed{Store: replica, primary: primary}, writes, nil
}

type mixed struct {
	model.Store // the replica
	primary     model.Store
}

func (m *mixed) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	// BUG: the marker is read on the primary, fresher than the replica
	// every other read is served from.
	return m.primary.IsProcessed(ctx, id, eventID)
}
