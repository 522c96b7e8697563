#!/usr/bin/env bash
# The README's second command (and CI's): set up, build, run every test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
# End-to-end tests measure shares of a CPU-bound workload: run them one at a time.
ctest --test-dir "$root/build" --output-on-failure
