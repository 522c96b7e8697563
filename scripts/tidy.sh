#!/usr/bin/env bash
# clang-tidy (.clang-tidy's checks) on the C++ files a change touches: those
# that differ from EBPROF_TIDY_BASE (default: the commit before HEAD), the
# uncommitted ones, and for a changed header its .cc. Needs build/'s
# compile_commands.json (scripts/build.sh). `EBPROF_TIDY_BASE=<commit>`
# checks a longer change; `scripts/tidy.sh --all` every file.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dirs=(common format record report)
if [[ ${1:-} == --all ]]; then
  mapfile -t files < <(git ls-files "${dirs[@]/%//*.cc}" | sort -u)
else
  base=${EBPROF_TIDY_BASE:-HEAD~1}
  git rev-parse -q --verify "$base^{commit}" >/dev/null || base=$(git rev-list --max-parents=0 HEAD)
  mapfile -t changed < <({ git diff --name-only "$base" -- "${dirs[@]}"
                           git ls-files --others --exclude-standard -- "${dirs[@]}"; } | sort -u)
  files=()
  for f in "${changed[@]}"; do
    case $f in
      *.cc) [[ -f $f ]] && files+=("$f") ;;
      *.h) [[ -f ${f%.h}.cc ]] && files+=("${f%.h}.cc") ;;
    esac
  done
  mapfile -t files < <(printf '%s\n' "${files[@]}" | sort -u | sed '/^$/d')
fi
if ((${#files[@]} == 0)); then
  echo "tidy: no C++ files changed"
  exit 0
fi
echo "tidy: ${#files[@]} files"
failed=0
for f in "${files[@]}"; do
  clang-tidy -p build --quiet "$f" 2>/dev/null || failed=1
done
exit $failed
