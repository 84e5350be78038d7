package procfault

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/model"
)

// openStore opens the store rawURL names in this process: sqlite: and
// libsql: files with the options, hooks included (backends' CommitHooks
// capability); any other URL (a mutant) as Target.Open does, without
// them. hooked says whether the hooks are installed.
func openStore(ctx context.Context, rawURL string, opt backends.FileOptions) (store model.Store, hooked bool, err error) {
	t, err := backends.Resolve(rawURL)
	if err != nil {
		return nil, false, err
	}
	return t.OpenFile(ctx, opt)
}

// dbOf returns the database under a SQL-backed store (the sqlite and libsql
// stores, and every mutant, which embeds one).
func dbOf(s any) (*sql.DB, bool) {
	d, ok := s.(interface{ DB() *sql.DB })
	if !ok {
		return nil, false
	}
	return d.DB(), true
}

// integrityCheck runs PRAGMA integrity_check and returns its rows joined:
// "ok" for a sound database.
func integrityCheck(ctx context.Context, s any) (string, error) {
	db, ok := dbOf(s)
	if !ok {
		return "", fmt.Errorf("the store has no SQL database to check")
	}
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return "", fmt.Errorf("integrity_check: %w", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var v any
		if err := rows.Scan(&v); err != nil {
			return "", fmt.Errorf("integrity_check: %w", err)
		}
		switch x := v.(type) {
		case []byte:
			lines = append(lines, string(x))
		default:
			lines = append(lines, fmt.Sprint(x))
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("integrity_check: %w", err)
	}
	return strings.Join(lines, "; "), nil
}

// target resolves rawURL and checks that it offers what a scenario of
// this package needs, or says why not (ErrNotRun).
func target(scenario, rawURL string, needs ...backends.Capability) (*backends.Target, error) {
	t, err := backends.Resolve(rawURL)
	if err != nil {
		return nil, notRun("%v", err)
	}
	if _, why := t.Lacks(needs); why != "" {
		return nil, notRun("%s does not apply to %s: %s", scenario, t.Scheme+":", why)
	}
	return t, nil
}
