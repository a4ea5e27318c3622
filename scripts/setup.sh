#!/usr/bin/env bash
# Installs what building textorigin needs on a fresh Debian machine: libclang (for
# librocksdb-sys's bindings) and a C++ compiler; Rust itself comes from rustup.
set -euo pipefail
need=()
dpkg -s libclang-dev >/dev/null 2>&1 || need+=(libclang-dev)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || need+=(make)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust with rustup (https://rustup.rs) and run again" >&2
  exit 1
fi
# Builds share one target directory outside the clone, so that RocksDB's C++ (15-30
# minutes on 2 cores) is compiled once per machine, not once per checkout.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/textorigin-target}"
mkdir -p "$CARGO_TARGET_DIR"
