#!/usr/bin/env bash
# End-to-end smoke check of the editor under a virtual X server:
# start the editor on an example graph, take a screenshot, check it is not blank.
# With LAYOUT.json, the editor also writes its canvas layout there (the canvas and every
# node's rectangle on screen, from its own layout state) for the caller to check.
#
#   scripts/editor-smoke.sh [EDITOR_BINARY] [GRAPH] [SCREENSHOT.png] [LAYOUT.json]
#
# Needs xvfb-run and imagemagick (`import`, `identify`); Mesa's software OpenGL is enough.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/release/orogen-editor}
GRAPH=${2:-graphs/olsen2004.json}
SHOT=${3:-target/editor-smoke.png}
LAYOUT=${4:-}
WAIT=${OROGEN_SMOKE_WAIT:-90}
# A window with menus, nodes and a hillshaded preview has thousands of colours; a blank window
# a handful, the UI before its first preview a few hundred.
MIN_COLOURS=2000

for tool in xvfb-run import identify; do
  command -v "$tool" >/dev/null || { echo "editor-smoke: $tool not found (apt-get install xvfb xauth imagemagick)" >&2; exit 2; }
done
[ -x "$BIN" ] || { echo "editor-smoke: no editor binary at $BIN (cargo build --release -p orogen-editor)" >&2; exit 2; }

HOME_DIR=$(mktemp -d)
trap 'rm -rf "$HOME_DIR"' EXIT
mkdir -p "$(dirname "$SHOT")"
rm -f "$SHOT"
[ -n "$LAYOUT" ] && rm -f "$LAYOUT"
# Screenshots every half second until the preview is on screen (or WAIT seconds pass).
xvfb-run -a -s "-screen 0 1280x800x24" sh -c "
  '$BIN' --config-dir '$HOME_DIR' --cache '$HOME_DIR/cache' ${LAYOUT:+--layout-report '$LAYOUT'} '$GRAPH' >'$HOME_DIR/editor.log' 2>&1 & APP=\$!
  HALVES=0
  while [ \$HALVES -lt \$(( $WAIT * 2 )) ]; do
    sleep 0.5; HALVES=\$((HALVES + 1))
    import -window root '$SHOT'
    if [ \$(identify -format %k '$SHOT') -ge $MIN_COLOURS ]; then
      [ -z '$LAYOUT' ] && break
      grep -q '\"framed\":true' '$LAYOUT' 2>/dev/null && break
    fi
  done
  echo \$((HALVES / 2)).\$((HALVES % 2 * 5)) > '$HOME_DIR/seconds'
  kill \$APP 2>/dev/null || true
  wait \$APP 2>/dev/null || true
"
[ -s "$SHOT" ] || { echo "editor-smoke: no screenshot written" >&2; cat "$HOME_DIR/editor.log" >&2; exit 1; }
COLOURS=$(identify -format %k "$SHOT")
echo "editor-smoke: $SHOT has $COLOURS distinct colours after $(cat "$HOME_DIR/seconds") s"
if [ "$COLOURS" -lt "$MIN_COLOURS" ]; then
  echo "editor-smoke: the screenshot looks blank or has no preview ($COLOURS colours)" >&2
  cat "$HOME_DIR/editor.log" >&2
  exit 1
fi
