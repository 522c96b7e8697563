#!/usr/bin/env bash
# What a 10 s file of an always-on rotation holds on a busy host, ebprof
# against perf: while a CPython loop, one hotcold and `g++ -O2 -c` again
# and again run (a few short-lived processes a second), record
# `ebprof-record -a -F 99 [--call-graph dwarf] --switch-output=10s` for
# 22 s and take its first whole 10 s file apart by `ebprof-report info`'s
# sections; record `perf record -a -F 99 [-g | --call-graph dwarf]` for
# 10 s of the same load. Prints Markdown for docs/performance.md.
# Needs root, linux-perf, g++ and /usr/bin/python3.11 (or python3).
#
# Usage: bench/files.sh [BUILD_DIR]   (env: FREQ=99 SECONDS_PER_FILE=10)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh"
need_perf_and_time
command -v g++ >/dev/null || die "g++ not found: apt-get install g++"
python=$(command -v /usr/bin/python3.11 || command -v python3) || die "no python3"
freq=${FREQ:-99}
every=${SECONDS_PER_FILE:-10}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

# The busy host, for $1 seconds.
load() {
  local end=$((SECONDS + $1))
  "$python" -c "import time
def f(n): return sum(i * i for i in range(n))
t = time.time()
while time.time() - t < $1: f(10000)" &
  "$work" --rounds 1000000 >/dev/null &
  local hot=$!
  while ((SECONDS < end)); do
    g++ -O2 -c -o "$tmp/x.o" "$root/tests/workloads/manystacks.cc"
  done
  kill "$hot" 2>/dev/null || true
  wait
}

# "section bytes" lines of `ebprof-report info` for file $1.
sections() {
  "$report" info -i "$1" | awk '/^section/ { on = 1; next } /^total/ { on = 0 } on && NF >= 3 { print $1, $3 }'
}

echo "| mode | section | bytes |"
echo "|---|---|---:|"
for mode in fp dwarf; do
  flags=(-a -F "$freq")
  [[ $mode == dwarf ]] && flags+=(--call-graph dwarf)
  load $((2 * every + 4)) &
  sleep 1
  "$record" -q "${flags[@]}" --switch-output="${every}s" -o "$tmp/$mode.data" \
    --duration $((2 * every + 2))
  wait
  first=$(find "$tmp" -name "$mode.data.*" | sort | head -1)
  samples=$("$report" info -i "$first" | awk '$1 == "samples" { print $2; exit }')
  while read -r section bytes; do
    echo "| $mode | $section | $bytes |"
  done < <(sections "$first")
  size=$(stat -c %s "$first")
  echo "| $mode | file | $size |"
  echo "| $mode | bytes per sample ($samples samples) | $(div "$size" "$samples" %.1f) |"
  echo "$mode $size $samples" >>"$tmp/ebprof"
done

for mode in fp dwarf; do
  graph=(-g)
  [[ $mode == dwarf ]] && graph=(--call-graph dwarf)
  load $((every + 3)) &
  sleep 1
  perf record -q -a -F "$freq" "${graph[@]}" -o "$tmp/perf-$mode.data" -- sleep "$every" \
    >/dev/null 2>&1
  wait
  size=$(stat -c %s "$tmp/perf-$mode.data")
  samples=$(perf script -i "$tmp/perf-$mode.data" -F time 2>/dev/null | wc -l)
  read -r _ ours ours_samples < <(grep "^$mode " "$tmp/ebprof")
  echo "| $mode | perf bytes per sample ($samples samples) | $(div "$size" "$samples" %.1f) |"
  echo "| $mode | ebprof / perf, per sample | $(awk -v a="$ours" -v b="$ours_samples" -v c="$size" -v d="$samples" 'BEGIN { printf "%.3f", (a / b) / (c / d) }') |"
done
