package cli

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
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

// seedFlag is --seed: an integer from 1 to 2^64−1 (a uint64 other than
// 0), or unset (a fresh seed is drawn and printed, so the run can be
// repeated).
type seedFlag struct {
	value uint64
	set   bool
}

func (s *seedFlag) String() string { return strconv.FormatUint(s.value, 10) }
func (s *seedFlag) Set(v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n == 0 {
		// One message for every value refused (not a number, 0, negative,
		// or past 2^64−1): the range says what all of them miss.
		return fmt.Errorf("seed must be an integer from 1 to %d, got %q", uint64(math.MaxUint64), v)
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
// usage error; -h prints the flags and is reported as errHelp. It is for
// a command without positional arguments; one with them uses
// parseFlagsWith.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	return parseFlagsWith(fs, args, stdout, "storecheck "+fs.Name()+" [flags]")
}

// parseFlagsWith is parseFlags for a command whose synopsis (its command
// line, positional arguments included) is synopsis: -h prints it above the
// flags, as usageOf reports a missing argument with it.
func parseFlagsWith(fs *flag.FlagSet, args []string, stdout io.Writer, synopsis string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fmt.Fprintf(stdout, "usage: %s\n", synopsis)
		fs.PrintDefaults()
		return errHelp
	}
	if err != nil {
		return usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return emptyStringFlag(fs)
}

// emptyStringFlag refuses a string flag given an empty value (--out "",
// --md " "): as for a list flag (stringList.Set), it is a mistake (an unset
// variable in a CI script), never a way to ask for the default, which
// leaving the flag out gives.
func emptyStringFlag(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil {
			return
		}
		if v, ok := g.Get().(string); ok && strings.TrimSpace(v) == "" {
			err = usagef("--%s %q names nothing; leave the flag out for the default", f.Name, v)
		}
	})
	return err
}

// usageOf is the usage error of a command line that lacks a positional
// argument: its synopsis.
func usageOf(synopsis string) error {
	return usagef("usage: %s", synopsis)
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

var errHelp = errors.New("help shown")
