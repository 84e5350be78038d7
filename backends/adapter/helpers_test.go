package adapter

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// quiet are options for tests: the default timeouts (a loaded CI machine
// is slow), the store in the test's folder, adapter stderr in the test log.
func quiet(t *testing.T) Options {
	return Options{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// children lists the processes this test binary started and has not reaped
// (Linux only: read from /proc).
func children(t *testing.T) []int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	me := strconv.Itoa(os.Getpid())
	var out []int
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so split after ')'.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == me {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			out = append(out, pid)
		}
	}
	return out
}

// noChildren fails the test if a started adapter was not reaped.
func noChildren(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return
	}
	deadline := time.Now().Add(2 * time.Second)
	for len(children(t)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if c := children(t); len(c) > 0 {
		t.Errorf("adapter processes left behind: %v", c)
	}
}
