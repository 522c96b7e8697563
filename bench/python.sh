#!/usr/bin/env bash
# What reading CPython's frames costs, in one run on one machine: a
# CPU-bound Python loop at a Python stack depth of 10 and of 50 (one copy
# per CPU, Debian's python3.11) recorded at -F with and without
# --no-python:
#   - the BPF sampling program's mean run time per sample
#     (kernel.bpf_stats_enabled);
#   - the workload's throughput (rounds of its loop in the same wall time)
#     against a run with no recorder (medians of REPS interleaved runs);
#   - the recorder's CPU time and peak RSS over one recording;
#   - bytes per sample of the file, and the report's time per sample
#     (--format folded, median of REPS).
# Prints Markdown for docs/performance.md. Needs root, bpftool and GNU time.
#
# Usage: bench/python.sh [BUILD_DIR]    (env: F=999 SECONDS_EACH=3 REPS=5 DEPTHS="10 50")
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh"
f=${F:-999}
secs=${SECONDS_EACH:-3}
reps=${REPS:-5}
depths=${DEPTHS:-10 50}
python=/usr/bin/python3.11
[[ -x $python ]] || die "$python not found: apt-get install python3.11"
tmp=$(mktemp -d)
old=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$old"; rm -rf "$tmp"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1
n=$(nproc)

# Rounds the loop made in all, one copy per CPU at depth $1 for the same
# wall time, under "$2" (a recorder command line, or nothing).
workload_rounds() {
  local depth=$1 recorder=$2
  local cmd="for ((i = 0; i < $n; i++)); do $python $root/bench/pydepth.py $depth $secs & done; wait"
  if [[ -z $recorder ]]; then
    bash -c "$cmd"
  else
    $recorder -- bash -c "$cmd"
  fi | awk '{ s += $1 } END { print s }'
}

echo "| depth | mode | BPF ns/sample | workload throughput lost | recorder CPU s | recorder peak RSS MB | bytes/sample | report us/sample |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|"
for d in $depths; do
  for mode in python native; do
    flag=$([[ $mode == native ]] && echo --no-python || true)
    rec="$record -q -F $f $flag -o $tmp/$mode.data"
    base=() with=()
    for ((r = 0; r < reps; r++)); do
      base+=("$(workload_rounds "$d" "")")
      with+=("$(workload_rounds "$d" "$rec")")
    done
    # The BPF cost and the recorder's own CPU and memory (-a, so that the
    # workload is not its child), read while the program is loaded.
    /usr/bin/time -f "%U %S %M" -o "$tmp/recorder" $record -q -a -F "$f" $flag \
      --duration $((secs + 1)) -o "$tmp/a.data" &
    recorder=$!
    sleep 0.5
    for ((i = 0; i < n; i++)); do $python "$root/bench/pydepth.py" "$d" "$secs" >/dev/null & done
    sleep $((secs - 1))
    bpftool prog show name sample_stack >"$tmp/stats"
    wait
    read -r ru rs rkb <"$tmp/recorder"
    read -r _ ns _ cnt < <(grep -oE 'run_time_ns [0-9]+ run_cnt [0-9]+' "$tmp/stats")
    samples=$("$report" info "$tmp/$mode.data" | awk '$1 == "samples" { print $2; exit }')
    bytes=$(stat -c %s "$tmp/$mode.data")
    times=()
    for ((r = 0; r < reps; r++)); do
      start=$(date +%s%N)
      "$report" -i "$tmp/$mode.data" --format folded -o "$tmp/out.folded"
      times+=($(($(date +%s%N) - start)))
    done
    b=$(printf '%s\n' "${base[@]}" | median)
    w=$(printf '%s\n' "${with[@]}" | median)
    t=$(printf '%s\n' "${times[@]}" | median)
    lost=$(awk -v b="$b" -v w="$w" 'BEGIN { printf "%.1f%%", 100 * (b - w) / b }')
    echo "| $d | $mode | $(div "$ns" "$cnt" %.0f) | $lost | $(awk -v u="$ru" -v s="$rs" 'BEGIN { printf "%.2f", u + s }') | $(div "$rkb" 1024 %.1f) | $(div "$bytes" "$samples" %.1f) | $(div "$t" "$((samples * 1000))" %.2f) |"
  done
done
