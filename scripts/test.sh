#!/usr/bin/env bash
# The README's second command (and CI's): set up, build, run every test.
#  1. the layers' includes (scripts/check-layers.sh);
#  2. build/: the Release build, clang-tidy on the files the last commit
#     changed (scripts/tidy.sh), its unit, golden and end-to-end tests,
#     and its Debian package, unpacked and run (scripts/check-package.sh);
#  3. build-fuzz/: the reader and report built with clang, ASan and UBSan,
#     their unit tests again, and a bounded libFuzzer run over them
#     (EBPROF_FUZZ_SECONDS, default 60; results in docs/reliability.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" --test
"$root/scripts/check-layers.sh"
"$root/scripts/build.sh"
"$root/scripts/tidy.sh"
# End-to-end tests measure shares of a CPU-bound workload: run them one at a time.
ctest --test-dir "$root/build" --output-on-failure
"$root/scripts/check-package.sh" "$root/build"

CC=clang CXX=clang++ cmake -S "$root" -B "$root/build-fuzz" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DEBPROF_BUILD_RECORD=OFF -DEBPROF_SANITIZE=ON -DEBPROF_FUZZ=ON \
  -DEBPROF_FUZZ_SECONDS="${EBPROF_FUZZ_SECONDS:-60}" >/dev/null
cmake --build "$root/build-fuzz" -j"$(nproc)"
ctest --test-dir "$root/build-fuzz" --output-on-failure
