#!/usr/bin/env bash
# How fast a browser opens the flame graph page of a large profile: 100k
# distinct stacks (the page report_tests writes as a test artifact), against
# the page of a small profile, so that the browser's own start-up cancels
# out. Headless chromium loads each page and dumps the drawn DOM; median of
# REPS runs. Prints Markdown for docs/performance.md.
#
# Usage: bench/flamegraph.sh [BUILD_DIR]    (env: REPS=5)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh"
command -v chromium >/dev/null || die "chromium not found: apt-get install chromium"
reps=${REPS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$build/tests/report_tests" --gtest_filter=FlameGraph.AHundredThousandStacksDrawABoundedPage \
  >/dev/null || die "report_tests could not write the 100k-stack page"
big=$build/test-artifacts/flame-100k.html
"$record" -q -F 499 -o "$tmp/small.data" -- "$work" 1
"$report" -i "$tmp/small.data" --format flamegraph -o "$tmp/small.html"

load() {
  local TIMEFORMAT=%3R
  { time chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
      --window-size=1280,800 --dump-dom "file://$1#redraw" >"$tmp/dom" 2>/dev/null; } 2>&1
}
small_times="" big_times=""
for ((r = 0; r < reps; r++)); do
  small_times+="$(load "$tmp/small.html") "
  big_times+="$(load "$big") "
done
small=$(tr ' ' '\n' <<<"$small_times" | grep . | median)
large=$(tr ' ' '\n' <<<"$big_times" | grep . | median)
elements=$(grep -o 'class="f' "$tmp/dom" | wc -l)
# What the page measured itself: parsing and building the tree plus the
# first drawing, and one redraw (what a click to zoom or a search costs).
in_page=$(grep -o 'data-render-ms="[0-9.]*" data-load-ms="[0-9.]*"' "$tmp/dom" | tr -dc '0-9. ' | tr -s ' ')
read -r render_ms load_ms <<<"$in_page"

echo "| page | bytes | browser load + draw, s (median of $reps) | over the small page, s | frame elements drawn | in page: parse, build, first draw, ms | one redraw, ms |"
echo "|---|---:|---:|---:|---:|---:|---:|"
echo "| hotcold, 1 s at 499 Hz | $(stat -c %s "$tmp/small.html") | $small | - | - | - | - |"
echo "| 100k distinct stacks | $(stat -c %s "$big") | $large | $(awk -v a="$large" -v b="$small" 'BEGIN { printf "%.3f", a - b }') | $elements | $load_ms | $render_ms |"
echo
echo "Command: \`REPS=$reps bench/flamegraph.sh\`; machine: nproc $(nproc), $(chromium --version 2>/dev/null)."
