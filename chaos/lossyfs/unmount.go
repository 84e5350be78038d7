package lossyfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// fusectlDir is where the fusectl file system shows the FUSE connections.
const fusectlDir = "/sys/fs/fuse/connections"

// detachGrace is how long Close waits for the server to end by itself
// after a lazy unmount before it aborts the connection.
const detachGrace = 200 * time.Millisecond

// Close unmounts the file system and stops its server; unsynced changes
// are lost, as at a cut (the backing directory holds the durable state).
// When a file is still open it unmounts lazily and aborts the FUSE
// connection: the open file then fails with ENOTCONN. It returns within
// Options.CloseTimeout, and may be called more than once.
func (f *FS) Close() error {
	f.closeOnce.Do(func() {
		close(f.closing)
		f.closeErr = f.shutdown()
	})
	return f.closeErr
}

func (f *FS) shutdown() error {
	deadline := time.NewTimer(f.opts.CloseTimeout)
	defer deadline.Stop()
	unmounted := make(chan error, 1)
	go func() { unmounted <- f.unmount() }()
	select {
	case err := <-unmounted:
		if err != nil {
			return err
		}
	case <-deadline.C:
		return fmt.Errorf("lossyfs: unmount %s: not done after %v", f.mountpoint, f.opts.CloseTimeout)
	}
	select {
	case <-f.served:
		return nil
	case <-deadline.C:
		return fmt.Errorf("lossyfs: close %s: the FUSE server still runs after %v", f.mountpoint, f.opts.CloseTimeout)
	}
}

// unmount unmounts, lazily if busy, and then aborts the connection if the
// server does not end by itself: after a lazy unmount while files are
// open, and after a clean one whose server still reads the connection
// (seen once in a test under a load of 10 on two cores: "the FUSE server
// still runs after 5s").
func (f *FS) unmount() error {
	err := syscall.Unmount(f.mountpoint, 0)
	switch {
	case err == nil:
		// The kernel ends the connection; the server's readers see it.
	case errors.Is(err, syscall.EBUSY):
		if err := syscall.Unmount(f.mountpoint, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("lossyfs: lazy unmount %s: %w", f.mountpoint, err)
		}
	case errors.Is(err, syscall.EINVAL):
		// Not mounted any more (ForceUnmount, or the mount died).
	default:
		return fmt.Errorf("lossyfs: unmount %s: %w", f.mountpoint, err)
	}
	select {
	case <-f.served:
		return nil
	case <-time.After(detachGrace):
	}
	if err := abortConnection(f.conn); err != nil {
		return fmt.Errorf("lossyfs: unmount %s: files are still open and the FUSE connection could not be aborted: %w", f.mountpoint, err)
	}
	return nil
}

// abortConnection aborts FUSE connection conn through fusectl, mounting
// fusectl first if no one has.
func abortConnection(conn uint32) error {
	abort := filepath.Join(fusectlDir, strconv.FormatUint(uint64(conn), 10), "abort")
	if _, err := os.Stat(abort); errors.Is(err, os.ErrNotExist) {
		if err := syscall.Mount("fusectl", fusectlDir, "fusectl", 0, ""); err != nil && !errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("mount fusectl on %s: %w", fusectlDir, err)
		}
	}
	if err := os.WriteFile(abort, []byte("1"), 0); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // the connection ended meanwhile
		}
		return fmt.Errorf("abort FUSE connection %d: %w", conn, err)
	}
	return nil
}

// ForceUnmount removes whatever FUSE file system is mounted on path: it
// aborts its connection, which fails every request still waiting for an
// answer (it unwedges a process stuck on a server that cannot answer), and
// unmounts it lazily. It removes the dead mount that a process which died
// serving leaves behind. It does nothing if nothing is mounted there.
func ForceUnmount(path string) error {
	e, ok, err := mountAt(path)
	if err != nil || !ok {
		return err
	}
	if strings.HasPrefix(e.fsType, "fuse") {
		if err := abortConnection(e.minor); err != nil {
			return fmt.Errorf("lossyfs: force unmount %s: %w", e.point, err)
		}
	}
	if err := syscall.Unmount(e.point, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("lossyfs: force unmount %s: %w", e.point, err)
	}
	return nil
}
