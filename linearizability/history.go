package linearizability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/storecheck/storecheck/model"
)

// History is a recorded run: what the checker needs besides the operations,
// and the operations in the order they returned.
type History struct {
	Meta Meta
	Ops  []Operation
}

// Meta describes the run a history came from. It is the optional first line
// of a JSON-lines history, as {"meta": {...}}.
type Meta struct {
	// TraceMax is the store's trace cap; 0 means unbounded. A history file
	// without a meta line is read with model.DefaultTraceMax.
	TraceMax int `json:"trace_max"`
	// Seed, Scenario and Store say how to reproduce the run; informative.
	Seed     uint64 `json:"seed,omitempty"`
	Scenario string `json:"scenario,omitempty"`
	Store    string `json:"store,omitempty"`
	// Ops is how many operation lines follow, as WriteJSONL wrote them: a
	// file holding another number was cut (at a line, where nothing else
	// shows it) or edited, and is refused. 0: not stated (a history
	// written before the field, or by hand).
	Ops int `json:"ops,omitempty"`
}

// DefaultMeta is the meta of a history that states none.
func DefaultMeta() Meta { return Meta{TraceMax: model.DefaultTraceMax} }

// metaLine is the shape of the first line.
type metaLine struct {
	Meta *Meta `json:"meta"`
}

// WriteJSONL writes h as JSON lines: the meta line, then one operation per
// line.
func WriteJSONL(w io.Writer, h History) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	meta := h.Meta
	meta.Ops = len(h.Ops)
	if err := enc.Encode(metaLine{Meta: &meta}); err != nil {
		return fmt.Errorf("write history meta: %w", err)
	}
	for i := range h.Ops {
		if err := enc.Encode(&h.Ops[i]); err != nil {
			return fmt.Errorf("write history operation %d: %w", i, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	return nil
}

// ReadJSONL reads a history written by WriteJSONL (or by hand). Blank lines
// are skipped. A line that is not one well-formed operation is an
// ErrMalformed error naming its line number.
func ReadJSONL(r io.Reader) (History, error) {
	return readJSONL(func(fn func([]byte) error) error { return eachLine(r, readBlock, maxLine, fn) }, 0)
}

// readJSONL is ReadJSONL for the lines each calls fn with, at most lines
// of them (0: not known). With that bound the operations are decoded in
// place, into one slice made at the start, instead of batch by batch and
// then copied: a history of a million operations is half a gigabyte of
// them. The lines may be those of a mapped file (LoadFile): a fault on
// reading them, the file having shrunk, is an error (faultsAsErrors).
func readJSONL(each func(fn func([]byte) error) error, lines int) (History, error) {
	h := History{Meta: DefaultMeta()}
	d := newDecoders(runtime.GOMAXPROCS(0), lines)
	var b *lineBatch
	line, ops := 0, 0
	err := faultsAsErrors(func() error {
		return each(func(raw []byte) error {
			line++
			raw = bytes.TrimSpace(raw)
			if len(raw) == 0 {
				return nil
			}
			if line == 1 && bytes.HasPrefix(raw, []byte(`{"meta"`)) {
				m := metaLine{Meta: &h.Meta}
				if err := strictUnmarshal(raw, &m); err != nil {
					return fmt.Errorf("%w: line %d: meta: %v", ErrMalformed, line, err)
				}
				return nil
			}
			if b == nil {
				b = &lineBatch{first: ops, done: make(chan struct{})}
			}
			b.numbers = append(b.numbers, line)
			b.lines = append(b.lines, raw)
			ops++
			if len(b.lines) == batchLines {
				d.send(b)
				b = nil
			}
			if d.failed.Load() {
				return errStopReading
			}
			return nil
		})
	})
	if b != nil {
		d.send(b)
	}
	// An operation line that failed comes before whatever stopped the
	// reading after it (a read error, a line too long).
	decoded, derr := d.wait()
	switch {
	case derr != nil:
		return History{}, derr
	case err != nil && !errors.Is(err, errStopReading):
		return History{}, err
	}
	if h.Meta.Ops != 0 && len(decoded) != h.Meta.Ops {
		return History{}, fmt.Errorf("%w: %d operations, but the meta line says %d were written: the file was cut or edited", ErrMalformed, len(decoded), h.Meta.Ops)
	}
	h.Ops = decoded
	return h, nil
}

// errStopReading ends eachLine early: a batch already failed.
var errStopReading = errors.New("stop reading")

// Reading a history in blocks: a line is a slice of the block it was read
// in, not a copy of its own (a history of a million operations is a
// million lines), and a block lives as long as a batch holds one of its
// lines.
const (
	readBlock = 1 << 20  // bytes read at a time
	maxLine   = 64 << 20 // a longer line is refused, as bufio.Scanner refuses it
)

// eachLine calls fn with each line of r, without its newline (the last line
// may have none), until fn returns an error, which eachLine returns. It
// reads blockSize bytes at a time, and refuses a line longer than maxLen.
func eachLine(r io.Reader, blockSize, maxLen int, fn func([]byte) error) error {
	var carry []byte // the start of a line the last block cut
	for {
		block := make([]byte, len(carry), max(blockSize, 2*len(carry)))
		copy(block, carry)
		n, err := io.ReadFull(r, block[len(carry):cap(block)])
		block = block[:len(carry)+n]
		end := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		var failed error // a read error, returned after the whole lines read before it
		if err != nil && !end {
			failed = fmt.Errorf("read history: %w", err)
		}
		complete := block
		if !end {
			last := bytes.LastIndexByte(block, '\n')
			if last < 0 && failed == nil {
				if len(block) > maxLen {
					return fmt.Errorf("read history: %w", bufio.ErrTooLong)
				}
				carry = block // one line longer than the block: read on
				continue
			}
			complete, carry = block[:last+1], block[last+1:]
		}
		if err := eachLineIn(complete, maxLen, fn); err != nil {
			return err
		}
		if failed != nil {
			return failed
		}
		if end {
			return nil
		}
	}
}

// batchLines is how many lines a decoder takes at a time.
const batchLines = 1024

// lineBatch is consecutive operation lines of a history (numbers are their
// line numbers; first is the index of the first one's operation) and,
// once done is closed, their operations or the first error among them.
type lineBatch struct {
	first   int
	numbers []int
	lines   [][]byte
	ops     []Operation
	inPlace bool // ops is a window of the decoders' slice, at first
	err     error
	done    chan struct{}
}

// decoders decode a history's operation lines on several goroutines and
// hand the operations back in the order of the lines: decoding JSON is
// most of reading a large history.
type decoders struct {
	work, order chan *lineBatch
	wg          sync.WaitGroup
	failed      atomic.Bool // a batch failed: reading can stop
	into        []Operation // where batches decode in place; nil when the size is not known
	collected   chan struct{}
	batches     [][]Operation // decoded, in line order
	n           int           // operations in batches
	copy        bool          // some batch is not in place: wait copies
	err         error
}

// newDecoders starts n decoders; lines bounds the operations to come (0:
// not known).
func newDecoders(n, lines int) *decoders {
	d := &decoders{work: make(chan *lineBatch, 2*n), order: make(chan *lineBatch, 2*n), collected: make(chan struct{})}
	if lines > 0 {
		d.into = make([]Operation, lines)
	}
	for range max(1, n) {
		d.wg.Go(d.decode)
	}
	go d.collect()
	return d
}

// decode decodes batches until there are no more, each into its place in
// d.into when it fits there (a file that grew since its lines were
// counted may not), else into a slice of its own.
func (d *decoders) decode() {
	ld := newLineDecoder()
	for b := range d.work {
		if end := b.first + len(b.lines); end <= len(d.into) {
			b.ops, b.inPlace = d.into[b.first:end:end], true
		} else {
			b.ops = make([]Operation, len(b.lines))
		}
		b.err = faultsAsErrors(func() error {
			for i, raw := range b.lines {
				op := &b.ops[i]
				err := ld.decode(raw, op)
				if err == nil {
					err = op.validate()
				}
				if err != nil {
					return fmt.Errorf("%w: line %d: %v", ErrMalformed, b.numbers[i], err)
				}
			}
			return nil
		})
		if b.err != nil {
			d.failed.Store(true)
		}
		b.lines = nil
		close(b.done)
	}
}

// collect keeps the batches' operations in order, up to the first error.
func (d *decoders) collect() {
	defer close(d.collected)
	for b := range d.order {
		<-b.done
		if d.err == nil {
			d.err = b.err
		}
		if d.err == nil {
			d.batches = append(d.batches, b.ops)
			d.copy = d.copy || !b.inPlace
			d.n += len(b.ops)
		}
	}
}

func (d *decoders) send(b *lineBatch) {
	d.work <- b
	d.order <- b
}

// stop ends the decoders without waiting for a result.
func (d *decoders) stop() {
	close(d.work)
	close(d.order)
	d.wg.Wait()
	<-d.collected
}

// wait returns every operation in line order, or the first error by line.
// Decoded in place, the operations are the start of d.into. Otherwise
// they are copied once into a slice of their exact number (a slice grown
// by append would hold up to twice the history while it grows), each
// batch let go as soon as it is copied.
func (d *decoders) wait() ([]Operation, error) {
	d.stop()
	if d.err != nil {
		return nil, d.err
	}
	if !d.copy && d.into != nil {
		return d.into[:d.n:d.n], nil
	}
	ops := make([]Operation, 0, d.n)
	for i, b := range d.batches {
		ops = append(ops, b...)
		d.batches[i] = nil
	}
	if d.n >= collectAfter {
		// Right after the copy the heap holds the history twice (the
		// batches are garbage not yet collected), and the collector's next
		// target would be twice that: the check that follows would then
		// grow the heap to about four histories before collecting. One
		// collection here sets the target from the history alone.
		runtime.GC()
	}
	return ops, nil
}

// collectAfter is the history size from which reading ends with a garbage
// collection (decoders.wait): below it, the copy is too small to matter.
const collectAfter = 100_000

// strictUnmarshal decodes exactly one JSON value with no unknown fields.
func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// SaveFile writes h to path as JSON lines.
func SaveFile(path string, h History) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("save history: %w", cerr)
		}
	}()
	return WriteJSONL(f, h)
}

// LoadFile reads a JSON-lines history from path. A regular file is mapped
// into memory where the system allows it: its lines are read where they
// lie, with no copy, and counted first (a pass that costs a small part of
// decoding them), so that its operations are decoded in place (readJSONL).
// Anything else is read as a stream.
func LoadFile(path string) (History, error) {
	f, err := os.Open(path)
	if err != nil {
		return History{}, fmt.Errorf("load history: %w", err)
	}
	defer f.Close()
	var h History
	if data, unmap, ok := mapFile(f); ok {
		// unmap after readJSONL, whose decoders are done by then: no
		// operation holds a byte of data.
		defer unmap()
		h, err = readJSONL(func(fn func([]byte) error) error { return eachLineIn(data, maxLine, fn) }, maxOperations(countLinesIn(data), int64(len(data))))
	} else {
		// Not mapped (a pipe, a system without mmap): read as a stream,
		// decoded batch by batch.
		h, err = readJSONL(func(fn func([]byte) error) error { return eachLine(f, readBlock, maxLine, fn) }, 0)
	}
	if err != nil {
		return History{}, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// eachLineIn is eachLine over data in memory.
func eachLineIn(data []byte, maxLen int, fn func([]byte) error) error {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		if i > maxLen {
			return fmt.Errorf("read history: %w", bufio.ErrTooLong)
		}
		if err := fn(data[:i]); err != nil {
			return err
		}
		data = data[min(i+1, len(data)):]
	}
	return nil
}

// countLinesIn counts data's lines, a last one without a newline included.
// It reads a mapped file: a fault is 0 lines (not known), and reading it
// then reports the fault.
func countLinesIn(data []byte) (lines int) {
	if faultsAsErrors(func() error {
		lines = bytes.Count(data, []byte{'\n'})
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		return nil
	}) != nil {
		return 0
	}
	return lines
}

// errFileShrank is reading a mapped history whose file shrank meanwhile:
// its pages past the new end cannot be read.
var errFileShrank = errors.New("read history: the file shrank while it was read")

// faultsAsErrors runs fn and returns its error, or errFileShrank if fn
// faulted on reading memory (a mapped file's page past its new end, which
// would otherwise end the process with SIGBUS). Any other panic goes on.
func faultsAsErrors(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); fault {
				err = errFileShrank
				return
			}
			panic(r)
		}
	}()
	return fn()
}

// maxOperations bounds the operations a file of size bytes and lines lines
// can hold: each operation a line, and no operation line shorter than
// minOperationLine. The slice LoadFile decodes into is made at that size;
// without the second bound a file of newlines alone would ask for some
// 500 bytes of memory per byte of file before its first line is refused.
// It only sizes that slice: operations past it are still read (decoded on
// their own and copied, as for a file that grew).
func maxOperations(lines int, size int64) int {
	return int(min(int64(lines), size/minOperationLine+1))
}

// minOperationLine is shorter than any operation line: the shortest,
// {"kind":"ack_spawn","output":{"outcome":"ok"}}, is 46 bytes and its
// newline.
const minOperationLine = 40
