// Package workers lists the worker processes storecheck's scenarios start
// (package worker) — crash-recovery's and writer-stall's (procfault),
// lease-stall's (workload/leasestall) and the replica clients'
// (backends/libsql) — for the binaries that run them: cmd/storecheck,
// cmd/storecheck-worker and the test binaries. It imports nothing of the
// property suites or the reports, so that the worker build stays small.
package workers

import (
	"maps"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/backends/libsql"
	"github.com/storecheck/storecheck/procfault"
	"github.com/storecheck/storecheck/worker"
	"github.com/storecheck/storecheck/workload/leasestall"
)

// Roles are the worker processes the scenarios start: a binary that runs
// them calls worker.Main(Roles()) first thing, a test binary in its
// TestMain.
func Roles() worker.Roles {
	roles := worker.Roles{
		leasestall.RoleName:    leasestall.Role(backends.OpenRuns),
		libsql.ReplicaSyncRole: libsql.ReplicaSyncWorker,
	}
	maps.Copy(roles, procfault.Roles())
	return roles
}
