package cli

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// stringList is a flag that may be repeated; each use may also hold a
// comma-separated list when split is set (scenario names never contain
// commas, backend URLs may).
type stringList struct {
	values []string
	split  bool
}

func (l *stringList) String() string { return strings.Join(l.values, ",") }
func (l *stringList) Set(v string) error {
	if strings.Trim(v, ", \t\n") == "" {
		// An empty value is a mistake (an unset variable in a CI script),
		// never a way to ask for the default.
		return fmt.Errorf("%q names nothing; leave the flag out for the default", v)
	}
	if !l.split {
		l.values = append(l.values, v)
		return nil
	}
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			l.values = append(l.values, s)
		}
	}
	return nil
}

// seedFlag is --seed: a positive integer, or unset (a fresh seed is drawn
// and printed, so the run can be repeated).
type seedFlag struct {
	value uint64
	set   bool
}

func (s *seedFlag) String() string { return strconv.FormatUint(s.value, 10) }
func (s *seedFlag) Set(v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n == 0 {
		return fmt.Errorf("seed must be a positive integer, got %q", v)
	}
	s.value, s.set = n, true
	return nil
}

// resolve returns the seed to use.
func (s *seedFlag) resolve() uint64 {
	if s.set {
		return s.value
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	n := binary.LittleEndian.Uint64(b[:]) >> 16 // short enough to type back
	if n == 0 {
		n = 1
	}
	return n
}

// parseFlags parses args with fs, turning every flag error into a one-line
// usage error; -h prints the flags and is reported as errHelp.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fmt.Fprintf(stdout, "usage: storecheck %s [flags]\n", fs.Name())
		fs.PrintDefaults()
		return errHelp
	}
	if err != nil {
		return usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

var errHelp = errors.New("help shown")
