//go:build cgo

package libsql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// Replication positions. sqld numbers the frames of its replication log;
// an embedded replica's sync returns the frame number it reached, and
// every Hrana result carries the primary's replication index, on the same
// scale. After a primary restarts from a dirty log the numbering starts
// again (a new log), so positions are compared only after every replica
// synced from the same primary run. Equal positions do not prove equal
// content (a primary restored from an older backup keeps its log id), so
// a converged replica must also hold the primary's tables.

// Position is the frame number replica name's last successful sync
// reached; false before its first.
func (c *ReplicaCluster) Position(name string) (int64, bool) {
	v, ok := c.positions.Load(name)
	if !ok {
		return 0, false
	}
	return v.(int64), true
}

// PrimaryPosition asks the primary for its replication index, over its
// Hrana HTTP API with the cluster's token.
func (c *ReplicaCluster) PrimaryPosition(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	body := strings.NewReader(`{"requests":[{"type":"execute","stmt":{"sql":"SELECT 1"}},{"type":"close"}]}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/v2/pipeline", body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, c.scrub(fmt.Errorf("%s: ask the primary its replication index: %w", ReplicaScheme, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: ask the primary its replication index: HTTP %d", ReplicaScheme, resp.StatusCode)
	}
	var out struct {
		Results []struct {
			Response struct {
				Result struct {
					ReplicationIndex *string `json:"replication_index"`
				} `json:"result"`
			} `json:"response"`
		} `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, fmt.Errorf("%s: the primary's pipeline answer: %w", ReplicaScheme, err)
	}
	if len(out.Results) == 0 || out.Results[0].Response.Result.ReplicationIndex == nil {
		return 0, nil // an empty log: nothing written yet
	}
	return strconv.ParseInt(*out.Results[0].Response.Result.ReplicationIndex, 10, 64)
}

// LocalDump reads replica name's six tables from its own file, in one read
// transaction on a read-only connection of go-libsql's local driver. Not
// on the embedded replica's connection: there a BEGIN, and every read
// after it, is delegated to the primary (docs/REPLICAS.md), so a dump
// would read the primary's tables, compare them with themselves, and fail
// whenever that connection's transaction on the primary is stuck.
func (c *ReplicaCluster) LocalDump(ctx context.Context, name string) (*model.Dump, error) {
	m, err := c.member(name)
	if err != nil {
		return nil, err
	}
	return localDump(ctx, m.path, c.cfg, ReplicaScheme+" replica "+name+" (its own file)")
}

// openFile opens a store on the replica file at path, read-write, on
// go-libsql's local driver: nothing it runs is delegated. Only a
// deliberately broken writer writes there (package mutants, write-local).
func openFile(ctx context.Context, path string, cfg model.Config, name string) (*sqlstore.Store, error) {
	db, err := sql.Open("libsql", "file:"+path)
	if err != nil {
		return nil, fmt.Errorf("%s: open read-write: %w", name, err)
	}
	st, err := sqlstore.New(ctx, db, cfg, sqlstore.Options{Name: name, SkipSchema: true})
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return st, nil
}

// openReadOnly opens the replica file at path read-only, on one
// connection of go-libsql's local driver: nothing it runs is delegated, and
// a read transaction held on it keeps the file's state of its first read
// (the file is in WAL mode; the replica's syncs go on beside it). Only a
// deliberately broken reader holds one (package mutants).
func openReadOnly(path string) (*sql.DB, error) {
	db, err := sql.Open("libsql", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, fmt.Errorf("%s: open %s read-only: %w", ReplicaScheme, path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return db, nil
}

// localDump dumps the replica file at path without writing to it.
func localDump(ctx context.Context, path string, cfg model.Config, name string) (_ *model.Dump, err error) {
	db, err := sql.Open("libsql", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, fmt.Errorf("%s: open read-only: %w", name, err)
	}
	st, err := sqlstore.New(ctx, db, cfg, sqlstore.Options{Name: name, SkipSchema: true})
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	return st.Dump(ctx)
}
