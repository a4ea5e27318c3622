#!/usr/bin/env bash
# CPU per document of each process of a sharded deployment (issue 37):
#   bash scripts/cluster-cpu.sh [--shards "1 2 4"] [--partitions "1"] [--runs N]
#                               [--config FILE] [--prepared] CORPUS...
# runs scripts/cluster.sh once per shard count and partition count (N times, in turn:
# runs of one build differ by ±10% on a small machine), on one log server,
# and prints for each process (the shard workers, the partitions `agg<p>` or the one
# aggregator `agg`, the log server) the CPU seconds the kernel accounted to it (/proc:
# user + system, its whole life, start and close included) and that per document; then
# the busiest of the deployment's own processes (workers and partitions: the log is
# NATS's, on as many servers as one likes), the log server, and the total; with P = 1
# and more partition counts, each count's busiest process and total against P = 1's,
# with issue 37's aims (1/P within 20%; at most 1.3x); with N > 1, each count's
# medians, which the comparison then uses. Submission (`cluster submit`) runs before
# the processes and is not counted.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

shards="1 2 4" partitions="1" repeat=1 args=() corpus=()
while [ $# -gt 0 ]; do
  case "$1" in
    --shards) shards="$2"; shift 2 ;;
    --partitions) partitions="$2"; shift 2 ;;
    --runs) repeat="$2"; shift 2 ;;
    --config) args+=(--config "$2"); shift 2 ;;
    --prepared) args+=(--prepared); shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "cluster-cpu.sh: unknown option $1" >&2; exit 2 ;;
    *) corpus+=("$1"); shift ;;
  esac
done
[ ${#corpus[@]} -gt 0 ] || { echo "usage: cluster-cpu.sh [--shards \"1 2 4\"] [--partitions \"1\"] [--runs N] [--config FILE] [--prepared] CORPUS..." >&2; exit 2; }
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "cluster-cpu.sh: --runs takes a positive number" >&2; exit 2; }

out="$(mktemp -d "${TMPDIR:-/tmp}/textorigin-cpu.XXXXXX")"
trap 'rm -rf "$out"' EXIT
runs=()
for r in $(seq 1 "$repeat"); do
  for s in $shards; do
    for p in $partitions; do
      bash "$root/scripts/cluster.sh" --shards "$s" --partitions "$p" --servers 1 "${args[@]}" --out "$out/export-$s-$p-$r.jsonl" "${corpus[@]}" 2> "$out/report-$s-$p-$r.txt" \
        || { cat "$out/report-$s-$p-$r.txt" >&2; exit 1; }
      runs+=("$s-$p-$r")
    done
  done
done

python3 - "$out" "${runs[@]}" <<'EOF'
import re, sys
out, runs = sys.argv[1], sys.argv[2:]
print(f"{'S':>2} {'P':>2}  {'process':<12} {'CPU s':>8} {'CPU us/doc':>11}")
figures = {}
for run in runs:
    s, p, _ = run.split("-")
    text = open(f"{out}/report-{run}.txt").read()
    docs = int(re.search(r"(\d+) documents stored in", text).group(1))
    wall = float(re.search(r"documents stored in ([0-9.]+) s", text).group(1))
    procs = []
    for line in text.splitlines():
        m = re.match(r"cluster\.sh: (w\d+|agg\d*|log server n\d+): .*cpu ([0-9.]+) s", line)
        if m:
            procs.append((m.group(1).replace("log server ", "log "), float(m.group(2))))
    for name, cpu in procs:
        print(f"{s:>2} {p:>2}  {name:<12} {cpu:>8.2f} {cpu / docs * 1e6:>11.1f}")
    own = [x for x in procs if not x[0].startswith("log ")]
    busiest = max(own, key=lambda x: x[1])
    logs = sum(c for n, c in procs if n.startswith("log "))
    total = sum(c for _, c in procs)
    print(f"{s:>2} {p:>2}  busiest: {busiest[0]}, {busiest[1] / docs * 1e6:.1f} us/doc; log server: {logs / docs * 1e6:.1f} us/doc; "
          f"all processes: {total / docs * 1e6:.1f} us/doc; {docs} documents in {wall:.1f} s")
    figures.setdefault((s, int(p)), []).append((busiest[1] / docs, total / docs))

# Each count's medians (the middle run; of an even number, the mean of the two).
def median(xs):
    xs = sorted(xs)
    return (xs[(len(xs) - 1) // 2] + xs[len(xs) // 2]) / 2
figures = {k: (median([b for b, _ in v]), median([t for _, t in v]), len(v)) for k, v in figures.items()}
for (s, p), (busiest, total, n) in sorted(figures.items()):
    if n > 1:
        print(f"{s:>2} {p:>2}  medians of {n} runs: busiest {busiest * 1e6:.1f} us/doc; all processes {total * 1e6:.1f} us/doc")

# The scaling with the partitions (issue 37): against P = 1 at the same shard count,
# the busiest process should fall as 1/P (within 20%) and all processes' CPU grow by
# at most 30% at P = 4.
for (s, p), (busiest, total, _) in sorted(figures.items()):
    base = figures.get((s, 1))
    if p == 1 or base is None:
        continue
    print(f"{s:>2} {p:>2}  against P = 1: busiest {busiest / base[0]:.2f}x (aim {1 / p:.2f}x, within 20%: "
          f"{'yes' if busiest / base[0] <= 1.2 / p else 'no'}); all processes {total / base[1]:.2f}x "
          f"(aim at most 1.30x: {'yes' if total / base[1] <= 1.3 else 'no'})")
EOF
