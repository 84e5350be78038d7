package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// readingFake is a fake cluster whose nodes take long reads: each read
// blocks until its context ends or hold passes, and is counted per node.
type readingFake struct {
	*fakeCluster
	hold    time.Duration
	fail    error
	mu      sync.Mutex
	reads   map[string]int
	rows    []int
	running int
}

func (f *readingFake) LongRead(ctx context.Context, id string, rows int) (time.Duration, error) {
	f.mu.Lock()
	f.reads[id]++
	f.rows = append(f.rows, rows)
	f.running++
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.running--; f.mu.Unlock() }()
	if f.fail != nil {
		return 0, f.fail
	}
	return readFor(ctx, f.hold)
}

// readFor is a fake long read: it holds until d passes or ctx ends, and
// returns how long it held.
func readFor(ctx context.Context, d time.Duration) (time.Duration, error) {
	start := time.Now()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return time.Since(start), ctx.Err()
	case <-t.C:
		return time.Since(start), nil
	}
}

func (f *readingFake) counts() (map[string]int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := map[string]int{}
	for k, v := range f.reads {
		c[k] = v
	}
	return c, f.running
}

// TestLongReads: the fault needs a cluster that takes long reads and a
// length; it reads the leader, the first read within the injection (its
// duration in the metrics), then one read after another until the heal,
// after which none is in flight and none starts.
func TestLongReads(t *testing.T) {
	ctx := context.Background()
	if err := (LongReads{Rows: 10}).Available(newFake()); err == nil || !strings.Contains(err.Error(), "long read") {
		t.Errorf("available on a cluster without long reads: %v", err)
	}
	c := &readingFake{fakeCluster: newFake(), hold: 20 * time.Millisecond, reads: map[string]int{}}
	if err := (LongReads{}).Available(c); err == nil {
		t.Error("a long read of 0 rows is available")
	}
	f := LongReads{Rows: 1000}
	if err := f.Available(c); err != nil {
		t.Fatal(err)
	}
	inj, err := f.Inject(ctx, c, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if inj.Target != "n1" || !strings.Contains(inj.Detail, "leader n1") || inj.Metrics["long_read_ms"] < 20 {
		t.Errorf("injection %+v: want the leader n1 and the first read's 20 ms", inj)
	}
	time.Sleep(200 * time.Millisecond)
	if err := inj.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	reads, running := c.counts()
	if reads["n1"] < 5 || len(reads) != 1 || running != 0 {
		t.Errorf("reads %v (%d running after the heal); want several, all on the leader n1, none left", reads, running)
	}
	time.Sleep(60 * time.Millisecond)
	if after, _ := c.counts(); after["n1"] != reads["n1"] {
		t.Errorf("reads went on after the heal: %d, then %d", reads["n1"], after["n1"])
	}
	for _, r := range c.rows {
		if r != 1000 {
			t.Fatalf("a read of %d rows, want 1000", r)
		}
	}
}

// TestLongReadsFirstReadFails: a leader that cannot take the first read
// is an injection error, with nothing left running to heal.
func TestLongReadsFirstReadFails(t *testing.T) {
	c := &readingFake{fakeCluster: newFake(), fail: errors.New("connection refused"), reads: map[string]int{}}
	inj, err := LongReads{Rows: 10}.Inject(context.Background(), c, rand.New(rand.NewPCG(1, 2)))
	if err == nil || !strings.Contains(err.Error(), "connection refused") || inj.Heal != nil {
		t.Fatalf("injection %+v, %v: want the read's error and no heal", inj, err)
	}
	time.Sleep(20 * time.Millisecond)
	if reads, _ := c.counts(); reads["n1"] != 1 {
		t.Errorf("reads %v after a failed first read, want that one only", reads)
	}
}

// TestLongReadsBounded: a leader that answers each read at once is read
// no more than maxLongReads times after the first, however long the
// window holds before its heal.
func TestLongReadsBounded(t *testing.T) {
	c := &readingFake{fakeCluster: newFake(), reads: map[string]int{}}
	inj, err := LongReads{Rows: 10}.Inject(context.Background(), c, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Heal(context.Background())
	// Until the bound is reached (10 s at most: a loaded machine may starve
	// the reader for a while, so a pause is no sign that it stopped), then a
	// while longer, in which no read may follow.
	n := func() int { reads, _ := c.counts(); return reads["n1"] }
	for deadline := time.Now().Add(10 * time.Second); n() < 1+maxLongReads && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if got := n(); got != 1+maxLongReads {
		t.Errorf("%d reads in a window whose reads answer at once, want the first and %d more", got, maxLongReads)
	}
}

// TestLongReadsGrowToHold: on a node that counts rows faster than Rows was
// chosen for, each read shorter than Hold doubles the rows of the reads
// after it, until one holds the database for Hold; the count reached
// carries over to the next window, and never passes maxLongReadRows.
func TestLongReadsGrowToHold(t *testing.T) {
	c := newScalingFake(time.Microsecond)
	f := NewLongReads(1000, 16*time.Millisecond) // 1 ms at first: 16,000 rows hold it
	inj, err := f.Inject(context.Background(), c, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	// Six reads at least (10 s at most: on a loaded machine 150 ms may not
	// hold them).
	for deadline := time.Now().Add(10 * time.Second); len(c.counted()) < 6 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if err := inj.Heal(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := c.counted(); len(got) < 6 || got[0] != 1000 || got[1] != 2000 || got[4] != 16000 || got[len(got)-1] != 16000 {
		t.Fatalf("rows of the reads %v: want 1000, 2000, 4000, 8000, then 16000 on", got)
	}
	if inj.Metrics["long_read_rows"] != 1000 {
		t.Errorf("metrics %v: want the first read's 1000 rows", inj.Metrics)
	}
	// The next window starts where the last left off.
	inj, err = f.Inject(context.Background(), c, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if err := inj.Heal(context.Background()); err != nil {
		t.Fatal(err)
	}
	if inj.Metrics["long_read_rows"] != 16000 || inj.Metrics["long_read_ms"] < 16 {
		t.Errorf("second window's first read %v: want 16000 rows, 16 ms", inj.Metrics)
	}
	// A node whose reads never get long stops growing at maxLongReadRows.
	quick := newScalingFake(0)
	g := NewLongReads(maxLongReadRows/2+1, time.Hour) // twice it passes the bound
	inj, err = g.Inject(context.Background(), quick, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := inj.Heal(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range quick.counted() {
		if r > maxLongReadRows {
			t.Fatalf("a read of %d rows, past the bound %d", r, maxLongReadRows)
		}
	}
	if got := quick.counted(); got[len(got)-1] != maxLongReadRows {
		t.Errorf("rows %v: want the reads grown to the bound and held there", got[:min(len(got), 5)])
	}
}

// scalingFake is a fake cluster whose long reads take perRow for each row
// counted, and records the rows of each.
type scalingFake struct {
	*fakeCluster
	perRow time.Duration
	mu     sync.Mutex
	rows   []int
}

func newScalingFake(perRow time.Duration) *scalingFake {
	return &scalingFake{fakeCluster: newFake(), perRow: perRow}
}

func (f *scalingFake) counted() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.rows...)
}

func (f *scalingFake) LongRead(ctx context.Context, _ string, rows int) (time.Duration, error) {
	f.mu.Lock()
	f.rows = append(f.rows, rows)
	f.mu.Unlock()
	return readFor(ctx, time.Duration(rows)*f.perRow)
}
