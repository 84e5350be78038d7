package lagsim

import (
	"context"
	"fmt"
	"slices"

	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// Replication positions. sqld numbers the frames of its replication log,
// and an embedded replica knows the frame its last sync reached; the
// convergence check of package replicalag compares the two after the heal,
// and the replica's own tables with the primary's. The simulation keeps a
// position of the same kind in the primary's file: a counter, in a table of
// its own, that triggers on the six tables raise by one for every row
// inserted, updated or deleted, in the transaction that changes the row. A
// replica's position is read from the snapshot it holds, in the statement
// that takes the snapshot (snapshot.go): it is what the replica holds, not
// what the primary is at, and a replica that holds an older state is at a
// lower position.

// positionTable holds the primary's position: one row, id 1.
const positionTable = "lagsim_position"

// readPosition reads the position of the state a connection sees.
const readPosition = "SELECT n FROM " + positionTable + " WHERE id = 1"

// positionTracked are the tables whose changes raise the position: the
// seed's six.
var positionTracked = []string{"executions", "outbox", "processed_events", "timers", "spawns", "trace"}

// positionSchema creates the position table, its row and its triggers; each
// statement does nothing when its object exists (a primary file reused by
// the next level of a sweep keeps counting).
func positionSchema() []string {
	out := []string{
		"CREATE TABLE IF NOT EXISTS " + positionTable + " (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)",
		"INSERT OR IGNORE INTO " + positionTable + " (id, n) VALUES (1, 0)",
	}
	for _, table := range positionTracked {
		for _, op := range []string{"INSERT", "UPDATE", "DELETE"} {
			out = append(out, fmt.Sprintf("CREATE TRIGGER IF NOT EXISTS %s_%s_%s AFTER %s ON %s BEGIN UPDATE %s SET n = n + 1 WHERE id = 1; END",
				positionTable, table, op, op, table, positionTable))
		}
	}
	return out
}

// primaryStatements are the primary's: the seed's, whose schema also
// creates the position table, its row and its triggers, in the one
// transaction that creates the six tables.
func primaryStatements() *sqlstore.Statements {
	st := sqlstore.SQLite()
	st.Schema = append(slices.Clip(st.Schema), positionSchema()...)
	return &st
}

// holder is what a member's replica holds: the position and the six tables
// of the state its reads are served from.
type holder interface {
	position() int64
	dump(ctx context.Context) (*model.Dump, error)
}

// PrimaryPosition is the primary's replication position now.
func (c *Cluster) PrimaryPosition(ctx context.Context) (int64, error) {
	var n int64
	if err := c.primary.DB().QueryRowContext(ctx, readPosition).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: read the primary's replication position: %w", Scheme, err)
	}
	return n, nil
}

// Position is the replication position of the state replica name holds,
// which its last sync took; false when there is no such replica.
func (c *Cluster) Position(name string) (int64, bool) {
	m, err := c.member(name)
	if err != nil {
		return 0, false
	}
	return m.held.position(), true
}

// LocalDump reads replica name's six tables from the state it holds, not
// from the primary.
func (c *Cluster) LocalDump(ctx context.Context, name string) (*model.Dump, error) {
	m, err := c.member(name)
	if err != nil {
		return nil, err
	}
	d, err := m.held.dump(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: replica %s: read the tables it holds: %w", Scheme, name, err)
	}
	return d, nil
}

// member returns replica name's entry.
func (c *Cluster) member(name string) (*member, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.members[name]
	if !ok {
		return nil, fmt.Errorf("%s: no replica %q", Scheme, name)
	}
	return m, nil
}
