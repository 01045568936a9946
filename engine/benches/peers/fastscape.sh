#!/usr/bin/env bash
# Runs a fastscapelib peer script in its own virtualenv, creating it (python3 -m venv + pip
# install fastscapelib==0.3.0 numpy) on first use: fastscape_mountain.py (stream power), or the
# script named by OROGEN_PEER (e.g. fastscape_flow.py, flow routing), with the arguments given.
# Usage: engine/benches/peers/fastscape.sh [size] [steps] [runs]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${OROGEN_PEER_VENV:-$here/../../../target/peers-venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet fastscapelib==0.3.0 numpy
fi
exec "$venv/bin/python" "$here/${OROGEN_PEER:-fastscape_mountain.py}" "$@"
