// Package runstore states the run-store contract that storecheck holds real
// backends against (docs/CONTRACT.md §2, distilled from openrath's SQLiteRunStore,
// seed 004), and gives its reference implementation.
//
// A run store keeps agent runs with leases: runs are created idempotently per
// (tenant, idempotency key), numbered events and checkpoints are appended
// without gaps, workers claim queued runs under a lease whose fencing token
// grows by one per claim, and interrupts park a run until a decision or an
// expiry. The contract is the Store interface and the value types around it;
// Reference is an in-memory Store that follows the contract to the letter.
// Property tests apply the same operations to it and to a real backend and
// compare results and, through Dump, all five tables.
//
// Time is always an input: every operation that writes a timestamp or tests
// an expiry takes it from its request (a Now field, a checkpoint's or an
// interrupt's CreatedAt), never from the wall clock, so a history replays
// exactly. Decision: the seed reads the wall clock inside the store (_now());
// here the caller's clock is trusted, which makes the fencing token, not the
// clock, what protects a run from a stalled worker.
//
// Where the seed leaves a question open, the choice made is written as a
// comment starting with "Decision:" at the place it is made, so that
// `grep -rn Decision: model/runstore` lists every one of them.
package runstore
