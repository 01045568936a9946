#!/usr/bin/env bash
# The Python package's tests: builds the extension module `orogen._orogen` with cargo (the
# debug profile `cargo test` already compiled the engine and its dependencies in) into
# python/orogen/, then runs pytest on python/tests with the command line beside it
# (target/debug/orogen: the tests compare the package's bytes and messages with it).
# Users install the package with `pip install ./python` (maturin builds a release wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q -p orogen-py -p orogen -p orogen-editor --lib --bin orogen
target=${CARGO_TARGET_DIR:-target}
cp "$target/debug/lib_orogen.so" python/orogen/_orogen.abi3.so
OROGEN_BIN="$target/debug/orogen" PYTHONPATH=python python3 -m pytest -q python/tests
