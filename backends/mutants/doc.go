// Package mutants is a zoo of deliberately broken execution stores that
// storecheck must catch. Each mutant is a named variant of a real backend —
// the SQLite store (backends/sqlite over backends/sqlstore) with one
// statement swapped, or wrapped where a statement swap cannot express the
// bug — and breaks exactly one clause of the contract (docs/CONTRACT.md §1),
// which its Breaks sentence names. The bug itself is marked "BUG:" in the
// code.
//
// A mutant is opened by URL, mutant:NAME, on a fresh SQLite file in a
// temporary folder the store owns and removes on Close; mutant:NAME?path=FILE
// uses FILE instead (and leaves it). guarded-upsert is the rqlite seed's
// guarded statement list run in one SQLite transaction: it passes what
// catches version-guard (so that is the guard, not the protocol), and breaks
// only property 3 for a stale commit of exactly the stored bytes, which the
// seed calls benign and the project's Decision does not.
//
// Every store here implements model.Dumper, model.Resetter and
// model.TraceMaxSetter like the store it derives from, so the conformance
// harness reuses one database across test cases.
package mutants
