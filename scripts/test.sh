#!/usr/bin/env bash
# The test suite: installs build dependencies, then runs every test in release mode
# (the same profile as the binary, so RocksDB is compiled once).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
# The HTML pages are tested in headless Chromium.
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium
fi
cargo test --release --locked "$@"
