package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/worker"
)

// build says which storecheck this is, from the build information Go
// embeds: the module version, and the VCS revision of a build from a
// checkout; and whether its worker processes start from the worker-only
// build beside it (worker.Self).
func build() reports.Build {
	b := reports.Build{Version: "(unknown)", Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Version = info.Main.Version
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	if c, err := worker.Self(); err == nil && filepath.Base(c.Path) == worker.Companion {
		b.Workers = worker.Companion
	}
	return b
}

// host describes this machine.
func host() reports.Host {
	return reports.Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
}

// versionCommand prints the version, revision and Go version.
func versionCommand(_ context.Context, e *env, args []string) (int, error) {
	if err := parseFlags(flag.NewFlagSet("version", flag.ContinueOnError), args, e.stdout); err != nil {
		if err == errHelp {
			return ExitOK, nil
		}
		return ExitUsage, err
	}
	b := build()
	line := "storecheck " + b.Version
	if b.Revision != "" {
		line += " (" + b.Revision
		if b.Modified {
			line += ", modified"
		}
		line += ")"
	}
	h := host()
	fmt.Fprintf(e.stdout, "%s %s %s/%s\n", line, b.Go, h.OS, h.Arch)
	return ExitOK, nil
}
