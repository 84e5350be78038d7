package lagsim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/model"
)

// openCluster opens a cluster on a fresh primary with two replicas.
func openCluster(t *testing.T, opt Options) (*Cluster, *replica.Store, *replica.Store) {
	t.Helper()
	ctx := context.Background()
	c, err := OpenCluster(ctx, filepath.Join(t.TempDir(), "p.db"), model.DefaultConfig(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	r0, err := c.NewReplica(ctx, "r0", 0)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := c.NewReplica(ctx, "r1", 1)
	if err != nil {
		t.Fatal(err)
	}
	return c, r0, r1
}

// noSyncs is a lag long enough that no background refresh happens during a
// test.
const noSyncs = time.Hour / 2

func exe(id string, v int64) *model.Execution {
	return &model.Execution{ID: id, DefinitionID: "d", Version: v, Status: "running"}
}

// TestConflictFoundIsThePrimarys is the seed's obligation: a client that
// loaded a stale version from its replica gets a StoreConflict, and its
// Found is the primary's version, not the replica's.
func TestConflictFoundIsThePrimarys(t *testing.T) {
	ctx := context.Background()
	_, r0, r1 := openCluster(t, Options{Lag: noSyncs, ReadYourWrites: true})
	for v := range int64(3) {
		if err := r0.Commit(ctx, exe("e", v), model.Batch{}); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := r0.Load(ctx, "e"); got == nil || got.Version != 3 {
		t.Fatalf("read-your-writes: r0 loads %+v, want version 3", got)
	}
	if got, _ := r1.Load(ctx, "e"); got != nil {
		t.Fatalf("r1 was never refreshed but loads %+v", got)
	}
	stale := exe("e", 0) // what r1 believes: no row yet
	err := r1.Commit(ctx, stale, model.Batch{})
	c, ok := model.AsConflict(err)
	if !ok || c.Found == nil || *c.Found != 3 || c.Expected != 0 || stale.Version != 0 {
		t.Fatalf("stale commit: err %v, version %d; want a conflict expecting 0 and finding the primary's 3", err, stale.Version)
	}
	if err := r1.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := r1.Load(ctx, "e"); got == nil || got.Version != 3 {
		t.Fatalf("after a sync r1 loads %+v, want version 3", got)
	}
}

// TestMutantLosesAnUpdate: with the CAS decided on the replica, two clients
// that loaded the same stale version both win.
func TestMutantLosesAnUpdate(t *testing.T) {
	ctx := context.Background()
	_, r0, r1 := openCluster(t, Options{Lag: noSyncs, Mutant: MutantCASOnReplica})
	if err := r0.Commit(ctx, exe("e", 0), model.Batch{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*replica.Store{r0, r1} {
		if err := r.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := r0.Commit(ctx, exe("e", 1), model.Batch{}); err != nil {
		t.Fatal(err)
	}
	// Without read-your-writes both replicas still say version 1.
	if err := r1.Commit(ctx, exe("e", 1), model.Batch{}); err != nil {
		t.Fatalf("the mutant refused the second writer (%v); it should let it overwrite", err)
	}
}

// TestFaults: a cut link and a stopped primary refuse writes as not
// applied and stop refreshes, while reads go on; a stalled replica stops
// refreshing until resumed.
func TestFaults(t *testing.T) {
	ctx := context.Background()
	c, r0, r1 := openCluster(t, Options{Lag: 5 * time.Millisecond, Jitter: 0.2, ReadYourWrites: true})
	if err := r0.Commit(ctx, exe("e", 0), model.Batch{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Cut("r0"); err != nil {
		t.Fatal(err)
	}
	err := r0.Commit(ctx, exe("e", 1), model.Batch{})
	if !errors.Is(err, model.ErrNotApplied) || !strings.Contains(err.Error(), "cut") {
		t.Fatalf("commit over a cut link: %v, want a not-applied error naming the cut", err)
	}
	if got, err := r0.Load(ctx, "e"); err != nil || got == nil {
		t.Fatalf("a cut replica must still serve reads: %+v, %v", got, err)
	}
	if err := r1.Commit(ctx, exe("e", 1), model.Batch{}); err != nil {
		t.Fatalf("r1 is not cut: %v", err)
	}
	if err := c.Heal("r0"); err != nil {
		t.Fatal(err)
	}
	waitVersion(t, r0, 2)

	c.StopPrimary()
	if err := r1.Commit(ctx, exe("e", 2), model.Batch{}); !errors.Is(err, model.ErrNotApplied) {
		t.Fatalf("commit to a stopped primary: %v, want not applied", err)
	}
	c.StartPrimary()

	r1.StallSyncs()
	if err := r0.Commit(ctx, exe("e", 2), model.Batch{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if got, _ := r1.Load(ctx, "e"); got == nil || got.Version != 2 {
		t.Fatalf("a stalled replica refreshed: %+v", got)
	}
	r1.ResumeSyncs()
	waitVersion(t, r1, 3)
	if st := r1.Stats(); st.Skipped == 0 || st.Syncs == 0 {
		t.Errorf("stats %+v: want skipped and successful syncs", st)
	}
}

// waitVersion waits, bounded, for r's background refreshes to show v.
func waitVersion(t *testing.T, r *replica.Store, v int64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if got, _ := r.Load(context.Background(), "e"); got != nil && got.Version == v {
			return
		}
	}
	t.Fatalf("replica %s never showed version %d", r.Name(), v)
}

// TestConformance: one client with read-your-writes reads its own writes,
// so the single-client suite passes even with a lag.
func TestConformance(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	conformance.Run(t, func(ctx context.Context, cfg model.Config) (model.Store, error) {
		return Open(ctx, path+"?lag=50ms", cfg)
	})
}

func TestParseURL(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p.db")
	good, err := ParseURL(p + "?lag=200ms&jitter=0.25&read_your_writes=false&seed=7&mutant=cas-on-replica")
	if err != nil {
		t.Fatal(err)
	}
	want := Target{Path: p, Options: Options{Lag: 200 * time.Millisecond, Jitter: 0.25, Seed: 7, Mutant: MutantCASOnReplica}}
	if good != want {
		t.Errorf("parsed %+v, want %+v", good, want)
	}
	if d, _ := ParseURL(p); d.Options != DefaultOptions() {
		t.Errorf("defaults %+v, want %+v", d.Options, DefaultOptions())
	}
	for _, bad := range []string{
		"", ":memory:", filepath.Join(dir, "no", "p.db"), p + "?lag=-1s", p + "?lag=2h", p + "?lag=x",
		p + "?jitter=1", p + "?read_your_writes=maybe", p + "?mutant=other", p + "?colour=red", p + "?lag=1s&lag=2s",
	} {
		if err := Validate(bad); err == nil {
			t.Errorf("Validate(%q) accepted it", bad)
		}
	}
}

// TestReplicasLeaveNoFiles: the replicas are snapshots held on the
// primary's file, so while three of them refresh the process holds no
// database file open but the primary's (a replica file, wherever it was
// put, would be open), and after Close none at all of the cluster's.
func TestReplicasLeaveNoFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	primary := filepath.Join(dir, "p.db")
	c, err := OpenCluster(ctx, primary, model.DefaultConfig(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		r, err := c.NewReplica(ctx, fmt.Sprintf("r%d", i), uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		exe := &model.Execution{ID: fmt.Sprintf("e%d", i), DefinitionID: "d", Status: "running"}
		if err := r.Commit(ctx, exe, model.Batch{}); err != nil {
			t.Fatal(err)
		}
		if err := r.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if got, err := r.Load(ctx, exe.ID); err != nil || got == nil {
			t.Fatalf("replica r%d after its sync: %v, %v", i, got, err)
		}
	}
	open := openDatabaseFiles(t)
	var others []string
	for _, f := range open {
		if !strings.HasPrefix(f, primary) {
			others = append(others, f)
		}
	}
	if len(others) > 0 || len(open) == 0 {
		t.Errorf("with three replicas open, database files open: %v (want the primary's only)", open)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range openDatabaseFiles(t) {
		if strings.HasPrefix(f, dir) || strings.Contains(f, "lagsim") {
			t.Errorf("after Close, %s is still open", f)
		}
	}
}

// openDatabaseFiles lists the SQLite files (databases, WALs, shared
// memory) this process holds open, from /proc/self/fd.
func openDatabaseFiles(t *testing.T) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("NOT RUN: cannot list this process's open files: %v", err)
	}
	var out []string
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err != nil {
			continue // closed since the listing
		}
		for _, suffix := range []string{".db", ".db-wal", ".db-shm"} {
			if strings.HasSuffix(target, suffix) {
				out = append(out, target)
			}
		}
	}
	return out
}
