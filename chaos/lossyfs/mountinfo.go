package lossyfs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	point  string
	minor  uint32 // the minor device number: a FUSE connection's number
	fsType string
	source string
}

// Mounted says whether something is mounted on path, from
// /proc/self/mountinfo.
func Mounted(path string) (bool, error) {
	_, ok, err := mountAt(path)
	return ok, err
}

// mountAt returns the last mount on path.
func mountAt(path string) (mountEntry, bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return mountEntry{}, false, fmt.Errorf("lossyfs: mount table entry of %s: %w", path, err)
	}
	entries, err := mountTable()
	if err != nil {
		return mountEntry{}, false, err
	}
	var found mountEntry
	ok := false
	for _, e := range entries {
		if e.point == abs {
			found, ok = e, true
		}
	}
	return found, ok, nil
}

// mountTable reads the mounts of this process's mount namespace.
func mountTable() ([]mountEntry, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("lossyfs: read mount table: %w", err)
	}
	defer f.Close()
	var entries []mountEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if e, ok := parseMountinfo(sc.Text()); ok {
			entries = append(entries, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("lossyfs: read mount table: %w", err)
	}
	return entries, nil
}

// parseMountinfo parses "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS
// [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS".
func parseMountinfo(line string) (mountEntry, bool) {
	fields := strings.Fields(line)
	if len(fields) < 5 {
		return mountEntry{}, false
	}
	e := mountEntry{point: unescapeMountinfo(fields[4])}
	if _, minor, ok := strings.Cut(fields[2], ":"); ok {
		if v, err := strconv.ParseUint(minor, 10, 32); err == nil {
			e.minor = uint32(v)
		}
	}
	for i, f := range fields {
		if f == "-" && i+1 < len(fields) {
			e.fsType = fields[i+1]
			if i+2 < len(fields) {
				e.source = unescapeMountinfo(fields[i+2])
			}
			break
		}
	}
	return e, true
}

// unescapeMountinfo undoes the octal escapes (\040 for a space) of a
// mountinfo field.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
