#!/usr/bin/env python3
"""An adapter that breaks the protocol in one way, for storecheck's tests: the reference
Python adapter (adapters/python/sqlite_store.py) with one misbehaviour, chosen by argv[1].
Derived from a reviewer's adversarial adapters.

    python3 misbehave.py MODE [N]

N (default 5) is the request, counting from 1 after hello, that misbehaves:

    crash          exit with status 11 instead of answering, saying so on stderr
    bg_crash       as crash, but first start a child that keeps stdout open
    malformed      answer with half a line
    wrong_id       answer with another request's id
    twice          answer twice
    bool_as_int    answer every is_processed with 0 or 1 instead of a bool (from N on)
    exit_after_answer  answer, then exit with status 1
    exit_after_hello   answer hello, then exit with status 0
    ignore_shutdown    answer shutdown, then keep running
"""
import json, os, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "adapters", "python"))
import sqlite_store  # noqa: E402

MODE = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 5
opts = type("Options", (), {"db": None, "broken": None})()


def log(*args):
    print("misbehave[%s]:" % MODE, *args, file=sys.stderr, flush=True)


def main():
    out, inp = sys.stdout.buffer, sys.stdin.buffer
    state, n = {}, 0
    for line in iter(inp.readline, b""):
        req = json.loads(line)
        op = req["op"]
        if op not in ("hello", "shutdown"):
            n += 1
        hit = op not in ("hello", "shutdown") and n == N
        if hit and MODE in ("crash", "bg_crash"):
            if MODE == "bg_crash":  # a helper that inherits stdout and stderr, as `helper &` does
                subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
            log("segfault simulation on", op)
            os._exit(11)
        resp = sqlite_store.handle(state, opts, req)
        if MODE == "wrong_id" and hit:
            resp["id"] = req["id"] + 1000
        if MODE == "bool_as_int" and op == "is_processed" and n >= N and resp.get("ok"):
            resp["result"] = 1 if resp["result"] else 0
        data = json.dumps(resp, separators=(",", ":")).encode()
        if MODE == "malformed" and hit:
            data = data[: len(data) // 2]
        out.write(data + b"\n")
        if MODE == "twice" and hit:
            out.write(data + b"\n")
        out.flush()
        if MODE == "exit_after_answer" and hit:
            log("exiting after answering", op)
            os._exit(1)
        if MODE == "exit_after_hello" and op == "hello":
            sys.exit(0)
        if op == "shutdown":
            if MODE == "ignore_shutdown":
                log("not exiting")
                while True:
                    time.sleep(1)
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
