#!/usr/bin/env python3
"""Load test of the daemon's HTTP inspector (issue: live web inspector).

Runs the real daemon twice on a fresh data directory with `--http` on loopback and
feeds it CORPUS (a .jsonl file, split into spool files of --per-file lines): once with
the HTTP port idle, once while reader threads send GET requests (a document by id,
a page of the list) at --rate requests per second in all. Prints, for each run,
documents per second from the first file dropped to the last document stored, and for
the loaded run the requests answered, their latency percentiles and the error count.

    python3 scripts/http-load.py --bin TARGET/release/textorigin CORPUS.jsonl \
        [--rate 1000] [--per-file 200] [--readers 16] [--pin]

Loopback only; bounded by the corpus (the readers stop when ingestion ends).
"""

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import tempfile
import threading
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def last_applied(data):
    """The daemon's last applied document (its status file, written at each batch)."""
    try:
        with open(os.path.join(data, "daemon.json")) as f:
            return json.load(f).get("last_applied", 0)
    except (OSError, ValueError):
        return 0


def run(args, lines, loaded):
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, "data")
        port = free_port()
        pin = ["taskset", "-c", "0"] if args.pin else []
        daemon = subprocess.Popen(
            pin + [args.bin, "serve", "--data", data, "--http", f"127.0.0.1:{port}", "--rescan-secs", "1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 30
            while time.time() < deadline:
                try:
                    get(port, "/metrics")
                    break
                except OSError:
                    time.sleep(0.1)
            stop = threading.Event()
            latencies, errors = [], [0]
            lock = threading.Lock()

            def reader(seed):
                rng = random.Random(seed)
                interval = args.readers / args.rate
                next_at = time.time()
                while not stop.is_set():
                    path = f"/api/documents/{rng.randint(1, 50)}" if rng.random() < 0.7 else "/api/documents?limit=20"
                    t0 = time.time()
                    try:
                        status, _ = get(port, path)
                        ok = status in (200, 404)
                    except OSError:
                        ok = False
                    with lock:
                        latencies.append(time.time() - t0)
                        errors[0] += 0 if ok else 1
                    next_at += interval
                    pause = next_at - time.time()
                    if pause > 0:
                        time.sleep(pause)

            threads = [threading.Thread(target=reader, args=(i,)) for i in range(args.readers)] if loaded else []
            for t in threads:
                t.start()
            if loaded:
                time.sleep(1)  # the readers at their pace before ingestion starts
            spool = os.path.join(data, "spool")
            t0 = time.time()
            for i in range(0, len(lines), args.per_file):
                tmp = os.path.join(spool, "tmp", f"part-{i:08d}.jsonl")
                with open(tmp, "w") as f:
                    f.writelines(lines[i:i + args.per_file])
                os.rename(tmp, os.path.join(spool, "new", f"part-{i:08d}.jsonl"))
            # Done when the spool's new/ is empty: a file leaves it only once its
            # documents are durable.
            new_dir = os.path.join(spool, "new")
            while os.listdir(new_dir) and time.time() - t0 < 600:
                time.sleep(0.05)
            elapsed = time.time() - t0
            want = last_applied(data) or len(lines)
            stop.set()
            for t in threads:
                t.join()
            result = {"documents": want, "seconds": round(elapsed, 2), "documents_per_s": round(want / elapsed, 1)}
            if loaded:
                latencies.sort()
                n = len(latencies)
                span = elapsed + 1
                result.update({
                    "requests": n,
                    "requests_per_s": round(n / span, 1),
                    "errors": errors[0],
                    "p50_ms": round(1000 * latencies[n // 2], 2),
                    "p99_ms": round(1000 * latencies[min(n - 1, n * 99 // 100)], 2),
                })
            return result
        finally:
            daemon.terminate()
            daemon.wait(timeout=60)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", required=True)
    p.add_argument("corpus")
    p.add_argument("--rate", type=float, default=1000.0)
    p.add_argument("--per-file", type=int, default=200)
    p.add_argument("--readers", type=int, default=16)
    p.add_argument("--pin", action="store_true",
                   help="daemon on CPU 0, this load generator on CPU 1 (both runs): the slowdown is the server's own cost")
    args = p.parse_args()
    if args.pin:
        os.sched_setaffinity(0, {1})
    with open(args.corpus) as f:
        lines = [l for l in f if l.strip()]
    idle = run(args, lines, False)
    print("idle HTTP:  ", json.dumps(idle))
    loaded = run(args, lines, True)
    print("loaded HTTP:", json.dumps(loaded))
    print(f"ingestion under load: {100 * loaded['documents_per_s'] / idle['documents_per_s']:.1f}% of idle")


if __name__ == "__main__":
    main()
