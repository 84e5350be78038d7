// Package mutantrun runs storecheck's scenarios against the catalogue of
// deliberately broken stores (backends/mutants) and against the correct
// backends, and builds the table that says which mutant each check caught,
// how fast, and with how short a failing sequence. The catalogue passes when
// every mutant is caught and no correct backend is flagged: a check that
// lets a mutant survive, or fails a correct store, is a finding either way.
//
// Detection is injectable: a Runner's scenarios and subjects may be given
// explicitly, so a test can prove that the table records a miss.
package mutantrun
