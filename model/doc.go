// Package model states the execution-store contract that storecheck holds real
// backends against (docs/CONTRACT.md, section 1, distilled from harel's SQLite,
// libSQL and rqlite stores), and gives its reference implementation.
//
// The contract is the Store interface and the value types around it. The
// reference model, Reference, is an in-memory Store that follows the contract to
// the letter; property tests apply the same operations to it and to a real backend
// and compare results and, through Dump, all six tables.
//
// Where the seeds leave a question open, the choice made is written as a comment
// starting with "Decision:" at the place it is made, so that `grep Decision:`
// lists every one of them.
package model
