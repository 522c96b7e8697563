#!/usr/bin/env bash
# The README's first command: set up, build, record a few seconds of the demo
# workload and print the report. Leaves the recording, folded stacks and an
# HTML flame graph in build/demo/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
# Only what the demo runs: the test suite is the other command's.
"$root/scripts/build.sh" ebprof-record ebprof-report hotcold >/dev/null

build=$root/build
out=$build/demo
mkdir -p "$out"
"$build/record/ebprof-record" -F 999 -o "$out/demo.data" -- "$build/tests/hotcold" 3
"$build/report/ebprof-report" -i "$out/demo.data" --format folded >"$out/demo.folded"
"$build/report/ebprof-report" -i "$out/demo.data" --format flamegraph -o "$out/demo.html"
"$build/report/ebprof-report" -i "$out/demo.data" -n 15
echo
echo "recording: $out/demo.data   folded stacks (flamegraph.pl input): $out/demo.folded"
echo "flame graph (open in a browser, works offline): $out/demo.html"
