package cli

import (
	"context"
	"flag"
	"regexp"
	"strings"

	"github.com/storecheck/storecheck/backends"
)

// qualifyCommand runs the matrix of backends × scenarios a release is
// qualified on. With no flags it is the embedded default: memory, SQLite and
// libSQL × every scenario that applies.
func qualifyCommand(ctx context.Context, e *env, args []string) (int, error) {
	var (
		m            matrix
		list         stringList
		urls, cmds   stringList
		failOnNotRun bool
		fs           = flag.NewFlagSet("qualify", flag.ContinueOnError)
	)
	fs.Var(&list, "backends", "backend URLs, comma-separated or repeated (default: the embedded backends, on fresh files per run kept in its folder, DIR/runs/NN-…/db)")
	fs.Var(&urls, "backend", "one backend URL, repeatable, never split at commas (as run takes it)")
	fs.Var(&cmds, "adapter", "command line of an out-of-process store, repeatable; the same as --backend 'exec:COMMAND' (docs/ADAPTER.md)")
	fs.BoolVar(&failOnNotRun, "fail-on-not-run", false, "exit 1 when any run is NOT RUN (a backend could not be started)")
	m.register(fs, "scenarios")
	if err := parseFlags(fs, args, e.stdout); err != nil {
		return helpOr(err)
	}
	backendURLs := append(urls.values, splitBackendList(list.values)...)
	for _, c := range cmds.values {
		backendURLs = append(backendURLs, backends.AdapterURL(c))
	}
	plan, err := m.plan(e, backendURLs)
	if err != nil {
		return ExitUsage, err
	}
	policy := notRunPasses
	if failOnNotRun {
		policy = notRunFails
	}
	return execute(ctx, e, plan, m.out, policy, commandLine("qualify", args))
}

// splitBackendList splits comma-separated backend URLs. A URL may itself hold
// commas (rqlite://h1:4001,h2:4001): a piece that does not start with a known
// scheme belongs to the URL before it.
func splitBackendList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, piece := range strings.Split(v, ",") {
			piece = strings.TrimSpace(piece)
			if piece == "" {
				continue
			}
			if len(out) > 0 && !startsNewURL(piece) {
				out[len(out)-1] += "," + piece
				continue
			}
			out = append(out, piece)
		}
	}
	return out
}

// startsNewURL reports whether piece looks like "scheme:…" rather than the
// "host:port" that continues a multi-host URL.
func startsNewURL(piece string) bool {
	m := schemeShaped.FindStringSubmatch(piece)
	return m != nil && (m[1] == "" || m[1][0] < '0' || m[1][0] > '9')
}

var schemeShaped = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:(.?)`)
