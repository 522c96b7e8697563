#!/usr/bin/env bash
# What --off-cpu costs on workloads made of context switches: a pipe
# ping-pong between two threads and a 10 us sleep/wake loop (tests/workloads/
# switches.cc), each run bare, under `ebprof-record` sampling only, and under
# `ebprof-record --off-cpu`, interleaved REPS times; the median of the time
# each run reports for its own work. Also tried: `perf record --off-cpu` and
# bcc's offcputime, where they run on this machine (the table says when
# they do not, and why). Prints Markdown for docs/performance.md.
#
# Usage: bench/offcpu.sh [BUILD_DIR]    (env: REPS=5 PINGPONG=200000 SLEEPS=10000)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh"
need_perf_and_time
switches=$build/tests/switches
[[ -x $switches ]] || die "build first (scripts/build.sh): $switches is missing"
reps=${REPS:-5}
declare -A rounds=([pingpong]=${PINGPONG:-200000} [sleep]=${SLEEPS:-10000})
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# perf and bcc: can they record off-CPU time here at all?
perf_note="runs"
if perf record --off-cpu -q -o "$tmp/perf.data" -- true 2>&1 | grep -q "ignored"; then
  perf_note="not measured: this perf ($(perf version 2>/dev/null)) ignores --off-cpu (built without BUILD_BPF_SKEL=1)"
fi
bcc=$(command -v offcputime-bpfcc || true)
bcc_note="not measured: bcc's offcputime is not installed (apt-get install bpfcc-tools)"
if [[ -n $bcc ]]; then
  if timeout 20 "$bcc" 1 >"$tmp/bcc.out" 2>&1; then
    bcc_note="runs"
  else
    bcc_note="not measured: offcputime-bpfcc fails here: $(grep -m1 -iE 'unable|error|fail|cannot' "$tmp/bcc.out" | cut -c1-160)"
  fi
fi

declare -A times
modes=(bare sampling offcpu)
run_mode() {  # MODE WORKLOAD -> seconds the workload reports
  local out
  case $1 in
    bare) out=$("$switches" "$2" "${rounds[$2]}") ;;
    sampling) out=$("$record" -q -o "$tmp/s.data" -- "$switches" "$2" "${rounds[$2]}") ;;
    offcpu) out=$("$record" -q --off-cpu -o "$tmp/o.data" -- "$switches" "$2" "${rounds[$2]}") ;;
  esac
  echo "$out" | tail -1
}
for workload in pingpong sleep; do
  for ((r = 0; r < reps; r++)); do
    for mode in "${modes[@]}"; do
      times[$workload.$mode]+="$(run_mode "$mode" "$workload") "
    done
  done
done
t() { tr ' ' '\n' <<<"${times[$1]}" | grep . | median; }

echo "Workloads: \`switches pingpong ${rounds[pingpong]}\` (two threads, two pipes) and \`switches sleep ${rounds[sleep]}\` (10 us sleeps); median of $reps interleaved runs of the time each reports."
echo
echo "| workload | bare, s | ebprof sampling (99 Hz), s | ebprof --off-cpu, s | --off-cpu over bare | intervals recorded | lost |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for workload in pingpong sleep; do
  run_mode offcpu "$workload" >/dev/null
  intervals=$("$report" -i "$tmp/o.data" --view offcpu --weight samples -n 1 2>/dev/null |
    awk 'NR == 1 { print $2 }')
  lost=$("$report" info "$tmp/o.data" | awk '$1 == "lost" { print $2 }')
  b=$(t "$workload.bare") s=$(t "$workload.sampling") o=$(t "$workload.offcpu")
  echo "| $workload | $b | $s | $o | $(awk -v a="$o" -v b="$b" 'BEGIN { printf "%+.1f%%", 100 * (a / b - 1) }') | $intervals | $lost |"
done
echo
echo "- perf record --off-cpu: $perf_note."
echo "- bcc offcputime: $bcc_note."
echo
echo "Command: \`REPS=$reps PINGPONG=${rounds[pingpong]} SLEEPS=${rounds[sleep]} bench/offcpu.sh\`; machine: nproc $(nproc), Linux $(uname -r)."
