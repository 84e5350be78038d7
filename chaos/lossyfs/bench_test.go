package lossyfs

import (
	"os"
	"path/filepath"
	"testing"
)

// Write and fsync throughput through the mount and in the backing
// directory directly: one 4 KiB write then an fsync, as a WAL commit does,
// over a 4 MiB file.
//
//	go test -run '^$' -bench . -benchtime 3000x ./chaos/lossyfs/

func benchmarkWriteFsync(b *testing.B, dir string) {
	f, err := os.Create(filepath.Join(dir, "bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := syncPath(dir); err != nil { // the file has a durable name
		b.Fatal(err)
	}
	page := make([]byte, pageSize)
	b.SetBytes(pageSize)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.WriteAt(page, int64(i%1024)*pageSize); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

// mountForBench mounts a lossy file system for a benchmark and returns its
// mount point.
func mountForBench(b *testing.B) string {
	if err := Available(); err != nil {
		b.Skipf("NOT RUN: %v", err)
	}
	_, mp, backing := tempDirs(b)
	f, err := Mount(b.Context(), mp, backing, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return mp
}

func BenchmarkWriteFsyncThroughMount(b *testing.B) {
	benchmarkWriteFsync(b, mountForBench(b))
}

func BenchmarkWriteFsyncBackingDirectly(b *testing.B) {
	benchmarkWriteFsync(b, b.TempDir())
}

// Writes without fsync: what the in-memory cache costs per write.
func BenchmarkWriteThroughMount(b *testing.B) {
	fh, err := os.Create(filepath.Join(mountForBench(b), "bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	page := make([]byte, pageSize)
	b.SetBytes(pageSize)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := fh.WriteAt(page, int64(i%1024)*pageSize); err != nil {
			b.Fatal(err)
		}
	}
}
