#!/usr/bin/env bash
# The Python package's check (issue 24): builds the wheel with maturin, installs it
# into a fresh virtual environment and runs its tests (pytest) against the command-line
# binary of the same build. Run by scripts/test.sh after the Rust tests; alone:
#   bash scripts/python.sh [PYTEST ARGS]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
# Debian's python3 keeps venv and ensurepip in a package of their own.
if ! python3 -c "import venv, ensurepip" >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv
fi
venv="$CARGO_TARGET_DIR/python-venv"
rm -rf "$venv" "$CARGO_TARGET_DIR/wheels"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.9,<2" pytest pyarrow
# The same profile and target directory as the rest: RocksDB is not compiled again.
"$venv/bin/maturin" build --release --locked --quiet -m crates/python/Cargo.toml -o "$CARGO_TARGET_DIR/wheels"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$CARGO_TARGET_DIR"/wheels/textorigin-*.whl
# With the test run's features: the binary it built, not a second build.
cargo build --release --locked --quiet --features textorigin/failpoints --bin textorigin
# A hang (a deadlock between the GIL and the writer) fails the check instead of CI.
TEXTORIGIN_BIN="$CARGO_TARGET_DIR/release/textorigin" timeout 600 "$venv/bin/pytest" -q crates/python/tests "$@"
