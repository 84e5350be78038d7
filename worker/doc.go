// Package worker runs code of this binary in processes of its own, so that
// a fault can SIGKILL or SIGSTOP it: every scenario that re-executes the
// binary (crash-recovery, writer-stall, lease-stall, a replica client
// killed mid-sync, power loss) does it through this one protocol.
//
// The parent starts a worker with Start: the running binary again
// (Self), with the hidden argument Arg and the name of a Role, in a
// process group of its own. The worker's first line on standard input is
// its configuration (JSON; never a secret, which goes in the environment
// the Command adds); later lines are the parent's messages to it. The
// worker writes its messages as JSON lines, each with a "type", on file
// descriptor 3, one write(2) each, after the fact they report: a line the
// worker was killed while writing is incomplete and dropped, and lines
// written before it died are still read after its death.
//
// A binary that can be a worker calls Main with its roles first thing in
// main (a test binary in TestMain); Main returns at once in any other
// process. No worker outlives its parent's run: its group is SIGKILLed
// when the run's context ends and on Close, the kernel SIGKILLs it if the
// parent dies first (Pdeathsig), and it is always reaped.
package worker
