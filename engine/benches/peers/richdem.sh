#!/usr/bin/env bash
# Runs richdem_fill (richdem 0.3.4's priority floods, the depression-filling peer), building it
# on first use: the richdem source distribution is fetched from PyPI with pip (richdem is
# header-only C++; its Python wheel does not build on Python 3.11, so the headers are used
# directly) and richdem_fill.cpp is compiled against them with g++ -O3.
# Usage: engine/benches/peers/richdem.sh RAW N RUNS barnes2014|zhou2016 [OUT]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${OROGEN_PEER_RICHDEM:-$here/../../../target/peers-richdem}"
if [ ! -x "$dir/richdem_fill" ]; then
    mkdir -p "$dir"
    if [ ! -d "$dir/richdem-0.3.4" ]; then
        python3 -m venv "$dir/venv"
        "$dir/venv/bin/pip" download --quiet --no-deps --no-binary :all: richdem==0.3.4 -d "$dir"
        tar xzf "$dir/richdem-0.3.4.tar.gz" -C "$dir"
    fi
    "${CXX:-g++}" -O3 -march=native -std=c++17 -DNOPROGRESS -I"$dir/richdem-0.3.4/lib" \
        "$here/richdem_fill.cpp" -o "$dir/richdem_fill"
fi
exec "$dir/richdem_fill" "$@"
