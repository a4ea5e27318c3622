#!/bin/sh
# Fuzzing on stable Rust (issue 11): the property tests named fuzz_* (input parsers,
# table header reader, checkpoint-slot loader, derived indexes' generators are the
# proptests beside them) with many cases. CI runs them with proptest's default 256.
#   scripts/fuzz.sh [CASES]     (default 1000000 per test)
# A failing case is printed with its seed and saved by proptest under
# proptest-regressions/; commit that file: it is replayed first on every run.
set -eu
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/textorigin-target}"
CASES="${1:-1000000}"
PROPTEST_CASES="$CASES" cargo test --release --locked --workspace --features textorigin/failpoints --lib fuzz_ -- --nocapture
echo "fuzzing: $CASES cases per fuzz_* test, no failure"
