#!/usr/bin/env bash
# rqlite-forwarded-write-resent (docs/KNOWN-ISSUES.md) without storecheck, for an upstream
# report: three rqlited on loopback; for each of the rows a to e, the leader is frozen
# (SIGSTOP) for 300 ms, shorter than an election, while one INSERT of the row is posted to a
# follower with ?timeout=100ms. The follower's forwarded write times out, it sends the command
# again on a new connection, and the thawed leader applies both: each row is in the table twice.
# A build without the bug answers the INSERTs with an error (or late) and holds each row once.
#
#   docs/repro/rqlite-forwarded-write-resent.sh /path/to/rqlited
#
# Exit status: 1 when a row is there more than once (the bug), 0 when every row is there at
# most once, 2 when the cluster could not be set up. Needs curl and python3. Everything it
# starts (three rqlited, a scratch folder) is removed when it ends, Ctrl-C included.
set -euo pipefail

rqlited=${1:?usage: $0 /path/to/rqlited}
dir=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do
		kill -CONT "$p" 2>/dev/null || true
		kill -KILL "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
die() {
	echo "setup: $*" >&2
	exit 2
}

# Ports from a random base, each node an HTTP and a Raft port.
base=$((20000 + RANDOM % 20000))
http() { echo $((base + 2 * $1)); }
raft() { echo $((base + 2 * $1 + 1)); }
join=127.0.0.1:$(raft 1),127.0.0.1:$(raft 2),127.0.0.1:$(raft 3)
for i in 1 2 3; do
	"$rqlited" -node-id "n$i" -http-addr "127.0.0.1:$(http "$i")" -raft-addr "127.0.0.1:$(raft "$i")" \
		-bootstrap-expect 3 -join "$join" "$dir/n$i" >"$dir/n$i.log" 2>&1 &
	pids+=($!)
done

# leader sets l to the leader's node number, from any node's /status, once there is one (30 s
# at the most), and f to a follower's.
leader() {
	local id=""
	for _ in $(seq 1 60); do
		for i in 1 2 3; do
			id=$(curl -fsS -m 2 "127.0.0.1:$(http "$i")/status" 2>/dev/null |
				python3 -c 'import json,sys; print(json.load(sys.stdin)["store"]["leader"]["node_id"])' 2>/dev/null || true)
			[ -n "$id" ] && break 2
		done
		sleep 0.5
	done
	[ -n "$id" ] || die "no leader after 30 s (logs: $dir)"
	l=${id#n}
	f=$((l % 3 + 1))
}
leader
echo "leader n$l (pid ${pids[l - 1]})"

post() { # node, path, body
	curl -sS -m 10 -H 'Content-Type: application/json' -X POST "127.0.0.1:$(http "$1")$2" -d "$3" || true
}
post "$l" /db/execute '["CREATE TABLE t (x TEXT)"]' >/dev/null
f=$((l % 3 + 1))
# Every node has the table before the writes.
for _ in $(seq 1 20); do
	n=$(post "$f" '/db/query?level=none' '["SELECT COUNT(*) FROM t"]' | grep -c '"values"' || true)
	[ "$n" -gt 0 ] && break
	sleep 0.25
done

for row in a b c d e; do
	leader
	kill -STOP "${pids[l - 1]}"
	answer=$(post "$f" '/db/execute?timeout=100ms' "[[\"INSERT INTO t (x) VALUES (?)\", \"$row\"]]")
	sleep 0.3
	kill -CONT "${pids[l - 1]}"
	echo "INSERT $row through follower n$f, leader n$l frozen 300 ms: $answer"
	sleep 1
done

# The rows, read at level strong once a leader answers (10 s at the most: a thawed leader may
# have stepped down on a loaded machine).
counts=""
for _ in $(seq 1 40); do
	for i in 1 2 3; do
		counts=$(post "$i" '/db/query?level=strong' '["SELECT x, COUNT(*) FROM t GROUP BY x ORDER BY x"]')
		case $counts in *'"values"'* | *'"columns"'*) break 2 ;; esac
	done
	sleep 0.25
done
echo "rows: $counts"
case $counts in *'"columns"'*) ;; *) die "no node answered the read of the rows (logs: $dir)" ;; esac
echo "n$f /debug/vars: $(curl -fsS "127.0.0.1:$(http "$f")/debug/vars" 2>/dev/null |
	python3 -c 'import json,sys; c=json.load(sys.stdin).get("cluster",{}); print({k: v for k, v in c.items() if "retries" in k or "new_conn" in k})' 2>/dev/null || echo '?')"
twice=$(echo "$counts" | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(sum(1 for x, n in r.get("values", []) if n > 1))')
if [ "$twice" -gt 0 ]; then
	echo "BUG: $twice of the rows are in the table more than once: a forwarded write was applied twice"
	exit 1
fi
echo "every row at most once"
