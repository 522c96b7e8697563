#!/usr/bin/env bash
# ebprof side by side with perf, in one run on one machine:
#   - recording overhead on fixed CPU-bound work (one `hotcold --rounds N` per
#     CPU), system-wide, at 99, 999 and 4999 Hz: no recorder vs
#     `perf record -g -a -e cpu-clock` vs `ebprof-record -a`. The three are
#     interleaved A/B: each repetition runs all three, in an order that rotates
#     from one repetition to the next, so drift on a noisy VM hits all alike.
#     Each recorder launches the workload as its command, so it samples from
#     just before the work to just after it. Per rate: median wall time and
#     median CPU time (user + sys) of the workload, as ratios to the
#     baseline's medians, and the recorder's own CPU time (the recorder's
#     cost is its own CPU plus how much it slows the workload);
#   - file size and bytes per sample for the same runs, ebprof/perf;
#   - samples recorded against what cpu-clock fires (F x CPUs x the span
#     from first to last sample), and losses;
#   - report time and peak memory (max RSS) on the 999 Hz recordings:
#     ebprof-report --format folded vs perf script and perf report --stdio.
# Prints Markdown for docs/performance.md. Needs root, linux-perf and GNU time
# (/usr/bin/time, for max RSS).
#
# Usage: bench/run.sh [BUILD_DIR]     (env: ROUNDS=45000 REPS=5 FREQS="99 999 4999")
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh"
need_perf_and_time
rounds=${ROUNDS:-45000}
reps=${REPS:-5}
freqs=${FREQS:-99 999 4999}
ncpu=$(nproc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=$tmp/runs  # one line per run: rate config wall cpu rec_cpu bytes samples lost expected span
max_rate_before=$(sysctl -n kernel.perf_event_max_sample_rate)

# The workload, run by a bash of its own so that a recorder can launch it as
# its command: recording then starts just before the work and stops just
# after it, with no idle second to wait out the recorder's start-up (idle
# CPUs are sampled erratically on this VM, which would blur the sample
# accounting). Writes "wall user sys" of the copies to $4; bash's `time`
# counts the CPU of the children it reaped.
# Args: hotcold rounds copies out-file.
# shellcheck disable=SC2016  # expanded by the inner bash
inner='TIMEFORMAT="%3R %3U %3S"
{ time { for ((i = 0; i < $3; i++)); do "$1" --rounds "$2" & done; wait; }; } 2>"$4"'
workload=(bash -c "$inner" workload "$work" "$rounds" "$ncpu" "$tmp/inner")

# Runs one configuration at rate $2 and appends its line to $runs.
# $1: base (no recorder), perf or ebprof.
run_one() {
  local config=$1 f=$2 rec log=$tmp/$1.log data=$tmp/$1.data
  case $config in
    base) rec=() ;;
    perf) rec=(perf record -g -a -e cpu-clock -F "$f" -o "$data" --) ;;
    ebprof) rec=("$record" -a -F "$f" -o "$data" --) ;;
  esac
  # The outer `time` counts the recorder and, once reaped, the workload;
  # the recorder's own CPU is the difference.
  local TIMEFORMAT='%3U %3S'
  if ! { time "${rec[@]}" "${workload[@]}" >"$log" 2>&1; } 2>"$tmp/outer"; then
    cat "$log" >&2; die "$config at $f Hz failed"
  fi
  local wall u s ou os
  read -r wall u s <"$tmp/inner" || true
  read -r ou os <"$tmp/outer" || true
  [[ -n ${s:-} && -n ${os:-} ]] || die "$config at $f Hz: no times from the workload or the recorder"
  local cpu rec_cpu bytes=- samples=- lost=- expected=- span=-
  cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.3f", u + s }')
  rec_cpu=$(awk -v a="$ou" -v b="$os" -v c="$cpu" 'BEGIN { printf "%.3f", a + b - c }')
  if [[ $config == perf ]]; then
    samples=$(sed -nE 's/.*\[ perf record: Captured and wrote .*\(([0-9]+) samples\) \].*/\1/p' "$log")
    # perf prints no lost count: take the LOST records in the file (the
    # first line is the aggregate; per-event stats may repeat it).
    lost=$(perf report --stats -i "$data" 2>/dev/null | awk '$1 == "LOST" && !seen++ { n = $3 } END { print n + 0 }')
    # "# sample duration :    473.571 ms": first to last sample.
    span=$(perf report --header-only -i "$data" 2>/dev/null |
      awk '/^# sample duration/ && $NF == "ms" { printf "%.3f", $(NF - 1) / 1000 }')
  elif [[ $config == ebprof ]]; then
    read -r samples lost < <(sed -nE \
      's/.*\[ ebprof-record: wrote .*\(([0-9]+) samples, .*, ([0-9]+) lost.*\) \].*/\1 \2/p' "$log") || true
    span=$("$report" dump -i "$data" | awk '$1 == "sample" && $2 == "time" {
      if (!n++ || $3 < lo) lo = $3; if ($3 > hi) hi = $3 } END { if (n) printf "%.3f", (hi - lo) / 1e9 }')
  fi
  if [[ $config != base ]]; then
    [[ ${samples:-0} -gt 0 && -n ${lost:-} && -n ${span:-} ]] ||
      { cat "$log" >&2; die "$config at $f Hz: no sample count, lost count or sample span"; }
    bytes=$(stat -c %s "$data")
    # What cpu-clock fires: F a second on every CPU while the recorder samples.
    expected=$(awk -v f="$f" -v n="$ncpu" -v t="$span" 'BEGIN { printf "%.0f", f * n * t }')
  fi
  echo "$f $config $wall $cpu $rec_cpu $bytes $samples $lost $expected $span" >>"$runs"
}

# Median of column $3 over the runs of rate $1, configuration $2.
med() { awk -v f="$1" -v c="$2" -v k="$3" '$1 == f && $2 == c { print $k }' "$runs" | median; }
# Median over those runs of the per-run quotient column $3 / column $4, times $5.
med_quot() {
  awk -v f="$1" -v c="$2" -v a="$3" -v b="$4" -v m="$5" '$1 == f && $2 == c { print m * $a / $b }' "$runs" | median
}
# Sum of column $3 over the runs of rate $1, configuration $2.
total() { awk -v f="$1" -v c="$2" -v k="$3" '$1 == f && $2 == c { n += $k } END { print n + 0 }' "$runs"; }

configs=(base perf ebprof)
for f in $freqs; do
  for ((r = 0; r < reps; r++)); do
    for ((k = 0; k < 3; k++)); do run_one "${configs[(r + k) % 3]}" "$f"; done
  done
  if [[ $f == 999 ]]; then cp "$tmp/perf.data" "$tmp/perf999.data"; cp "$tmp/ebprof.data" "$tmp/ebprof999.data"; fi
done

declare -A name=([base]="none (baseline)" [perf]="perf record -g -a" [ebprof]="ebprof-record -a")
echo "Workload: one \`hotcold --rounds $rounds\` per CPU ($ncpu), median of $reps runs;" \
  "each run does no recorder, perf and ebprof in a rotating order."
echo "Ratios are against the baseline's median; workload CPU is user + sys of the hotcold copies;"
echo "recorder CPU is user + sys of the recorder process alone (start-up and final write included)."
echo
echo "| -F Hz | recorder | wall s | wall vs baseline | workload CPU s | CPU vs baseline | recorder CPU s | workload + recorder CPU vs baseline |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|"
for f in $freqs; do
  bw=$(med "$f" base 3) bc=$(med "$f" base 4)
  printf "| %s | %s | %.3f | 1.000x | %.3f | 1.000x | | |\n" "$f" "${name[base]}" "$bw" "$bc"
  for c in perf ebprof; do
    # The baseline's column 5 is what the workload's wrapper bash costs
    # outside its timed block: a few ms, not the recorder's.
    w=$(med "$f" $c 3) u=$(med "$f" $c 4)
    rc=$(awk -v a="$(med "$f" $c 5)" -v b="$(med "$f" base 5)" 'BEGIN { printf "%.3f", a - b }')
    printf "| %s | %s | %.3f | %s | %.3f | %s | %s | %s |\n" "$f" "${name[$c]}" "$w" "$(ratio "$w" "$bw")" \
      "$u" "$(ratio "$u" "$bc")" "$rc" "$(ratio "$(awk -v a="$u" -v b="$rc" 'BEGIN { print a + b }')" "$bc")"
  done
done

echo
echo "| -F Hz | perf.data bytes | perf B/sample | ebprof.data bytes | ebprof B/sample | file size ebprof/perf | B/sample ebprof/perf (target <= 0.2) |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for f in $freqs; do
  pb=$(med "$f" perf 6) eb=$(med "$f" ebprof 6)
  pq=$(med_quot "$f" perf 6 7 1) eq=$(med_quot "$f" ebprof 6 7 1)
  printf "| %s | %.0f | %.1f | %.0f | %.1f | %s | %s |\n" "$f" "$pb" "$pq" "$eb" "$eq" \
    "$(div "$eb" "$pb" %.3f)" "$(div "$eq" "$pq" %.3f)"
done

echo
echo "Expected samples = F x $ncpu CPUs x the sample span (first to last sample of the recording:"
echo "perf report --header-only, ebprof-report dump), what cpu-clock fires on every CPU in that time."
echo "The span starts a little before the workload and ends a little after it; a CPU that is idle"
echo "then may fire less, so slightly under 100% is not necessarily a loss. Lost: ebprof's count from"
echo "its summary line; for perf, the LOST records in perf.data (perf report --stats), each standing"
echo "for one or more lost samples."
echo
echo "| -F Hz | recorder | samples | sample span s | expected | recorded/expected | lost (all $reps runs) |"
echo "|---:|---|---:|---:|---:|---:|---:|"
for f in $freqs; do
  for c in perf ebprof; do
    printf "| %s | %s | %.0f | %.3f | %.0f | %.1f%% | %s |\n" "$f" "${name[$c]}" "$(med "$f" $c 7)" \
      "$(med "$f" $c 10)" "$(med "$f" $c 9)" "$(med_quot "$f" $c 7 9 100)" "$(total "$f" $c 8)"
  done
done

if [[ -f $tmp/ebprof999.data ]]; then
  # Median wall time of REPS runs, then the max RSS of one more run under
  # GNU time (kept out of the timed runs: its fork and exec would count):
  # "seconds MB".
  median_of() {
    local i TIMEFORMAT='%3R'
    for ((i = 0; i < reps; i++)); do { time "$@" >/dev/null 2>&1; } 2>&1; done >"$tmp/m"
    /usr/bin/time -f %M -o "$tmp/rss" "$@" >/dev/null 2>&1
    printf "%.3f %.1f\n" "$(median <"$tmp/m")" "$(tail -1 "$tmp/rss" | awk '{ print $1 / 1024 }')"
  }
  # Warm the page cache and perf's symbol caches once, then time.
  perf script -i "$tmp/perf999.data" >/dev/null 2>&1
  perf report --stdio -i "$tmp/perf999.data" >/dev/null 2>&1
  "$report" -i "$tmp/ebprof999.data" --format folded >/dev/null
  read -r es em < <(median_of "$report" -i "$tmp/ebprof999.data" --format folded)
  read -r ps pm < <(median_of perf script -i "$tmp/perf999.data")
  read -r pr prm < <(median_of perf report --stdio -i "$tmp/perf999.data")
  en=$(awk '$1 == 999 && $2 == "ebprof" { n = $7 } END { print n }' "$runs")
  pn=$(awk '$1 == 999 && $2 == "perf" { n = $7 } END { print n }' "$runs")
  echo
  echo "Report of the last 999 Hz recordings ($en ebprof samples, $pn perf samples), page cache warm, median of $reps runs:"
  echo
  echo "| report of the 999 Hz recording | seconds | ebprof speed-up | max RSS MB |"
  echo "|---|---:|---:|---:|"
  echo "| ebprof-report --format folded | $es | 1.0x | $em |"
  echo "| perf script | $ps | $(div "$ps" "$es" %.1fx) | $pm |"
  echo "| perf report --stdio | $pr | $(div "$pr" "$es" %.1fx) | $prm |"
fi

echo
echo "Command: \`ROUNDS=$rounds REPS=$reps FREQS=\"$freqs\" bench/run.sh $build\`;" \
  "machine: nproc $ncpu, Linux $(uname -r), $(perf version)," \
  "kernel.perf_event_max_sample_rate $max_rate_before before, $(sysctl -n kernel.perf_event_max_sample_rate) after."
