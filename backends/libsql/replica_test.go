//go:build cgo

package libsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends/libsql/sqld"
	"github.com/storecheck/storecheck/backends/mutants"
	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/model"
)

func TestParseReplicaURL(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.db")
	got, err := ParseReplicaURL(p + "?primary=http://127.0.0.1:8080&sync_interval=200ms&jitter=0.2&read_your_writes=false&token_env=MY_TOKEN&sqld=/opt/sqld&image=img:1")
	if err != nil {
		t.Fatal(err)
	}
	want := ReplicaTarget{Path: p, Primary: "http://127.0.0.1:8080", SyncInterval: 200 * time.Millisecond, Jitter: 0.2,
		TokenEnv: "MY_TOKEN", SQLD: "/opt/sqld", Image: "img:1", Net: NetAuto, Auth: true}
	if got != want {
		t.Errorf("parsed %+v, want %+v", got, want)
	}
	if d, _ := ParseReplicaURL(p); !d.ReadYourWrites || d.SyncInterval != 0 || d.Primary != "" || !d.Auth || d.Net != NetAuto {
		t.Errorf("defaults %+v: want read-your-writes, sync before every read, a primary started by storecheck with auth, in a namespace where one can be made", d)
	}
	if d, err := ParseReplicaURL(p + "?net=netns&delay=50ms&auth=none"); err != nil || d.Net != NetNamespace || d.Delay != 50*time.Millisecond || d.Auth {
		t.Errorf("net=netns&delay=50ms&auth=none: %+v, %v", d, err)
	}
	if d, err := ParseReplicaURL(p + "?mutant=write-local&read_mutant=flip-flop"); err != nil || d.Mutant != "write-local" || d.ReadMutant != "flip-flop" {
		t.Errorf("mutant=write-local&read_mutant=flip-flop: %+v, %v", d, err)
	}
	const secret = "s3cr3t-value"
	for _, bad := range []string{
		"", ":memory:", filepath.Join(dir, "no", "r.db"), p + "?sync_interval=-1s", p + "?sync_interval=2m",
		p + "?primary=ftp://h", p + "?primary=nohost", p + "?read_your_writes=maybe", p + "?colour=red",
		p + "?primary=http://u:" + secret + "@h:1", p + "?primary=http://h:1/?authToken=" + secret,
		p + "?authToken=" + secret, p + "?auth_token=" + secret, p + "?password=" + secret, p + "?token_env=",
		p + "?read_mutant=", p + "?mutant=",
		p + "?net=vpn", p + "?auth=basic", p + "?delay=1h", p + "?net=loopback&delay=10ms", p + "?primary=http://h:1&auth=none",
	} {
		err := ValidateReplica(bad)
		if err == nil {
			t.Errorf("ValidateReplica(%q) accepted it", bad)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error for %q repeats the secret: %v", bad, err)
		}
	}
}

func TestTokenFromEnvironment(t *testing.T) {
	t.Setenv("LIBSQL_AUTH_TOKEN", "")
	t.Setenv("SQLD_AUTH_TOKEN", "second")
	if got := (ReplicaTarget{}).Token(); got != "second" {
		t.Errorf("default token %q, want SQLD_AUTH_TOKEN's", got)
	}
	t.Setenv("LIBSQL_AUTH_TOKEN", "first")
	if got := (ReplicaTarget{}).Token(); got != "first" {
		t.Errorf("default token %q, want LIBSQL_AUTH_TOKEN's", got)
	}
	t.Setenv("MINE", "mine")
	if got := (ReplicaTarget{TokenEnv: "MINE"}).Token(); got != "mine" {
		t.Errorf("token_env token %q", got)
	}
}

func TestScrub(t *testing.T) {
	inner := fmt.Errorf("dial http://h?authToken=tok123: %w", model.ErrNotApplied)
	err := scrub(fmt.Errorf("open: %w", inner), "tok123")
	if strings.Contains(err.Error(), "tok123") || !strings.Contains(err.Error(), "REDACTED") || !errors.Is(err, model.ErrNotApplied) {
		t.Errorf("scrubbed: %v (is not-applied: %v)", err, errors.Is(err, model.ErrNotApplied))
	}
	if scrub(nil, "x") != nil || scrub(inner, "") != inner {
		t.Errorf("scrub changed what it had nothing to scrub")
	}
}

func TestOpenRefusesReplicaMode(t *testing.T) {
	_, err := Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), model.DefaultConfig(), WithMode(Replica))
	if err == nil || !strings.Contains(err.Error(), "OpenReplica") {
		t.Errorf("Open in replica mode: %v", err)
	}
}

// TestEmbeddedReplicaOnSqld is the seed's obligation on real embedded
// replicas: a client that loaded a stale version from its replica gets a
// StoreConflict whose Found is the primary's version. It needs sqld (a
// binary or the image) and is NOT RUN without one.
// clusterOnSqld starts a real sqld primary for the test and opens a
// replica cluster on it, syncing only when told to; NOT RUN without sqld.
// The test closes the cluster itself or leaves it to the cleanup.
func clusterOnSqld(t *testing.T) *ReplicaCluster {
	t.Helper()
	return clusterOnSqldWith(t, nil, nil)
}

// clusterOnSqldWith is clusterOnSqld whose clients write through writer
// and read through reader (nil: the real backend's).
func clusterOnSqldWith(t *testing.T, writer Writer, reader Reader) *ReplicaCluster {
	t.Helper()
	ctx := context.Background()
	target, err := ParseReplicaURL(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	server, err := StartPrimary(ctx, target, "")
	if errors.Is(err, sqld.ErrUnavailable) {
		t.Skipf("NOT RUN: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := server.Close(); err != nil {
			t.Error(err)
		}
	})
	c, err := OpenReplicaCluster(ctx, target, model.DefaultConfig(), ClusterOptions{Server: server, Interval: time.Hour / 2, Seed: 1, Writer: writer, Reader: reader})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// twoReplicas opens clients r0 and r1 on c.
func twoReplicas(t *testing.T, c *ReplicaCluster) (r0, r1 *replica.Store) {
	t.Helper()
	ctx := context.Background()
	r0, err := c.NewReplica(ctx, "r0", 0)
	if err != nil {
		t.Fatal(err)
	}
	r1, err = c.NewReplica(ctx, "r1", 1)
	if err != nil {
		t.Fatal(err)
	}
	return r0, r1
}

func TestEmbeddedReplicaOnSqld(t *testing.T) {
	ctx := context.Background()
	c := clusterOnSqld(t)
	r0, r1 := twoReplicas(t, c)
	for v := range int64(3) {
		if err := r0.Commit(ctx, &model.Execution{ID: "e", DefinitionID: "d", Version: v, Status: "running"}, model.Batch{}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := r0.Load(ctx, "e"); err != nil || got == nil || got.Version != 3 {
		t.Fatalf("read-your-writes: r0 loads %+v, %v; want version 3", got, err)
	}
	stale := &model.Execution{ID: "e", DefinitionID: "d", Version: 0, Status: "running"}
	err := r1.Commit(ctx, stale, model.Batch{})
	conflict, ok := model.AsConflict(err)
	if !ok || conflict.Found == nil || *conflict.Found != 3 {
		t.Fatalf("a commit from r1's stale view: %v; want a conflict finding the primary's version 3", err)
	}
}

// TestOpenReplicaOverAPlainFile: the URL's path held a plain SQLite file
// (the README's run-store example had made one there); go-libsql refuses
// to sync a replica into it, so OpenReplica removes it first, as every
// backend empties the database a run is pointed at.
func TestOpenReplicaOverAPlainFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	plain, err := Open(ctx, path, model.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Save(ctx, &model.Execution{ID: "old"}); err != nil {
		t.Fatal(err)
	}
	plain.Close()
	st, err := OpenReplica(ctx, path, model.DefaultConfig(), Mutants{})
	if errors.Is(err, sqld.ErrUnavailable) {
		t.Skipf("NOT RUN: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	exe := &model.Execution{ID: "new"}
	if err := st.Save(ctx, exe); err != nil || exe.Version != 1 {
		t.Fatalf("save on the replica: %v, version %d", err, exe.Version)
	}
	if old, err := st.Load(ctx, "old"); err != nil || old != nil {
		t.Errorf("the old file's row: %+v, %v; want none", old, err)
	}
}

// TestFrozenPrimaryDoesNotHoldTheCaller: go-libsql's calls take no
// context, so a primary that keeps its sockets open and never answers (a
// SIGSTOPped sqld here; a wedged one in docs/KNOWN-ISSUES.md) used to hold
// a sync, a delegated commit and a heal read for ever. Each must now come
// back soon after its deadline with an error that says so, and the
// cluster must still close.
func TestFrozenPrimaryDoesNotHoldTheCaller(t *testing.T) {
	ctx := context.Background()
	c := clusterOnSqld(t)
	r0, err := c.NewReplica(ctx, "r0", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PausePrimary(ctx); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			c.ResumePrimary(ctx)
		}
	}()
	const deadline = 500 * time.Millisecond
	bounded := func(what string, call func(context.Context) error) {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, deadline)
		defer cancel()
		start := time.Now()
		err := call(cctx)
		took := time.Since(start)
		if err == nil {
			t.Errorf("%s against a frozen primary succeeded", what)
		} else if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "outlived its deadline") {
			t.Errorf("%s: %v; want an error saying it outlived its deadline", what, err)
		}
		t.Logf("%s: %v after %v", what, err, took.Round(time.Millisecond))
		if took > deadline+callGrace+time.Second {
			t.Errorf("%s came back after %v; bound %v + grace %v", what, took, deadline, callGrace)
		}
	}
	bounded("a sync", r0.Sync)
	bounded("a delegated commit", func(ctx context.Context) error {
		return r0.Commit(ctx, &model.Execution{ID: "e", DefinitionID: "d", Status: "running"}, model.Batch{})
	})
	bounded("a read of the primary", func(ctx context.Context) error {
		_, err := c.Primary().Load(ctx, "e")
		return err
	})
	if err := c.ResumePrimary(ctx); err != nil {
		t.Fatal(err)
	}
	resumed = true
	// Thawed, the primary serves again over fresh connections.
	exe := &model.Execution{ID: "after", DefinitionID: "d", Status: "running"}
	if err := r0.Commit(ctx, exe, model.Batch{}); err != nil || exe.Version != 1 {
		t.Errorf("a commit after the thaw: %v, version %d", err, exe.Version)
	}
	if err := c.Close(); err != nil {
		t.Errorf("close after abandoned calls: %v", err)
	}
}

// TestLocalDumpReadsTheReplicasOwnFile: the heal's convergence check
// compares what a replica's own file holds with the primary. On an
// embedded-replica connection a BEGIN is delegated to the primary and so
// is every read after it, so a dump in a transaction there would read the
// primary's tables (and fail whenever the delegated connection is stuck on
// the primary): LocalDump must show the replica's own, stale, state until
// it syncs.
func TestLocalDumpReadsTheReplicasOwnFile(t *testing.T) {
	ctx := context.Background()
	c := clusterOnSqld(t)
	r0, err := c.NewReplica(ctx, "r0", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r0.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Primary().Commit(ctx, &model.Execution{ID: "e", DefinitionID: "d", Status: "running"}, model.Batch{}); err != nil {
		t.Fatal(err)
	}
	before, err := c.LocalDump(ctx, "r0")
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Executions) != 0 {
		t.Fatalf("LocalDump before r0 synced shows %d executions, the primary's: it read the primary, not r0's file", len(before.Executions))
	}
	if err := r0.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := c.LocalDump(ctx, "r0")
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Executions) != 1 {
		t.Fatalf("LocalDump after r0 synced shows %d executions, want the primary's 1", len(after.Executions))
	}
}

// TestWriteLocalWritesTheReplicasFileOnly: the write-local mutant's commit
// lands in its replica's own file and not on the primary, and the sync
// after it reports the primary's position all the same: only the tables
// show the replica diverged.
func TestWriteLocalWritesTheReplicasFileOnly(t *testing.T) {
	ctx := context.Background()
	w, err := mutants.ReplicaWriter(mutants.ReplicaWriteLocal)
	if err != nil {
		t.Fatal(err)
	}
	c := clusterOnSqldWith(t, Writer(w), nil)
	r0, err := c.NewReplica(ctx, "r0", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r0.Commit(ctx, &model.Execution{ID: "e", DefinitionID: "d", Status: "running"}, model.Batch{}); err != nil {
		t.Fatal(err)
	}
	if err := r0.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Primary().Load(ctx, "e"); err != nil || got != nil {
		t.Fatalf("the primary loads %+v, %v; the write should not have reached it", got, err)
	}
	own, err := c.LocalDump(ctx, "r0")
	if err != nil {
		t.Fatal(err)
	}
	if len(own.Executions) != 1 {
		t.Fatalf("r0's own file holds %d executions; want the one its client wrote there", len(own.Executions))
	}
	at, err := c.PrimaryPosition(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pos, ok := c.Position("r0"); !ok || pos != at {
		t.Errorf("r0 at position %d (%v), the primary at %d: want the same position, the diverged tables being what tells them apart", pos, ok, at)
	}
}

// TestFlipFlopReadsAnOlderStateOfTheReplicasFile: the flip-flop read
// mutant's every other read comes from a snapshot of the replica's own file
// held since the read before it, while the replica's syncs go on beside
// it: r0 shows e at v1, then none; at v2, then v1. A write of its client
// takes the snapshot again after go-libsql's read-your-writes sync, so
// the client reads its own write from either source. It fails with the
// real reader (every read then shows the replica's now).
func TestFlipFlopReadsAnOlderStateOfTheReplicasFile(t *testing.T) {
	ctx := context.Background()
	r, err := mutants.ReplicaReader(mutants.ReadFlipFlop)
	if err != nil {
		t.Fatal(err)
	}
	c := clusterOnSqldWith(t, nil, Reader(r))
	r0, r1 := twoReplicas(t, c)
	commit := func(r model.Store, from int64) {
		t.Helper()
		if err := r.Commit(ctx, &model.Execution{ID: "e", DefinitionID: "d", Version: from, Status: "running"}, model.Batch{}); err != nil {
			t.Fatal(err)
		}
	}
	loads := func(want ...int64) {
		t.Helper()
		for i, w := range want {
			got, err := r0.Load(ctx, "e")
			if err != nil {
				t.Fatal(err)
			}
			v := int64(0)
			if got != nil {
				v = got.Version
			}
			if v != w {
				t.Fatalf("r0's load %d of this round shows v%d, want v%d (0: none)", i+1, v, w)
			}
		}
	}
	commit(r1, 0)
	if err := r0.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	loads(1, 0) // the replica's now, then the snapshot held since r0 opened
	commit(r1, 1)
	if err := r0.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	loads(2, 1) // the snapshot was taken again after the read that used it
	commit(r0, 2)
	loads(3, 3) // its own write, from both
	own, err := c.LocalDump(ctx, "r0")
	if err != nil {
		t.Fatal(err)
	}
	if len(own.Executions) != 1 || own.Executions[0].Version != 3 {
		t.Errorf("r0's own file holds %+v; want e at v3: the mutant only reads it", own.Executions)
	}
}

// TestMutantLookup: a URL naming no mutant gets the real backend's nil
// part; one naming a mutant where none can be looked up, or an unknown
// one, is refused naming its parameter; a known one is found.
func TestMutantLookup(t *testing.T) {
	known := func(name string) (Reader, error) {
		if name != "flip-flop" {
			return nil, fmt.Errorf("unknown replica read mutant %q", name)
		}
		return func(context.Context, model.Store, model.Store, model.Store, func(context.Context) (*sql.DB, error), model.Config) (model.Store, model.Store, error) {
			return nil, nil, nil
		}, nil
	}
	for _, c := range []struct {
		name    string
		find    ReaderLookup
		found   bool
		wantErr string
	}{
		{"", nil, false, ""},
		{"", known, false, ""},
		{"flip-flop", nil, false, "read_mutant=flip-flop: no such mutants here"},
		{"nosuch", known, false, `read_mutant: unknown replica read mutant "nosuch"`},
		{"flip-flop", known, true, ""},
	} {
		r, err := lookupMutant("read_mutant", c.name, c.find)
		if (r != nil) != c.found || (err == nil) != (c.wantErr == "") || err != nil && !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%q: found %v, err %v; want found %v, err containing %q", c.name, r != nil, err, c.found, c.wantErr)
		}
	}
}
