// Package workload drives a model.Store with concurrent, seeded traffic,
// records it through a linearizability.Recorder, heals, and checks the
// history: storecheck's "concurrent" scenario.
//
// Run is the one entry point:
//
//	res, err := workload.Run(ctx, store, workload.Config{Clients: 8, Executions: 2, Ops: 2000, Seed: 1, OutDir: dir})
//
// N clients share K executions (the fewer executions, the more contention)
// and pick operations from a weighted Mix: commits from the last version
// seen, deliberately stale commits, saves, event deliveries
// (load_for_event, then a commit unless already processed, sometimes
// re-delivering an event id), loads, ledger probes, trace reads and appends,
// a relay that reads and acknowledges the outbox and the spawn queue, and a
// timer sweep (with stale deletes). Commits carry emits, a processed event
// id, timer schedules and cancels, spawns and a trace step.
//
// Every value written is unique to its attempt (see witness.go), so that the
// checker can map every stored row back to the one attempt that wrote it.
// Every random choice comes from the run's seed: client i draws from a
// generator seeded with (seed, i). The interleaving is up to the scheduler
// and the store, so a run is reproducible in its choices, not its timing.
// The package prints nothing.
package workload
