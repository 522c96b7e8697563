#!/usr/bin/env bash
# Configures (Release by default) and builds ebprof into build/: everything,
# or only the targets named (scripts/build.sh ebprof-record ebprof-report).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}" >/dev/null
targets=()
(($#)) && targets=(--target "$@")
cmake --build "$root/build" -j"$(nproc)" "${targets[@]}"
