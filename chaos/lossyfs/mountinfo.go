package lossyfs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Mounted says whether something is mounted on path, from
// /proc/self/mountinfo.
func Mounted(path string) (bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, fmt.Errorf("lossyfs: mounted %s: %w", path, err)
	}
	points, err := mountPoints()
	if err != nil {
		return false, err
	}
	for _, p := range points {
		if p == abs {
			return true, nil
		}
	}
	return false, nil
}

// mountPoints lists the mount points of this process's mount namespace.
func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("lossyfs: read mount table: %w", err)
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		points = append(points, unescapeMountinfo(fields[4]))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("lossyfs: read mount table: %w", err)
	}
	return points, nil
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
