#!/usr/bin/env bash
# Stacks through code without frame pointers, ebprof against perf in one run
# on one machine:
#   - full stacks at 999 Hz, for perf -g, perf --call-graph dwarf,
#     ebprof-record (frame pointers, with the leaf repair) and ebprof-record
#     --call-graph dwarf: the share of a program's samples whose stack holds
#     a frame, on nofp (tests/workloads/nofp.cc, built without frame
#     pointers: reaching main), CPython (bench/pyloop.py under Debian's
#     python3, no frame pointers either: reaching Py_RunMain) and libcleaf
#     (frame-pointer code in libc's frameless memcpy: the copier thread's
#     samples naming copy_buffers, its caller); bytes per sample of each;
#   - record overhead on the CPython loop, one copy per CPU, at 99 and 999
#     Hz: no recorder, perf --call-graph dwarf and ebprof-record --call-graph
#     dwarf interleaved REPS times in a rotating order; the workload's CPU
#     time as a ratio to the baseline's median, and the recorder's own CPU;
#   - the report of the last 999 Hz recordings and of ones five times as
#     long, where perf unwinds: ebprof-report --format folded against perf
#     script, median wall time of REPS runs, per sample, and peak memory
#     (max RSS), which should stay put as samples grow.
# Prints Markdown for docs/performance.md. Needs root, linux-perf, python3
# and GNU time.
#
# Usage: bench/dwarf.sh [BUILD_DIR]   (env: REPS=5 FREQS="99 999" ROUNDS=4000)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh"
need_perf_and_time
nofp=$build/tests/nofp
libcleaf=$build/tests/libcleaf
python=/usr/bin/python3
pyloop=$root/bench/pyloop.py
[[ -x $nofp && -x $libcleaf ]] || die "build first (scripts/build.sh): $nofp or $libcleaf is missing"
[[ -x $python ]] || die "$python not found: apt-get install python3"
reps=${REPS:-5}
freqs=${FREQS:-99 999}
rounds=${ROUNDS:-4000}
ncpu=$(nproc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The recorder of configuration $1 at $2 Hz writing $3, into the array rec.
recorder() {
  case $1 in
    base) rec=() ;;
    perf-fp) rec=(perf record -q -g -F "$2" -o "$3" --) ;;
    perf-dwarf) rec=(perf record -q --call-graph dwarf -F "$2" -o "$3" --) ;;
    ebprof-fp) rec=("$record" -q -F "$2" -o "$3" --) ;;
    ebprof-dwarf) rec=("$record" -q --call-graph dwarf -F "$2" -o "$3" --) ;;
  esac
}
declare -A name=([base]="none (baseline)" [perf-fp]="perf record -g"
  [perf-dwarf]="perf record --call-graph dwarf" [ebprof-fp]="ebprof-record"
  [ebprof-dwarf]="ebprof-record --call-graph dwarf")

samples_of() {
  if [[ $1 == *.perf ]]; then
    perf report --stats -i "$1" 2>/dev/null | awk '$1 == "SAMPLE" && !seen++ { print $3 }'
  else
    "$report" info "$1" | awk '$1 == "samples" { print $2; exit }'
  fi
}

# "with total": of the samples of thread name $2 in recording $1, those
# with a frame matching the regular expression $3 (inlined frames count).
reach() {
  if [[ $1 == *.perf ]]; then
    perf script -F comm,ip,sym -i "$1" 2>/dev/null | awk -v comm="$2" -v re="$3" '
      function done() { if (c == comm) { t++; w += hit } c = "" }
      /^[^ \t]/ { done(); c = $1; hit = 0; next }
      /^$/ { done(); next }
      { sub(/^[ \t]*[0-9a-f]+ /, ""); sub(/ \(inlined\)$/, ""); if ($0 ~ re) hit = 1 }
      END { done(); print w + 0, t + 0 }'
  else
    "$report" -i "$1" --format folded --comm "$2" | awk -v re="$3" '
      { n = $NF; k = split(substr($0, 1, length($0) - length(n) - 1), f, ";"); hit = 0
        for (i = 2; i <= k; i++) if (f[i] ~ re) hit = 1
        t += n; w += hit * n }
      END { print w + 0, t + 0 }'
  fi
}

echo "Full stacks at 999 Hz: the share of the program's samples whose stack holds the frame;"
echo "bytes per sample of the same recordings (one run each)."
echo
echo "| program | frame | recorder | samples | with the frame | bytes/sample |"
echo "|---|---|---|---:|---:|---:|"
programs=(nofp cpython libcleaf)
declare -A command=([nofp]="$nofp 2" [cpython]="$python $pyloop $rounds" [libcleaf]="$libcleaf 2")
declare -A comm=([nofp]=nofp [cpython]=python3 [libcleaf]=copier)
declare -A frame=([nofp]='^main$' [cpython]='^Py_RunMain$' [libcleaf]='copy_buffers')
for p in "${programs[@]}"; do
  for c in perf-fp perf-dwarf ebprof-fp ebprof-dwarf; do
    data=$tmp/$p-$c.${c%%-*}
    recorder "$c" 999 "$data"
    # shellcheck disable=SC2086  # the command's words
    "${rec[@]}" ${command[$p]} >/dev/null 2>&1 || die "$c on $p failed"
    read -r with total < <(reach "$data" "${comm[$p]}" "${frame[$p]}")
    n=$(samples_of "$data")
    printf "| %s | \`%s\` | %s | %d | %s | %.0f |\n" "$p" "${frame[$p]}" "${name[$c]}" "$total" \
      "$(awk -v a="$with" -v b="$total" 'BEGIN { printf "%.1f%%", b ? 100 * a / b : 0 }')" \
      "$(div "$(stat -c %s "$data")" "$n" %.1f)"
  done
done

# The CPython loop, one copy per CPU, run by a bash of its own so that a
# recorder launches it as its command; writes "wall user sys" of the copies
# to $4 (bash's `time` counts the children it reaped). Args: python pyloop
# rounds out-file copies.
# shellcheck disable=SC2016  # expanded by the inner bash
inner='TIMEFORMAT="%3R %3U %3S"
{ time { for ((i = 0; i < $5; i++)); do "$1" "$2" "$3" & done; wait; }; } 2>"$4"'
runs=$tmp/runs  # "rate config cpu recorder-cpu"
# Runs configuration $1 at $2 Hz with rounds $3, recording to $4.
run_one() {
  recorder "$1" "$2" "$4"
  local TIMEFORMAT='%3U %3S' u s ou os
  { time "${rec[@]}" bash -c "$inner" workload "$python" "$pyloop" "$3" "$tmp/inner" "$ncpu" \
    >"$tmp/log" 2>&1; } 2>"$tmp/outer" || { cat "$tmp/log" >&2; die "$1 at $2 Hz failed"; }
  read -r _ u s <"$tmp/inner"
  read -r ou os <"$tmp/outer"
  awk -v f="$2" -v c="$1" -v u="$u" -v s="$s" -v ou="$ou" -v os="$os" \
    'BEGIN { printf "%s %s %.3f %.3f\n", f, c, u + s, ou + os - u - s }' >>"$runs"
}
med() { awk -v f="$1" -v c="$2" -v k="$3" '$1 == f && $2 == c { print $k }' "$runs" | median; }

configs=(base perf-dwarf ebprof-dwarf)
for f in $freqs; do
  for ((r = 0; r < reps; r++)); do
    for ((k = 0; k < 3; k++)); do
      c=${configs[(r + k) % 3]}
      run_one "$c" "$f" "$rounds" "$tmp/$f-$c.${c%%-*}"
    done
  done
done
echo
echo "Record overhead: $ncpu copies of \`python3 bench/pyloop.py $rounds\` (one per CPU), median of"
echo "$reps runs, interleaved in a rotating order; workload CPU is user + sys of the copies, recorder"
echo "CPU that of the recorder process alone."
echo
echo "| -F Hz | recorder | workload CPU s | CPU vs baseline | recorder CPU s | workload + recorder CPU vs baseline |"
echo "|---:|---|---:|---:|---:|---:|"
for f in $freqs; do
  bc=$(med "$f" base 3) br=$(med "$f" base 4)
  printf "| %s | %s | %.3f | 1.000x | | |\n" "$f" "${name[base]}" "$bc"
  for c in perf-dwarf ebprof-dwarf; do
    u=$(med "$f" "$c" 3)
    rc=$(awk -v a="$(med "$f" "$c" 4)" -v b="$br" 'BEGIN { printf "%.3f", a - b }')
    printf "| %s | %s | %.3f | %s | %s | %s |\n" "$f" "${name[$c]}" "$u" "$(ratio "$u" "$bc")" "$rc" \
      "$(ratio "$(awk -v a="$u" -v b="$rc" 'BEGIN { print a + b }')" "$bc")"
  done
done

if [[ " $freqs " == *" 999 "* ]]; then
  seconds() {
    local TIMEFORMAT=%3R
    { time "$@" >/dev/null 2>&1; } 2>&1
  }
  max_rss() {
    /usr/bin/time -f %M -o "$tmp/rss" "$@" >/dev/null 2>&1
    awk '{ print $1 / 1024 }' "$tmp/rss" | tail -1
  }
  for c in perf-dwarf ebprof-dwarf; do
    run_one "$c" 999 $((5 * rounds)) "$tmp/long-$c.${c%%-*}"
  done
  echo
  echo "Report of the last 999 Hz recordings, and of ones 5 times as long (the CPython loop of"
  echo "5 x $rounds rounds), where perf unwinds: median of $reps runs of each, interleaved, page"
  echo "cache warm; max RSS of one more run."
  echo
  echo "| recording | report | samples | seconds | µs/sample | ebprof speed-up | max RSS MB |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  for length in short long; do
    if [[ $length == short ]]; then
      e=$tmp/999-ebprof-dwarf.ebprof p=$tmp/999-perf-dwarf.perf
    else
      e=$tmp/long-ebprof-dwarf.ebprof p=$tmp/long-perf-dwarf.perf
    fi
    "$report" --format folded -i "$e" >/dev/null
    perf script -i "$p" >/dev/null 2>&1
    # Interleaved, so that a slower minute of the machine slows both.
    : >"$tmp/es" && : >"$tmp/ps"
    for ((r = 0; r < reps; r++)); do
      seconds "$report" --format folded -i "$e" >>"$tmp/es"
      seconds perf script -i "$p" >>"$tmp/ps"
    done
    es=$(median <"$tmp/es") ps=$(median <"$tmp/ps")
    en=$(samples_of "$e") pn=$(samples_of "$p")
    printf "| %s | ebprof-report --format folded | %d | %s | %.1f | 1.0x | %.1f |\n" "$length" "$en" \
      "$es" "$(div "$es" "$en" %.9f | awk '{ print $1 * 1e6 }')" \
      "$(max_rss "$report" --format folded -i "$e")"
    printf "| %s | perf script | %d | %s | %.1f | %s | %.1f |\n" "$length" "$pn" "$ps" \
      "$(div "$ps" "$pn" %.9f | awk '{ print $1 * 1e6 }')" \
      "$(awk -v p="$ps" -v pn="$pn" -v e="$es" -v en="$en" 'BEGIN { printf "%.1fx", (p / pn) / (e / en) }')" \
      "$(max_rss perf script -i "$p")"
  done
  echo
  echo "Speed-up: per sample (the two recorded slightly different numbers of samples)."
fi

echo
echo "Command: \`REPS=$reps FREQS=\"$freqs\" ROUNDS=$rounds bench/dwarf.sh $build\`;" \
  "machine: nproc $ncpu, Linux $(uname -r), $(perf version), $($python --version)."
