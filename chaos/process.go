package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"syscall"
)

// Signaler is a process a fault can signal: a worker process of this
// binary (worker.Process), which signals its whole process group.
type Signaler interface {
	Signal(sig syscall.Signal) error
	Pid() int
}

// The faults on processes.
var (
	// KillProcess SIGKILLs a process; nothing heals it (whoever runs the
	// process starts another).
	KillProcess Fault = signalFault{name: "kill-process", sig: syscall.SIGKILL}
	// StopProcess freezes a process with SIGSTOP and heals by SIGCONT.
	StopProcess Fault = signalFault{name: "stop-process", sig: syscall.SIGSTOP, heal: syscall.SIGCONT}
)

// signalFault sends sig, and heal (if any) to heal.
type signalFault struct {
	name      string
	sig, heal syscall.Signal
}

func (f signalFault) Name() string { return f.name }

func (f signalFault) Available(on any) error {
	if _, ok := on.(Signaler); !ok {
		return fmt.Errorf("%s acts on a process, not on %T", f.name, on)
	}
	return nil
}

func (f signalFault) Inject(_ context.Context, on any, _ *rand.Rand) (Injection, error) {
	p, ok := on.(Signaler)
	if !ok {
		return Injection{}, fmt.Errorf("%s acts on a process, not on %T", f.name, on)
	}
	inj := Injection{Target: "pid " + strconv.Itoa(p.Pid()), Detail: f.sig.String()}
	if f.heal != 0 {
		inj.Heal = func(context.Context) error { return p.Signal(f.heal) }
	}
	return inj, p.Signal(f.sig)
}
