// Package sqld starts and stops the sqld (libsql-server) primaries that
// storecheck's libSQL embedded-replica runs need, and breaks the links to
// them, for fault injection.
//
// Two providers start a primary:
//
//   - Process runs a sqld binary found through a flag (the backend URL's
//     sqld=PATH), $SQLD or PATH: sqld --http-listen-addr 127.0.0.1:PORT
//     --db-path DIR, ready when GET /health answers 200.
//   - Container runs an image (the URL's image=, by default the official
//     ghcr.io/tursodatabase/libsql-server) with testcontainers-go, its HTTP
//     port bound to a fixed loopback port so that a restart keeps the
//     address. It starts only images already on the machine (pull them
//     first, as ci/storecheck.yml does); set TESTCONTAINERS_RYUK_DISABLED=true
//     where the Ryuk image cannot be pulled: storecheck removes what it
//     starts itself.
//
// Kill and Restart are the "kill the primary" fault: SIGKILL (docker kill)
// and a start on the same data and address. Proxy gives each client a
// loopback port of its own in front of the primary, so that one client
// can be cut from it: in-process (Proxy.Cut) or, as root with iptables, by
// a DROP rule on that port of lo (DropRule), which Heal removes.
//
// sqld cannot be built on every machine (it is Rust), and the tursodb npm
// server speaks Hrana but not sqld's replication protocol, so go-libsql's
// embedded replica cannot sync from it. Where neither a binary nor a local
// image exists, Find says so, and the runs report NOT RUN with that reason.
package sqld
