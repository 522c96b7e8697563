#!/usr/bin/env bash
# Always-on capture, in accelerated form: ebprof-record system-wide at 999
# Hz with --switch-output, for SECONDS, while processes come and go by the
# thousand (tests/workloads/shortlived, exec after exec) and one of them
# walks ever new call paths (tests/workloads/manystacks). The recorder's
# resident memory and CPU are sampled every 10 s: they should level off,
# not grow with run time, processes seen or distinct stacks. Prints
# Markdown for docs/performance.md. Needs root.
#
# Usage: bench/soak.sh [BUILD_DIR]   (env: SECONDS_TOTAL=120 SWITCH=10s)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh"
total=${SECONDS_TOTAL:-120}
switch=${SWITCH:-10s}
tmp=$(mktemp -d)
trap 'kill "$churn" "$stacks" 2>/dev/null || true; rm -rf "$tmp"' EXIT

"$record" -q -a -F 999 --switch-output="$switch" --switch-max-files=2 \
  --duration "$total" -o "$tmp/soak.data" &
rec=$!
sleep 1
# Churn: a new process every few milliseconds, for the whole run.
(while :; do "$build/tests/shortlived" 200 >/dev/null; done) &
churn=$!
"$build/tests/manystacks" "$total" >/dev/null &
stacks=$!

echo "Recorder memory over a soak of ${total} s: \`ebprof-record -a -F 999"
echo "--switch-output=$switch --switch-max-files=2\` while processes are"
echo "started without pause (shortlived) and manystacks walks new call paths;"
echo "resident set and CPU of the recorder every 10 s."
echo
echo "| time s | recorder RSS MB | recorder CPU s | processes started |"
echo "|---:|---:|---:|---:|"
tick=$(getconf CLK_TCK)
started0=$(awk '/^processes/ { print $2 }' /proc/stat)
for ((t = 10; t <= total - 5; t += 10)); do
  sleep 10
  [[ -r /proc/$rec/status ]] || break
  rss=$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$rec/status")
  cpu=$(awk -v hz="$tick" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$rec/stat")
  started=$(($(awk '/^processes/ { print $2 }' /proc/stat) - started0))
  echo "| $t | $rss | $cpu | $started |"
done
wait "$rec"
echo
echo "Command: \`SECONDS_TOTAL=$total SWITCH=$switch bench/soak.sh\`; machine: nproc $(nproc), Linux $(uname -r)."
