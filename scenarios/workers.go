package scenarios

import (
	"maps"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/backends/libsql"
	"github.com/storecheck/storecheck/procfault"
	"github.com/storecheck/storecheck/worker"
	"github.com/storecheck/storecheck/workload/leasestall"
)

// WorkerRoles are the worker processes the scenarios start (package
// worker): a binary that runs them calls worker.Main(WorkerRoles()) first
// thing, a test binary in its TestMain.
func WorkerRoles() worker.Roles {
	roles := worker.Roles{
		leasestall.RoleName:    leasestall.Role(backends.OpenRuns),
		libsql.ReplicaSyncRole: libsql.ReplicaSyncWorker,
	}
	maps.Copy(roles, procfault.Roles())
	return roles
}
