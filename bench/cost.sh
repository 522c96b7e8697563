#!/usr/bin/env bash
# What recording costs, in one run on one machine, ebprof against perf and
# the floor (an empty BPF program on the same perf event, what any BPF
# sampler pays: bpftrace's `profile:hz:F { }`):
#   - per rate (FREQS), system-wide while one `hotcold --rounds N` per CPU
#     runs, for no recorder, the floor, perf -g, perf --call-graph dwarf,
#     ebprof and ebprof --call-graph dwarf, REPS times in a rotating order:
#     the workload's CPU time (user + sys, median, as a ratio to no
#     recorder's), the recorder's own CPU time and its peak RSS (medians),
#     and for ebprof its BPF program's mean ns per sample
#     (kernel.bpf_stats_enabled);
#   - bytes per sample of files of each length in DURATIONS (at each rate
#     of FILE_FREQS), recorded system-wide while one hotcold per CPU runs.
# Prints Markdown for docs/performance.md. Needs root, linux-perf,
# bpftrace, bpftool and GNU time.
#
# Usage: bench/cost.sh [BUILD_DIR]
#   (env: ROUNDS=30000 REPS=3 FREQS="99 999 4999" FILE_FREQS=99 DURATIONS="1 10 60")
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh"
need_perf_and_time
command -v bpftrace >/dev/null || die "bpftrace not found: apt-get install bpftrace"
command -v bpftool >/dev/null || die "bpftool not found: apt-get install bpftool"
rounds=${ROUNDS:-30000}
cmd=()
reps=${REPS:-3}
freqs=${FREQS:-99 999 4999}
file_freqs=${FILE_FREQS:-99}
durations=${DURATIONS:-1 10 60}
ncpu=$(nproc)
tmp=$(mktemp -d)
max_rate=$(sysctl -n kernel.perf_event_max_sample_rate)
stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.perf_event_max_sample_rate="$max_rate" kernel.bpf_stats_enabled="$stats"; rm -rf "$tmp"' EXIT
# perf lowers the limit when sampling takes long; every tool gets the same.
sysctl -qw kernel.perf_event_max_sample_rate=100000 kernel.bpf_stats_enabled=1
configs=(base floor perf-g perf-dwarf ebprof ebprof-dwarf)

# Sets cmd to the recorder of config $1 at rate $2, writing to $3; it runs
# until SIGINT.
recorder() {
  case $1 in
    floor) cmd=(bpftrace -e "profile:hz:$2 { }") ;;
    perf-g) cmd=(perf record -q -a -g -F "$2" -o "$3") ;;
    perf-dwarf) cmd=(perf record -q -a --call-graph dwarf -F "$2" -o "$3") ;;
    ebprof) cmd=("$record" -q -a -F "$2" -o "$3") ;;
    ebprof-dwarf) cmd=("$record" -q -a --call-graph dwarf -F "$2" -o "$3") ;;
  esac
}

# Starts config $1's recorder at rate $2 under GNU time (its CPU and peak
# RSS to $tmp/rec); sets $rec_pid to the recorder's pid, or empty.
start() {
  rec_pid=
  [[ $1 == base ]] && return
  recorder "$1" "$2" "$tmp/$1.data"
  /usr/bin/time -f "%U %S %M" -o "$tmp/rec" "${cmd[@]}" >"$tmp/rec.log" 2>&1 &
  local timer=$!
  sleep 3  # loaded and attached, whoever is slowest
  rec_pid=$(pgrep -P "$timer" | head -1)
  [[ -n $rec_pid ]] || { cat "$tmp/rec.log" >&2; die "$1 at $2 Hz did not start"; }
  timer_pid=$timer
}

stop() {
  [[ -z $rec_pid ]] && return
  kill -INT "$rec_pid"
  wait "$timer_pid" || true
}

# One hotcold per CPU, in the foreground: "user sys" of all of them.
workload() {
  local TIMEFORMAT='%3U %3S'
  { time { for ((i = 0; i < ncpu; i++)); do "$work" --rounds "$rounds" & done; wait; }; } 2>&1
}

# sample_stack's mean run time so far, in ns.
bpf_ns() {
  bpftool prog show name sample_stack 2>/dev/null |
    awk '/run_time_ns/ { for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") c = $(i + 1) } } END { if (c) printf "%.0f", t / c; else printf "-" }'
}

runs=$tmp/runs  # rate config workload_cpu recorder_cpu rss_kb bpf_ns
for f in $freqs; do
  for ((r = 0; r < reps; r++)); do
    for ((k = 0; k < ${#configs[@]}; k++)); do
      c=${configs[(k + r) % ${#configs[@]}]}
      start "$c" "$f"
      read -r u s <<<"$(workload)"
      ns=-
      [[ $c == ebprof* ]] && ns=$(bpf_ns)
      stop
      rec="0 0 0"
      [[ $c != base ]] && rec=$(tail -1 "$tmp/rec")
      read -r ru rs rss <<<"$rec"
      echo "$f $c $(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') \
$(awk -v u="$ru" -v s="$rs" 'BEGIN { print u + s }') $rss $ns" >>"$runs"
    done
  done
done

echo "Workload: one \`hotcold --rounds $rounds\` per CPU ($ncpu), system-wide recorders started"
echo "3 s before it and stopped after it, medians of $reps runs each in a rotating order."
echo "Recorder CPU: user + sys of the recorder process over its whole run (start-up included);"
echo "peak RSS: GNU time's %M. BPF: ebprof's sampling program, kernel.bpf_stats_enabled."
echo
echo "| -F Hz | recorder | workload CPU s | vs none | recorder CPU s | peak RSS MB | BPF ns/sample |"
echo "|---:|---|---:|---:|---:|---:|---:|"
col() { awk -v f="$1" -v c="$2" -v n="$3" '$1 == f && $2 == c { print $n }' "$runs" | median; }
for f in $freqs; do
  base=$(col "$f" base 3)
  for c in "${configs[@]}"; do
    cpu=$(col "$f" "$c" 3)
    if [[ $c == base ]]; then
      echo "| $f | none | $cpu | 1.000x | | | |"
      continue
    fi
    ns=-
    [[ $c == ebprof* ]] && ns=$(awk -v f="$f" -v c="$c" '$1 == f && $2 == c { print $6 }' "$runs" | median)
    echo "| $f | $c | $cpu | $(ratio "$cpu" "$base") | $(col "$f" "$c" 4) |" \
      "$(div "$(col "$f" "$c" 5)" 1000 "%.1f") | $ns |"
  done
done

echo
echo "Files recorded system-wide for each length while one hotcold per CPU runs:"
echo
echo "| -F Hz | length s | recorder | bytes | samples | bytes/sample | vs perf of its mode |"
echo "|---:|---:|---|---:|---:|---:|---:|"
for f in $file_freqs; do
  for d in $durations; do
    declare -A per_sample=()
    for c in perf-g perf-dwarf ebprof ebprof-dwarf; do
      data=$tmp/$c-$d.data
      for ((i = 0; i < ncpu; i++)); do "$work" $((d + 2)) & done
      sleep 0.5
      recorder "$c" "$f" "$data"
      case $c in
        perf-*) "${cmd[@]}" -- sleep "$d" >/dev/null 2>&1
          n=$(perf report -i "$data" --stats 2>/dev/null | awk '/SAMPLE events/ { print $3; exit }') ;;
        ebprof*) "${cmd[@]}" --duration "$d"
          n=$("$report" info -i "$data" 2>/dev/null | awk '$1 == "samples" { print $2; exit }') ;;
      esac
      wait
      bytes=$(stat -c %s "$data")
      per_sample[$c]=$(div "$bytes" "$n" "%.1f")
      vs=
      [[ $c == ebprof ]] && vs=$(div "${per_sample[ebprof]}" "${per_sample[perf-g]}" "%.3f")
      [[ $c == ebprof-dwarf ]] && vs=$(div "${per_sample[ebprof-dwarf]}" "${per_sample[perf-dwarf]}" "%.3f")
      echo "| $f | $d | $c | $bytes | $n | ${per_sample[$c]} | $vs |"
      rm -f "$data"
    done
  done
done
echo
echo "Command: \`ROUNDS=$rounds REPS=$reps FREQS=\"$freqs\" FILE_FREQS=\"$file_freqs\" DURATIONS=\"$durations\" bench/cost.sh\`;" \
  "machine: nproc $ncpu, $(uname -r), $(perf version)."
