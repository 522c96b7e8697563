#!/usr/bin/env bash
# A command's man page and bash completion against its --help, the one
# list of options that cannot be wrong, so that neither drifts from it:
#
#   help_drift.sh man BINARY MAN_PAGE
#     Every option --help lists, of the command and of each subcommand, is
#     documented under OPTIONS (a subcommand's under an .SS that starts
#     with its name), and every option documented there exists; each choice
#     --help lists ({a,b}) is named in its option's entry; each subcommand
#     is a tag under COMMANDS; the version is the binary's; man renders the
#     page without a warning (where man is installed).
#
#   help_drift.sh completion BINARY COMPLETION MAN_PAGE
#     The completion offers exactly the options --help lists (after a
#     subcommand, its own too), reads a value after exactly the options
#     that take one, offers --help's choices (after --opt= too), only
#     values the man page names, files for a FILE and directories for a
#     DIR, and (without subcommands) commands after the options.
#
# One line per disagreement, then a nonzero exit.
set -euo pipefail

failures=0
fail() {
  echo "$*" >&2
  failures=$((failures + 1))
}

# "option NAME VALUED CHOICES..." per option name and "command NAME" per
# subcommand, from CLI11's --help.
parse_help() {
  awk '
    /^Subcommands:/ { in_commands = 1; next }
    /^$/ { in_commands = 0 }
    in_commands { if ($0 ~ /^  [a-z]/) print "command\t" $1; next }
    {
      # An option line starts with its names; a description wrapped onto
      # the next line is indented far deeper.
      if (!match($0, /^ +-/) || RLENGTH > 9) next
      valued = match($0, /^ +-[^ ]+ [A-Z][A-Z]+/) ? 1 : 0
      choices = ""
      if (match($0, /\{[^}]*\}/)) {
        choices = substr($0, RSTART + 1, RLENGTH - 2)
        gsub(/[ ,|]+/, " ", choices)
      }
      n = split($1, names, ",")
      for (i = 1; i <= n; i++) print "option\t" names[i] "\t" valued "\t" choices
    }'
}

# From the man page: "option KEY NAMES METAVAR TEXT" per entry under
# OPTIONS (KEY: the subcommand of its .SS, or "main"), "command NAME" per
# tag under COMMANDS, "version V" from .TH. Fonts and escapes go, so TEXT
# reads as man shows it.
parse_man() {
  awk -v commands="$1" '
    function plain(s) {
      gsub(/\\f[BIRP]/, "", s); gsub(/\\-/, "-", s); gsub(/\\\(aq/, "\047", s)
      gsub(/\\&/, "", s); sub(/^\.[A-Za-z]+ */, "", s); gsub(/"/, "", s)
      return s
    }
    function flush() {
      if (names != "") print "option\t" key "\t" names "\t" metavar "\t" text
      names = ""
    }
    BEGIN { n = split(commands, c, " "); for (i = 1; i <= n; i++) command[c[i]] = 1 }
    /^\.\\"/ { next }
    /^\.TH/ { flush(); if (match($0, /"ebprof [^"]*"/)) print "version\t" substr($0, RSTART + 8, RLENGTH - 9); next }
    /^\.SH/ { flush(); section = plain($0); key = "main"; next }
    /^\.SS/ { flush(); split(plain($0), w, " "); key = (w[1] in command) ? w[1] : "main"; next }
    /^\.TP/ { tag = 1; next }
    tag {
      tag = 0; t = plain($0)
      if (section == "COMMANDS") { split(t, w, " "); print "command\t" w[1]; next }
      if (section != "OPTIONS") next
      found = ""; mv = ""
      n = split(t, w, /[ ,]+/)
      for (i = 1; i <= n; i++) {
        if (w[i] ~ /^--?[A-Za-z0-9]/) found = found " " w[i]
        else if (found != "" && mv == "" && match(w[i], /^[A-Za-z]+/)) mv = substr(w[i], 1, RLENGTH)
      }
      if (found != "") { flush(); names = substr(found, 2); metavar = mv; text = t }
      else if (names != "") text = text " " t
      next
    }
    names != "" { text = text " " plain($0) }
    END { flush() }' "$2"
}

# The lines of $1 that are not in $2, as sets.
missing_from() {
  comm -23 <(sort -u <<<"$1") <(sort -u <<<"$2")
}

# A failure ($3, %s the line) for each line of $1 missing from $2, and
# one ($4) for each line of $2 missing from $1.
both_ways() {
  local line
  for line in $(missing_from "$1" "$2"); do
    fail "${3//%s/$line}"
  done
  for line in $(missing_from "$2" "$1"); do
    fail "${4//%s/$line}"
  done
}

one_line() {
  paste -sd' ' <<<"$1"
}

# Field $3 of the tab-separated lines of $2 whose first field is $1.
field() {
  awk -F'\t' -v kind="$1" -v n="$3" '$1 == kind { print $n }' <<<"$2"
}

# "METAVAR<TAB>TEXT" of the man page's entry ($1, parsed) for option $3 of
# key $2.
entry_of() {
  awk -F'\t' -v key="$2" -v o="$3" '$1 == "option" && $2 == key {
    n = split($3, w, " "); for (i = 1; i <= n; i++) if (w[i] == o) print $4 "\t" $5 }' <<<"$1"
}

case ${1:-}:$# in
  man:3 | completion:4) ;;
  *)
    echo "usage: help_drift.sh man BINARY MAN_PAGE | completion BINARY COMPLETION MAN_PAGE" >&2
    exit 2
    ;;
esac
binary=$2
name=$(basename "$binary")
help=$("$binary" --help | parse_help)
commands=$(field command "$help" 2)
declare -A help_of=([main]="$help")
for c in $commands; do
  # A subcommand's --help lists only its own options; its -h is the main one.
  help_of[$c]=$("$binary" "$c" --help | parse_help | awk -F'\t' '$2 != "-h" && $2 != "--help"')
done

check_man() {
  local page=$1 man key names
  man=$(parse_man "$commands" "$page")
  for key in main $commands; do
    local where=$name
    [[ $key == main ]] || where="$name $key"
    names=$(field option "${help_of[$key]}" 2)
    local documented
    documented=$(awk -F'\t' -v key="$key" '$1 == "option" && $2 == key { print $3 }' <<<"$man" | tr ' ' '\n')
    both_ways "$names" "$documented" \
      "$page: $where --help lists %s, which the man page does not document" \
      "$page: documents %s for $where, which $where --help does not list"
    # Each fixed choice is named in its option's entry.
    while IFS=$'\t' read -r kind option _ choices; do
      [[ $kind == option && -n $choices ]] || continue
      local entry
      entry=$(entry_of "$man" "$key" "$option")
      for choice in $choices; do
        names_word "$choice" "$entry" ||
          fail "$page: the entry of $option does not name $choice, a choice $where --help lists"
      done
    done <<<"${help_of[$key]}"
  done
  local tagged
  tagged=$(field command "$man" 2)
  both_ways "$commands" "$tagged" \
    "$page: $name --help lists the command %s, which COMMANDS does not describe" \
    "$page: COMMANDS describes %s, which $name --help does not list"
  local version page_version
  version=$("$binary" --version | awk '{ print $2 }')
  page_version=$(field version "$man" 2)
  [[ $page_version == "$version" ]] ||
    fail "$page: .TH says version '$page_version', $name --version says $version"
  if command -v man >/dev/null; then
    local warnings
    warnings=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$page" 2>&1 >/dev/null) ||
      fail "$page: man cannot render it"
    [[ -z $warnings ]] || fail "$page: man warns: $warnings"
  else
    echo "man is not installed: the page is not rendered" >&2
  fi
}

# Whether $2 has $1 as a word of its own (a value may end in ":").
names_word() {
  local w='A-Za-z0-9_-'
  [[ " $2 " =~ [^$w]"$1"([^$w]|$) ]] || [[ $1 == *: && " $2 " == *[^$w]"$1"* ]]
}

# What the completion offers for the words given, the last being completed,
# one per line, in the current directory. Readline runs completions without
# -e and -u: so does this.
complete_words() {
  (
    set +eu
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMPREPLY=()
    "$completer" >/dev/null 2>&1
    printf '%s\n' "${COMPREPLY[@]}"
  ) | sed '/^$/d'
}

check_completion() {
  local script=$1 page=$2 man
  # shellcheck source=/dev/null
  source "$script"
  completer=$(complete -p "$name" 2>/dev/null | awk '{ for (i = 1; i < NF; i++) if ($i == "-F") print $(i + 1) }')
  if [[ -z $completer ]]; then
    fail "$script: registers no completion for $name"
    return
  fi
  man=$(parse_man "$commands" "$page")
  # Values are completed in an empty directory, so that only words come;
  # files and directories beside one of each.
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  files=$scratch/files
  mkdir -p "$scratch/empty" "$files/tree"
  touch "$files/recording.data"
  cd "$scratch/empty"

  local all_main
  all_main=$(field option "$help" 2)
  local key
  for key in main $commands; do
    local before=("$name") where=$name all=$all_main
    if [[ $key != main ]]; then
      before+=("$key") where="$name $key"
      all=$(printf '%s\n%s\n' "$all_main" "$(field option "${help_of[$key]}" 2)")
    fi
    local offered
    offered=$(complete_words "${before[@]}" -)
    both_ways "$all" "$offered" \
      "$script: '$where -<TAB>' does not offer %s, which --help lists" \
      "$script: '$where -<TAB>' offers %s, which --help does not list"
    while IFS=$'\t' read -r kind option valued choices; do
      [[ $kind == option ]] && check_option_completion
    done <<<"${help_of[$key]}"
  done

  if [[ -n $commands ]]; then
    offered=$(complete_words "$name" "")
    [[ $(sort <<<"$offered") == $(tr ' ' '\n' <<<"$commands" | sort) ]] ||
      fail "$script: '$name <TAB>' offers '$(one_line "$offered")', not the commands '$(one_line "$commands")'"
  else
    grep -qx ls <<<"$(complete_words "$name" -- l)" ||
      fail "$script: '$name -- l<TAB>' does not offer the command ls"
    [[ -z $(complete_words "$name" ls -) ]] ||
      fail "$script: '$name ls -<TAB>' offers $name's options, where the words are the command's"
  fi
}

# One option of --help, read into option, valued and choices, completed
# after the words in before (the command, and the subcommand of key), where
# bare "-" offers what is in offered.
check_option_completion() {
  local after
  after=$(complete_words "${before[@]}" "$option" -)
  if ((valued == 0)); then
    [[ $(sort <<<"$after") == $(sort <<<"$offered") ]] ||
      fail "$script: '$where $option -<TAB>' does not offer the options: $option takes no value"
    return
  fi
  [[ -z $after ]] || fail "$script: '$where $option -<TAB>' offers options: $option takes a value"
  local values
  values=$(complete_words "${before[@]}" "$option" "")
  if [[ -n $choices ]]; then
    local items
    items=$(tr ',' '\n' <<<"$values")
    [[ $(sort -u <<<"$items") == $(tr ' ' '\n' <<<"$choices" | sort -u) ]] ||
      fail "$script: '$where $option <TAB>' offers '$(one_line "$values")', --help says {$choices}"
    # Typed as --opt=, readline puts the "=" in a word of its own.
    [[ $(complete_words "${before[@]}" "$option" =) == "$values" ]] ||
      fail "$script: '$where $option=<TAB>' offers other values than '$where $option <TAB>'"
  fi
  local entry metavar
  entry=$(entry_of "$man" "$key" "$option")
  metavar=${entry%%$'\t'*} entry=${entry#*$'\t'}
  local unnamed=()
  for v in $(tr ',' '\n' <<<"$values" | sort -u); do
    names_word "$v" "$entry" || unnamed+=("$v")
  done
  if ((${#unnamed[@]})); then
    local more=""
    ((${#unnamed[@]} <= 5)) || more=" and $((${#unnamed[@]} - 5)) more"
    fail "$script: '$where $option <TAB>' offers what its man page entry does not name:" \
      "${unnamed[*]:0:5}$more"
  fi
  # Beside a file and a directory: a FILE may be in either, a DIR is not
  # the file.
  local found
  found=$(cd "$files" && complete_words "${before[@]}" "$option" "")
  case $metavar in
    FILE) grep -qx recording.data <<<"$found" ||
      fail "$script: '$where $option <TAB>' does not offer files, for its $metavar" ;;
    DIR) [[ $found == tree ]] ||
      fail "$script: '$where $option <TAB>' offers '$(one_line "$found")', not only directories, for its $metavar" ;;
  esac
}

if [[ $1 == man ]]; then
  check_man "$3"
else
  check_completion "$3" "$4"
fi
if ((failures)); then
  echo "$failures disagreement(s) with $name --help" >&2
  exit 1
fi
echo "$1: $name agrees with its --help"
