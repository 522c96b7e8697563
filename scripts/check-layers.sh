#!/usr/bin/env bash
# Data flows one way: bpf -> record -> format -> report, and inside report
# load -> unwind -> resolve -> aggregate -> write, with locate -> symbolize
# beside unwind (only resolve, which names what unwinders give, and run,
# which registers them, know unwinding; locate knows no recording), model/
# the words they share and run/ the driver. Each folder may include only what this table allows;
# the linker keeps the libraries honest, this keeps the headers so.
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A allowed=(
  [common]="common"
  [format]="common format bpf/frame_kind.h"
  [bpf]="bpf"
  [record]="common format bpf record"
  [report/model]="common format report/model"
  [report/load]="common format report/model report/load"
  [report/locate]="common format report/model report/locate"
  [report/unwind]="common format report/model report/load report/locate report/unwind"
  [report/symbolize]="common format report/model report/load report/locate report/symbolize"
  [report/resolve]="common format report/model report/load report/locate report/unwind report/symbolize report/resolve"
  [report/aggregate]="common format report/model report/load report/resolve report/aggregate"
  [report/write]="common format report/model report/write report"
  [report/run]="common format report/model report/load report/locate report/unwind report/symbolize report/resolve report/aggregate report/write report/run"
  [report]="common report/run"
)
status=0
for dir in "${!allowed[@]}"; do
  for file in $(git ls-files "$dir/*.cc" "$dir/*.h" "$dir/*.c"); do
    [[ $(dirname "$file") == "$dir" ]] || continue
    while read -r inc; do
      top=$(dirname "$inc")
      ok=0
      # An entry is a folder, or one header of another (the frame kinds BPF shares).
      for a in ${allowed[$dir]}; do [[ $top == "$a" || $inc == "$a" ]] && ok=1; done
      if ((!ok)); then
        echo "check-layers: $file includes $inc: $dir may include only ${allowed[$dir]}" >&2
        status=1
      fi
    done < <(grep -oE '^#include "[^"]+/[^"]+"' "$file" | sed -E 's/#include "(.*)"/\1/')
  done
done
exit $status
