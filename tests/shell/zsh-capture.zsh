#!/usr/bin/env zsh
# Print what zsh's completion system offers for a command line, one match per line
# as "VALUE -- DESCRIPTION" (or "VALUE"), in the order zsh lists them.
# usage: zsh-capture.zsh FPATH_DIR|SCRIPT 'stree -s file.jsonl log '
# A real interactive zsh runs in a pty (zpty): compinit loads _stree from FPATH_DIR,
# TAB runs complete-word, and a wrapper around compadd records each match.
zmodload zsh/zpty || { print -u2 'zsh/zpty missing'; exit 2 }
fdir=$1; cmdline=$2

zpty z zsh -f -i
zpty -w z "PROMPT= RPROMPT= PS2=; unsetopt zle_bracketed_paste 2>/dev/null"
[[ -d $fdir ]] && zpty -w z "fpath=(${(q)fdir} \$fpath)"
zpty -w z "autoload -Uz compinit && compinit -u -D"
# a file instead of a directory: source it after compinit, as `source <(stree completion zsh)` does
[[ -f $fdir ]] && zpty -w z "source ${(q)fdir}"
zpty -w z "zstyle ':completion:*' list-grouped false; zstyle ':completion:*' insert-tab false"
zpty -w z 'compadd () {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
  local -a __hits __dscr __tmp
  if (( $@[(I)-d] )); then
    __tmp=${@[$[${@[(i)-d]}+1]]}
    if [[ $__tmp == \(* ]]; then eval "__dscr=$__tmp"; else __dscr=( "${(@P)__tmp}" ); fi
  fi
  builtin compadd -A __hits -D __dscr "$@"
  (( $#__hits )) || return 1
  local i
  for i in {1..$#__hits}; do
    print -r -- "<M>$IPREFIX$__hits[$i]${__dscr[$i]:+ -- ${${__dscr[$i]}#*  -- }}</M>"
  done
  builtin compadd "$@"
}'
zpty -w z "_capture_done () { print -r -- '<EOC>' }"
zpty -w z "comppostfuncs=( _capture_done )"
zpty -w z "bindkey '^I' complete-word"
zpty -w z "print -r -- '<READY>'"
# wait until the shell has read everything above
local line
while zpty -r z line; do [[ $line == *'<READY>'* && $line != *print* ]] && break; done
zpty -w -n z "$cmdline"$'\t'
integer tries=0
while zpty -r z line; do
  [[ $line == *'<EOC>'* && $line != *print* ]] && break
  while [[ $line == *'<M>'*'</M>'* ]]; do
    local rest=${line#*<M>}
    print -r -- "${rest%%</M>*}"
    line=${rest#*</M>}
  done
  (( ++tries > 100000 )) && break
done
zpty -d z
