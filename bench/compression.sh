#!/usr/bin/env bash
# What compression and symbol embedding cost and save, measured on the same
# kind of recording: system-wide at 999 Hz while one hotcold per CPU runs
# fixed work. For each setting: file size, bytes per sample, and the
# recorder's own CPU time (user + sys of ebprof-record alone).
# Prints a Markdown table for docs/performance.md. Needs root.
#
# Usage: bench/compression.sh [BUILD_DIR]    (env: ROUNDS=30000)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh"
rounds=${ROUNDS:-30000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Runs the recorder in the background for the workload's lifetime and
# prints "bytes samples cpu_seconds".
measure() {
  local out=$tmp/r.data
  ( TIMEFORMAT='%U %S'; { time "$record" -a -F 999 -o "$out" "$@" 2>"$tmp/log"; } 2>"$tmp/time" ) &
  local rec=$!
  sleep 1
  local pids=()
  for ((i = 0; i < $(nproc); i++)); do "$work" --rounds "$rounds" & pids+=($!); done
  wait "${pids[@]}"
  pkill -INT -f "ebprof-record -a -F 999 -o $out" || true
  wait "$rec" || true
  local samples cpu
  samples=$(grep -oE '\(([0-9]+) samples' "$tmp/log" | grep -oE '[0-9]+')
  cpu=$(awk '{ printf "%.3f", $1 + $2 }' "$tmp/time")
  echo "$(stat -c %s "$out") $samples $cpu"
}

echo "| setting | bytes | samples | bytes/sample | recorder CPU s |"
echo "|---|---:|---:|---:|---:|"
for setting in "--compression none --no-embed-symbols" "--compression zstd:1 --no-embed-symbols" \
               "--compression zstd:3 --no-embed-symbols" "--compression zstd:9 --no-embed-symbols" \
               "--compression zstd:19 --no-embed-symbols" "--compression zstd:3"; do
  # shellcheck disable=SC2086
  read -r bytes samples cpu < <(measure $setting)
  printf "| \`%s\` | %s | %s | %.1f | %s |\n" "$setting" "$bytes" "$samples" \
    "$(awk -v b="$bytes" -v s="$samples" 'BEGIN { print b / s }')" "$cpu"
done
