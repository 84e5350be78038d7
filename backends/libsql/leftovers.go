package libsql

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/storecheck/storecheck/backends/libsql/sqld"
)

// Leftovers lists what this process started for replica runs and has not
// removed: sqld processes, network namespaces, sqld data folders and
// iptables rules. Tests assert it is empty after passing, failing and
// interrupted runs.
func Leftovers(ctx context.Context) []string {
	mine := fmt.Sprintf("%d-", os.Getpid())
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), dataPrefix+mine) {
			out = append(out, "sqld process "+filepath.Base(filepath.Dir(p)))
		}
	}
	for _, n := range sqld.Namespaces(ctx) {
		if strings.HasPrefix(n, "storecheck-"+mine) {
			out = append(out, "network namespace "+n)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dataPrefix+mine+"*"))
	for _, d := range dirs {
		out = append(out, "sqld data folder "+d)
	}
	if sqld.IptablesAvailable() == nil {
		for _, r := range sqld.Rules(ctx) {
			if strings.HasSuffix(r, "--comment "+sqld.RuleComment()) || strings.Contains(r, "--comment "+sqld.RuleComment()+" ") {
				out = append(out, "iptables rule "+r)
			}
		}
	}
	return out
}
