// Package serve is the adapter side of the adapter protocol
// (docs/ADAPTER.md) in Go: it answers the harness's requests, read from in,
// with a model.Store, writing the responses to out. adapters/go uses it to put
// storecheck's own backends behind the protocol; anyone can use it to put a
// Go store in another process.
package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/storecheck/storecheck/backends/adapter/wire"
	"github.com/storecheck/storecheck/model"
)

// Opener opens the store a hello asks for.
type Opener func(ctx context.Context, h wire.Hello) (model.Store, error)

// Options describe the adapter in its hello answer.
type Options struct {
	// Name is the adapter's name; "" means "go".
	Name string
	// MaxProcesses is 1 for a store that cannot be shared between
	// processes (an in-memory one), 0 for no limit.
	MaxProcesses int
}

// Serve answers requests until shutdown, the end of in, or ctx ending. The
// first request must be hello; it opens the store, which Serve closes
// before it returns. Serve handles one request at a time, as the protocol
// says.
func Serve(ctx context.Context, in io.Reader, out io.Writer, open Opener, opt Options) error {
	if opt.Name == "" {
		opt.Name = "go"
	}
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriter(out)
	s := &session{open: open, opt: opt}
	defer s.close()
	for n := 1; ctx.Err() == nil; n++ {
		line, err := readLine(r)
		if errors.Is(err, io.EOF) {
			return s.close()
		}
		if err != nil {
			return fmt.Errorf("serve: request line %d: %w", n, err)
		}
		req, err := wire.DecodeRequest(line)
		if err != nil {
			return fmt.Errorf("serve: request line %d is malformed: %w", n, err)
		}
		resp, done := s.handle(ctx, req)
		if _, err := w.Write(resp); err != nil {
			return fmt.Errorf("serve: write response %d: %w", req.ID, err)
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("serve: write response %d: %w", req.ID, err)
		}
		if done {
			return s.close()
		}
	}
	return ctx.Err()
}

// readLine reads one line without its newline, at most wire.MaxLine long.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > wire.MaxLine {
			return nil, fmt.Errorf("longer than %d bytes", wire.MaxLine)
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return nil, fmt.Errorf("the input ended inside a line")
		default:
			return nil, err
		}
	}
}
