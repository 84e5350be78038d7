package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/storecheck/storecheck/reports"
)

// stdinArg is the file argument that names standard input, as for cat and
// grep: check - reads a history from it, diff and replay a summary.
const stdinArg = "-"

// stdinName is what messages call standard input.
const stdinName = "standard input"

// maxStdinSummary bounds a summary read from standard input: a
// qualification of thousands of runs is a few MB.
const maxStdinSummary = 256 << 20

// inputArg is a file argument: the file read and the name messages give
// it. Standard input ("-") and any other stream (a named pipe, /dev/stdin,
// a shell's <(…)) are spooled into a temporary file first, so that they
// are read as a file is: mapped, and read again when they are not a
// history of the first kind tried.
type inputArg struct {
	file, name string
	// spooled marks a stream's copy: it has no folder of its own.
	spooled bool
}

// openInput is path as check reads it (stdin for "-"), with the function
// that removes what it spooled. Ctrl-C stops the spooling (a terminal's
// input may never end).
func openInput(ctx context.Context, path string, stdin io.Reader) (inputArg, func(), error) {
	if path == stdinArg {
		return spool(ctx, stdin, stdinName)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().IsRegular() || info.IsDir() {
		// Read as it is; what is wrong with it, the reader says.
		return inputArg{file: path, name: path}, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return inputArg{}, nil, usagef("cannot read %s: %v", path, unwrapPath(err))
	}
	defer f.Close()
	return spool(ctx, f, path)
}

// spool copies r into a temporary file and returns it as the inputArg
// name, with the function that removes the file.
func spool(ctx context.Context, r io.Reader, name string) (inputArg, func(), error) {
	f, err := os.CreateTemp("", "storecheck-input-*.jsonl")
	if err != nil {
		return inputArg{}, nil, fmt.Errorf("cannot keep %s in a temporary file: %w", name, err)
	}
	remove := func() { os.Remove(f.Name()) }
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		remove()
		return inputArg{}, nil, ctx.Err()
	}
	if err != nil {
		remove()
		return inputArg{}, nil, fmt.Errorf("read %s: %w", name, err)
	}
	return inputArg{file: f.Name(), name: name, spooled: true}, remove, nil
}

// say is err's text with the temporary file a stream was spooled into
// written as the stream's name.
func (a inputArg) say(err error) string {
	if !a.spooled {
		return err.Error()
	}
	return strings.ReplaceAll(err.Error(), a.file, a.name)
}

// visualization is the file a failed check's visualization goes to, in
// out, else beside the history (for a stream, standard input included, in
// the current folder): NAME.visualization.html. It makes the folder.
func (a inputArg) visualization(out string) (string, error) {
	dir, base := out, filepath.Base(a.name)
	if a.name == stdinName {
		base = "stdin"
	}
	if dir == "" && !a.spooled {
		dir = filepath.Dir(a.file)
	}
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", usagef("output folder %s cannot be created: %v", dir, unwrapPath(err))
	}
	return filepath.Join(dir, strings.TrimSuffix(base, filepath.Ext(base))+".visualization.html"), nil
}

// readSummaryAt reads path, a summary.json or a folder holding one, or
// standard input for "-" (from stdin), and returns it with its folder (""
// for standard input: the summary's run folders are not there). Every
// command that reads a summary (diff, merge, replay) reads it here, so
// each takes a folder alike; what is not a storecheck summary
// (reports.ParseSummary) is a usage error.
func readSummaryAt(path string, stdin io.Reader) (*reports.Summary, string, error) {
	if path == stdinArg {
		b, err := io.ReadAll(io.LimitReader(stdin, maxStdinSummary+1))
		switch {
		case err != nil:
			return nil, "", usagef("read summary from %s: %v", stdinName, err)
		case len(b) > maxStdinSummary:
			return nil, "", usagef("read summary from %s: more than %d MiB, which no summary is", stdinName, maxStdinSummary>>20)
		}
		s, err := reports.ParseSummary(b)
		if err != nil {
			return nil, "", usagef("read summary from %s: not a storecheck summary: %v", stdinName, err)
		}
		return s, "", nil
	}
	path = summaryFile(path)
	s, err := reports.ReadSummary(path)
	if err != nil {
		return nil, "", usagef("%v", err)
	}
	return s, filepath.Dir(path), nil
}

// onceFromStdin refuses "-" given for more than one of paths: standard
// input is read once.
func onceFromStdin(paths ...string) error {
	n := 0
	for _, p := range paths {
		if p == stdinArg {
			n++
		}
	}
	if n > 1 {
		return usagef("- (%s) given %d times: it can be read once; give the others as files", stdinName, n)
	}
	return nil
}
