#!/usr/bin/env bash
# The wheel to hand to a colleague or a render farm: builds the `orogen` Python package as a
# manylinux2014 abi3 wheel (maturin, linked by zig against glibc 2.17: it loads on any x86-64
# Linux of the last decade, every CPython from 3.8), installs it into a fresh venv with no Rust
# toolchain on PATH, builds the flagship from it and compares the heights with the command
# line's, bit for bit.
#
#   scripts/wheel-check.sh [OUT_DIR]        (default target/wheels; the wheel stays there)
#
# Needs python3 with venv, pip access to PyPI (maturin, ziglang and numpy are installed into
# throw-away venvs) and the Rust toolchain for the build itself; a release build of the
# package takes about 6 minutes on 2 cores. Not run by CI (its budget); its last output is in
# docs/python.md's header.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-target/wheels}
TOOLS=$(mktemp -d)
trap 'rm -rf "$TOOLS"' EXIT
python3 -m venv "$TOOLS/build"
"$TOOLS/build/bin/pip" install -q "maturin>=1.5,<2" ziglang
# maturin finds zig through the Python on PATH (ziglang is installed in the build venv).
PATH="$TOOLS/build/bin:$PATH" maturin build --release --strip --zig \
  --compatibility manylinux2014 -m python/Cargo.toml -o "$OUT"
wheel=$(ls -t "$OUT"/orogen-*manylinux*2014*.whl | head -n 1)
echo "wheel: $wheel ($(du -h "$wheel" | cut -f1))"
# The command line's heights to compare with (release build).
cargo build -q --release -p orogen
target/release/orogen build graphs/alpine_valley.json --size 256 --format f32 --no-preview \
  --no-cache -o "$TOOLS/cli" >/dev/null
python3 -m venv "$TOOLS/use"
# A machine without Rust: a bare PATH, a fresh HOME.
bare=(env -i "HOME=$TOOLS" "PATH=/usr/bin:/bin")
"${bare[@]}" "$TOOLS/use/bin/pip" install -q "$wheel"
"${bare[@]}" "$TOOLS/use/bin/python" - "$TOOLS/cli" <<'PY'
import shutil, sys, time
import numpy as np
import orogen
assert shutil.which("cargo") is None and shutil.which("rustc") is None, "Rust on PATH"
g = orogen.Graph.load("graphs/alpine_valley.json")
t = time.time()
out = g.build(size=256)
took = time.time() - t
want = np.fromfile(f"{sys.argv[1]}/height.f32", dtype="<f4").reshape(256, 256)
assert out["height"].tobytes() == want.tobytes(), "the wheel's heights differ from the CLI's"
print(f"orogen {orogen.__version__} from the wheel: the flagship at 256² in {took:.1f} s, "
      f"{len(out)} outputs, heights bit-identical to the command line's")
PY
