#!/usr/bin/env bash
# CPU per document of each process of a sharded deployment (issue 37):
#   bash scripts/cluster-cpu.sh [--shards "1 2 4"] [--config FILE] [--prepared] CORPUS...
# runs scripts/cluster.sh once per shard count, on one log server, and prints for each
# process (the shard workers, the aggregator, the log server) the CPU seconds the kernel
# accounted to it (/proc: user + system, its whole life, start and close included) and
# that per document; then the busiest process and the total. Submission (`cluster
# submit`) runs before the processes and is not counted. Issue 37's partitions are not
# built: one aggregator (P = 1) at every shard count.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

shards="1 2 4" args=() corpus=()
while [ $# -gt 0 ]; do
  case "$1" in
    --shards) shards="$2"; shift 2 ;;
    --config) args+=(--config "$2"); shift 2 ;;
    --prepared) args+=(--prepared); shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "cluster-cpu.sh: unknown option $1" >&2; exit 2 ;;
    *) corpus+=("$1"); shift ;;
  esac
done
[ ${#corpus[@]} -gt 0 ] || { echo "usage: cluster-cpu.sh [--shards \"1 2 4\"] [--config FILE] [--prepared] CORPUS..." >&2; exit 2; }

out="$(mktemp -d "${TMPDIR:-/tmp}/textorigin-cpu.XXXXXX")"
trap 'rm -rf "$out"' EXIT
for s in $shards; do
  bash "$root/scripts/cluster.sh" --shards "$s" --servers 1 "${args[@]}" --out "$out/export-$s.jsonl" "${corpus[@]}" 2> "$out/report-$s.txt" \
    || { cat "$out/report-$s.txt" >&2; exit 1; }
done

python3 - "$out" $shards <<'EOF'
import re, sys
out, shards = sys.argv[1], sys.argv[2:]
print(f"{'S':>2}  {'process':<12} {'CPU s':>8} {'CPU us/doc':>11}")
for s in shards:
    text = open(f"{out}/report-{s}.txt").read()
    docs = int(re.search(r"(\d+) documents stored in", text).group(1))
    procs = []
    for line in text.splitlines():
        m = re.match(r"cluster\.sh: (w\d+|agg|log server n\d+): .*cpu ([0-9.]+) s", line)
        if m:
            procs.append((m.group(1).replace("log server ", "log "), float(m.group(2))))
    for name, cpu in procs:
        print(f"{s:>2}  {name:<12} {cpu:>8.2f} {cpu / docs * 1e6:>11.1f}")
    busiest = max(procs, key=lambda p: p[1])
    total = sum(c for _, c in procs)
    print(f"{s:>2}  busiest: {busiest[0]}, {busiest[1] / docs * 1e6:.1f} us/doc; all processes: {total / docs * 1e6:.1f} us/doc ({docs} documents)")
EOF
