# Bash completion for ebprof-record and ebprof-report.
#
# Installed under both names in share/bash-completion/completions/, where
# bash-completion loads a command's file when the command is first
# completed. It needs none of bash-completion's helpers, so sourcing it
# works without them. tests/help_drift.sh completes every option --help
# lists and checks the values offered against --help and the man pages.

# Walks the words before the one being completed. Sets
#   opt:  the option whose value is being completed, or "";
#   cur:  the text being completed: that value as typed, with the "=" and
#         ":" that COMP_WORDBREAKS split off put back, or the word;
#   args: the words that are neither options nor their values, and with
#         $2 set, stops at the first of them (ebprof-record's COMMAND).
_ebprof_parse() {
  local valued=" ${1//$'\n'/ } " stop=${2:-} i=1 j
  opt="" cur=${COMP_WORDS[COMP_CWORD]} args=()
  while ((i < COMP_CWORD)); do
    local word=${COMP_WORDS[i]}
    if [[ $word == -* && $valued == *" $word "* ]]; then
      # Its value, up to the word being completed (words after it are
      # not typed yet as far as this completion goes).
      j=$((i + 1))
      [[ ${COMP_WORDS[j]:-} == = ]] && ((j++))
      local value=""
      ((j <= COMP_CWORD)) && value=${COMP_WORDS[j]}
      while ((j + 1 <= COMP_CWORD)) && [[ ${COMP_WORDS[j + 1]} == : ]]; do
        value+=:
        ((j + 2 <= COMP_CWORD)) && value+=${COMP_WORDS[j + 2]}
        ((j += 2))
      done
      if ((j >= COMP_CWORD)); then
        opt=$word cur=$value
        return
      fi
      i=$((j + 1))
      continue
    fi
    if [[ $word != -* || $word == -- ]]; then
      args+=("$i")
      [[ -n $stop ]] && return
    fi
    ((i++))
  done
}

# Candidates for $cur. readline replaces only what follows the last ":",
# so that much of each candidate goes.
_ebprof_reply() {
  mapfile -t COMPREPLY < <(compgen "$@" -- "$cur")
  if [[ $cur == *:* ]]; then
    local i
    for i in "${!COMPREPLY[@]}"; do
      COMPREPLY[i]=${COMPREPLY[i]#"${cur%:*}:"}
      [[ -n ${COMPREPLY[i]} ]] || unset 'COMPREPLY[i]'
    done
  fi
}

# One more item of a comma-separated list: the items typed stay, and are
# not offered again.
_ebprof_reply_list() {
  local head="" words=" $1 " item
  if [[ $cur == *,* ]]; then
    head=${cur%,*},
    for item in ${head//,/ }; do words=${words/ $item / }; done
  fi
  mapfile -t COMPREPLY < <(compgen -P "$head" -W "$words" -- "${cur##*,}")
  compopt -o nospace 2>/dev/null || true  # room for the next comma
}

_ebprof_reply_files() {
  compopt -o filenames 2>/dev/null || true
  _ebprof_reply "$1"
}

_ebprof_record_flags='-h --help --version -g --no-embed-symbols --no-python -v --verbose -q --quiet
  -a --all-cpus --off-cpu --off-cpu-only --wakers --user-threads-only --kernel-threads-only'
_ebprof_record_valued='-o --output --transport -m --mmap-pages --call-graph --compression
  -F --freq -c --count -e --event -p --pid -t --tid -G --cgroup -C --cpu --duration
  --min-block --max-block --state --off-cpu-hook --switch-output --switch-max-files
  --flight-recorder --flight-recorder-size'
# perf's names and aliases (record/perf_events.cc), and the kinds of probe.
_ebprof_events='cpu-clock task-clock page-faults faults minor-faults major-faults
  context-switches cs cpu-migrations migrations alignment-faults emulation-faults
  cycles cpu-cycles instructions cache-references cache-misses branch-instructions
  branches branch-misses bus-cycles ref-cycles tracepoint: uprobe: kprobe:'

_ebprof_record_value() {
  case $1 in
    -o | --output) _ebprof_reply_files -f ;;
    -G | --cgroup) _ebprof_reply_files -d ;;
    --transport) _ebprof_reply -W 'auto ringbuf perfbuf' ;;
    --call-graph) _ebprof_reply -W 'fp dwarf' ;;
    --compression) _ebprof_reply -W 'none zstd' ;;
    -F | --freq) _ebprof_reply -W 'max' ;;
    -e | --event)
      # tracefs where it is mounted, or under debugfs on older systems;
      # readable by root only, as recording is.
      local events=$_ebprof_events tracefs
      for tracefs in /sys/kernel/tracing /sys/kernel/debug/tracing; do
        if [[ $cur == tracepoint:* && -r $tracefs/available_events ]]; then
          events=$(sed 's/^/tracepoint:/' "$tracefs/available_events")
          break
        fi
      done
      _ebprof_reply -W "$events"
      [[ ${COMPREPLY[*]} == *: ]] && { compopt -o nospace 2>/dev/null || true; }
      ;;
    --state) _ebprof_reply_list 'R S D I other all' ;;
    --off-cpu-hook) _ebprof_reply -W 'auto tp_btf raw_tp tracepoint' ;;
    --switch-output) _ebprof_reply -W 'signal 100M 60s' ;;
    *) COMPREPLY=() ;;  # a number, ids, a cgroup: nothing worth guessing
  esac
}

_ebprof_record() {
  local opt cur args
  _ebprof_parse "$_ebprof_record_valued" stop
  if ((${#args[@]})); then
    # The command and its own arguments, as bash-completion completes it.
    local at=${args[0]}
    [[ ${COMP_WORDS[at]} == -- ]] && ((at++))
    if ((at == COMP_CWORD)); then
      _ebprof_reply -c
    elif declare -F _command_offset >/dev/null; then
      _command_offset "$at"
    else
      _ebprof_reply_files -f
    fi
  elif [[ -n $opt ]]; then
    _ebprof_record_value "$opt"
  elif [[ $cur == -* ]]; then
    _ebprof_reply -W "$_ebprof_record_flags $_ebprof_record_valued"
  else
    _ebprof_reply -c
  fi
}

_ebprof_report_commands='script info dump diff merge'
_ebprof_report_flags='-h --help --follow --version --stdio --children --no-children -G --inverted --header
  --header-only --annotate --delimit --lines --no-demangle --no-inline --include-idle --gil
  --wakers --kernel-only --user-only --no-cache'
_ebprof_report_valued='-i --input -o --output --max-memory --split --labels --format -n --rows -s --sort
  --percent-limit -g --call-graph --prefix --symfs --debug-dir --cache-dir --debuginfod-timeout
  --unwind
  --pid --pids --tid --tids -c --comm --comms -C --cpu --time --view --weight
  -d --dso --dsos -S --symbol --symbols --max-stack'
_ebprof_report_diff_valued='--normalize --join'

_ebprof_report_value() {
  case $1 in
    -i | --input | -o | --output) _ebprof_reply_files -f ;;
    --symfs | --debug-dir | --cache-dir) _ebprof_reply_files -d ;;
    --labels) _ebprof_reply_list 'pid tid comm cpu cgroup none' ;;
    --format) _ebprof_reply -W 'top folded script pprof flamegraph svg' ;;
    -s | --sort) _ebprof_reply_list 'comm pid tid cpu cgroup dso state symbol sym' ;;
    -g | --call-graph) _ebprof_reply -W 'graph fractal caller callee flat folded none' ;;
    --prefix) _ebprof_reply -W 'comm pid comm,pid pid,comm none' ;;
    --unwind) _ebprof_reply -W 'dwarf fp' ;;
    --view) _ebprof_reply -W 'oncpu offcpu wall' ;;
    --weight) _ebprof_reply -W 'auto samples time' ;;
    --normalize) _ebprof_reply -W 'none total per-second per-cpu-second' ;;
    --join) _ebprof_reply -W 'symbol address' ;;
    *) COMPREPLY=() ;;
  esac
}

_ebprof_report() {
  local opt cur args command=""
  _ebprof_parse "$_ebprof_report_valued $_ebprof_report_diff_valued"
  # The command is the first argument; the report's options still apply
  # after it, and diff has two of its own.
  ((${#args[@]})) && command=${COMP_WORDS[args[0]]}
  if [[ -n $opt ]]; then
    _ebprof_report_value "$opt"
  elif [[ $cur == -* ]]; then
    local options="$_ebprof_report_flags $_ebprof_report_valued"
    [[ $command == diff ]] && options+=" $_ebprof_report_diff_valued"
    _ebprof_reply -W "$options"
  elif [[ -z $command ]]; then
    _ebprof_reply -W "$_ebprof_report_commands"
  else
    _ebprof_reply_files -f  # the recordings a command reads
  fi
}

complete -F _ebprof_record ebprof-record
complete -F _ebprof_report ebprof-report
