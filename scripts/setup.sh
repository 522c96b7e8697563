#!/usr/bin/env bash
# Installs what ebprof needs to build, test and run on Debian 12. Idempotent:
# when everything is installed it only asks dpkg and returns.
set -euo pipefail

packages=(
  build-essential cmake pkg-config         # C++ toolchain
  clang llvm bpftool libbpf-dev            # BPF programs and skeletons
  libclang-rt-14-dev                       # ASan, UBSan and libFuzzer for the reader
  libelf-dev libdw-dev                     # ELF symbols (report)
  libdeflate-dev                           # inflating compressed debuginfo, faster than libdw
  capnproto libcapnp-dev libzstd-dev       # the recording format
  libprotobuf-dev protobuf-compiler zlib1g-dev  # pprof output (gzipped protobuf)
  libdebuginfod-dev                        # debuginfo from DEBUGINFOD_URLS servers
  libcli11-dev libgtest-dev                # command lines, tests
  libxxhash-dev                            # content hashes of copied stacks (--call-graph dwarf)
  util-linux                               # setpriv, for the privilege tests
)
# Tests also check pprof output with the real client, go tool pprof, and
# DWARF source lookups against eu-addr2line (elfutils), debuginfo fetched
# from a local debuginfod server, and the flame graph page in a headless
# browser (chromium); clang-tidy checks the files a change touches;
# libc's names are checked with its debuginfo (libc6-dbg), as the README
# recommends it; lintian checks the Debian package; a JVM's JIT code is
# named from the perf map it writes at exit (openjdk-17-jdk-headless).
if [[ ${1:-} == --test ]]; then
  packages+=(golang-go elfutils debuginfod chromium clang-tidy libc6-dbg lintian
    openjdk-17-jdk-headless)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
if [[ $EUID -ne 0 ]]; then
  echo "setup: installing ${missing[*]} needs root: rerun as root (e.g. with sudo)" >&2
  exit 1
fi
echo "setup: installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
