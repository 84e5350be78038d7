//go:build unix

package adapter

import (
	"fmt"
	"os"
	"syscall"
)

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("signal %v is not a syscall.Signal", sig)
	}
	if err := syscall.Kill(-pid, s); err != nil {
		return fmt.Errorf("signal %v to process group %d: %w", sig, pid, err)
	}
	return nil
}
