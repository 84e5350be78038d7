//go:build linux || darwin || freebsd || netbsd || openbsd

package linearizability

import (
	"os"
	"syscall"
)

// mapFile maps a regular file read-only into memory; false for anything
// else, or if the system refuses (LoadFile then reads it).
func mapFile(f *os.File) (data []byte, unmap func(), ok bool) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || st.Size() != int64(int(st.Size())) {
		return nil, nil, false
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, false
	}
	return data, func() { _ = syscall.Munmap(data) }, true
}
