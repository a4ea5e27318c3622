#!/usr/bin/env bash
# A sharded deployment on one machine (docs/SCALE-OUT.md):
#   bash scripts/cluster.sh --shards S [--config FILE] [--chaos SECONDS] [--servers 1|3]
#                           [--prepared] [--partitions P] [--union FILE] --out EXPORT.jsonl CORPUS...
# starts NATS JetStream servers on loopback (a 3-server cluster with replicated streams
# by default), describes the deployment (`textorigin cluster init`), admits the corpus
# in order (`cluster submit --force`: a file given twice is admitted twice, as
# `ingest --force` stores it), runs S shard workers and the aggregator as separate
# processes until every document is stored, writes the `export` of the aggregator's
# data directory to EXPORT and, with --union, the union of the shard tables (digest and
# counters, to compare with `textorigin stats --json` of a single node). With --chaos,
# every SECONDS a process is killed with SIGKILL and started again: in turn a log
# server (with 3; at most one every 10 s, else a random process), the aggregator, a
# random worker, a random process. Exits 0 when
# all went well. With --chaos, the log is also trimmed (`cluster trim`) after every
# kill, below every process's oldest checkpoint. With --prepared, documents are
# prepared once, at submission, and each worker reads only its shard's selected
# shingles (`cluster init --prepared`). With --partitions P, P processes share the
# aggregator's work (`cluster init --partitions`, issue 37; chaos kills them as it
# kills the aggregator).
# Needs nats-server (Debian: apt-get install nats-server) and the textorigin binary
# ($TEXTORIGIN_BIN, else the release build of scripts/setup.sh's target directory,
# built when missing).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/children.sh"

shards="" config="" chaos="" out="" union="" servers=3 prepared=() partitions=1
corpus=()
while [ $# -gt 0 ]; do
  case "$1" in
    --shards) shards="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --chaos) chaos="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --union) union="$2"; shift 2 ;;
    --servers) servers="$2"; shift 2 ;;
    --prepared) prepared=(--prepared); shift ;;
    --partitions) partitions="$2"; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "cluster.sh: unknown option $1" >&2; exit 2 ;;
    *) corpus+=("$1"); shift ;;
  esac
done
if [ -z "$shards" ] || [ -z "$out" ] || [ ${#corpus[@]} -eq 0 ]; then
  echo "usage: cluster.sh --shards S [--config FILE] [--chaos SECONDS] [--servers 1|3] [--prepared] [--union FILE] --out EXPORT.jsonl CORPUS..." >&2
  exit 2
fi
case "$servers" in 1|3) ;; *) echo "cluster.sh: --servers is 1 or 3" >&2; exit 2 ;; esac
command -v nats-server >/dev/null || { echo "cluster.sh: nats-server not found (apt-get install nats-server)" >&2; exit 1; }

bin="${TEXTORIGIN_BIN:-}"
if [ -z "$bin" ]; then
  source "$root/scripts/setup.sh"
  bin="$CARGO_TARGET_DIR/release/textorigin"
  [ -x "$bin" ] || (cd "$root" && cargo build --release --locked)
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/textorigin-cluster.XXXXXX")"
pids=()
cleanup() {
  # (Without 2>/dev/null, bash reports each job it sees killed here.)
  for p in "${pids[@]}"; do kill_child 9 "$p"; done 2>/dev/null
  wait 2>/dev/null || true
  if [ "${keep:-0}" = 1 ]; then echo "cluster.sh: logs kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
keep=1

# Free loopback ports: a client and a route port per server.
ports=($(python3 -c '
import socket
ss=[socket.socket() for _ in range(6)]
for s in ss: s.bind(("127.0.0.1",0))
print(" ".join(str(s.getsockname()[1]) for s in ss))'))
routes=""
for i in $(seq 0 $((servers - 1))); do routes+="${routes:+, }nats-route://127.0.0.1:${ports[$((3 + i))]}"; done
urls=""
"$bin" cluster credentials --dir "$work/auth" --shards "$shards" --partitions "$partitions" > "$work/credentials.log"
creds() { echo "--nats-credentials $work/auth/$1.credentials"; }
declare -A server_pid
start_server() {
  local i=$1
  if [ ! -f "$work/n$i.conf" ]; then
    {
      echo "server_name: n$i"
      echo "listen: 127.0.0.1:${ports[$i]}"
      echo "jetstream { store_dir: \"$work/n$i\" }"
      # A document is one record of the log: up to 8 MB (1 MB by default; 64MB at most).
      echo "max_payload: 8MB"
      # Each process its own user, publishing only what it writes (cluster credentials).
      echo "include \"auth/nats-auth.conf\""
      [ "$servers" = 3 ] && echo "cluster { name: txo, listen: 127.0.0.1:${ports[$((3 + i))]}, routes: [$routes] }"
    } > "$work/n$i.conf"
  fi
  nats-server -c "$work/n$i.conf" >> "$work/n$i.log" 2>&1 &
  server_pid[$i]=$!
  pids+=($!)
}
for i in $(seq 0 $((servers - 1))); do
  start_server "$i"
  urls+="${urls:+,}nats://127.0.0.1:${ports[$i]}"
done
export TEXTORIGIN_NATS="$urls"

cfg=()
[ -n "$config" ] && cfg=(--config "$config")
"$bin" cluster init $(creds init) --data "$work/agg" --shards "$shards" --partitions "$partitions" --replicas "$servers" "${cfg[@]}" "${prepared[@]}" 2>> "$work/init.log"
submitted=$(date +%s.%N)
last=$("$bin" cluster submit $(creds submit) --force --json "${corpus[@]}" 2> "$work/submit.log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["last"])')
submit_secs=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$submitted" "$(date +%s.%N)")
echo "cluster.sh: $last documents admitted in $submit_secs s; $shards shard(s), $partitions partition(s), $servers log server(s)" >&2

declare -A cmd
declare -A running
for s in $(seq 0 $((shards - 1))); do
  cmd[w$s]="\"$bin\" cluster worker $(creds w$s) --shard $s --until $last --image \"$work/shard-$s.img\" --state \"$work/w$s\" --checkpoint-secs ${chaos:-30}"
done
if [ "$partitions" = 1 ]; then
  cmd[agg]="\"$bin\" cluster aggregate $(creds agg) --data \"$work/agg\" --until $last --checkpoint-secs ${chaos:-30}"
else
  for p in $(seq 0 $((partitions - 1))); do
    cmd[agg$p]="\"$bin\" cluster aggregate $(creds agg$p) --data \"$work/agg\" --partition $p --until $last --checkpoint-secs ${chaos:-30}"
  done
fi
launch() {
  local name=$1
  bash -c "exec ${cmd[$name]}" >> "$work/$name.log" 2>&1 &
  running[$name]=$!
  pids+=($!)
}
for name in "${!cmd[@]}"; do launch "$name"; done

# Reaps the processes that ended: a success is done, a failure ends the run.
reap() {
  local name p
  for name in "${!running[@]}"; do
    p=${running[$name]}
    kill -0 "$p" 2>/dev/null && continue
    if wait "$p"; then unset "running[$name]"; else
      echo "cluster.sh: $name failed; see $work/$name.log" >&2
      tail -n 5 "$work/$name.log" >&2
      exit 1
    fi
  done
}
kills=0
killed_w="" killed_agg="" killed_server=""
last_server_kill=-100
SECONDS=0
started=$(date +%s.%N)
while :; do
  reap
  [ ${#running[@]} -gt 0 ] || break
  if [ "$SECONDS" -gt 900 ]; then echo "cluster.sh: no end after 900 s" >&2; exit 1; fi
  if [ -z "$chaos" ]; then sleep 0.2; continue; fi
  sleep "$chaos"
  reap
  names=("${!running[@]}")
  [ ${#names[@]} -gt 0 ] || break
  kills=$((kills + 1))
  # A log server at most every 10 s: a 3-server JetStream cluster needs seconds to
  # elect leaders and catch a restarted server up, and killing servers faster than that
  # kept it electing for minutes (seen at --chaos 1 on a loaded machine, and at 2).
  # Until each kind of process has been killed once, the next kind in line (a log
  # server, a worker, the aggregator): a short run still sees every kind of kill.
  first=""
  if [ -z "$killed_server" ] && [ "$servers" = 3 ]; then first=server
  elif [ -z "$killed_w" ]; then first=w
  elif [ -z "$killed_agg" ] && printf '%s\n' "${!running[@]}" | grep -q '^agg'; then first=agg; fi
  if [ "$first" = server ] || { [ -z "$first" ] && [ $((kills % 4)) = 1 ] && [ "$servers" = 3 ] && [ $((SECONDS - last_server_kill)) -ge 10 ]; }; then
    killed_server=1
    last_server_kill=$SECONDS
    i=$((RANDOM % servers))
    kill_child 9 "${server_pid[$i]}"
    { wait "${server_pid[$i]}"; } 2>/dev/null || true
    echo "cluster.sh: chaos: killed log server n$i" >&2
    start_server "$i"
    continue
  fi
  workers=()
  aggs=()
  for n in "${names[@]}"; do if [[ "$n" == agg* ]]; then aggs+=("$n"); else workers+=("$n"); fi; done
  if [ ${#aggs[@]} -gt 0 ] && { [ "$first" = agg ] || { [ -z "$first" ] && [ $((kills % 4)) = 2 ]; }; }; then name=${aggs[$((RANDOM % ${#aggs[@]}))]}
  elif { [ "$first" = w ] || [ $((kills % 4)) = 3 ]; } && [ ${#workers[@]} -gt 0 ]; then name=${workers[$((RANDOM % ${#workers[@]}))]}
  else name=${names[$((RANDOM % ${#names[@]}))]}; fi
  kill_child 9 "${running[$name]}"
  if { wait "${running[$name]}"; } 2>/dev/null; then
    unset "running[$name]" # it had finished before the signal
  else
    echo "cluster.sh: chaos: killed $name" >&2
    case "$name" in agg*) killed_agg=1 ;; w*) killed_w=1 ;; esac
    launch "$name"
  fi
  # Trim the log below every process's oldest checkpoint, as a timer would.
  "$bin" cluster trim $(creds trim) >> "$work/trim.log" 2>&1 || {
    echo "cluster.sh: cluster trim failed; the end of $work/trim.log:" >&2
    tail -n 5 "$work/trim.log" >&2
    exit 1
  }
done
# The processes' time, without the export and the union that follow.
elapsed=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$started" "$(date +%s.%N)")
if [ -n "$chaos" ]; then
  echo "cluster.sh: $(grep -c 'keeps documents' "$work/trim.log" || true) trim(s); last: $(tail -1 "$work/trim.log")" >&2
fi

"$bin" export --data "$work/agg" -o "$out"
if [ -n "$union" ]; then
  images=()
  for s in $(seq 0 $((shards - 1))); do images+=("$work/shard-$s.img"); done
  "$bin" cluster union --json "${images[@]}" > "$union"
fi
for name in $(printf '%s\n' "${!cmd[@]}" | sort); do echo "cluster.sh: $name: $(tail -1 "$work/$name.log")" >&2; done
# The log servers' CPU so far (the kernel's accounting: utime + stime, in clock ticks).
for i in "${!server_pid[@]}"; do
  ticks=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/${server_pid[$i]}/stat" 2>/dev/null || echo "")
  [ -z "$ticks" ] || echo "cluster.sh: log server n$i: cpu $(python3 -c "import sys; print(f'{int(sys.argv[1]) / int(sys.argv[2]):.2f}')" "$ticks" "$(getconf CLK_TCK)") s" >&2
done
echo "cluster.sh: $last documents stored in ${elapsed} s (workers and aggregator started to all done); $kills chaos kill(s)" >&2
keep=0
