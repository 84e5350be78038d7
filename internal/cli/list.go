package cli

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/scenarios"
)

func scenariosCommand(_ context.Context, e *env, args []string) (int, error) {
	if err := parseFlags(flag.NewFlagSet("scenarios", flag.ContinueOnError), args, e.stdout); err != nil {
		if err == errHelp {
			return ExitOK, nil
		}
		return ExitUsage, err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, s := range scenarios.All() {
		fmt.Fprintf(tw, "%s\t%s\n", s.Name, s.Summary)
	}
	tw.Flush()
	return ExitOK, nil
}

func backendsCommand(_ context.Context, e *env, args []string) (int, error) {
	if err := parseFlags(flag.NewFlagSet("backends", flag.ContinueOnError), args, e.stdout); err != nil {
		if err == errHelp {
			return ExitOK, nil
		}
		return ExitUsage, err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, s := range backends.Schemes() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.Example, s.Description)
	}
	tw.Flush()
	return ExitOK, nil
}
