#!/usr/bin/env bash
# Run time of ebprof's BPF sampling program per sample, from the kernel's own
# accounting (kernel.bpf_stats_enabled: total run time and run count of each
# program; so this is a mean, not a median). System-wide at each -F while
# one hotcold per CPU runs. Prints a Markdown table. Needs root and bpftool.
#
# Usage: bench/bpf_cost.sh [BUILD_DIR]    (env: FREQS="99 999 4999" SECONDS_EACH=3)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh"
freqs=${FREQS:-99 999 4999}
secs=${SECONDS_EACH:-3}
tmp=$(mktemp -d)
old=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$old"; rm -rf "$tmp"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1

echo "| -F Hz | program runs | mean ns per run |"
echo "|---:|---:|---:|"
for f in $freqs; do
  "$record" -q -a -F "$f" --duration $((secs + 1)) -o "$tmp/r.data" &
  rec=$!
  sleep 0.5  # let it load and attach
  pids=()
  for ((i = 0; i < $(nproc); i++)); do "$work" "$secs" & pids+=($!); done
  # Read the counters while the program is still loaded.
  sleep "$secs"
  stats=$(bpftool prog show name sample_stack | grep -oE 'run_time_ns [0-9]+ run_cnt [0-9]+')
  wait "${pids[@]}" "$rec"
  read -r _ ns _ cnt <<<"$stats"
  echo "| $f | $cnt | $(awk -v n="$ns" -v c="$cnt" 'BEGIN { printf "%.0f", n / c }') |"
done
