// Package libsql is the execution store of harel's LibsqlStore in local-file
// mode, on github.com/tursodatabase/go-libsql (cgo): the seed's SQL run by
// sqlstore over a pool of connections to one libSQL database file.
//
// go-libsql needs three things absorbed here:
//
//   - It sets no busy timeout, so a second writer gets "database is locked"
//     at once. Open wraps the driver's connector so that every new pooled
//     connection runs PRAGMA busy_timeout (10 s by default), PRAGMA
//     synchronous (NORMAL by default; see package sqlite for what each level
//     guarantees) and PRAGMA journal_mode=WAL before it is used.
//   - It returns any TEXT value that parses as a timestamp as a time.Time.
//     sqlstore selects every text column CAST(… AS BLOB), which the driver
//     returns as the exact bytes.
//   - Many short-lived databases opened in one process have crashed it on
//     2-core machines. Open one store per database and Reset it between
//     uses rather than opening a fresh database per test.
//
// Without cgo the package builds, and Open returns an error saying so.
package libsql
