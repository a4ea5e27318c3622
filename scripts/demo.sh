#!/usr/bin/env bash
# The demo: builds textorigin, feeds it the sample documents in examples/docs (an
# original report, a blog post quoting it, a roundup copying both) and shows where
# each passage of the last one came from. Data goes to ${DATA:-./demo-data}.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cargo build --release --locked
bin="$CARGO_TARGET_DIR/release/textorigin"
data="${DATA:-./demo-data}"
rm -rf "$data"
"$bin" ingest --data "$data" --table-size 16MiB examples/docs
echo; "$bin" list --data "$data"
echo; "$bin" show --data "$data" 03-weekly-roundup
echo; "$bin" stats --data "$data"
