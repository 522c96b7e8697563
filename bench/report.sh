#!/usr/bin/env bash
# Report speed and memory on a large recording, ebprof against perf, in one
# run on one machine: the same workload (one hotcold per CPU) recorded
# system-wide at the same rate and duration by `perf record -g` and
# `ebprof-record`, a few hundred thousand samples each; then, interleaved
# REPS times, the median wall time and the peak memory (max RSS) of
#   - perf script | stackcollapse (a small awk folder, the work
#     stackcollapse-perf.pl does) against ebprof-report --format folded;
#   - perf report --stdio against ebprof-report (the top table).
# Prints Markdown for docs/performance.md. Needs root, linux-perf and GNU
# time (/usr/bin/time).
#
# WORKLOAD=manystacks runs tests/workloads/manystacks.cc instead: nearly a
# distinct stack per sample, the report's cost per stack.
#
# Usage: bench/report.sh [BUILD_DIR]    (env: SECONDS_EACH=20 FREQ=4999 REPS=7 WORKLOAD=hotcold)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh"
need_perf_and_time
secs=${SECONDS_EACH:-20}
freq=${FREQ:-4999}
reps=${REPS:-7}
workload=${WORKLOAD:-hotcold}
work=$build/tests/$workload
[[ -x $work ]] || die "$work is missing: build first (scripts/build.sh)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One copy of the workload per CPU for `secs`, as the recorder's command.
load="for ((i = 0; i < $(nproc); i++)); do '$work' $secs & done; wait"
perf record -q -g -a -e cpu-clock -F "$freq" -o "$tmp/perf.data" -- bash -c "$load" 2>/dev/null
"$record" -q -a -F "$freq" -o "$tmp/ebprof.data" -- bash -c "$load"
perf_samples=$(perf report --stats -i "$tmp/perf.data" 2>/dev/null |
  awk '$1 == "SAMPLE" && !seen++ { print $3 }')
ebprof_samples=$("$report" info "$tmp/ebprof.data" | awk '$1 == "samples" && NF == 2 { print $2 }')

# What stackcollapse-perf.pl does, without Perl's start-up: join each
# sample's frames (leaf last) and count identical stacks.
cat >"$tmp/fold.awk" <<'AWK'
/^$/ { if (n) { s = comm; for (i = n; i >= 1; i--) s = s ";" f[i]; c[s]++ } n = 0; next }
/^[^ \t]/ { comm = $1; n = 0; next }
{ sub(/^[ \t]*[0-9a-f]+ /, ""); sub(/ \(.*\)$/, ""); sub(/\+0x[0-9a-f]+$/, ""); f[++n] = $0 }
END { for (s in c) print s, c[s] }
AWK

# Wall seconds of one command, timed by this shell around the command alone:
# a wrapper process (GNU time, bash -c) in the timed span adds the same few
# tens of milliseconds to both tools and hides the ratio of a fast one.
seconds() {
  local TIMEFORMAT=%3R
  { time eval "$1" >/dev/null 2>&1; } 2>&1
}
# Max RSS (MB) of one command, in a run of its own; for a pipeline, of its
# first stage, which dominates (the folder is a few MB).
max_rss() {
  /usr/bin/time -f %M -o "$tmp/rss" bash -c "$1" >/dev/null 2>&1
  awk '{ print $1 / 1024 }' "$tmp/rss" | tail -1
}

# ebprof reads DWARF for inline frames wherever debuginfo is installed
# (libc6-dbg, say), which perf script does not by default: the --no-inline
# row names frames from ELF symbol tables alone, as perf script does.
declare -A cmd=(
  [ebprof_folded]="'$report' -i '$tmp/ebprof.data' --format folded"
  [ebprof_elf]="'$report' -i '$tmp/ebprof.data' --format folded --no-inline"
  [ebprof_top]="'$report' -i '$tmp/ebprof.data' -n 20"
  [perf_script]="perf script -i '$tmp/perf.data' | awk -f '$tmp/fold.awk'"
  [perf_report]="perf report --stdio -i '$tmp/perf.data'"
)
order=(ebprof_folded perf_script ebprof_elf ebprof_top perf_report)
# Warm the page cache and perf's caches once.
for k in "${order[@]}"; do bash -c "${cmd[$k]}" >/dev/null 2>&1 || true; done
declare -A times rss
for ((r = 0; r < reps; r++)); do
  for k in "${order[@]}"; do
    times[$k]+="$(seconds "${cmd[$k]}") "
  done
done
for k in "${order[@]}"; do rss[$k]=$(max_rss "${cmd[$k]}"); done
t() { tr ' ' '\n' <<<"${times[$1]}" | grep . | median; }

distinct=$("$report" info "$tmp/ebprof.data" | awk '$1 == "stacks" { print $2 }')
echo "Recordings: $(nproc) $workload copies for ${secs} s ($distinct distinct stacks), system-wide at $freq Hz: perf.data $(stat -c %s "$tmp/perf.data") bytes ($perf_samples samples), ebprof.data $(stat -c %s "$tmp/ebprof.data") bytes ($ebprof_samples samples). Median of $reps interleaved runs, page cache warm."
echo
echo "| task | perf | seconds | max RSS MB | ebprof | seconds | max RSS MB | speed-up | memory ratio |"
echo "|---|---|---:|---:|---|---:|---:|---:|---:|"
row() {
  local pt et
  pt=$(t "$2") et=$(t "$4")
  printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$1" "$3" "$pt" "${rss[$2]}" "$5" "$et" \
    "${rss[$4]}" "$(awk -v a="$pt" -v b="$et" 'BEGIN { printf "%.1fx", a / b }')" \
    "$(awk -v a="${rss[$2]}" -v b="${rss[$4]}" 'BEGIN { printf "%.2f", b / a }')"
}
row "folded stacks" perf_script "perf script \\| fold" ebprof_folded "ebprof-report --format folded"
row "folded stacks, ELF symbols only" perf_script "perf script \\| fold" ebprof_elf \
  "ebprof-report --format folded --no-inline"
row "top table" perf_report "perf report --stdio" ebprof_top "ebprof-report"
echo
echo "Command: \`WORKLOAD=$workload SECONDS_EACH=$secs FREQ=$freq REPS=$reps bench/report.sh\`; machine: nproc $(nproc), Linux $(uname -r), $(perf version 2>/dev/null)."
