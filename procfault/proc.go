package procfault

import (
	"bytes"
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/worker"
)

// The worker roles of this package (see Roles).
const (
	roleCrash = "procfault-crash"
	roleStall = "procfault-stall"
)

// proc is a running worker process as the parent sees it: the generic
// process of package worker, its messages decoded into this package's.
type proc struct {
	*worker.Process
	events chan message // closed once the process's pipe is at its end
}

// startCycle starts the worker of one kill-and-recover cycle (crash-
// recovery, power-loss) and the timer that bounds the cycle; done kills and
// reaps the worker and stops the timer.
func startCycle(ctx context.Context, c worker.Command, cfg workerConfig) (w *proc, deadline <-chan time.Time, done func(), err error) {
	w, err = startWorker(ctx, c, cfg)
	if err != nil {
		return nil, nil, nil, notRun("%v", err)
	}
	timer := time.NewTimer(cycleTimeout)
	return w, timer.C, func() { timer.Stop(); w.close() }, nil
}

// startWorker starts a worker with configuration cfg.
func startWorker(ctx context.Context, c worker.Command, cfg workerConfig) (*proc, error) {
	role := roleCrash
	if cfg.Mode == modeStall {
		role = roleStall
	}
	p, err := worker.Start(ctx, c, role, cfg)
	if err != nil {
		return nil, err
	}
	w := &proc{Process: p, events: make(chan message, 256)}
	go func() {
		defer close(w.events)
		for m := range p.Events() {
			var msg message
			if err := m.Decode(&msg); err != nil {
				continue
			}
			if msg.Type == msgHistory {
				msg = readHistory(msg, m.Body)
			}
			w.events <- msg
		}
	}()
	return w, nil
}

// readHistory reads a history message's operations from its body; a body
// that does not hold the count of operations the line says makes the
// message an error of the worker's, at stage "history".
func readHistory(m message, body []byte) message {
	h, err := linearizability.ReadJSONL(bytes.NewReader(body))
	if err == nil && len(h.Ops) != m.Count {
		err = fmt.Errorf("%d operations in a body of %d bytes, where the line says %d", len(h.Ops), len(body), m.Count)
	}
	if err != nil {
		return message{Type: msgError, Stage: "history", Error: fmt.Sprintf("the worker's history could not be read: %v", err)}
	}
	m.Ops = h.Ops
	return m
}

// tell writes one line to the worker's standard input.
func (w *proc) tell(line string) error { return w.Tell(line) }

// status describes how the worker ended and what it printed, for errors.
func (w *proc) status() string { return w.Status() }

// close kills the worker if it still runs, reads what it wrote before it
// died, and reaps it.
func (w *proc) close() {
	_ = w.Signal(syscall.SIGKILL)
	for range w.events {
	}
	<-w.Exited()
}

// drain returns the messages still to come, once the worker has exited or
// been killed, and reaps it.
func (w *proc) drain() []message {
	var rest []message
	for m := range w.events {
		rest = append(rest, m)
	}
	<-w.Exited()
	return rest
}
