#!/usr/bin/env python3
"""Soak harness for `textorigin serve` (issue 11): documents stream into the spool while
the daemon is killed with SIGKILL over and over, random failpoints fire (an abort in the
middle of admission, commit or checkpoint; failing store writes), and, where a tmpfs can
be mounted (root), the disk fills up for a while. At the end every document must be
stored exactly once, and the export and the table and index digests must equal those of
an uncrashed batch run over the same documents. Prints the counts.

With `--attacks` (issue 32), compression bombs (zstd files of long JSON lines that
decode to thousands of times their size, made by the `zstd` command: the daemon stores
the documents before the ratio limit and sends the file to failed/, as `ingest` does) and back-dated copies of
earlier documents (JSON dated 1900 onwards, which take the copied passages over and
revise the documents that held them) arrive among the normal ones; the end must still
equal the batch run. Then (issue 53) copies of the soaked data directory are damaged,
one kind of RocksDB file lost or truncated each, and every command, restarts in a loop
among them, must refuse them and change nothing (`repair` then mends a lost CURRENT);
and `export --mirror` of inputs named through `..` must write inside its output only.

    python3 scripts/soak.py --bin TARGET/release/textorigin [--kills 1000] [--docs 3000] [--attacks]

The binary must be built with the `failpoints` feature (as the test suite builds it:
`cargo build --release --features textorigin/failpoints`). Not run by CI, which runs the
short version: `tests/cli/faults.rs`, `daemon_killed_at_random_moments_...`.
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

POINTS_ABORT = ["admit.before-commit", "admit.after-commit", "spool.after-sync", "spool.after-unlink", "checkpoint.after-copy", "checkpoint.after-meta"]


def corpus(dirname, n, rnd):
    """n documents that copy runs of words from earlier ones (as tests/cli/util.rs)."""
    docs, paths = [], []
    for i in range(n):
        w = []
        for _ in range(2 + rnd.randrange(3)):
            if docs and rnd.randrange(3) > 0:
                src = docs[rnd.randrange(len(docs))]
                a = rnd.randrange(len(src))
                w += src[a : a + 12 + rnd.randrange(30)]
            else:
                w += [f"w{rnd.randrange(4000)}" for _ in range(20 + rnd.randrange(40))]
        text = " ".join(" ".join(w[j : j + 12]) + "." for j in range(0, len(w), 12))
        p = os.path.join(dirname, f"{i:06}.txt")
        with open(p, "w") as f:
            f.write(text)
        paths.append(p)
        docs.append(w)
    return paths


def attacks(dirname, paths, rnd):
    """`paths` with attack files among them, in name order: after every 150th document a
    zstd bomb of long JSON lines, and after every 40th a copy of an earlier document's
    text dated further back each time (1900, 1899, ...)."""
    out, year = [], 1900
    for i, p in enumerate(paths):
        out.append(p)
        stem = os.path.splitext(p)[0]
        if i % 40 == 39:
            with open(paths[rnd.randrange(i)]) as f:
                text = f.read()
            q = stem + "x-backdated.json"  # after `stem.txt` in name order, as the spool takes them
            with open(q, "w") as f:
                json.dump({"id": os.path.basename(q), "text": text, "published_at": f"{year}-01-01"}, f)
            out.append(q)
            year -= 1
        if i % 150 == 149:
            line = json.dumps({"text": " ".join(["alpha beta gamma delta epsilon zeta eta theta iota kappa"] * 200)})
            q = stem + "y-bomb.zst"
            subprocess.run(["zstd", "-19", "-q", "-f", "-o", q], input=((line + "\n") * 1000).encode(), check=True)
            out.append(q)
    return out


def store_files(data):
    """The store's files with their sizes and contents, but RocksDB's diagnostic logs."""
    db = os.path.join(data, "db")
    out = {}
    for name in sorted(os.listdir(db)):
        if name == "LOCK" or name.startswith("LOG"):
            continue
        with open(os.path.join(db, name), "rb") as f:
            out[name] = hash(f.read())
    return out


def damaged_store_attacks(binary, data, work):
    """Issue 53: each kind of RocksDB file lost or truncated in a copy of the soaked data
    directory; `serve` started three times (as Restart=on-failure does), `ingest`, `list`
    and `check` each run: all must fail naming the damage and change no file of the
    store. Then `repair` brings a lost CURRENT's store back to the same export.
    Returns the cases that held."""
    want = export_without_sources(binary, data)
    held = 0
    kinds = [("CURRENT", False), ("CURRENT", True), ("MANIFEST-", False), ("MANIFEST-", True), (".sst", False), (".sst", True)]
    extra = os.path.join(work, "extra.txt")
    with open(extra, "w") as f:
        f.write("one more document with words enough to be stored in a damaged store")
    for kind, truncate in kinds:
        copy = os.path.join(work, "damaged")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(data, copy, ignore=shutil.ignore_patterns("spool"))
        db = os.path.join(copy, "db")
        victim = os.path.join(db, sorted(n for n in os.listdir(db) if kind in n)[0])
        if truncate:
            os.truncate(victim, os.path.getsize(victim) // 2)
        else:
            os.remove(victim)
        before = store_files(copy)
        failures = []
        for _ in range(3):
            for args in (["serve"], ["ingest", extra], ["list"], ["check"]):
                r = subprocess.run([binary, args[0], "--data", copy, *args[1:]], capture_output=True, text=True, timeout=60)
                if r.returncode == 0 or ("damaged" not in r.stderr and kind not in r.stderr):
                    failures.append(f"{args[0]}: {r.returncode} {r.stderr.strip()[:200]}")
        if store_files(copy) != before:
            failures.append("the store's files changed")
        if kind == "CURRENT" and not truncate:
            run(binary, "repair", "--data", copy)
            if export_without_sources(binary, copy) != want:
                failures.append("repair did not bring every document back")
        print(f"damaged store, {kind} {'truncated' if truncate else 'removed'}: "
              + ("held" if not failures else "FAILED: " + "; ".join(failures[:3])), flush=True)
        held += not failures
    return held, len(kinds)


def mirror_attack(binary, work):
    """Issue 53: `export --mirror` of inputs named through `..` and of a file named `x:5`
    writes inside its output only, never over an input."""
    docs = os.path.join(work, "dataset", "documents")
    os.makedirs(docs, exist_ok=True)
    part = os.path.join(docs, "part-0.jsonl")
    with open(part, "w") as f:
        for i in range(3):
            f.write(json.dumps({"id": i, "text": f"document {i} of the mirrored part with some words"}) + "\n")
    with open(os.path.join(docs, "x:5"), "w") as f:
        f.write("a single document whose name looks like a line reference")
    before = open(part).read()
    data = os.path.join(work, "mirror-data")
    subprocess.run([binary, "ingest", "--data", data, "--table-size", "32KiB",
                    os.path.join(docs, "..", "documents", "part-0.jsonl"), os.path.join(docs, "x:5")], check=True, capture_output=True)
    out = os.path.join(work, "dataset", "attributes")
    subprocess.run([binary, "export", "--data", data, "--format", "attributes", "--mirror", docs, "-o", out], check=True, capture_output=True)
    ok = open(part).read() == before and os.path.exists(os.path.join(out, "part-0.jsonl")) \
        and os.path.exists(os.path.join(out, "x:5")) and not os.path.exists(os.path.join(out, "x"))
    print(f"mirror through `..` and a name with `:`: {'held' if ok else 'FAILED'}", flush=True)
    return ok


def run(binary, *args):
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout


def export_without_sources(binary, data):
    out = []
    for line in run(binary, "export", "--data", data).splitlines():
        v = json.loads(line)
        v.pop("source", None)  # where it came from: a path, and the way in of its revisers
        for r in v.get("revisions", []):
            r.pop("caused_via", None)
        out.append(v)
    return out


def digests(binary, data):
    s = json.loads(run(binary, "stats", "--json", "--data", data))
    return s["table_digest"], s["index_digest"], s["documents"]


def documents(binary, data):
    r = subprocess.run([binary, "stats", "--json", "--data", data], capture_output=True, text=True)
    return json.loads(r.stdout)["documents"] if r.returncode == 0 else 0


def mount_tmpfs(path, size):
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path], capture_output=True).returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--kills", type=int, default=1000)
    ap.add_argument("--docs", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--attacks", action="store_true", help="bombs and back-dated copies among the documents")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    work = tempfile.mkdtemp(prefix="textorigin-soak-")
    src = os.path.join(work, "corpus")
    os.makedirs(src)
    files = corpus(src, a.docs, rnd)
    if a.attacks:
        files = attacks(src, files, rnd)
    ref = os.path.join(work, "reference")
    # The bombs fail (after their first documents): exit status 3, "some inputs failed".
    r = subprocess.run([a.bin, "ingest", "--data", ref, "--table-size", "32KiB", *files], capture_output=True, text=True)
    if r.returncode not in (0, 3):
        sys.exit(f"the reference ingest failed: {r.stderr}")
    expected = digests(a.bin, ref)[2]

    fs = os.path.join(work, "fs")
    os.makedirs(fs)
    # Room for the data directory (RocksDB preallocates its 64 MiB write-ahead log) and
    # a ballast that fills the rest for a while.
    tmpfs = mount_tmpfs(fs, "256m")
    data = os.path.join(fs, "data")
    for sub in ["spool/tmp", "spool/new"]:
        os.makedirs(os.path.join(data, sub), exist_ok=True)
    control = os.path.join(work, "failpoints")
    open(control, "w").close()
    env = dict(os.environ, TEXTORIGIN_FAILPOINTS=control)
    env.pop("TEXTORIGIN_DATA", None)

    def start():
        return subprocess.Popen(
            [a.bin, "serve", "--data", data, "--table-size", "32KiB", "--checkpoint-docs", "7", "--rescan-secs", "1"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

    fed, kills, failpoints, disk_fills, exits, shown = 0, 0, 0, 0, 0, 0
    ballast = os.path.join(fs, "ballast")
    daemon = start()
    t0 = time.time()
    def drained():
        return documents(a.bin, data) >= expected and not os.listdir(os.path.join(data, "spool/new"))

    while kills < a.kills or fed < len(files) or not drained():
        # Feed a few documents, in name order (tmp, then rename: the spool contract).
        for _ in range(rnd.randrange(8)):
            if fed < len(files):
                name = os.path.basename(files[fed])
                tmp = os.path.join(data, "spool/tmp", name)
                try:
                    shutil.copyfile(files[fed], tmp)
                    os.rename(tmp, os.path.join(data, "spool/new", name))
                    fed += 1
                except OSError:  # the disk is full: the producer waits too
                    break
        time.sleep(rnd.uniform(0.0, 0.15))
        r = rnd.random()
        if r < 0.08:
            point = rnd.choice(POINTS_ABORT)
            with open(control, "w") as f:
                f.write(f"{point}=abort\n")
            failpoints += 1
        elif r < 0.11:
            with open(control, "w") as f:
                f.write("store.write=error\n")
            failpoints += 1
        elif r < 0.30:
            open(control, "w").close()
        if tmpfs and not os.path.exists(ballast) and rnd.random() < 0.01:
            with open(ballast, "wb") as f:
                try:
                    while True:
                        f.write(b"\0" * 65536)
                except OSError:
                    pass
            disk_fills += 1
        elif os.path.exists(ballast) and rnd.random() < 0.2:
            os.remove(ballast)
        if daemon.poll() is not None:
            exits += 1  # a failpoint's abort: restart as systemd would
            daemon = start()
        elif kills < a.kills and rnd.random() < 0.5:
            daemon.send_signal(signal.SIGKILL)
            daemon.wait()
            kills += 1
            daemon = start()
        if kills % 100 == 0 and kills != shown:
            shown = kills
            print(f"{kills} kills, {fed} fed, {documents(a.bin, data)} stored, {time.time() - t0:.0f} s", flush=True)
        if kills >= a.kills:
            open(control, "w").close()
            if os.path.exists(ballast):
                os.remove(ballast)
    daemon.send_signal(signal.SIGTERM)
    if daemon.wait() != 0:
        sys.exit("the daemon did not stop cleanly")
    ok = export_without_sources(a.bin, data) == export_without_sources(a.bin, ref)
    same = digests(a.bin, data) == digests(a.bin, ref)
    if a.attacks:
        held, cases = damaged_store_attacks(a.bin, data, work)
        ok = ok and held == cases and mirror_attack(a.bin, work)
    print(f"soak: {kills} SIGKILLs, {exits} failpoint aborts, {failpoints} failpoints set, {disk_fills} full disks"
          f" ({'tmpfs' if tmpfs else 'no tmpfs: not root'}), {len(files)} files, {expected} documents; "
          f"export equal: {ok}; table and index digests equal: {same}")
    if tmpfs:
        subprocess.run(["umount", "-l", fs])
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok and same else 1)


if __name__ == "__main__":
    main()
