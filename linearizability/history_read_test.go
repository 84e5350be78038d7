package linearizability

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// jsonlOf is h as WriteJSONL writes it.
func jsonlOf(tb testing.TB, h History) *bytes.Buffer {
	tb.Helper()
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, h); err != nil {
		tb.Fatal(err)
	}
	return &buf
}

// TestReadJSONLInOrderAndFirstError: a history of several decoding batches
// reads back operation for operation, and of two malformed lines in
// different batches the error names the first.
func TestReadJSONLInOrderAndFirstError(t *testing.T) {
	h := simulate(t, simConfig{ops: 3000, clients: 8, execs: 20, traceMax: model.DefaultTraceMax, seed: 3})
	if len(h.Ops) < 3*batchLines {
		t.Fatalf("%d operations, want more than three batches", len(h.Ops))
	}
	buf := jsonlOf(t, h)
	back, err := ReadJSONL(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Ops) != len(h.Ops) {
		t.Fatalf("read %d operations, wrote %d", len(back.Ops), len(h.Ops))
	}
	for i := range h.Ops {
		if back.Ops[i].Call != h.Ops[i].Call || back.Ops[i].Client != h.Ops[i].Client || back.Ops[i].Kind != h.Ops[i].Kind {
			t.Fatalf("operation %d read back as %+v, written %+v", i, back.Ops[i], h.Ops[i])
		}
	}
	lines := strings.Split(buf.String(), "\n")
	lines[2*batchLines+10] = `{"kind":"load","nonsense":1}`
	lines[batchLines+5] = `{not json`
	_, err = ReadJSONL(strings.NewReader(strings.Join(lines, "\n")))
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "line 1030:") {
		t.Fatalf("want the first malformed line (1030) named, got %v", err)
	}
}

// TestEachLineAcrossBlocks: lines cut by the block they were read in, a
// line longer than a block, blank lines, \r\n, and a last line without a
// newline come out whole and in order; a line longer than the limit is
// refused as bufio.Scanner refuses it.
func TestEachLineAcrossBlocks(t *testing.T) {
	in := "a\nbcdefghijklmnop\n\r\n\nqrs\r\nlast"
	for _, block := range []int{1, 2, 3, 7, 64} {
		var got []string
		err := eachLine(strings.NewReader(in), block, 100, func(l []byte) error {
			got = append(got, string(l))
			return nil
		})
		if err != nil {
			t.Fatalf("block %d: %v", block, err)
		}
		if want := []string{"a", "bcdefghijklmnop", "\r", "", "qrs\r", "last"}; !slices.Equal(got, want) {
			t.Errorf("block %d: lines %q, want %q", block, got, want)
		}
	}
	for _, block := range []int{4, 64} {
		err := eachLine(strings.NewReader("ok\n"+strings.Repeat("x", 30)+"\nok\n"), block, 20, func([]byte) error { return nil })
		if !errors.Is(err, bufio.ErrTooLong) {
			t.Errorf("block %d: a 30-byte line under a 20-byte limit: %v, want bufio.ErrTooLong", block, err)
		}
	}
	var n int
	if err := eachLine(strings.NewReader(""), 8, 20, func([]byte) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("empty input: %d lines, %v", n, err)
	}
}

// failingReader returns err after its data.
type failingReader struct {
	data io.Reader
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if n, err := f.data.Read(p); err != io.EOF {
		return n, err
	}
	return 0, f.err
}

// TestReadJSONLFirstErrorByLine: a malformed operation line comes before a
// read error after it; a read error after good lines is the error.
func TestReadJSONLFirstErrorByLine(t *testing.T) {
	broken := errors.New("disk gone")
	good := `{"client":1,"kind":"load","execution":"e1","input":{},"output":{"outcome":"ok"},"call_ns":1,"return_ns":2}`
	_, err := ReadJSONL(&failingReader{strings.NewReader(good + "\n{\"client\":\n"), broken})
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a malformed line 2, then a read error: %v, want line 2's error", err)
	}
	_, err = ReadJSONL(&failingReader{strings.NewReader(good + "\n"), broken})
	if !errors.Is(err, broken) || errors.Is(err, ErrMalformed) {
		t.Errorf("good lines, then a read error: %v, want the read error", err)
	}
}

// TestReadInPlaceAsInBatches: a history decoded in place, into a slice made
// for the lines counted, is the one decoded batch by batch — with blank
// lines, and also when the file holds more lines than were counted (it
// grew: the batches past the count decode on their own and are copied).
func TestReadInPlaceAsInBatches(t *testing.T) {
	h := simulate(t, simConfig{ops: 3000, clients: 8, execs: 20, traceMax: model.DefaultTraceMax, seed: 4})
	buf := jsonlOf(t, h)
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	lines = slices.Insert(lines, 1500, "", "  ")
	text := strings.Join(lines, "\n") // no newline after the last line
	want, err := ReadJSONL(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/history.jsonl"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(loaded, want) {
		t.Fatal("LoadFile (in place) and ReadJSONL (in batches) read different histories")
	}
	for _, bound := range []int{1, batchLines, 2*batchLines + 7, len(lines) + 5} {
		got, err := readJSONL(func(fn func([]byte) error) error { return eachLine(strings.NewReader(text), readBlock, maxLine, fn) }, bound)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("read with room for %d operations: not the history read in batches", bound)
		}
	}
}

// TestCountLinesIn: the lines of a file in memory, a last one without a
// newline included.
func TestCountLinesIn(t *testing.T) {
	for text, want := range map[string]int{"": 0, "a": 1, "a\n": 1, "a\n\nb": 3, strings.Repeat("x\n", 3*readBlock/2): 3 * readBlock / 2} {
		if n := countLinesIn([]byte(text)); n != want {
			t.Errorf("%d bytes: %d lines, want %d", len(text), n, want)
		}
	}
}

// TestLoadFileFromAPipe: a history that is not a regular file (a named
// pipe, /dev/stdin) is read as a stream, neither mapped nor counted.
func TestLoadFileFromAPipe(t *testing.T) {
	h := simulate(t, simConfig{ops: 1500, clients: 4, execs: 5, traceMax: model.DefaultTraceMax, seed: 5})
	buf := jsonlOf(t, h)
	want, err := ReadJSONL(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "history.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("NOT RUN: no named pipes here: %v", err)
	}
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Write(buf.Bytes())
			f.Close()
		}
	}()
	got, err := LoadFile(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("a history read from a pipe is not the one read from memory")
	}
}

// TestMappedFileThatShrinks: a history file cut short while it is mapped
// (its pages past the new end fault) is an error, not the end of the
// process with SIGBUS.
func TestMappedFileThatShrinks(t *testing.T) {
	h := simulate(t, simConfig{ops: 3000, clients: 8, execs: 20, traceMax: model.DefaultTraceMax, seed: 6})
	path := filepath.Join(t.TempDir(), "history.jsonl")
	if err := SaveFile(path, h); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, unmap, ok := mapFile(f)
	if !ok {
		t.Skip("NOT RUN: this system maps no files")
	}
	defer unmap()
	if len(data) < 4*os.Getpagesize() {
		t.Fatalf("a history of %d bytes: too short to cut pages from", len(data))
	}
	if err := os.Truncate(path, int64(os.Getpagesize())); err != nil {
		t.Fatal(err)
	}
	_, err = readJSONL(func(fn func([]byte) error) error { return eachLineIn(data, maxLine, fn) }, countLinesIn(data))
	if !errors.Is(err, errFileShrank) {
		t.Fatalf("got %v, want %v", err, errFileShrank)
	}
	// A panic that is not a fault is not taken for one.
	defer func() {
		if r := recover(); r != "not a fault" {
			t.Errorf("recovered %v, want the panic passed on", r)
		}
	}()
	faultsAsErrors(func() error { panic("not a fault") })
}

// TestInPlaceBound: the slice a file is decoded into holds no more
// operations than the file has lines, nor more than its bytes allow (a
// file of newlines alone asks for no more than a few), and a history
// storecheck writes is never cut by the second bound: its every line is
// longer than minOperationLine.
func TestInPlaceBound(t *testing.T) {
	if got := maxOperations(1_000_000, 1_000_000); got > 1_000_000/minOperationLine+1 {
		t.Errorf("a file of a million newlines: room for %d operations", got)
	}
	if got := maxOperations(10, 1<<20); got != 10 {
		t.Errorf("10 long lines: room for %d operations, want 10", got)
	}
	shortest := []byte(`{"kind":"ack_spawn","output":{"outcome":"ok"}}`)
	var op Operation
	if err := strictUnmarshal(shortest, &op); err != nil || op.validate() != nil || len(shortest)+1 < minOperationLine {
		t.Errorf("the shortest operation line %s (%d bytes): %v, %v", shortest, len(shortest), err, op.validate())
	}
	h := simulate(t, simConfig{ops: 2000, clients: 6, execs: 8, traceMax: model.DefaultTraceMax, seed: 7, indeterminate: 0.05})
	buf := jsonlOf(t, h)
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if len(line)+1 < minOperationLine {
			t.Fatalf("a line storecheck writes is %d bytes, under minOperationLine: %s", len(line), line)
		}
	}
}

// TestCutHistoryIsRefused: a history cut at a line ending (a copy that
// stopped, an upload cut short) holds only well-formed lines, and check
// would pass the operations it kept; the meta line says how many were
// written, so a file holding fewer (or more) is refused, by ReadJSONL and
// by LoadFile alike. A history whose meta line states no count (written
// before it was recorded, or by hand) is read as it is.
func TestCutHistoryIsRefused(t *testing.T) {
	h := simulate(t, simConfig{ops: 200, clients: 4, execs: 5, traceMax: model.DefaultTraceMax, seed: 5})
	lines := strings.SplitAfter(jsonlOf(t, h).String(), "\n")
	cut := strings.Join(lines[:len(lines)/2], "")
	if _, err := ReadJSONL(strings.NewReader(cut)); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "cut or edited") {
		t.Errorf("ReadJSONL of a history cut at a line: %v; want a malformed history, cut", err)
	}
	path := filepath.Join(t.TempDir(), "history.jsonl")
	if err := os.WriteFile(path, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); !errors.Is(err, ErrMalformed) {
		t.Errorf("LoadFile of a history cut at a line: %v; want a malformed history", err)
	}
	noCount := strings.Replace(cut, `"ops":`+strconv.Itoa(len(h.Ops)), `"seed":5`, 1)
	if noCount == cut {
		t.Fatalf("the meta line does not state the count:\n%s", lines[0])
	}
	if back, err := ReadJSONL(strings.NewReader(noCount)); err != nil || len(back.Ops) != len(lines)/2-1 {
		t.Errorf("a history that states no count: %d operations, %v", len(back.Ops), err)
	}
}
