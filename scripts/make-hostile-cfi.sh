#!/usr/bin/env bash
# Makes tests/data/v1.10-hostile-cfi.data: a recording (--call-graph dwarf)
# of tests/workloads/loopcfi.c, whose embedded CFI has a DWARF expression
# that loops, and its .folded (what any machine's report must print: the
# stack cut where the expression is, the reason counted). A seed of the
# fuzzers too. Needs root and a build (scripts/build.sh loopcfi
# ebprof-record ebprof-report).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
data=$root/tests/data/v1.10-hostile-cfi.data
"$build/record/ebprof-record" -q --call-graph dwarf -F 49 -o "$data" -- "$build/tests/loopcfi" 2
rm -f "$data.old"
"$build/report/ebprof-report" -i "$data" --format folded --symfs /nonexistent-symfs \
  --include-idle >"${data%.data}.folded"
echo "wrote $data and ${data%.data}.folded"
