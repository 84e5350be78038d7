package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/scenarios"
)

// completionUsage is the synopsis of cobra's completion command.
const completionUsage = "storecheck completion bash|zsh|fish|powershell"

// requireShell makes root's completion command (cobra's own, made now
// rather than when it runs) refuse a command line without a shell, or with
// one it does not know, as every other command refuses bad input: one line
// on stderr and exit 2. Left to itself cobra prints the command's help on
// stdout and exits 0 there, as if a script had been written.
func requireShell(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, sh := range c.Commands() {
			shells = append(shells, sh.Name())
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageOf(completionUsage)
			}
			return usagef("unknown shell %q (known: %s)", args[0], strings.Join(shells, ", "))
		}
	}
}

// completeArgs answers the shell's completion requests for command c:
// its flags (read from its own -h, so they never drift from what it
// parses), scenario names after --scenario(s), backend URL forms after
// --backend(s), and files elsewhere.
func completeArgs(c command) func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if n := len(args); n > 0 {
			switch strings.TrimLeft(args[n-1], "-") {
			case "scenario", "scenarios":
				var names []cobra.Completion
				for _, sc := range scenarios.All() {
					names = append(names, cobra.CompletionWithDesc(sc.Name, firstWords(sc.Summary)))
				}
				return names, cobra.ShellCompDirectiveNoFileComp
			case "backend", "backends":
				var forms []cobra.Completion
				for _, f := range backends.Schemes() {
					forms = append(forms, cobra.CompletionWithDesc(f.Name+":", firstWords(f.Description)))
				}
				return forms, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
			}
		}
		if strings.HasPrefix(toComplete, "-") {
			return flagsOf(cmd.Context(), c), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveDefault
	}
}

// flagsOf lists c's flags, as "--name" with their help, from c -h.
func flagsOf(ctx context.Context, c command) []cobra.Completion {
	if ctx == nil {
		ctx = context.Background()
	}
	var out bytes.Buffer
	_, _ = c.run(ctx, &env{stdout: &out, stderr: io.Discard}, []string{"-h"})
	var flags []cobra.Completion
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		// flag.PrintDefaults: "  -name type" then the help on the next line.
		line := sc.Text()
		if !strings.HasPrefix(line, "  -") {
			continue
		}
		name := strings.Fields(strings.TrimPrefix(line, "  -"))[0]
		help := ""
		if sc.Scan() {
			help = firstWords(strings.TrimSpace(sc.Text()))
		}
		flags = append(flags, cobra.CompletionWithDesc("--"+name, help))
	}
	return flags
}

// firstWords is the start of a description, for a completion menu.
func firstWords(s string) string {
	if len(s) > 60 {
		s = s[:60]
		if i := strings.LastIndexByte(s, ' '); i > 0 {
			s = s[:i]
		}
		s += "…"
	}
	return s
}
