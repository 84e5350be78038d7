//go:build !unix

package adapter

import (
	"fmt"
	"os"
	"syscall"
)

// sysProcAttr has no process groups to set up here.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// signalGroup can only kill the process itself here.
func signalGroup(pid int, sig os.Signal) error {
	if sig != os.Kill {
		return fmt.Errorf("signal %v: only os.Kill is supported on this system", sig)
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
