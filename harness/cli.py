"""The `rmh` command line: argument parsing and dispatch to one module per command group.

Each module in `harness.commands` exposes `register(subparsers)`, which adds its commands and
sets `func(args) -> int` on them. Exit codes: 0 success, 1 operational error (one line on
stderr), 2 usage error (argparse's own convention).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .commands.catalog import COMMANDS, modules
from .commands.output import CommandFailed, json_line
from .config import ConfigError
from .config_file import user_path
from .stdio import StreamError

# Command modules, in help order. Each adds its own sub-commands.
COMMAND_MODULES: tuple[str, ...] = modules()


def version() -> str:
    """The installed rmh version (the distribution's metadata; 0.1.0 from a bare checkout)."""
    from importlib import metadata

    try:
        return metadata.version("rmh")
    except metadata.PackageNotFoundError:
        return "0.1.0"


class _Version(argparse.Action):
    """`--version`, reading the distribution's metadata only when asked (importlib.metadata
    costs a third of a second on a loaded machine, which every hook process would pay)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"rmh {version()}")
        parser.exit()


class Parser(argparse.ArgumentParser):
    """argparse with one change: under --json a usage error (exit 2) also prints one JSON
    document on stdout, {"error": {"kind": "usage", "message", "command"}}, so a script that
    asked for JSON always gets JSON."""

    json_errors = False

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments:") and \
                re.search(r"(^|\s)--vault(=|\s|$)", message.split(":", 1)[1]):
            message += " (--vault goes before the command: rmh --vault PATH COMMAND ...)"
        if Parser.json_errors:
            doc = {"error": {"kind": "usage", "message": message, "command": self.prog}}
            print(json_line(doc))
        super().error(one_line(message))

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # Python 3.11's argparse drops every "--" that is an argument's own value: an option's
        # (`--find=--`, `--session=--`) or a positional's after the separator (`rmh
        # conversation note -- ID -- T X`): it got [], unconverted and unchecked (a traceback
        # later on). It is the value "--" (one value alone is never the separator).
        one = action.nargs is None or (action.nargs == "?" and bool(action.option_strings))
        if one and arg_strings == ["--"]:
            value = self._get_value(action, "--")
            self._check_value(action, value)
            return value
        return super()._get_values(action, arg_strings)


def _base_parser() -> tuple[argparse.ArgumentParser, Any]:
    """The global options and an empty sub-command table."""
    parser = Parser(
        prog="rmh",
        description="rmh, the recursive memory harness: an Obsidian vault as an agent's memory.",
    )
    parser.add_argument(
        "--vault",
        metavar="PATH",
        help="the vault folder (default: $RMH_VAULT; there is no other fallback)",
    )
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="show the program's version number and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    return parser, sub


def build_parser(select: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser. With `select` (command modules), only those modules are imported and
    register their commands; every other catalogued command is listed with its help
    (harness.commands.catalog). Without it, every module registers its commands."""
    parser, sub = _base_parser()
    for name in modules() if select is None else select:
        importlib.import_module(name).register(sub)
    if select is not None:
        for command, (_, helptext) in COMMANDS.items():
            if command not in sub.choices:
                sub.add_parser(command, help=helptext, description=helptext)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The command named in `argv`: the first word after the global options."""
    words = list(argv)
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--vault":
            i += 2
            continue
        if word.startswith("-"):
            i += 1
            continue
        return word
    return None


def error_kind(exc: BaseException) -> str:
    """The snake_case `kind` of an error: its `code_name` (every vault, harness and command
    error has one), `os_error` for any other OSError, else the class name in snake_case."""
    code = getattr(exc, "code_name", None)
    if isinstance(code, str):
        return code
    if isinstance(exc, OSError):
        return "os_error"
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(exc).__name__).lower()


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def one_line(text: str) -> str:
    """`text` with its control characters backslash-escaped (a newline as `\\n`, ESC as
    `\\x1b`): an error quotes the user's words, and `--vault $'a\\nb'` made the one
    stderr line three, a name holding ESC sent a terminal escape sequence."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def _failed(args: argparse.Namespace, exc: Exception) -> int:
    """An operational error: one line on stderr, exit 1; under --json also one JSON document
    on stdout (`{"error": {"kind", "message", ...data}}`), so a script always gets JSON."""
    from .errors import BadArgument
    from .unready import STATE_FIX  # at failure only: it imports the server's tables

    param = getattr(exc, "param", None)  # a learning log's point before its base
    if isinstance(param, str) and error_kind(exc) == "ledger_error":
        exc = BadArgument(param, str(exc))  # a bad argument, not the fix for a damaged file
    message = str(exc).encode("utf-8", "backslashreplace").decode("utf-8")

    fix = STATE_FIX.get(error_kind(exc))  # a file of .rmh/ rmh cannot use: what to do
    print(f"rmh: {one_line(message)}" + (f" (to fix: {fix})" if fix else ""), file=sys.stderr)
    if getattr(args, "json", False):
        data = getattr(exc, "data", None)
        fields = data() if callable(data) else {}
        with contextlib.suppress(StreamError):  # the error may be stdout's own
            print(json_line({"error": {"kind": error_kind(exc), "message": message[:500],
                                       **fields}}))
    return 1


GLOBAL_OPTIONS = ("--vault", "--version", "-h", "--help")
# Commands a missing --vault folder does not stop: they make it (init, setup after asking,
# demo), or answer a client and say what to do (serve), or must never fail it (hook).
MISSING_VAULT_OK = ("init", "setup", "demo", "serve", "hook")  # a hook never fails its client


def _unknown_global(words: Sequence[str]) -> str | None:
    """An option before the command that `rmh` does not know (`rmh --bogus`)."""
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            return None
        if word.split("=", 1)[0] not in GLOBAL_OPTIONS:
            return word
        i += 2 if word == "--vault" else 1
    return None


def _not_a_folder(vault: str) -> Exception | None:
    """Why --vault names no folder (None: it does). A name the system refuses to look up (a
    component past 255 bytes: ENAMETOOLONG) is one line too; it was a traceback."""
    from vault import NotAVault

    try:
        if user_path(vault).is_dir():
            return None
        if user_path(vault).exists():
            return NotAVault(vault, "not a folder")
    except OSError as exc:
        return NotAVault(vault, exc.strerror or type(exc).__name__)
    return NotAVault(vault, f"no such folder; `rmh init {vault}` makes one")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `rmh` console script and `python -m harness`."""
    words = sys.argv[1:] if argv is None else list(argv)
    if command_of(words) == "serve":  # its stop signals held from before its modules import
        from rpc import holding_signals, shutdown_signals  # (seconds): rpc/held_signals.py

        with holding_signals(shutdown_signals()):
            return _main(words)
    return _main(words)


def _main(words: list[str]) -> int:
    # --json after `--` is a word (a note named `--json`), not the option
    Parser.json_errors = "--json" in words[:words.index("--") if "--" in words else None]
    bogus = _unknown_global(words)
    if bogus is not None:
        _base_parser()[0].error(f"unknown option {bogus} (options go after the command: "
                                "rmh COMMAND --help)")
    command = command_of(words)
    if command is None:  # `rmh`, `rmh --help`, `rmh --version`: no command module
        select: tuple[str, ...] | None = ()
    elif command in COMMANDS:  # only the module of the command that runs
        select = (COMMANDS[command][0],)
    else:  # not catalogued (a typo, or a command added without a row): every module
        select = None
    args = build_parser(select).parse_args(words)
    vault = getattr(args, "vault", None)
    if vault and args.command not in MISSING_VAULT_OK:
        refused = _not_a_folder(vault)
        if refused is not None:
            return _failed(args, refused)
    try:
        code: int = args.func(args)
    except BrokenPipeError:
        return 1
    except StreamError as exc:  # stdout could not be written, stdin read (harness/stdio.py)
        return 1 if exc.broken_pipe else _failed(args, exc)
    except (CommandFailed, ConfigError) as exc:
        return _failed(args, exc)
    except Exception as exc:
        from vault import VaultError, storage_error

        if isinstance(getattr(exc, "code_name", None), str) and not isinstance(exc, VaultError):
            return _failed(args, exc)  # a typed harness error (a Ray job that failed)
        typed = exc if isinstance(exc, VaultError) else storage_error(exc)
        if typed is not None:  # a vault error, a full disk, a refused permission
            return _failed(args, typed)
        if isinstance(exc, OSError):
            return _failed(args, exc)
        raise
    except KeyboardInterrupt:
        from .interrupt import interrupted

        return interrupted()
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
