// Package leases records concurrent histories of run-store lease operations
// (claim_next, renew_lease, commit_checkpoint, finish_claim,
// requeue_expired_leases) and checks them: per run with porcupine, as a
// lease/claim register, and across the history with direct checks whose
// failures name the guarantee that broke.
//
// The register of one run holds its status, version, lease holder, fencing
// token, expiry, whether the lease is active, and how many checkpoints it
// has. Its sequential specification is the run-store contract's
// (model/runstore): a claim takes a queued run and the token after the last; a
// fenced operation succeeds only for the current holder, token and an expiry
// after its own `now`; a requeue takes back only an expired lease of a
// running run. Because `now` is an input of every operation, the Step is a
// pure function of the operation and the state, and a history replays the
// same way whoever checks it.
//
// The direct checks are sound for any correct store, whatever the
// interleaving: an operation that succeeds with token t after a claim of
// token > t has returned (a stale token accepted); two claims of one run
// where the later, called after the earlier returned, has a token that is
// not larger (tokens not increasing); an operation whose time is at or past
// the expiry its worker was last granted, and that succeeded (an expired
// lease used).
package leases
