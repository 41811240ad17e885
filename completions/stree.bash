# bash completion for stree                      -*- shell-script -*-
# Install: stree completion bash > ~/.local/share/bash-completion/completions/stree
# (or `make install-completions`), or add to ~/.bashrc: eval "$(stree completion bash)"
#
# Candidates come from `stree __complete`, which reads the click definitions and the
# session named by an earlier -s/--session-dir/--agent-dir/-C on the same line.

_stree() {
    local cur=${COMP_WORDS[COMP_CWORD]} kind group value desc reply q
    local -a args
    if [[ -n ${COMP_LINE-} ]]; then
        # the line itself, so that :/text, A..B and --opt=value reach stree whole
        args=(--line "${COMP_LINE:0:${COMP_POINT:-${#COMP_LINE}}}")
    else
        args=(-- "${COMP_WORDS[@]:1:COMP_CWORD}")
    fi
    reply=$(command "${COMP_WORDS[0]:-stree}" __complete bash "$cur" "${args[@]}" 2>/dev/null) || return 0
    COMPREPLY=()
    {
        IFS= read -r kind
        while IFS=$'\t' read -r group value desc; do
            [[ -n $value ]] || continue
            printf -v q '%q' "$value"
            COMPREPLY+=("$q")
        done
    } <<<"$reply"
    case $kind in
        files)
            compopt -o filenames 2>/dev/null
            COMPREPLY+=($(compgen -f -- "$cur"))
            ;;
        dirs)
            compopt -o filenames 2>/dev/null
            COMPREPLY+=($(compgen -d -- "$cur"))
            ;;
        jsonl)
            compopt -o filenames 2>/dev/null
            local f
            while IFS= read -r f; do
                [[ -d $f || $f == *.jsonl ]] && COMPREPLY+=("$f")
            done < <(compgen -f -- "$cur")
            ;;
    esac
    compopt -o nosort 2>/dev/null  # labels, then entries, then @ root :/ (bash 4.4+)
    return 0
}
complete -F _stree stree
