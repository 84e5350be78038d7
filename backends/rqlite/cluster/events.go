package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Server events read from a node's live log, so that a fault can land at
// the moment the server does something (package chaos: kill-during-install).
// Only a process cluster's logs are written where storecheck can read them
// as they grow; a container's are fetched at the end.
const (
	// EventSnapshot: the node took a snapshot of its state and may
	// truncate its log (hashicorp/raft's "snapshot complete up to", or
	// rqlite's "full snapshot created").
	EventSnapshot = "snapshot"
	// EventInstall: the node is installing a snapshot its leader sent
	// (raft's "copied to local snapshot", logged once the bytes are in and
	// before the state is restored from them).
	EventInstall = "snapshot-install"
	// EventPersist: the node has written a snapshot's data and is about to
	// make it final (rqlite's "persisted snapshot …", logged before
	// hashicorp/raft closes the snapshot's sink: where rqlite's snapshot
	// store renames, folds the previous snapshot in and reaps).
	EventPersist = "snapshot-persist"
	// EventLeader: the node saw a leader elected ("is now Leader").
	EventLeader = "leader"
)

// eventLines are the log lines that mark each event, as rqlited 8 to 10
// writes them.
var eventLines = map[string][]string{
	EventSnapshot: {"snapshot complete up to", "full snapshot created"},
	EventInstall:  {"copied to local snapshot"},
	EventPersist:  {"persisted snapshot", "persisted full snapshot", "persisted incremental snapshot"},
	EventLeader:   {"is now Leader"},
}

// eventPoll is how often a node's log is read while an event is awaited:
// a kill that must land during a snapshot install (tens to hundreds of
// milliseconds) has to see its line within a few milliseconds.
const eventPoll = 2 * time.Millisecond

// logPath is where node id's live log is, for clusters that write one.
type logPather interface {
	LogPath(id string) (string, error)
}

// LogPath is node id's log file, which the node appends to across
// restarts.
func (p *Processes) LogPath(id string) (string, error) {
	if _, err := p.proc(id); err != nil {
		return "", err
	}
	return filepath.Join(p.logs, id+".log"), nil
}

// EventsAvailable says why the cluster's events cannot be awaited, or nil.
func (c Control) EventsAvailable() error {
	unavailable := fmt.Errorf("server events are read from live logs, which a %s cluster does not write where storecheck can read them", c.Kind())
	lp, ok := c.Cluster.(logPather)
	if !ok {
		return unavailable
	}
	for _, n := range c.Nodes() {
		if _, err := lp.LogPath(n.ID); err != nil {
			return fmt.Errorf("%w: %w", unavailable, err)
		}
	}
	return nil
}

// LogMark is the end of node id's log now: WaitEvent from it sees only
// what the node logs after this moment.
func (c Control) LogMark(id string) (int64, error) {
	path, err := c.logPath(id)
	if err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("log of %s: %w", id, err)
	}
	return fi.Size(), nil
}

// WaitEvent waits until node id logs event after mark (LogMark), at most
// timeout, and returns the line that showed it.
func (c Control) WaitEvent(ctx context.Context, id, event string, mark int64, timeout time.Duration) (string, error) {
	want, ok := eventLines[event]
	if !ok {
		return "", fmt.Errorf("unknown server event %q", event)
	}
	path, err := c.logPath(id)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(eventPoll)
	defer tick.Stop()
	var partial string // a line not yet ended when last read
	for {
		lines, next, err := readFrom(path, mark)
		if err != nil {
			return "", fmt.Errorf("log of %s: %w", id, err)
		}
		mark = next
		lines[0] = partial + lines[0]
		partial, lines = lines[len(lines)-1], lines[:len(lines)-1]
		for _, l := range lines {
			for _, w := range want {
				if strings.Contains(l, w) {
					return strings.TrimSpace(l), nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("node %s logged no %s within %v", id, event, timeout)
		case <-tick.C:
		}
	}
}

// readFrom reads path from offset to its end, split at newlines (the last
// element is what follows the last newline), and the offset it reached.
func readFrom(path string, offset int64) ([]string, int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return []string{""}, offset, nil
	}
	if err != nil {
		return nil, offset, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset, err
	}
	b, err := io.ReadAll(bufio.NewReader(f))
	if err != nil {
		return nil, offset, err
	}
	return strings.Split(string(b), "\n"), offset + int64(len(b)), nil
}

func (c Control) logPath(id string) (string, error) {
	lp, ok := c.Cluster.(logPather)
	if !ok {
		return "", c.EventsAvailable()
	}
	return lp.LogPath(id)
}

// UnrestoredInstall marks, in a run's evidence (scenarios'
// unrestored-installs.txt, read from these logs), a node that restarted on
// rqlite's fast path over a snapshot it had installed but never restored:
// the signature of the known issue rqlite-fast-restart-unrestored-snapshot.
// It lives here, beside the node logs it is read from, so that the
// scenarios that write it and the catalogue that matches it share it.
const UnrestoredInstall = "restarted on the fast path over a snapshot it installed but never restored"

// MalformedSnapshotStore marks, in a run's evidence (scenarios'
// snapshot-store-reaps.txt, read from these logs), a node life that could
// not open its snapshot store because re-executing an interrupted reap
// plan found the store's database malformed, after an earlier life of the
// node restarted on the fast path over a snapshot it had installed but
// never restored: the signature of the known issue
// rqlite-unrestored-snapshot-reap-malformed.
const MalformedSnapshotStore = "could not open its snapshot store, malformed by a reap after a fast restart over an unrestored install"
