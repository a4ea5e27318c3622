#!/usr/bin/env python3
"""The daemon's memory under HTTP load (issue 79, item 21).

Starts `textorigin serve` on a fresh data directory with `--http` on loopback and
`--http-open`, then for --seconds sends small submissions (POST /api/documents) and
queries (POST /api/query) from --clients threads, each on a connection of its own per
request, as fast as they are answered. Samples the daemon's resident memory (VmRSS)
every second, and after the load for --idle seconds more; prints the submissions and
queries answered, and the memory at start, at its peak under load and after the idle
wait, in MB.

    python3 scripts/http-memory.py --bin TARGET/release/textorigin \
        [--seconds 90] [--idle 30] [--clients 16] [--env MALLOC_ARENA_MAX=8]

Loopback only; bounded by --seconds.
"""

import argparse
import http.client
import os
import random
import socket
import subprocess
import tempfile
import threading
import time

WORDS = ("harbour bridge commuter bakery council budget school library river market "
         "engineer cable ramp drainage storm traffic morning repair shop detour").split()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def post(port, path, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("POST", path, body=body, headers={"Content-Type": "text/plain", "Host": f"127.0.0.1:{port}"})
    r = c.getresponse()
    r.read()
    c.close()
    return r.status


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--seconds", type=float, default=90)
    ap.add_argument("--idle", type=float, default=30)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for the daemon")
    a = ap.parse_args()
    data = tempfile.mkdtemp(prefix="txo-httpmem-")
    port = free_port()
    env = dict(os.environ)
    for kv in a.env:
        k, v = kv.split("=", 1)
        env[k] = v
    os.makedirs(os.path.join(data, "spool", "new"), exist_ok=True)
    daemon = subprocess.Popen(
        [a.bin, "serve", "--data", data, "--table-size", "64MiB", "--http", f"127.0.0.1:{port}", "--http-open"],
        stderr=subprocess.DEVNULL, env=env)
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    time.sleep(1)
    start_mb = rss_mb(daemon.pid)
    counts = {"submitted": 0, "queried": 0, "errors": 0}
    lock = threading.Lock()
    until = time.time() + a.seconds

    def client(i):
        rnd = random.Random(i)
        n = 0
        while time.time() < until:
            text = " ".join(rnd.choice(WORDS) for _ in range(40 + rnd.randrange(40)))
            try:
                if n % 5 == 4:
                    status, key = post(port, "/api/query", text.encode()), "queried"
                else:
                    status, key = post(port, f"/api/documents?name=c{i}-{n}", text.encode()), "submitted"
            except OSError:
                status, key = 0, "errors"
            with lock:
                counts[key if status in (200, 202) else "errors"] += 1
            n += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
    for t in threads:
        t.start()
    peak = start_mb
    while any(t.is_alive() for t in threads):
        peak = max(peak, rss_mb(daemon.pid))
        time.sleep(1)
    for t in threads:
        t.join()
    time.sleep(a.idle)
    idle_mb = rss_mb(daemon.pid)
    daemon.terminate()
    daemon.wait()
    print(f"load: {a.seconds:.0f} s, {a.clients} clients: {counts['submitted']} submissions, "
          f"{counts['queried']} queries answered, {counts['errors']} refused or failed")
    print(f"memory (VmRSS): {start_mb:.0f} MB at start, {peak:.0f} MB at the peak, "
          f"{idle_mb:.0f} MB after {a.idle:.0f} s idle")


if __name__ == "__main__":
    main()
