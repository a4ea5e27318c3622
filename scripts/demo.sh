#!/usr/bin/env bash
# The demo: builds textorigin, starts the daemon on a data directory, feeds it the
# sample documents of examples/docs through its spool (an original report, a blog post
# quoting it, a roundup copying both), shows where each passage of the last one came
# from, and stops the daemon. Data goes to ${DATA:-./demo-data}.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cargo build --release --locked
bin="$CARGO_TARGET_DIR/release/textorigin"
data="${DATA:-./demo-data}"
rm -rf "$data"
"$bin" serve --data "$data" &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null || true' EXIT
mkdir -p "$data/spool/tmp" "$data/spool/new"
# The spool contract: write into tmp/, then rename into new/.
for f in examples/docs/*; do
  cp "$f" "$data/spool/tmp/" && mv "$data/spool/tmp/$(basename "$f")" "$data/spool/new/"
  sleep 0.2 # keep the order of arrival visible; a batch found together goes in name order
done
while [ -n "$(ls -A "$data/spool/new")" ]; do sleep 0.1; done
sleep 0.3
echo; "$bin" list --data "$data"
echo; "$bin" show --data "$data" 03-weekly-roundup
echo; "$bin" stats --data "$data"
kill -TERM $daemon; wait $daemon || true
trap - EXIT
echo; echo "the daemon stopped cleanly; run it yourself with: $bin serve --data $data"
