package adapter

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// Bounds of what is kept of an adapter's stderr for error messages.
const (
	tailLines   = 12
	tailLineLen = 300
)

// tail keeps the last lines an adapter wrote to stderr.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (t *tail) add(line string) {
	if len(line) > tailLineLen {
		line = line[:tailLineLen] + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > tailLines {
		t.lines = t.lines[len(t.lines)-tailLines:]
	}
}

// String is the kept lines on one line, "" when there are none.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, " | ")
}

// drainStderr logs every line of r and keeps the last ones, until r ends.
// It never stops reading early, so an adapter cannot block on a full pipe.
func drainStderr(r io.Reader, t *tail, log *slog.Logger, name string, pid int) {
	br := bufio.NewReaderSize(r, 4096)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line) < 64<<10 {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if text := strings.TrimRight(string(line), "\r\n"); text != "" {
			t.add(text)
			log.Info("adapter stderr", "adapter", name, "pid", pid, "line", text)
		}
		line = line[:0]
		if err != nil {
			return
		}
	}
}
