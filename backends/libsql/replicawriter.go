package libsql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// Writer builds the store a client writes through from its store on the
// embedded replica (local), the replica's database, whose plain reads are
// served locally, and file, which opens the replica's own file read-write
// on a local connection: a deliberately broken writer (package mutants has
// them). The real backend writes through local.
type Writer func(ctx context.Context, local *sqlstore.Store, db *sql.DB, file func(context.Context) (*sqlstore.Store, error), cfg model.Config) (model.Store, error)

// WriterLookup finds the writer a URL's mutant= names (package mutants
// has them); nil means the URL may name none.
type WriterLookup func(name string) (Writer, error)

// Mutants finds the deliberately broken parts a URL may name: the writer
// of mutant= and the reader of read_mutant= (package mutants has them). A
// nil lookup means the URL may name none of its kind.
type Mutants struct {
	Writers WriterLookup
	Readers ReaderLookup
}

// mutants looks up the URL's writer and reader; nil each for the real
// backend.
func (t ReplicaTarget) mutants(m Mutants) (Writer, Reader, error) {
	w, err := lookupMutant("mutant", t.Mutant, m.Writers)
	if err != nil {
		return nil, nil, err
	}
	r, err := lookupMutant("read_mutant", t.ReadMutant, m.Readers)
	if err != nil {
		return nil, nil, err
	}
	return w, r, nil
}

// lookupMutant finds the broken part the URL's parameter param names in
// find; the zero value (nil) when it names none, the real backend's.
func lookupMutant[T any](param, name string, find func(string) (T, error)) (T, error) {
	var none T
	if name == "" {
		return none, nil
	}
	if find == nil {
		return none, fmt.Errorf("%s: %s=%s: no such mutants here", ReplicaScheme, param, name)
	}
	m, err := find(name)
	if err != nil {
		return none, fmt.Errorf("%s: %s: %w", ReplicaScheme, param, err)
	}
	return m, nil
}

// ClusterOptions returns the options of a cluster on t's primary (or on
// server, when storecheck started it), syncing every interval, seeded
// with seed, with t's mutant and read_mutant looked up in m.
func (t ReplicaTarget) ClusterOptions(server *Primary, interval time.Duration, seed uint64, m Mutants) (ClusterOptions, error) {
	opt := ClusterOptions{Primary: t.Primary, Server: server, Interval: interval, Seed: seed}
	var err error
	opt.Writer, opt.Reader, err = t.mutants(m)
	return opt, err
}
