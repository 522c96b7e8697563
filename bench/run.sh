#!/usr/bin/env bash
# ebprof side by side with perf, in one run on one machine:
#   - recording overhead on a CPU-bound workload (one hotcold per CPU),
#     system-wide, at 99, 999 and 4999 Hz: ebprof-record -a vs perf record -g -a;
#   - file size and bytes per sample for the same runs;
#   - report time: ebprof-report --format folded vs perf script and perf report.
# Prints a Markdown section for docs/performance.md. Needs root and linux-perf.
#
# Usage: bench/run.sh [BUILD_DIR]     (env: ROUNDS=45000 REPS=3 FREQS="99 999 4999")
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
record=$build/record/ebprof-record
report=$build/report/ebprof-report
work=$build/tests/hotcold
rounds=${ROUNDS:-45000}
reps=${REPS:-3}
freqs=${FREQS:-99 999 4999}
command -v perf >/dev/null || { echo "bench: perf not found: apt-get install linux-perf" >&2; exit 1; }
[[ -x $record && -x $work ]] || { echo "bench: build first (scripts/build.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
# One hotcold per CPU, all with the same fixed work; prints the wall time.
workload() {
  local start pids=()
  start=$(now)
  for ((i = 0; i < $(nproc); i++)); do "$work" --rounds "$rounds" & pids+=($!); done
  wait "${pids[@]}"
  awk -v s="$start" -v e="$(now)" 'BEGIN { printf "%.3f", e - s }'
}
median() { tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# Runs the workload under a recorder started in the background ($@), stops
# the recorder with SIGINT; prints the workload's wall time.
under() {
  local log=$1; shift
  "$@" >"$log" 2>&1 &
  local rec=$!
  sleep 1
  local t; t=$(workload)
  kill -INT "$rec"; wait "$rec" || true
  echo "$t"
}
samples_in() { grep -oE '\(([0-9]+) samples' "$1" | grep -oE '[0-9]+' | tail -1; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", 100 * (a - b) / b }'; }

echo "| -F Hz | baseline s | perf record -g -a | ebprof-record -a | perf.data bytes (samples, B/sample) | ebprof.data bytes (samples, B/sample) | size ebprof/perf |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for f in $freqs; do
  base=() perf_t=() ebp_t=()
  for ((r = 0; r < reps; r++)); do
    base+=("$(workload)")
    perf_t+=("$(under "$tmp/perf.log" perf record -g -a -e cpu-clock -F "$f" -o "$tmp/perf.data")")
    ebp_t+=("$(under "$tmp/ebprof.log" "$record" -a -F "$f" -o "$tmp/ebprof.data")")
  done
  b=$(echo "${base[*]}" | median) p=$(echo "${perf_t[*]}" | median) e=$(echo "${ebp_t[*]}" | median)
  ps=$(stat -c %s "$tmp/perf.data") es=$(stat -c %s "$tmp/ebprof.data")
  pn=$(samples_in "$tmp/perf.log") en=$(samples_in "$tmp/ebprof.log")
  printf "| %s | %s | %s (%s) | %s (%s) | %s (%s, %s) | %s (%s, %s) | %s |\n" "$f" "$b" \
    "$p" "$(pct "$p" "$b")" "$e" "$(pct "$e" "$b")" \
    "$ps" "$pn" "$((ps / pn))" "$es" "$en" "$((es / en))" \
    "$(awk -v a="$es" -v b="$ps" 'BEGIN { printf "%.2f", a / b }')"
  [[ $f == 999 ]] && cp "$tmp/perf.data" "$tmp/perf999.data" && cp "$tmp/ebprof.data" "$tmp/ebprof999.data"
done

if [[ -f $tmp/ebprof999.data ]]; then
  timeit() { local s; s=$(now); "$@" >/dev/null 2>&1; awk -v s="$s" -v e="$(now)" 'BEGIN { printf "%.3f", e - s }'; }
  # Warm the page cache and perf's symbol caches once, then time.
  perf script -i "$tmp/perf999.data" >/dev/null 2>&1
  "$report" -i "$tmp/ebprof999.data" --format folded >/dev/null
  es=$(timeit "$report" -i "$tmp/ebprof999.data" --format folded)
  ps=$(timeit perf script -i "$tmp/perf999.data")
  pr=$(timeit perf report --stdio -i "$tmp/perf999.data")
  echo
  echo "| report of the 999 Hz recording | seconds | ebprof speed-up |"
  echo "|---|---:|---:|"
  echo "| ebprof-report --format folded | $es | 1.0x |"
  echo "| perf script | $ps | $(awk -v a="$ps" -v b="$es" 'BEGIN { printf "%.1fx", a / b }') |"
  echo "| perf report --stdio | $pr | $(awk -v a="$pr" -v b="$es" 'BEGIN { printf "%.1fx", a / b }') |"
fi
