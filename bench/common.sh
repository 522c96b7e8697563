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

# Median of the numbers on stdin, one a line.
median() {
  sort -g | awk '{ v[NR] = $1 } END { printf "%.10g\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# "1.012x (+1.2%)": $1 against $2.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3fx (%+.1f%%)", a / b, 100 * (a - b) / b }'; }
# $1 / $2, printed with format $3.
div() { awk -v a="$1" -v b="$2" -v fmt="$3" 'BEGIN { printf fmt, a / b }'; }
