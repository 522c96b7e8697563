# shellcheck shell=bash
# Sourced by the bench/ scripts: where the build is, how to fail, and which
# tools a side-by-side with perf needs. Usage: source common.sh [BUILD_DIR]
export LC_ALL=C  # decimal points, for printf, sort -g and awk
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
record=$build/record/ebprof-record
report=$build/report/ebprof-report
work=$build/tests/hotcold
die() { echo "bench: $*" >&2; exit 1; }
[[ -x $record && -x $report && -x $work ]] || die "build first (scripts/build.sh)"

# perf to compare with, and GNU time for peak memory.
need_perf_and_time() {
  command -v perf >/dev/null || die "perf not found: apt-get install linux-perf"
  /usr/bin/time -f %M -o /dev/null true 2>/dev/null || die "GNU time not found: apt-get install time"
}
