//go:build cgo

package libsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	golibsql "github.com/tursodatabase/go-libsql"

	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/worker"
)

// A replica client killed mid-sync. The fault runs an embedded replica in
// a worker process of its own, syncing back to back from the primary
// through a link of its own, SIGKILLs it while a sync is under way, and
// reopens the replica's file in this process: the file must pass its
// integrity check, resume from at least the position the dead client
// reported, and converge with the primary after the heal like any other
// replica.

// replicaSyncConfig is that worker's configuration. The token is not in
// it: the worker reads it from LIBSQL_AUTH_TOKEN, which the parent sets in
// the worker's environment only.
type replicaSyncConfig struct {
	Path           string `json:"path"`
	URL            string `json:"url"`
	ReadYourWrites bool   `json:"read_your_writes"`
}

// syncMsg is what the worker reports around each sync.
type syncMsg struct {
	Type  string `json:"type"` // "syncing" or "synced"
	N     int    `json:"n"`
	Frame int64  `json:"frame,omitempty"`
}

// ReplicaSyncWorker is the worker: it opens the embedded replica and syncs
// back to back, saying so before and after each sync, until its standard
// input closes.
func ReplicaSyncWorker(ctx context.Context, c *worker.Child) error {
	var cfg replicaSyncConfig
	if err := c.Config(&cfg); err != nil {
		return err
	}
	token := os.Getenv(DefaultTokenEnvs()[0])
	opts := []golibsql.Option{golibsql.WithReadYourWrites(cfg.ReadYourWrites)}
	if token != "" {
		opts = append(opts, golibsql.WithAuthToken(token))
	}
	conn, err := golibsql.NewEmbeddedReplicaConnector(cfg.Path, cfg.URL, opts...)
	if err != nil {
		return scrub(fmt.Errorf("open the embedded replica: %w", err), token)
	}
	defer conn.Close()
	stop := make(chan struct{})
	go func() {
		for {
			if _, ok := c.Line(); !ok {
				close(stop)
				return
			}
		}
	}()
	for n := 1; ; n++ {
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return nil
		default:
		}
		if err := c.Send(syncMsg{Type: "syncing", N: n}); err != nil {
			return err
		}
		r, err := conn.Sync()
		if err != nil {
			return scrub(fmt.Errorf("sync %d: %w", n, err), token)
		}
		if err := c.Send(syncMsg{Type: "synced", N: n, Frame: int64(r.FrameNo)}); err != nil {
			return err
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// replicaProcess is a replica client running in a worker process.
type replicaProcess struct {
	name, path string
	member     *replicaMember
	proc       *worker.Process
	last       int64 // the last frame it reported synced
	restarts   int   // primary restarts when it was killed
}

// StartReplicaProcess starts replica client name in a worker process of
// its own (see ReplicaSyncRole), on a file and a link of its own, and waits
// for its first sync.
func (c *ReplicaCluster) StartReplicaProcess(ctx context.Context, name string) error {
	if c.opt.Workers == nil {
		return fmt.Errorf("%s: replica process %s: the cluster was given no way to start worker processes", ReplicaScheme, name)
	}
	path := filepath.Join(c.dir, name+".db")
	m, via, err := c.link(name)
	if err != nil {
		return err
	}
	cmd := *c.opt.Workers
	if c.token != "" {
		cmd = cmd.With(DefaultTokenEnvs()[0] + "=" + c.token)
	}
	p, err := worker.Start(ctx, cmd, ReplicaSyncRole, replicaSyncConfig{Path: path, URL: via, ReadYourWrites: c.target.ReadYourWrites})
	if err != nil {
		return errors.Join(c.scrub(err), m.closeLink())
	}
	rp := &replicaProcess{name: name, path: path, member: m, proc: p}
	if _, err := rp.await(ctx, "synced", time.Minute); err != nil {
		p.Close()
		return errors.Join(c.scrub(fmt.Errorf("%s: replica process %s: %w", ReplicaScheme, name, err)), m.closeLink())
	}
	c.mu.Lock()
	c.procs[name] = rp
	c.mu.Unlock()
	return nil
}

// await waits for the next message of type want, keeping track of the
// frames reported.
func (rp *replicaProcess) await(ctx context.Context, want string, limit time.Duration) (syncMsg, error) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-rp.proc.Events():
			if !ok {
				return syncMsg{}, fmt.Errorf("it exited: %s", rp.proc.Status())
			}
			var msg syncMsg
			if err := m.Decode(&msg); err != nil {
				return syncMsg{}, err
			}
			if msg.Type == "synced" {
				rp.last = max(rp.last, msg.Frame)
			}
			if msg.Type == want {
				return msg, nil
			}
		case <-timer.C:
			return syncMsg{}, fmt.Errorf("no %q within %v: %s", want, limit, rp.proc.Status())
		case <-ctx.Done():
			return syncMsg{}, ctx.Err()
		}
	}
}

// KillReplicaProcess waits for replica process name to start a sync,
// lets delay pass and SIGKILLs it, then reaps it. It returns the last
// position the process reported.
func (c *ReplicaCluster) KillReplicaProcess(ctx context.Context, name string, delay time.Duration) (int64, error) {
	c.mu.Lock()
	rp := c.procs[name]
	c.mu.Unlock()
	if rp == nil {
		return 0, fmt.Errorf("%s: no replica process %q", ReplicaScheme, name)
	}
	if _, err := rp.await(ctx, "syncing", 30*time.Second); err != nil {
		return 0, c.scrub(fmt.Errorf("%s: replica process %s: %w", ReplicaScheme, name, err))
	}
	time.Sleep(delay)
	if err := rp.proc.Signal(syscall.SIGKILL); err != nil {
		return 0, err
	}
	for _, m := range rp.proc.Drain() {
		var msg syncMsg
		if m.Decode(&msg) == nil && msg.Type == "synced" {
			rp.last = max(rp.last, msg.Frame)
		}
	}
	rp.restarts = c.restarts()
	return rp.last, nil
}

// ReopenReplica opens an embedded replica in this process on the file of
// killed replica process name, checks the file and syncs it.
func (c *ReplicaCluster) ReopenReplica(ctx context.Context, name string, stream uint64) (*replica.Reopened, error) {
	c.mu.Lock()
	rp := c.procs[name]
	delete(c.procs, name)
	c.mu.Unlock()
	if rp == nil {
		return nil, fmt.Errorf("%s: no replica process %q", ReplicaScheme, name)
	}
	if err := rp.member.closeLink(); err != nil {
		return nil, err
	}
	integrity, err := localIntegrity(rp.path)
	if err != nil {
		return nil, fmt.Errorf("%s: replica %s after its process was killed: %w", ReplicaScheme, name, err)
	}
	st, err := c.newReplicaAt(ctx, name, stream, rp.path)
	if err != nil {
		return nil, err
	}
	resumed, _ := c.Position(name)
	return &replica.Reopened{Store: st, Replica: name, Integrity: integrity, Killed: rp.last, Resumed: resumed,
		Comparable: c.restarts() == rp.restarts}, nil
}

// localIntegrity runs SQLite's integrity check on a replica file with
// go-libsql's local driver: on an embedded-replica connection PRAGMA
// integrity_check would run on the primary.
func localIntegrity(path string) (string, error) {
	db, err := sql.Open("libsql", "file:"+path+"?mode=ro")
	if err != nil {
		return "", err
	}
	defer db.Close()
	var out string
	if err := db.QueryRow("SELECT * FROM pragma_integrity_check").Scan(&out); err != nil {
		return "", fmt.Errorf("integrity check: %w", sqlstore.OneLine(err))
	}
	return out, nil
}
