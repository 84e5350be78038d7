package lossyfs

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Nothing stays mounted: after Close (twice), with a file still open in
// this process or in another one, when the context ends, and after the
// serving process died (ForceUnmount).

func assertUnmounted(t *testing.T, mp string) {
	t.Helper()
	m, err := Mounted(mp)
	if err != nil {
		t.Fatal(err)
	}
	if m {
		t.Errorf("%s is still mounted", mp)
	}
}

// closeWithin closes f and fails the test if that took longer than limit.
func closeWithin(t *testing.T, f *FS, limit time.Duration) {
	t.Helper()
	start := time.Now()
	if err := f.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if took := time.Since(start); took > limit {
		t.Errorf("close took %v, want at most %v", took, limit)
	}
	assertUnmounted(t, f.Mountpoint())
}

func TestCloseUnmountsAndCanBeCalledAgain(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{})
	if m, err := Mounted(mp); err != nil || !m {
		t.Fatalf("not mounted after Mount: %v %v", m, err)
	}
	closeWithin(t, f, time.Second)
	if err := f.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if _, err := f.Cut(context.Background()); err == nil {
		t.Error("cut after close worked")
	}
}

func TestCloseDoesNotHangOnAnOpenFile(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{})
	fh, err := os.Create(filepath.Join(mp, "open"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	closeWithin(t, f, 2*time.Second)
	if _, err := fh.WriteString("x"); err == nil {
		t.Error("write after close worked")
	}
}

func TestCloseDoesNotHangOnAFileOpenInAnotherProcess(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{})
	w := startWorker(t, workerConfig{Job: "sqlite", Path: filepath.Join(mp, "db"), Phases: []phase{{"FULL", 3}}})
	closeWithin(t, f, 2*time.Second)
	w.kill()
}

func TestContextEndUnmounts(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	_, mp, backing := tempDirs(t)
	ctx, cancel := context.WithCancel(context.Background())
	f, err := Mount(ctx, mp, backing, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cancel()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if m, _ := Mounted(mp); !m {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%s still mounted 2s after its context ended", mp)
}

// A process that dies serving leaves a dead mount behind ("transport
// endpoint is not connected"): Mounted sees it, ForceUnmount removes it.
func TestForceUnmountRemovesTheMountOfADeadServer(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	unlessSwept(t, func() bool {
		dir, mp, _ := tempDirs(t)
		t.Cleanup(func() { ForceUnmount(mp) })
		w := startWorker(t, workerConfig{Job: "mount", Path: dir})
		w.kill()
		if m, err := Mounted(mp); err != nil {
			t.Fatal(err)
		} else if !m {
			return true
		}
		if _, err := os.ReadDir(mp); err == nil {
			if m, _ := Mounted(mp); !m {
				return true // it was swept between the two looks
			}
			t.Error("the dead mount still serves")
		}
		if err := ForceUnmount(mp); err != nil {
			t.Fatal(err)
		}
		assertUnmounted(t, mp)
		if err := ForceUnmount(mp); err != nil {
			t.Errorf("force unmount of nothing: %v", err)
		}
		return false
	})
}

// unlessSwept runs attempt, a test of a dead server's mount, again while it
// reports that the mount was gone before the test could look at it, at
// most three times. Any Mount sweeps the dead servers' mounts of the whole
// namespace (SweepDead), and go test runs other packages' power-loss runs
// beside this one; a mount swept by them says nothing of the code under
// test. Three sweeps in a row are reported NOT RUN, not PASS.
func unlessSwept(t *testing.T, attempt func() (swept bool)) {
	t.Helper()
	for i := range 3 {
		if !attempt() {
			return
		}
		t.Logf("attempt %d: another process's Mount swept the dead server's mount before the test looked", i+1)
	}
	t.Skip("NOT RUN: another process's Mount swept the test's dead mount first, three times")
}

// The mount a killed process left is removed by the next Mount (SweepDead),
// also while that process is a zombie not yet reaped; a live process's
// mount is left alone.
func TestMountSweepsTheMountsOfDeadServers(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	unlessSwept(t, func() bool { return sweepsTheDead(t) })
}

// sweepsTheDead is one attempt of TestMountSweepsTheMountsOfDeadServers;
// it reports whether the dead server's mount was swept before its Mount.
func sweepsTheDead(t *testing.T) (swept bool) {
	deadDir, deadMP, _ := tempDirs(t)
	liveDir, liveMP, _ := tempDirs(t)
	t.Cleanup(func() { ForceUnmount(deadMP); ForceUnmount(liveMP) })
	dead := startWorker(t, workerConfig{Job: "mount", Path: deadDir})
	startWorker(t, workerConfig{Job: "mount", Path: liveDir})
	// Killed, not reaped: a zombie until the test's cleanup waits for it.
	if err := dead.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); !exited(dead.cmd.Process.Pid); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("the killed worker is not a zombie after 5 s")
		}
	}
	if m, err := Mounted(deadMP); err != nil {
		t.Fatal(err)
	} else if !m {
		return true
	}
	_, mp, backing := tempDirs(t)
	f, err := Mount(context.Background(), mp, backing, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if m, err := Mounted(deadMP); err != nil || m {
		t.Errorf("the dead server's mount is still there after the next Mount: %v %v", m, err)
	}
	if m, err := Mounted(liveMP); err != nil || !m {
		t.Errorf("the live server's mount was removed: %v %v", m, err)
	}
	if _, err := os.ReadDir(liveMP); err != nil {
		t.Errorf("the live server's mount does not serve: %v", err)
	}
	return false
}
