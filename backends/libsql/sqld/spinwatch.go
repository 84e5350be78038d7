package sqld

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends/internal/pids"
)

// A healthy sqld under storecheck's traffic uses a fraction of a core. The
// wedge recorded in docs/KNOWN-ISSUES.md (sqld-write-lock-spin) is sqld's
// tokio workers looping in its write-lock hand-off while it answers nothing:
// more than a core for as long as it lasts. It ends a run in a FAIL that
// the history alone cannot tell from a storecheck defect, and by the time
// the run has a verdict the spin may be over. So every sqld process
// storecheck starts is watched while it runs, and when it spins its CPU
// samples and a thread dump are written beside its log, where the run's
// known-issue matching (internal/knownissues) and a person triaging can
// read them.

// SpinEvidenceSuffix ends the name of the file a spin's evidence is written
// to, beside the sqld log it belongs to (sqld-lag_200ms.log →
// sqld-lag_200ms.spin.txt).
const SpinEvidenceSuffix = ".spin.txt"

// spinWatch says when a process spins and where the evidence goes.
type spinWatch struct {
	pid      int
	evidence string        // the file written when it spins
	sample   time.Duration // how often its CPU time is read
	cores    float64       // CPU use, in cores, above which a sample counts
	windows  int           // samples in a row above it that make a spin
	gdb      string        // the gdb binary for a thread dump; "" for none
}

// newSpinWatch watches pid with the defaults: over a core for 20 s in a row
// (four samples of 5 s), a gdb thread dump when gdb is on PATH.
func newSpinWatch(pid int, log string) spinWatch {
	gdb, _ := exec.LookPath("gdb")
	return spinWatch{
		pid:      pid,
		evidence: strings.TrimSuffix(log, ".log") + SpinEvidenceSuffix,
		sample:   5 * time.Second,
		cores:    1,
		windows:  4,
		gdb:      gdb,
	}
}

// run samples until exited is closed or the process cannot be read, and
// writes the evidence at most once. Its loop is bounded by the process's
// life: every sample either reads the process or ends the watch.
func (w spinWatch) run(exited <-chan struct{}) {
	tick := time.NewTicker(w.sample)
	defer tick.Stop()
	last, err := cpuSeconds(w.pid)
	if err != nil {
		return
	}
	var streak []float64
	for {
		select {
		case <-exited:
			return
		case <-tick.C:
		}
		now, err := cpuSeconds(w.pid)
		if err != nil {
			return
		}
		used := now - last
		last = now
		if used <= w.cores*w.sample.Seconds() {
			streak = streak[:0]
			continue
		}
		if streak = append(streak, used); len(streak) >= w.windows {
			w.write(streak)
			return
		}
	}
}

// write records the spin: the CPU samples, and the thread dump if gdb is
// there (sqld's symbols name where its threads are). The file appears
// whole or not at all.
func (w spinWatch) write(samples []float64) {
	var b strings.Builder
	if _, err := os.Stat(w.evidence); err == nil {
		return // an earlier process of the same log spun: its evidence stays
	}
	fmt.Fprintf(&b, "sqld (pid %d) used more than %g core(s) for %v in a row, detected %s\n",
		w.pid, w.cores, w.sample*time.Duration(len(samples)), time.Now().UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "CPU seconds in each %v sample:", w.sample)
	for _, s := range samples {
		fmt.Fprintf(&b, " %.2f", s)
	}
	b.WriteString("\n\n")
	b.WriteString(w.threadDump())
	tmp := w.evidence + ".partial"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil || os.Rename(tmp, w.evidence) != nil {
		_ = os.Remove(tmp) // nothing half-written is left
	}
}

// threadDump is every thread's stack, from gdb attached for a moment
// (bounded to a minute), or why there is none.
func (w spinWatch) threadDump() string {
	if w.gdb == "" {
		return "no thread dump: gdb is not on PATH\n"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, w.gdb, "-p", strconv.Itoa(w.pid), "-batch", "-nx",
		"-ex", "set pagination off", "-ex", "thread apply all bt 24").CombinedOutput()
	head := fmt.Sprintf("thread dump (gdb -p %d -batch -ex 'thread apply all bt 24')", w.pid)
	if err != nil {
		head += fmt.Sprintf(", gdb: %v", err)
	}
	return head + ":\n" + string(out)
}

// ProcStat is what /proc/PID/stat says of a process (pids.Stat).
type ProcStat = pids.Stat

// ReadProcStat reads /proc/PID/stat (pids.Read).
func ReadProcStat(pid int) (ProcStat, error) { return pids.Read(pid) }

// cpuSeconds is the CPU time pid has used.
func cpuSeconds(pid int) (float64, error) {
	st, err := ReadProcStat(pid)
	return st.CPU, err
}
