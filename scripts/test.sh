#!/usr/bin/env bash
# The test suite: installs build dependencies, then runs every test in release mode
# (the same profile as the binary, so RocksDB is compiled once).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cargo test --release --locked "$@"
