#!/usr/bin/env python3
"""A storecheck adapter over SQLite: harel's SqliteStore, Python 3 standard library only.

It speaks version 1 of the adapter protocol (docs/ADAPTER.md): one JSON request per
line on stdin, one JSON response per line on stdout, logs on stderr.

    storecheck run --backend 'exec:python3 adapters/python/sqlite_store.py' --scenario conformance

To put your own store under storecheck, copy this file: keep the protocol part at the
end (serve, OPS) and replace SqliteStore with your store.

Options:
  --db PATH        the database file; default <store dir from hello>/store.db.
                   ':memory:' works too, served by a single process.
  --broken no-cas  a deliberately broken store: commit writes the execution without
                   its compare-and-swap, so concurrent writers lose updates. A mutant
                   that storecheck must catch.
"""

import argparse
import base64
import contextlib
import json
import os
import sqlite3
import sys
import traceback

PROTOCOL = 1
DEFAULT_TRACE_MAX = 200
BUSY_TIMEOUT_S = 10.0

REQUIRED_OPS = [
    "commit", "save", "load", "load_for_event", "list_executions", "is_processed",
    "pending_outbox", "ack_outbox", "pending_spawns", "ack_spawn", "due_timers",
    "delete_timer", "append_trace", "read_trace",
]
OPTIONAL_OPS = ["dump", "reset", "set_trace_max"]

SCHEMA = [
    "CREATE TABLE IF NOT EXISTS executions (id TEXT PRIMARY KEY, definition_id TEXT NOT NULL, "
    "data TEXT NOT NULL, version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, target_id TEXT, "
    "event TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS processed_events (execution_id TEXT NOT NULL, event_id TEXT NOT NULL, "
    "PRIMARY KEY (execution_id, event_id))",
    "CREATE TABLE IF NOT EXISTS timers (execution_id TEXT NOT NULL, path TEXT NOT NULL, "
    "fire_at REAL NOT NULL, PRIMARY KEY (execution_id, path))",
    "CREATE TABLE IF NOT EXISTS spawns (seq INTEGER PRIMARY KEY AUTOINCREMENT, parent_id TEXT NOT NULL, "
    "child_id TEXT NOT NULL, root_path TEXT NOT NULL, context TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS trace (execution_id TEXT NOT NULL, idx INTEGER NOT NULL, "
    "entry TEXT NOT NULL, PRIMARY KEY (execution_id, idx))",
]


# --- Errors: one class per error kind of the protocol -------------------------------

class StoreConflict(Exception):
    """The compare-and-swap lost: nothing of the commit was written."""

    def __init__(self, execution_id, expected, found):
        super().__init__(f"store conflict on execution {execution_id!r}: expected version "
                         f"{expected}, found {'none' if found is None else found}")
        self.execution_id, self.expected, self.found = execution_id, expected, found


class InvalidArgument(Exception):
    """The request was rejected before touching storage."""


class NotApplied(Exception):
    """A definite failure: nothing happened."""


class InvalidBatch(NotApplied):
    """A commit or trace step the store refuses (a trace entry that is not an object, an
    unknown timer action): nothing is written. Like the seed's stores, a definite failure,
    not an invalid argument (which the contract keeps for page limits and cursors)."""


class OutcomeUnknown(Exception):
    """A failure after which the write may or may not have happened."""


def dumps(value):
    """The JSON text stored in a column: compact, keys sorted, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


# --- The store: the seed's SqliteStore ----------------------------------------------

class SqliteStore:
    """The six tables, the version CAS, one transaction per commit, the trace ring.

    Each adapter process holds one connection; several processes share the file, so
    every write transaction starts with BEGIN IMMEDIATE (take the write lock first and
    wait up to busy_timeout for it) instead of Python's deferred BEGIN, which can fail
    mid-transaction when another process holds the lock.
    """

    def __init__(self, database, trace_max=DEFAULT_TRACE_MAX, cas=True):
        # isolation_level=None: no implicit transactions; _write_tx opens them.
        self._conn = sqlite3.connect(database, isolation_level=None, timeout=BUSY_TIMEOUT_S)
        if database != ":memory:":
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
        self.trace_max = trace_max
        self._cas = cas
        tables = self._conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                                    "('executions', 'outbox', 'processed_events', 'timers', 'spawns', 'trace')")
        if tables.fetchone()[0] < 6:  # only the first process writes: the others need no write lock
            with self._write_tx():
                for statement in SCHEMA:
                    self._conn.execute(statement)

    def close(self):
        self._conn.close()

    @contextlib.contextmanager
    def _write_tx(self):
        """One write transaction. A failure before COMMIT rolls back: nothing happened.
        A failed COMMIT is NotApplied only if the ROLLBACK after it works."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise NotApplied(f"begin: {e}") from e
        try:
            yield
        except (StoreConflict, InvalidArgument):
            self._rollback_or_unknown()
            raise
        except Exception as e:
            self._rollback_or_unknown()
            raise NotApplied(f"rolled back: {e!r}") from e
        try:
            self._conn.execute("COMMIT")
        except sqlite3.Error as e:
            self._rollback_or_unknown()
            raise NotApplied(f"commit failed and was rolled back: {e}") from e

    def _rollback_or_unknown(self):
        try:
            self._conn.execute("ROLLBACK")
        except sqlite3.Error as e:
            raise OutcomeUnknown(f"rollback failed: {e}") from e

    # The version CAS, as the seed's _write: UPDATE ... WHERE version = old, then INSERT
    # when there is no row and old == 0, otherwise a conflict.
    def _write(self, exe):
        old = exe["version"]
        data = dumps(dict(exe, version=old + 1))
        if not self._cas:  # the mutant: a blind write, whatever the stored version
            self._conn.execute(
                "INSERT INTO executions (id, definition_id, data, version) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET data = excluded.data, version = excluded.version",
                (exe["id"], exe["definition_id"], data, old + 1))
            return old + 1
        cur = self._conn.execute(
            "UPDATE executions SET data = ?, version = ? WHERE id = ? AND version = ?",
            (data, old + 1, exe["id"], old))
        if cur.rowcount == 0:
            found = self._conn.execute("SELECT version FROM executions WHERE id = ?", (exe["id"],)).fetchone()
            if found is None and old == 0:
                self._conn.execute(
                    "INSERT INTO executions (id, definition_id, data, version) VALUES (?, ?, ?, ?)",
                    (exe["id"], exe["definition_id"], data, old + 1))
            else:
                raise StoreConflict(exe["id"], old, found[0] if found else None)
        return old + 1

    def commit(self, exe, emits=(), processed_event_id=None, timers=(), spawns=(), trace=None):
        """The one atomic write per event: the CAS and every side-write, or nothing."""
        with self._write_tx():
            version = self._write(exe)
            for target_id, event in emits:
                self._conn.execute("INSERT INTO outbox (target_id, event) VALUES (?, ?)", (target_id, dumps(event)))
            if processed_event_id is not None:
                self._conn.execute(
                    "INSERT OR IGNORE INTO processed_events (execution_id, event_id) VALUES (?, ?)",
                    (exe["id"], processed_event_id))
            for child_id, root_path, context in spawns:
                self._conn.execute(
                    "INSERT INTO spawns (parent_id, child_id, root_path, context) VALUES (?, ?, ?, ?)",
                    (exe["id"], child_id, root_path, dumps(context)))
            for action, path, fire_at in timers:
                if action == "schedule":
                    self._conn.execute(
                        "INSERT INTO timers (execution_id, path, fire_at) VALUES (?, ?, ?) "
                        "ON CONFLICT(execution_id, path) DO UPDATE SET fire_at = excluded.fire_at",
                        (exe["id"], path, fire_at))
                else:
                    self._conn.execute("DELETE FROM timers WHERE execution_id = ? AND path = ?", (exe["id"], path))
            if trace is not None:
                self._write_trace(exe["id"], trace)
        return version

    def _write_trace(self, execution_id, entry):
        self._conn.execute(
            "INSERT INTO trace (execution_id, idx, entry) "
            "SELECT ?, COALESCE((SELECT MAX(idx) FROM trace WHERE execution_id = ?), -1) + 1, ?",
            (execution_id, execution_id, dumps(entry)))
        if self.trace_max:
            self._conn.execute(
                "DELETE FROM trace WHERE execution_id = ? AND idx <= "
                "(SELECT MAX(idx) FROM trace WHERE execution_id = ?) - ?",
                (execution_id, execution_id, self.trace_max))

    def append_trace(self, execution_id, entry):
        with self._write_tx():
            self._write_trace(execution_id, entry)

    def read_trace(self, execution_id):
        rows = self._conn.execute(
            "SELECT idx, entry FROM trace WHERE execution_id = ? ORDER BY idx", (execution_id,)).fetchall()
        return [{"index": idx, "entry": json.loads(entry)} for idx, entry in rows]

    def load(self, execution_id):
        row = self._conn.execute("SELECT data FROM executions WHERE id = ?", (execution_id,)).fetchone()
        return json.loads(row[0]) if row is not None else None

    def load_for_event(self, execution_id, event_id):
        row = self._conn.execute(
            "SELECT (SELECT data FROM executions WHERE id = ?), "
            "EXISTS(SELECT 1 FROM processed_events WHERE execution_id = ? AND event_id = ?)",
            (execution_id, execution_id, event_id)).fetchone()
        if row is None or row[0] is None:
            return None, False
        return json.loads(row[0]), bool(row[1])

    def list_executions(self, definition_id=None, statuses=(), roots_only=False, cursor=None, limit=50):
        if limit < 1:
            raise InvalidArgument(f"page limit must be at least 1, got {limit}")
        off = decode_cursor(cursor)
        where, params = ["1 = 1"], []
        if definition_id is not None:
            where.append("definition_id = ?")
            params.append(definition_id)
        if statuses:
            where.append("json_extract(data,'$.status') IN (" + ", ".join("?" * len(statuses)) + ")")
            params.extend(statuses)
        if roots_only:
            where.append("json_extract(data,'$.parent_id') IS NULL")
        rows = self._conn.execute(
            "SELECT id, definition_id, version, json_extract(data,'$.status'), "
            "json_extract(data,'$.outcome'), json_extract(data,'$.active_path'), "
            "json_extract(data,'$.parent_id') FROM executions "
            f"WHERE {' AND '.join(where)} ORDER BY id LIMIT ? OFFSET ?",
            (*params, limit + 1, off)).fetchall()
        items = [{"id": r[0], "definition_id": r[1], "version": r[2], "status": r[3], "outcome": r[4],
                  "active_path": r[5], "parent_id": r[6]} for r in rows[:limit]]
        return items, (encode_cursor(off + limit) if len(rows) > limit else None)

    def is_processed(self, execution_id, event_id):
        return self._conn.execute(
            "SELECT 1 FROM processed_events WHERE execution_id = ? AND event_id = ?",
            (execution_id, event_id)).fetchone() is not None

    def pending_outbox(self):
        rows = self._conn.execute("SELECT seq, target_id, event FROM outbox ORDER BY seq").fetchall()
        return [{"seq": s, "target_id": t, "event": json.loads(e)} for s, t, e in rows]

    def ack_outbox(self, seq):
        with self._write_tx():
            self._conn.execute("DELETE FROM outbox WHERE seq = ?", (seq,))

    def pending_spawns(self):
        rows = self._conn.execute(
            "SELECT seq, parent_id, child_id, root_path, context FROM spawns ORDER BY seq").fetchall()
        return [{"seq": s, "parent_id": p, "child_id": c, "root_path": r, "context": json.loads(x)}
                for s, p, c, r, x in rows]

    def ack_spawn(self, seq):
        with self._write_tx():
            self._conn.execute("DELETE FROM spawns WHERE seq = ?", (seq,))

    def due_timers(self, now):
        rows = self._conn.execute(
            "SELECT execution_id, path, fire_at FROM timers WHERE fire_at <= ? ORDER BY fire_at", (now,)).fetchall()
        return [{"execution_id": e, "path": p, "fire_at": float(f)} for e, p, f in rows]

    def delete_timer(self, execution_id, path, fire_at):
        """Deletes the timer only if it still holds fire_at: a re-armed timer survives."""
        with self._write_tx():
            self._conn.execute(
                "DELETE FROM timers WHERE execution_id = ? AND path = ? AND fire_at = ?",
                (execution_id, path, fire_at))

    # --- optional operations: they let storecheck compare tables and reuse the file ---

    def dump(self):
        """Every row of the six tables, read in one transaction; JSON columns as stored."""
        self._conn.execute("BEGIN")
        try:
            q = lambda sql: self._conn.execute(sql).fetchall()
            return {
                "executions": [{"id": i, "definition_id": d, "data": x, "version": v}
                               for i, d, x, v in q("SELECT id, definition_id, data, version FROM executions")],
                "outbox": [{"seq": s, "target_id": t, "event": e} for s, t, e in q("SELECT seq, target_id, event FROM outbox")],
                "processed_events": [{"execution_id": e, "event_id": v}
                                     for e, v in q("SELECT execution_id, event_id FROM processed_events")],
                "timers": [{"execution_id": e, "path": p, "fire_at": float(f)}
                           for e, p, f in q("SELECT execution_id, path, fire_at FROM timers")],
                "spawns": [{"seq": s, "parent_id": p, "child_id": c, "root_path": r, "context": x}
                           for s, p, c, r, x in q("SELECT seq, parent_id, child_id, root_path, context FROM spawns")],
                "trace": [{"execution_id": e, "idx": i, "entry": x}
                          for e, i, x in q("SELECT execution_id, idx, entry FROM trace")],
            }
        finally:
            self._conn.execute("COMMIT")

    def reset(self):
        """Empties the six tables and restarts the AUTOINCREMENT seqs, like a new store."""
        with self._write_tx():
            for table in ("executions", "outbox", "processed_events", "timers", "spawns", "trace", "sqlite_sequence"):
                self._conn.execute(f"DELETE FROM {table}")


def encode_cursor(offset):
    return base64.urlsafe_b64encode(f"off:{offset}".encode()).decode().rstrip("=")


def decode_cursor(cursor):
    if cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        if not text.startswith("off:") or int(text[4:]) < 0:
            raise ValueError(text)
        return int(text[4:])
    except (ValueError, UnicodeDecodeError) as e:
        raise InvalidArgument(f"cursor {cursor!r} was not issued by this store") from e


# --- The protocol: requests in, responses out ---------------------------------------

def arg(args, name, kind, nullable=False):
    """One argument of a request, of the given type(s); a wrong one is an invalid argument."""
    if not isinstance(args, dict) or name not in args:
        raise InvalidArgument(f"missing argument {name!r}")
    value = args[name]
    if value is None and nullable:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise InvalidArgument(f"argument {name!r} has the wrong type: {value!r}")
    return value


def execution(args):
    exe = arg(args, "execution", dict)
    for name, kind in (("id", str), ("definition_id", str), ("version", int)):
        arg(exe, name, kind)
    return exe


def commit(store, args):
    exe = execution(args)
    emits = []
    for e in arg(args, "emits", list):
        emits.append((arg(e, "target_id", str, nullable=True), arg(e, "event", dict)))
    timers = []
    for i, t in enumerate(arg(args, "timers", list)):
        action = arg(t, "action", str)
        if action == "schedule":
            timers.append((action, arg(t, "path", str), float(arg(t, "fire_at", (int, float)))))
        elif action == "cancel":
            timers.append((action, arg(t, "path", str), None))
        else:
            raise InvalidBatch(f"timer op {i}: unknown action {action!r}")
    spawns = []
    for i, s in enumerate(arg(args, "spawns", list)):
        if not isinstance(s.get("context"), dict):
            raise InvalidBatch(f"spawn {i}: context must be a JSON object")
        spawns.append((arg(s, "child_id", str), arg(s, "root_path", str), s["context"]))
    trace = args.get("trace")
    if trace is not None and not isinstance(trace, dict):
        raise InvalidBatch("trace entry must be a JSON object")
    version = store.commit(exe, emits, arg(args, "processed_event_id", str, nullable=True), timers, spawns, trace)
    return {"version": version}


def append_trace(store, args):
    entry = args.get("entry")
    if not isinstance(entry, dict):
        raise InvalidBatch("trace entry must be a JSON object")
    store.append_trace(arg(args, "execution_id", str), entry)


def list_executions(store, args):
    items, nxt = store.list_executions(
        arg(args, "definition_id", str, nullable=True), arg(args, "statuses", list),
        arg(args, "roots_only", bool), arg(args, "cursor", str, nullable=True), arg(args, "limit", int))
    return {"items": items, "next": nxt}


def load_for_event(store, args):
    exe, processed = store.load_for_event(arg(args, "execution_id", str), arg(args, "event_id", str))
    return {"execution": exe, "processed": processed}


def set_trace_max(store, args):
    n = arg(args, "trace_max", int)
    if n < 0:
        raise InvalidArgument(f"trace_max must not be negative, got {n}")
    store.trace_max = n


OPS = {
    "commit": commit,
    "save": lambda s, a: {"version": s.commit(execution(a))},
    "load": lambda s, a: s.load(arg(a, "execution_id", str)),
    "load_for_event": load_for_event,
    "list_executions": list_executions,
    "is_processed": lambda s, a: s.is_processed(arg(a, "execution_id", str), arg(a, "event_id", str)),
    "pending_outbox": lambda s, a: s.pending_outbox(),
    "ack_outbox": lambda s, a: s.ack_outbox(arg(a, "seq", int)),
    "pending_spawns": lambda s, a: s.pending_spawns(),
    "ack_spawn": lambda s, a: s.ack_spawn(arg(a, "seq", int)),
    "due_timers": lambda s, a: s.due_timers(float(arg(a, "now", (int, float)))),
    "delete_timer": lambda s, a: s.delete_timer(
        arg(a, "execution_id", str), arg(a, "path", str), float(arg(a, "fire_at", (int, float)))),
    "append_trace": append_trace,
    "read_trace": lambda s, a: s.read_trace(arg(a, "execution_id", str)),
    "dump": lambda s, a: s.dump(),
    "reset": lambda s, a: s.reset(),
    "set_trace_max": set_trace_max,
}


def hello(options, args):
    """Opens the store the harness asks for, and says what this adapter supports."""
    protocol = arg(args, "protocol", int)
    if protocol != PROTOCOL:
        raise NotApplied(f"protocol {protocol} not supported (this adapter speaks {PROTOCOL})")
    database = options.db or os.path.join(arg(arg(args, "store", dict), "dir", str), "store.db")
    store = SqliteStore(database, trace_max=arg(args, "trace_max", int), cas=options.broken != "no-cas")
    name = "python-sqlite3" + (f" (broken: {options.broken})" if options.broken else "")
    result = {"protocol": PROTOCOL, "name": name, "ops": REQUIRED_OPS + OPTIONAL_OPS,
              "max_processes": 1 if database == ":memory:" else 0}
    return store, result


def error(kind, exc):
    e = {"kind": kind, "message": str(exc)}
    if isinstance(exc, StoreConflict):
        e.update(execution_id=exc.execution_id, expected=exc.expected, found=exc.found)
    return e


def handle(state, options, request):
    """Answers one request; returns the response object."""
    rid, op, args = request["id"], request["op"], request.get("args") or {}
    try:
        if op == "hello":
            if state.get("store") is not None:
                raise NotApplied("hello twice")
            state["store"], result = hello(options, args)
        elif state.get("store") is None:
            raise NotApplied(f"{op} before hello")
        elif op == "shutdown":
            state.pop("store").close()
            state["done"] = True
            result = None
        elif op in OPS:
            result = OPS[op](state["store"], args)
        else:
            raise NotApplied(f"unknown operation {op!r}")
        return {"id": rid, "ok": True, "result": result}
    except StoreConflict as e:
        return {"id": rid, "ok": False, "error": error("conflict", e)}
    except InvalidArgument as e:
        return {"id": rid, "ok": False, "error": error("invalid_argument", e)}
    except NotApplied as e:
        return {"id": rid, "ok": False, "error": error("not_applied", e)}
    except Exception as e:  # OutcomeUnknown, and any bug: say so, and show where
        traceback.print_exc(file=sys.stderr)
        return {"id": rid, "ok": False, "error": error("unknown", repr(e))}


def serve(options, stdin, stdout):
    """The protocol loop: one request line in, one response line out, until shutdown
    or the end of input."""
    state = {}
    try:
        for line in iter(stdin.readline, b""):
            if not line.endswith(b"\n"):
                print("sqlite_store.py: the input ended inside a line", file=sys.stderr)
                return 1
            response = handle(state, options, json.loads(line))
            stdout.write(json.dumps(response, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
                         .encode() + b"\n")
            stdout.flush()
            if state.get("done"):
                return 0
        return 0
    finally:
        if state.get("store") is not None:
            state["store"].close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="database file (default: <store dir>/store.db)")
    parser.add_argument("--broken", choices=["no-cas"], help="run a deliberately broken variant")
    sys.exit(serve(parser.parse_args(), sys.stdin.buffer, sys.stdout.buffer))


if __name__ == "__main__":
    main()
