package cluster

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends/internal/ports"
	"github.com/storecheck/storecheck/backends/internal/tmpfs"
)

// EnvRqlited names the environment variable that points at rqlited.
const EnvRqlited = "RQLITED"

// FindRqlited returns the rqlited binary to run: path when set, else
// $RQLITED, else rqlited on PATH. The error says how to provide one.
func FindRqlited(path string) (string, error) {
	for _, p := range []string{path, os.Getenv(EnvRqlited)} {
		if p == "" {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("rqlited at %q is not an executable file", p)
		}
		return filepath.Abs(p)
	}
	p, err := exec.LookPath("rqlited")
	if err != nil {
		return "", fmt.Errorf("no rqlited binary: pass its path (rqlited=PATH in the URL, -rqlited in go test), set $%s, or put it on PATH", EnvRqlited)
	}
	return p, nil
}

// Processes is a cluster of rqlited processes on loopback, each on two
// free ports, with a data folder in a temporary folder of its own.
type Processes struct {
	cfg   Config
	bin   string
	dir   string // removed by Close
	logs  string
	sup   *supervisor
	fw    *firewall
	procs []*proc
}

// proc is one node's fixed settings.
type proc struct {
	node               Node
	httpPort, raftPort int
	data               string
	uid                uint32 // 0: runs as the harness's user
	args               []string
}

var _ Cluster = (*Processes)(nil)

// StartProcesses starts cfg.Nodes rqlited processes from bin and waits for
// a leader. On error everything started is removed again.
func StartProcesses(ctx context.Context, bin string, cfg Config) (_ *Processes, err error) {
	cfg, err = cfg.normalize()
	if err != nil {
		return nil, err
	}
	dir, err := tmpfs.MkdirTemp(cfg.DataIn, "storecheck-rqlite-")
	if err != nil {
		return nil, fmt.Errorf("cluster folder: %w", err)
	}
	p := &Processes{cfg: cfg, bin: bin, dir: dir, logs: cfg.LogDir, sup: newSupervisor(), fw: newFirewall()}
	defer func() {
		if err != nil {
			if cerr := p.Close(); cerr != nil {
				err = fmt.Errorf("%w (and cleaning up: %v)", err, cerr)
			}
		}
	}()
	// Nodes running as other users must be able to reach their folders.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cluster folder: %w", err)
	}
	if p.logs == "" {
		p.logs = filepath.Join(dir, "logs")
	}
	if err := os.MkdirAll(p.logs, 0o755); err != nil {
		return nil, fmt.Errorf("log folder: %w", err)
	}
	free, err := ports.Free(2 * cfg.Nodes)
	if err != nil {
		return nil, err
	}
	var join []string
	for i, id := range nodeIDs(cfg.Nodes) {
		pr := &proc{httpPort: free[2*i], raftPort: free[2*i+1], data: filepath.Join(dir, id)}
		pr.node = Node{ID: id, HTTPAddr: "127.0.0.1:" + strconv.Itoa(pr.httpPort), RaftAddr: "127.0.0.1:" + strconv.Itoa(pr.raftPort)}
		if FirewallAvailable() == nil {
			pr.uid = randomUID()
		}
		p.procs = append(p.procs, pr)
		join = append(join, pr.node.RaftAddr)
	}
	for _, pr := range p.procs {
		pr.args = []string{"-node-id", pr.node.ID, "-http-addr", pr.node.HTTPAddr, "-raft-addr", pr.node.RaftAddr}
		if cfg.Nodes > 1 {
			pr.args = append(pr.args, "-bootstrap-expect", strconv.Itoa(cfg.Nodes), "-join", strings.Join(join, ","))
		}
		// Raft at INFO: its snapshot and install lines are the server
		// events faults wait for (events.go). A -raft-log-level among the
		// URL's flags comes later and wins.
		pr.args = append(pr.args, "-raft-log-level=INFO")
		pr.args = append(pr.args, cfg.ServerFlags...)
		pr.args = append(pr.args, pr.data)
		if err := os.MkdirAll(pr.data, 0o755); err != nil {
			return nil, fmt.Errorf("data folder of %s: %w", pr.node.ID, err)
		}
		if pr.uid != 0 {
			if err := os.Chown(pr.data, int(pr.uid), int(pr.uid)); err != nil {
				return nil, fmt.Errorf("data folder of %s: %w", pr.node.ID, err)
			}
		}
		if err := p.start(pr); err != nil {
			return nil, err
		}
	}
	// A node that exits before the cluster serves is a failed start: say
	// so at once, not after ReadyTimeout.
	wctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go p.watchStart(wctx, stop)
	failed := func(err error) error {
		if cause := context.Cause(wctx); errors.Is(cause, errExited) {
			err = cause
		}
		return fmt.Errorf("%w (server logs in %s)", err, p.logs)
	}
	if _, err := WaitLeader(wctx, p, "", cfg.ReadyTimeout); err != nil {
		return nil, failed(err)
	}
	if err := WaitReady(wctx, p, cfg.ReadyTimeout); err != nil {
		return nil, failed(err)
	}
	return p, nil
}

// errExited marks a node that exited while the cluster started.
var errExited = errors.New("exited while the cluster started")

// watchStart cancels ctx with errExited as soon as a node's process has
// exited, until ctx ends.
func (p *Processes) watchStart(ctx context.Context, cancel context.CancelCauseFunc) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, pr := range p.procs {
			if _, err := p.sup.get(pr.node.ID); err != nil {
				cancel(fmt.Errorf("rqlited %s %w", pr.node.ID, errExited))
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// randomUID picks a user id no account uses, so that iptables' owner match
// tells this node's packets from every other process's, other runs' nodes
// included.
func randomUID() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return 1_000_000 + binary.LittleEndian.Uint32(b[:])%1_000_000_000
}

func (p *Processes) start(pr *proc) error {
	return p.sup.start(pr.node.ID, spec{bin: p.bin, args: pr.args, log: filepath.Join(p.logs, pr.node.ID+".log"), uid: pr.uid})
}

func (p *Processes) proc(id string) (*proc, error) {
	for _, pr := range p.procs {
		if pr.node.ID == id {
			return pr, nil
		}
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownNode, id)
}

// Kind implements Cluster.
func (p *Processes) Kind() string { return "process" }

// Nodes implements Cluster.
func (p *Processes) Nodes() []Node {
	out := make([]Node, len(p.procs))
	for i, pr := range p.procs {
		out[i] = pr.node
	}
	return out
}

// SaveLogs implements Cluster: a copy of each node's log file.
func (p *Processes) SaveLogs(_ context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save logs: %w", err)
	}
	var errs []error
	for _, pr := range p.procs {
		name := pr.node.ID + ".log"
		src := filepath.Join(p.logs, name)
		if filepath.Clean(dir) == filepath.Clean(p.logs) {
			continue
		}
		b, err := os.ReadFile(src)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("save log of %s: %w", pr.node.ID, err))
		}
	}
	return errors.Join(errs...)
}

// Dir is the cluster's temporary folder (data folders; logs unless
// Config.LogDir was set); Close removes it.
func (p *Processes) Dir() string { return p.dir }

// PIDs lists the rqlited processes still running.
func (p *Processes) PIDs() []int { return p.sup.pids() }

// Chain is the name of the iptables chain the cluster uses for isolation;
// it exists only while Isolate has rules in it, and Close deletes it.
func (p *Processes) Chain() string { return p.fw.chain }

// Halt kills every node that runs (SIGKILL: each node's files stay as they
// were at that moment), for reading them: the nodes stay down, and Close
// still removes everything.
func (p *Processes) Halt(ctx context.Context) error {
	var errs []error
	for _, n := range p.Nodes() {
		if _, err := p.sup.get(n.ID); err != nil { // not running
			continue
		}
		if err := p.Kill(ctx, n.ID); err != nil {
			errs = append(errs, fmt.Errorf("halt: kill %s: %w", n.ID, err))
		}
	}
	return errors.Join(errs...)
}

// SaveData copies each node's data folder into dir/ID: the evidence of a
// run whose nodes disagree. The nodes must be halted (Halt).
func (p *Processes) SaveData(ctx context.Context, dir string) error {
	var errs []error
	for _, n := range p.Nodes() {
		if err := ctx.Err(); err != nil {
			return errors.Join(append(errs, err)...)
		}
		if err := p.SaveNode(ctx, n.ID, filepath.Join(dir, n.ID)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// SaveNode copies node id's data folder into dst, but the files leaveOut
// names (paths within the folder, e.g. "raft.db") and anything not a
// regular file or folder: the evidence of one moment of a node that is
// down (kill-during-install keeps one at every kill on an install line).
func (p *Processes) SaveNode(ctx context.Context, id, dst string, leaveOut ...string) error {
	pr, err := p.proc(id)
	if err != nil {
		return err
	}
	err = filepath.WalkDir(pr.data, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(pr.data, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case slices.Contains(leaveOut, filepath.ToSlash(rel)) || !d.Type().IsRegular():
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		return fmt.Errorf("save data of %s: %w", id, err)
	}
	return nil
}

// Kill implements Cluster: SIGKILL, then reaped.
func (p *Processes) Kill(_ context.Context, id string) error {
	if _, err := p.proc(id); err != nil {
		return err
	}
	return p.sup.kill(id)
}

// Stop implements Cluster: SIGTERM, SIGKILL after 15s.
func (p *Processes) Stop(_ context.Context, id string) error {
	if _, err := p.proc(id); err != nil {
		return err
	}
	return p.sup.stop(id, 15*time.Second)
}

// Start implements Cluster: the same command on the same data folder.
func (p *Processes) Start(_ context.Context, id string) error {
	pr, err := p.proc(id)
	if err != nil {
		return err
	}
	return p.start(pr)
}

// Pause implements Cluster: SIGSTOP.
func (p *Processes) Pause(_ context.Context, id string) error {
	if _, err := p.proc(id); err != nil {
		return err
	}
	return p.sup.pause(id)
}

// Resume implements Cluster: SIGCONT.
func (p *Processes) Resume(_ context.Context, id string) error {
	if _, err := p.proc(id); err != nil {
		return err
	}
	return p.sup.resume(id)
}

// IsolationAvailable implements Cluster.
func (p *Processes) IsolationAvailable() error {
	if err := FirewallAvailable(); err != nil {
		return err
	}
	for _, pr := range p.procs {
		if pr.uid == 0 {
			return errors.New("the nodes were started without user ids of their own")
		}
	}
	return nil
}

// Isolate implements Cluster with iptables rules on loopback.
func (p *Processes) Isolate(ctx context.Context, id string) error {
	pr, err := p.proc(id)
	if err != nil {
		return err
	}
	if err := p.IsolationAvailable(); err != nil {
		return err
	}
	return p.fw.isolate(ctx, id, pr.uid, pr.httpPort, pr.raftPort)
}

// Rejoin implements Cluster.
func (p *Processes) Rejoin(ctx context.Context, id string) error {
	if _, err := p.proc(id); err != nil {
		return err
	}
	return p.fw.rejoin(ctx, id)
}

// Close implements Cluster: every process killed and reaped, the iptables
// chain deleted, the temporary folder removed.
func (p *Processes) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	errs := []error{p.sup.closeAll(), p.fw.close(ctx)}
	if err := os.RemoveAll(p.dir); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", p.dir, err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close rqlite processes: %w", err)
	}
	return nil
}
