package mutantrun

import (
	"fmt"
	"hash/fnv"
)

// DeriveSeed is the seed of every run of scenario under base: the same for
// every subject, so that a mutant and the correct stores meet the same
// operation sequences, and never 0 (rapid reads 0 as "random").
func DeriveSeed(base uint64, scenario string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "storecheck mutants %d %s", base, scenario)
	if s := h.Sum64() >> 1; s != 0 { // below 2^63, so any tool reads it back
		return s
	}
	return 1
}
