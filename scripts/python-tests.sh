#!/usr/bin/env bash
# The Python package's tests: builds the extension module `orogen._orogen` with cargo (the
# debug profile `cargo test` already compiled the engine and its dependencies in) into
# python/orogen/, then runs pytest on python/tests with the command line beside it
# (target/debug/orogen: the tests compare the package's bytes and messages with it).
# Users install the package with `pip install ./python` (maturin builds a release wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
# The workspace's tests are named so that cargo resolves the features `cargo test --workspace`
# resolved (dev-dependencies turn some on): with `--lib --bin` alone the engine and ~20
# dependencies were compiled a second time (≈ 160 s on 2 cores), for the same code.
cargo build -q --workspace --lib --bins --tests
target=${CARGO_TARGET_DIR:-target}
cp "$target/debug/lib_orogen.so" python/orogen/_orogen.abi3.so
# The first interpreter with numpy and pytest: the one on PATH (a pyenv or venv), else the
# system's (Debian's python3-numpy and python3-pytest, which .ci/run installs).
# One with mypy too is preferred (the type-check test skips without it).
py=""
for modules in "numpy, pytest, mypy" "numpy, pytest"; do
  for candidate in python3 /usr/bin/python3; do
    if "$candidate" -c "import $modules" >/dev/null 2>&1; then py=$candidate; break 2; fi
  done
done
if [ -z "$py" ]; then
  echo "python-tests: no python3 with numpy and pytest (apt install python3-numpy python3-pytest, or pip install numpy pytest)" >&2
  exit 1
fi
OROGEN_BIN="$target/debug/orogen" PYTHONPATH=python "$py" -m pytest -q -p no:cacheprovider python/tests
