#!/usr/bin/env bash
# UI frame times while an erosion node evaluates at 1024²: runs the editor under Xvfb on
# graphs/olsen2004.json with previews refining to 1024², moves the mouse over the canvas
# (every move asks for a frame) and summarises the frames logged while a node was running.
#
#   scripts/editor-frame-times.sh [EDITOR_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/release/orogen-editor}
LOG=$(mktemp)
HOME_DIR=$(mktemp -d)
trap 'rm -rf "$HOME_DIR" "$LOG"' EXIT
xvfb-run -a -s "-screen 0 1280x800x24" sh -c "
  '$BIN' --config-dir '$HOME_DIR' --refine-res 1024 --frame-log '$LOG' graphs/olsen2004.json >/dev/null 2>&1 & APP=\$!
  sleep 1
  W=\$(xdotool search --sync --name Orogen | head -1)
  xdotool windowfocus \$W
  for i in \$(seq 1 300); do xdotool mousemove \$((300 + (i * 7) % 500)) \$((200 + (i * 13) % 400)); sleep 0.02; done
  kill \$APP; wait \$APP 2>/dev/null || true
"
summary() {
  sort -n | awk '{a[NR]=$1} END {if (NR == 0) {print "no frames"; exit} printf "frames %d  median %.1f ms  p95 %.1f ms  max %.1f ms\n", NR, a[int((NR+1)/2)], a[int(NR*0.95+0.5)], a[NR]}'
}
echo "while a node evaluates (frame interval):"; awk '$4 > 0 {print $2}' "$LOG" | summary
echo "while a node evaluates (UI build time):"; awk '$4 > 0 {print $3}' "$LOG" | summary
echo "idle (frame interval):"; awk '$4 == 0 {print $2}' "$LOG" | summary
