"""`rmh exec` (run one cell against the vault) and `rmh repl` (an interactive loop for people).

Both run code in the sandboxed worker with the vault functions as globals; the vault itself
is only ever touched by this (trusted) process. `rmh exec` reads the cell from -c or stdin and
prints its output, value and error; with --json, one document (`ExecResult.to_json()`).
What a cell prints is untrusted: on a terminal its control characters are shown escaped
(`output.for_terminal`), never sent to the terminal.
Exit code: 0 when the cell succeeded, 1 when it raised or was stopped; SIGTERM or SIGHUP end
either command with one line and 128 + the signal's number (143, 129), the worker cleaned up.

A cell that reached its deadline while a host function was running (a search building the
index) is answered at the deadline; the host call is abandoned (sandbox/hostcalls.py). The
command then exits at once rather than wait for it: the vault is not closed under it, and
whatever it had not committed to the index is rolled back by SQLite (as after a kill).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from types import FrameType
from typing import Any

from harness.compose import open_vault
from harness.config import Config, load
from harness.extraction import configured
from harness.llm import Broker
from harness.rlm_tools import RlmTools
from harness.tools import build_functions, conversation_functions, vault_functions
from harness.vault_ops import VaultCalls, VaultThread
from sandbox import (
    MAX_DEADLINE_S,
    TIER_NAMES,
    ExecResult,
    Sandbox,
    SandboxError,
    check_deadline,
)

from .operation_commands import stdin_text
from .output import fail, for_terminal, json_line
from .serve import sandbox_config, write_quota

_PROMPT, _MORE = ">>> ", "... "


class _Cell:
    """The sandbox, the vault and the sub-LLM tools of one CLI run; closes all three."""

    def __init__(self, sandbox: Sandbox, vault: Any, rlm: RlmTools) -> None:
        self.sandbox, self.vault, self.rlm = sandbox, vault, rlm

    @property
    def tier(self) -> str:
        return self.sandbox.tier

    def exec(self, code: str) -> ExecResult:
        self.rlm.begin_exec()  # 15 sub-calls per top-level exec
        return self.sandbox.exec(code)

    def close(self) -> None:
        self.sandbox.close()
        self.rlm.broker.close()
        self.vault.close()

    def exit_if_abandoned(self, code: int) -> None:
        """When a host call abandoned at a deadline still runs, leave now (module doc)."""
        if self.sandbox.host_busy is None:
            return
        sys.stdout.flush()
        sys.stderr.flush()
        self.sandbox.close()
        os._exit(code)


def _sandbox(cfg: Config, args: argparse.Namespace) -> _Cell:
    # a setting the sandbox refuses is a ConfigError: kind config_error, as for any bad rmh.toml
    config = sandbox_config(cfg, tier=args.tier, deadline_s=args.deadline,
                            unsafe=args.unsafe_no_sandbox)
    vault = open_vault(cfg, dense=not args.no_dense)
    ops = VaultCalls(vault, VaultThread(), lambda: None, configured(cfg, vault.root))
    rlm = RlmTools(Broker.from_config(cfg.llm))
    try:
        functions = write_quota(cfg).wrap(build_functions(
            vault_functions(ops), conversation_functions(ops), rlm.functions(ops)
        ))
        return _Cell(Sandbox(config, functions), vault, rlm)
    except SandboxError as exc:
        rlm.broker.close()
        vault.close()
        fail(str(exc))


def _print_human(result: ExecResult) -> None:
    sys.stdout.write(for_terminal(result.stdout, sys.stdout))
    sys.stderr.write(for_terminal(result.stderr, sys.stderr))
    if result.value is not None:
        print(for_terminal(result.value, sys.stdout))
    if result.truncated:
        print("[output truncated]", file=sys.stderr)
    if result.error is not None:
        print(for_terminal(result.error.traceback
                            or f"{result.error.type}: {result.error.message}", sys.stderr),
              file=sys.stderr, end="" if result.error.traceback.endswith("\n") else "\n")
    if result.state_lost:
        print("[the worker was restarted: variables were lost]", file=sys.stderr)
    sys.stdout.flush()


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)  # SIGHUP: a closed terminal, a dying session


def _exit_on_stop_signals() -> None:
    """SIGTERM and SIGHUP end the run through the `finally` that closes the sandbox (its
    worker's process group is killed) and the vault, as Ctrl-C does, with one line on stderr
    (`rmh: stopped by SIGHUP`) and exit status 128 + the signal's number (143, 129). SIGHUP
    killed the process outright before: no word, no cleanup but the worker's own
    PR_SET_PDEATHSIG, which still covers a process killed outright."""

    def handler(signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):  # a hung-up terminal refuses the line (EIO)
            os.write(2, f"rmh: stopped by {signal.Signals(signum).name}\n".encode())
        raise SystemExit(128 + signum)

    for sig in STOP_SIGNALS:
        signal.signal(sig, handler)


def cmd_exec(args: argparse.Namespace) -> int:
    _exit_on_stop_signals()
    code = args.code if args.code is not None else stdin_text()
    cell = _sandbox(load(vault=args.vault), args)
    try:
        result = cell.exec(code)
    except BaseException:
        cell.close()
        raise
    if args.json:
        print(json_line(result.to_json()))
    else:
        _print_human(result)
    cell.exit_if_abandoned(0 if result.ok else 1)
    cell.close()
    return 0 if result.ok else 1


def _read_cell() -> str | None:
    """One cell: a line, or a block continued until an empty line (like the Python REPL)."""
    try:
        first = input(_PROMPT)
    except EOFError:
        return None
    lines = [first]
    if first.rstrip().endswith(":") or first.startswith(("@", "class ", "def ")):
        while True:
            try:
                line = input(_MORE)
            except EOFError:
                break
            if not line.strip():
                break
            lines.append(line)
    return "\n".join(lines)


def cmd_repl(args: argparse.Namespace) -> int:
    _exit_on_stop_signals()
    session = _sandbox(load(vault=args.vault), args)
    print(f"rmh repl ({session.tier}); help() lists the vault functions; Ctrl-D quits",
          file=sys.stderr)
    try:
        while (cell := _read_cell()) is not None:
            if cell.strip():
                try:
                    _print_human(session.exec(cell))
                except KeyboardInterrupt:
                    print("\n[interrupted]", file=sys.stderr)
    finally:
        session.exit_if_abandoned(0)
        session.close()
    return 0


def _seconds(text: str) -> float:
    """--deadline: a number of seconds above 0 and at most a day ([sandbox] deadline_s's
    bound); NaN, infinity and 3e6 (past the host's epoll wait) ended in a traceback (SBX11)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not check_deadline(value):  # the sandbox's own bound (sandbox/config.py)
        raise argparse.ArgumentTypeError(
            f"must be above 0 and at most {MAX_DEADLINE_S:g} s, not {text}")
    return value


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--unsafe-no-sandbox", action="store_true",
                   help="run even where no sandbox tier works (rlimits only: NOT isolated)")
    p.add_argument("--deadline", type=_seconds, default=None, metavar="S",
                   help="wall-clock limit per cell in seconds (default: [sandbox] deadline_s)")
    p.add_argument("--no-dense", action="store_true", help="do not load the embedding model")
    p.add_argument("--tier", choices=sorted(TIER_NAMES), default=None,
                   help="sandbox tier (default: [sandbox] tier, else auto)")


def register(sub: Any) -> None:
    p = sub.add_parser("exec", help="run one Python cell in the sandbox against the vault")
    p.add_argument("-c", dest="code", metavar="CODE", help="the cell (default: read stdin)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    _common(p)
    p.set_defaults(func=cmd_exec)
    p = sub.add_parser("repl", help="an interactive sandboxed Python loop over the vault")
    _common(p)
    p.set_defaults(func=cmd_repl)
