"""`rmh completion bash|zsh|fish`: a shell completion script, generated from the parser.

The script is derived from the full parser (every command module registers its commands), so
it completes exactly the commands and options `rmh` has: the command name after the global
options, then that command's options; positional arguments complete file names. Install:
    bash: rmh completion bash > ~/.local/share/bash-completion/completions/rmh
    zsh:  rmh completion zsh > "${fpath[1]}/_rmh"
    fish: rmh completion fish > ~/.config/fish/completions/rmh.fish
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

SHELLS = ("bash", "zsh", "fish")


def command_options() -> tuple[list[str], dict[str, tuple[str, list[str]]]]:
    """The global options, and for each command (in help order) its help and options."""
    from harness.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help or "" for a in sub._choices_actions}
    glob = sorted(o for a in parser._actions for o in a.option_strings)
    table: dict[str, tuple[str, list[str]]] = {}
    for name, cmd in sub.choices.items():
        opts = sorted(o for a in cmd._actions for o in a.option_strings)
        table[name] = (helps.get(name, ""), opts)
    return glob, table


def bash(glob: list[str], table: dict[str, tuple[str, list[str]]]) -> str:
    cases = "".join(f'        {name}) opts="{" ".join(opts)}" ;;\n'
                    for name, (_, opts) in table.items())
    return f"""# bash completion for rmh (rmh completion bash)
_rmh() {{
    local cur cmd i
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    cmd=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in
            --vault) ((i++)) ;;
            -*) ;;
            *) cmd="${{COMP_WORDS[i]}}"; break ;;
        esac
    done
    if [[ "${{COMP_WORDS[COMP_CWORD-1]}}" == "--vault" ]]; then
        COMPREPLY=($(compgen -d -- "$cur")); return
    fi
    if [[ -z "$cmd" ]]; then
        COMPREPLY=($(compgen -W "{" ".join(table)} {" ".join(glob)}" -- "$cur")); return
    fi
    local opts=""
    case "$cmd" in
{cases}    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
complete -o filenames -F _rmh rmh
"""


def _zsh_quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "'\\''").replace(":", "\\:")


def zsh(glob: list[str], table: dict[str, tuple[str, list[str]]]) -> str:
    commands = "".join(f"        '{name}:{_zsh_quote(helptext)}'\n"
                       for name, (helptext, _) in table.items())
    cases = "".join(f"        {name}) _arguments {' '.join(repr(o) for o in opts)} "
                    "'*:file:_files' ;;\n" for name, (_, opts) in table.items())
    return f"""#compdef rmh
# zsh completion for rmh (rmh completion zsh)
_rmh() {{
    local -a commands
    commands=(
{commands}    )
    _arguments -C '--vault[the vault folder]:folder:_files -/' '(- *)--version' \\
        '(- *)'{{-h,--help}} '1:command:->cmd' '*::arg:->args'
    case $state in
    cmd) _describe -t commands 'rmh command' commands ;;
    args)
        case $words[1] in
{cases}        esac ;;
    esac
}}
_rmh "$@"
"""


def fish(glob: list[str], table: dict[str, tuple[str, list[str]]]) -> str:
    lines = ["# fish completion for rmh (rmh completion fish)",
             "complete -c rmh -l vault -r -a '(__fish_complete_directories)' "
             "-d 'the vault folder'",
             "complete -c rmh -l version -d 'print the version'"]
    for name, (helptext, opts) in table.items():
        text = helptext.replace("'", "\\'")
        lines.append(f"complete -c rmh -f -n __fish_use_subcommand -a {name} -d '{text}'")
        for opt in opts:
            if opt.startswith("--"):
                lines.append(f"complete -c rmh -n '__fish_seen_subcommand_from {name}' "
                             f"-l {opt[2:]}")
    return "\n".join(lines) + "\n"


def cmd_completion(args: argparse.Namespace) -> int:
    glob, table = command_options()
    render = {"bash": bash, "zsh": zsh, "fish": fish}[args.shell]
    sys.stdout.write(render(glob, table))
    return 0


def register(sub: Any) -> None:
    """Add `rmh completion` to the parser."""
    helptext = "print a shell completion script (bash, zsh or fish)"
    p: argparse.ArgumentParser = sub.add_parser("completion", help=helptext,
                                                description=helptext)
    p.add_argument("shell", choices=SHELLS)
    p.set_defaults(func=cmd_completion)
