package cli

import (
	"context"
	"flag"
	"regexp"
	"strings"

	"github.com/storecheck/storecheck/internal/runner"
)

// qualifyCommand runs the matrix of backends × scenarios a release is
// qualified on. With no flags it is the embedded default: memory, SQLite and
// libSQL × every scenario that applies.
func qualifyCommand(ctx context.Context, e *env, args []string) (int, error) {
	var (
		k            knobs
		list         stringList
		names        = stringList{split: true}
		seed         seedFlag
		out          outputFlags
		servers      serverFlags
		failOnNotRun bool
		fs           = flag.NewFlagSet("qualify", flag.ContinueOnError)
		command      = "storecheck qualify " + strings.Join(args, " ")
	)
	fs.Var(&list, "backends", "backend URLs, comma-separated or repeated (default: memory:, and sqlite: and libsql: files in DIR/db)")
	fs.Var(&names, "scenarios", "scenario names, comma-separated or repeated (default: every scenario that applies)")
	fs.Var(&seed, "seed", "seed for every random choice (default: a fresh one, printed)")
	fs.BoolVar(&failOnNotRun, "fail-on-not-run", false, "exit 1 when any run is NOT RUN (a backend could not be started)")
	k.register(fs)
	out.register(fs)
	servers.register(fs)
	if err := parseFlags(fs, args, e.stdout); err != nil {
		return helpOr(err)
	}
	if err := k.validate(); err != nil {
		return ExitUsage, err
	}
	if err := servers.validate(); err != nil {
		return ExitUsage, err
	}
	scs, onlyApplicable, err := lookupScenarios(names.values)
	if err != nil {
		return ExitUsage, err
	}
	if err := prepareOut(out.dir); err != nil {
		return ExitUsage, err
	}
	urls := splitBackendList(list.values)
	if len(urls) == 0 {
		if urls, err = embeddedDefault(out.dir); err != nil {
			return ExitUsage, err
		}
	}
	urls = servers.apply(urls)
	if err := validateBackends(urls); err != nil {
		return ExitUsage, err
	}
	s := seed.resolve()
	announceSeed(e, out, s)
	plan := runner.Plan{
		Backends: urls, Scenarios: scs, Out: out.dir, Options: k.options(), Params: k.params(s), OnlyApplicable: onlyApplicable,
		Reproduce: func(backend, scenario string) string { return k.reproduce(s, backend, scenario) },
	}
	policy := notRunPasses
	if failOnNotRun {
		policy = notRunFails
	}
	return execute(ctx, e, plan, out, policy, command)
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
