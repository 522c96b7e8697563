#!/usr/bin/env bash
# The Debian package of a build, as a user gets it: made by CPack into the
# build directory (where it stays, for the user to install), checked by
# lintian, unpacked into a scratch root (the machine's /usr is left alone),
# its binaries, man pages and completion used once each, its Depends
# checked against what the binaries link, and the README's links followed.
# A few seconds; the test command runs it.
#   scripts/check-package.sh [BUILD_DIR]    (default: build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

fail() {
  echo "check-package: $*" >&2
  exit 1
}

rm -f "$build"/ebprof_*.deb
if ! cpack --config "$build/CPackConfig.cmake" -G DEB -B "$build" >"$scratch/cpack.log" 2>&1; then
  cat "$scratch/cpack.log" >&2
  fail "cpack failed"
fi
rm -rf "$build/_CPack_Packages"
debs=("$build"/ebprof_*.deb)
[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || fail "cpack wrote no ebprof_*.deb"
deb=${debs[0]}
if command -v lintian >/dev/null; then
  # As root it says it would rather not be: that line is no finding.
  if ! findings=$(lintian --fail-on error,warning "$deb" 2>&1); then
    fail "lintian: $(grep -v 'root privileges' <<<"$findings")"
  fi
else
  echo "check-package: lintian is not installed (scripts/setup.sh --test): the package is not linted"
fi
dpkg-deb -x "$deb" "$scratch/root"
usr=$scratch/root/usr
version=$(dpkg-deb -f "$deb" Version)
depends=$(dpkg-deb -f "$deb" Depends)

# The Debian package that owns a library, under either of its names on a
# merged /usr (dpkg knows /lib/x86_64-linux-gnu/libc.so.6, the linker may
# say /usr/lib/...).
owner() {
  local path candidates=()
  for path in "$1" "$(realpath "$1")"; do
    candidates+=("$path" "${path#/usr}" "/usr$path")
  done
  for path in "${candidates[@]}"; do
    dpkg-query -S "$path" 2>/dev/null | sed -n '1s/[:,].*//p' | grep . && return
  done
  fail "no Debian package owns $1"
}

# Every library a binary names (not those they pull in: their packages
# depend on them) is in Depends.
for binary in "$usr"/bin/*; do
  "$binary" --version | grep -qx "$(basename "$binary") $version (commit .*)" ||
    fail "$(basename "$binary") --version does not say the package's version $version"
  for soname in $(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    library=$(ldd "$binary" | awk -v so="$soname" '$1 == so { print $3 }')
    [[ -n $library ]] || fail "$(basename "$binary") needs $soname, which ldd does not find"
    package=$(owner "$library")
    [[ ", $depends," == *", $package "* || ", $depends," == *", $package,"* ]] ||
      fail "$(basename "$binary") links $soname of $package, which Depends ($depends) leaves out"
  done
done

# The report reads a recording, as installed (names from the recording
# alone, as in the golden tests).
recording=$root/tests/data/v1.2-hotcold.data
"$usr/bin/ebprof-report" info "$recording" --symfs /nonexistent | grep -q 'samples' ||
  fail "the installed ebprof-report cannot read tests/data/v1.2-hotcold.data"
"$usr/bin/ebprof-report" -i "$recording" -n 1 --symfs /nonexistent |
  grep -q 'hot_leaf' || fail "the installed ebprof-report does not name hot_leaf"

for command in "$usr"/bin/*; do
  command=$(basename "$command")
  completion=$usr/share/bash-completion/completions/$command
  [[ -f $completion ]] || fail "no bash completion for $command"
  bash -c 'source "$1" && complete -p "$2"' _ "$completion" "$command" >/dev/null ||
    fail "$completion does not register a completion for $command"
  page=$usr/share/man/man1/$command.1.gz
  [[ -f $page ]] || fail "no man page for $command"
  if command -v man >/dev/null; then
    man -M "$usr/share/man" -w "$command" >/dev/null || fail "man does not find $command's page"
    warnings=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$page" 2>&1 >/dev/null)
    [[ -z $warnings ]] || fail "$page: man warns: $warnings"
  fi
done
command -v man >/dev/null || echo "check-package: man is not installed: the pages are not rendered"
doc=$usr/share/doc/ebprof
[[ -f $doc/README.md ]] || fail "no README in share/doc/ebprof"
[[ -f $doc/copyright ]] || fail "no copyright file in share/doc/ebprof"
# Every document the installed README links is installed where it points.
for link in $(grep -o '](docs/[^)#]*' "$doc/README.md" | sed 's/^](//' | sort -u); do
  [[ -f $doc/$link ]] || fail "the installed README links $link, which is not installed"
done
echo "check-package: $deb installs and runs (Depends: $depends)"
