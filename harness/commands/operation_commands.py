"""The vault commands derived from the operation table: search, read, write, edit, move,
delete, links, backlinks, list.

Each command is an operation of harness.operations offered on the command line. What the
command takes, and how it checks it, comes from the operation's parameter declarations
(harness.validate.Param): the kind (an integer option parses as one; a boolean is a flag,
`--no-X` when it defaults to true), the choices, the bounds, whether a positional is optional
(it has a default), and the default itself (an option not given is not passed: the table's
default applies). The arguments are bound and checked once, by `Operation.arguments`, and
a value out of bounds is a usage error (exit 2) naming the option. The command then calls the
operation (harness.binding.BoundOperation) on the configured vault, in this thread, and prints its
result: under `--json` one JSON document, else the human rendering of its `Command.render`.

What a `Command` adds to its operation is the command line's own: which parameters are
positional, the option names and help text where they differ from the parameter's, options
of the command line only (`--session`, `--no-dense`), input read from stdin, and the
rendering (the JSON document and the human text) the command has always printed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.binding import BoundOperation, Targets
from harness.compose import open_vault
from harness.config import Config, load
from harness.errors import BadArgument, Refused
from harness.extraction import configured
from harness.operations import OPERATIONS, Operation
from harness.validate import Param
from harness.vault_ops import VaultCalls, VaultThread
from vault import Ledger

from .catalog import COMMANDS
from .output import CommandFailed, for_terminal, json_line
from .progress import Progress

Render = Callable[[argparse.Namespace, Any], tuple[Any, str]]


@dataclass(frozen=True)
class Arg:
    """One argument of a command, in the order its help lists it: the operation parameter it
    gives, its flags (none: positional), and what the command line says differently from the
    parameter's declaration (its help, its metavar, a conversion of its text)."""

    param: str
    flags: tuple[str, ...] = ()
    help: str | None = None
    metavar: str | None = None
    convert: Callable[[str], Any] | None = None  # text -> the parameter's value (at run time)


@dataclass(frozen=True)
class Command:
    """An operation as an `rmh` command (see the module doc)."""

    name: str
    op: str
    args: tuple[Arg, ...]
    render: Render
    session: bool = False  # --session ID: the use counts in that session (learning)
    dense: bool = False  # loads the embedder unless --no-dense
    prepare: bool = False  # embeds what is missing first (saying so on stderr)
    learning: bool = True  # opens the learning ledger
    json_last: bool = False  # --json after the other options (in help and usage)
    described: bool = True  # its help shows the one-line help as a description too
    stdin: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None  # input read from stdin
    defaults: Callable[[Config], dict[str, Any]] = field(default=lambda cfg: {})


MISSING_EMBEDDINGS = ("rmh: some notes have no embeddings yet; embedding them now (run "
                      "`rmh index` to fill them ahead of time, or pass --no-dense)")
SESSION_HELP = ("attribute this use to session ID (learning; `rmh end-session ID` ends it, and an "
                "ended ID is refused)")


def session_type() -> Callable[[str], Any]:
    """argparse `type` of a session id: the rule of session.start's `session` (no lone
    surrogate -- argv bytes that were not UTF-8 --, not blank, at most 200 characters)."""
    checked = value_type(next(p for p in operation("session_start").params
                              if p.name == "session"))

    def parse(text: str) -> Any:
        return checked(utf8_text(text))

    return parse


def utf8_text(text: str) -> str:
    """argparse `type` of a word that must be text: refused when it holds argv bytes that
    were not UTF-8 (a lone surrogate), which nothing can write to a UTF-8 file."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError(
            "holds bytes that are not UTF-8 (a lone surrogate)") from None
    return text


def value_type(p: Param) -> Callable[[str], Any]:
    """argparse `type` of a parameter: the text parsed to its kind and checked against its
    declaration; a failure is a usage error naming the argument."""

    def parse(text: str) -> Any:
        value: Any = text
        if p.kind == "integer":
            try:
                value = int(text)
            except ValueError:
                value = None
            bounded = p.minimum is not None and p.maximum is not None
            if bounded and (value is None or not p.minimum <= value <= p.maximum):
                raise argparse.ArgumentTypeError(
                    f"must be an integer from {p.minimum} to {p.maximum}")
            if value is None:
                raise argparse.ArgumentTypeError(f"not an integer: {text!r}")
        elif p.kind == "string" and not p.blank_ok and not text.strip():
            raise argparse.ArgumentTypeError(f"the {p.name} must not be empty")
        try:
            p.check(value)
        except BadArgument as exc:
            raise argparse.ArgumentTypeError(exc.reason) from None
        return value

    return parse


def add_command(sub: Any, command: Command) -> argparse.ArgumentParser:
    """Add `command` to the `rmh` sub-command table."""
    op = operation(command.op)
    params = {p.name: p for p in op.params}
    helptext = COMMANDS[command.name][1]
    parser: argparse.ArgumentParser = sub.add_parser(
        command.name, help=helptext, description=helptext if command.described else None)
    if not command.json_last:
        parser.add_argument("--json", action="store_true", help="print one JSON document")
    for arg in command.args:
        add_arg(parser, arg, params[arg.param])
    if command.dense:
        parser.add_argument("--no-dense", action="store_true", help="skip the ONNX embedder")
    if command.session:
        parser.add_argument("--session", default=None, metavar="ID", help=SESSION_HELP,
                            type=session_type())
    if command.json_last:
        parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.set_defaults(func=lambda args: run(command, args, parser))
    return parser


def add_arg(parser: argparse.ArgumentParser, arg: Arg, p: Param) -> None:
    """One argument: its action, type, choices and default from the parameter `p` (an option
    not given is absent from the namespace: the parameter's default applies)."""
    kw: dict[str, Any] = {}
    if not arg.flags:  # positional (no help unless the command gives one); optional when
        if arg.help is not None:  # the parameter has a default
            kw["help"] = arg.help
        if arg.metavar is not None:
            kw["metavar"] = arg.metavar
        if not p.required:
            kw.update(nargs="?", default=p.default)
        parser.add_argument(p.name, **_typed(p, arg), **kw)
        return
    kw.update(dest=p.name, default=argparse.SUPPRESS,
              help=arg.help if arg.help is not None else p.description)
    if p.kind == "boolean":
        kw["action"] = "store_false" if p.default else "store_true"
    else:
        kw.update(metavar=arg.metavar or arg.flags[-1].lstrip("-").upper(), **_typed(p, arg))
    parser.add_argument(*arg.flags, **kw)


def _typed(p: Param, arg: Arg) -> dict[str, Any]:
    if arg.convert is not None:
        return {"type": _checked_by(arg.convert)}
    if p.kind == "any":
        return {}
    if p.choices is not None:
        return {"choices": p.choices}
    return {"type": value_type(p)}


def _checked_by(convert: Callable[[str], Any]) -> Callable[[str], str]:
    """argparse `type` of an argument converted at run time: the text, once `convert` took
    it; a ValueError is a usage error naming the option. `search --as-of 2024-02-30` was exit
    1 (`command_failed`) while `--as-of nan` was exit 2: one option, two contracts."""

    def check(text: str) -> str:
        try:
            convert(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text

    return check


def operation(name: str) -> Operation:
    return next(op for op in OPERATIONS if op.name == name)


def arguments(command: Command, args: argparse.Namespace, cfg: Config) -> dict[str, Any]:
    """The operation's arguments from the command line, stdin and the configuration."""
    given = command.defaults(cfg)
    for arg in command.args:
        if hasattr(args, arg.param):
            value = getattr(args, arg.param)
            given[arg.param] = arg.convert(value) if arg.convert and value is not None \
                else value
    if command.stdin is not None:
        given.update(command.stdin(given))
    return given


class ArgumentRefused(CommandFailed):
    """An argument the operation itself refused once it ran (a cursor it cannot read, a folder
    with no notes): exit 1, kind `bad_argument` with `param` and `reason`, as on MCP."""

    code_name = "bad_argument"

    def __init__(self, exc: BadArgument) -> None:
        super().__init__(str(exc))
        self.param = exc.param
        self.reason = exc.reason

    def data(self) -> dict[str, str]:
        return {"param": self.param, "reason": self.reason}


def run(command: Command, args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Bind and check the arguments once, call the operation on the vault, print the result."""
    op = operation(command.op)
    cfg = load(vault=args.vault)
    given = arguments(command, args, cfg)
    try:
        checked = op.arguments((), given)
    except BadArgument as exc:
        flags = {a.param: (a.flags[0] if a.flags else a.metavar or a.param)
                 for a in command.args}
        parser.error(f"argument {flags.get(exc.param, exc.param)}: {exc.reason}")
    dense = command.dense and not args.no_dense
    with open_vault(cfg, dense=dense, learning=command.learning) as v:
        if command.prepare and dense and v.dense:  # saying so
            v.prepare(progress=Progress(announce=MISSING_EMBEDDINGS))
        session = getattr(args, "session", None)
        if session is not None:
            ended_session(v.ledger, session)
        ops = VaultCalls(v, VaultThread.inline(), lambda: session, configured(cfg, v.root))
        try:
            result = BoundOperation.of(op, Targets(ops).target(op.part), ops.thread).call(checked)
        except BadArgument as exc:  # found by the operation itself (a cursor it cannot read)
            raise ArgumentRefused(exc) from exc
    doc, human = command.render(args, result)
    if args.json:
        print(json_line(doc))
    else:
        sys.stdout.write(for_terminal(human, sys.stdout))
    return 0


def ended_session(ledger: Ledger | None, session: str) -> None:
    """Refuse `--session ID` naming a session that ended: its use would count in no session
    (as serve's session.start refuses the id)."""
    if ledger is not None and ledger.session_ended(session):
        raise Refused("session_error", f"session {session!r} has ended; use another id")


def line(text: str) -> str:
    """Human text as one printed block: printable whatever it holds, newline-terminated."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n" if text else ""


def stdin_text() -> str:
    """All of stdin, as UTF-8: bytes that are not fail the command (one line, nothing
    written; a UnicodeDecodeError traceback before: `printf 'a\\xff' | rmh write N`)."""
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        raise CommandFailed(f"stdin is not UTF-8 text: byte 0x{data[exc.start]:02x} at "
                            f"offset {exc.start}") from None
