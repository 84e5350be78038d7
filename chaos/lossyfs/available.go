package lossyfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Available says why a lossy file system cannot be mounted on this
// machine, or nil: it checks for /dev/fuse, FUSE in the kernel and root
// (the file system mounts and unmounts with mount(2) and umount(2), not
// through fusermount), then mounts one on a temporary directory and
// unmounts it.
func Available() error {
	dev, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("lossyfs: cannot open /dev/fuse: %w", err)
	}
	dev.Close()
	filesystems, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return fmt.Errorf("lossyfs: cannot read /proc/filesystems: %w", err)
	}
	if !strings.Contains(string(filesystems), "\tfuse\n") {
		return errors.New("lossyfs: the kernel has no fuse file system (modprobe fuse)")
	}
	if os.Geteuid() != 0 {
		return errors.New("lossyfs: not root: it mounts FUSE with mount(2), which needs root (CAP_SYS_ADMIN)")
	}
	return probeMount()
}

// probeMount mounts and unmounts a lossy file system on temporary
// directories.
func probeMount() error {
	dir, err := os.MkdirTemp("", "lossyfs-probe-")
	if err != nil {
		return fmt.Errorf("lossyfs: probe: %w", err)
	}
	defer os.RemoveAll(dir)
	mp, backing := filepath.Join(dir, "mnt"), filepath.Join(dir, "backing")
	for _, d := range []string{mp, backing} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("lossyfs: probe: %w", err)
		}
	}
	f, err := Mount(context.Background(), mp, backing, Options{})
	if err != nil {
		return fmt.Errorf("lossyfs: probe mount failed: %w", err)
	}
	if _, err := os.ReadDir(mp); err != nil {
		f.Close()
		return fmt.Errorf("lossyfs: probe mount does not serve: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("lossyfs: probe unmount failed: %w", err)
	}
	return nil
}
