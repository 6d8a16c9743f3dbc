# bash completion for cephmark: commands, each command's options (read from its own
# `cephmark help COMMAND`, so they never fall behind the binary), `cluster` actions,
# `options` targets, scenario scripts for `run`, and folders for -o and the report inputs.
_cephmark() {
    local cur prev words cword
    _init_completion || return
    local commands="run cluster rados-bench rados-cleanup cleanup rbd-bench swift-bench report compare agent netserver options help"
    if ((cword == 1)); then
        mapfile -t COMPREPLY < <(compgen -W "$commands --help --version" -- "$cur")
        return
    fi
    local command=${words[1]}
    case $prev in
    -o | --output | --dir | -L)
        _filedir -d
        return
        ;;
    -c | --conf | -k | --keyring | --params)
        _filedir
        return
        ;;
    esac
    if [[ $cur == -* ]]; then
        local flags help=(help "$command")
        # `cluster ACTION` has options of its own: `cephmark cluster up --help`
        [[ $command == cluster && cword -gt 2 ]] && help=(cluster "${words[2]}" --help)
        flags=$("${words[0]}" "${help[@]}" 2>/dev/null | grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | tr -d ' ,' | sort -u)
        mapfile -t COMPREPLY < <(compgen -W "$flags" -- "$cur")
        return
    fi
    case $command in
    cluster) ((cword == 2)) && mapfile -t COMPREPLY < <(compgen -W "up down status env kill restart" -- "$cur") ;;
    options) mapfile -t COMPREPLY < <(compgen -W "rados rbd swift s3 disk socket null engine" -- "$cur") ;;
    help) mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur") ;;
    run) _filedir lua ;;
    report | compare) _filedir -d ;;
    *) _filedir ;;
    esac
}
complete -F _cephmark cephmark
