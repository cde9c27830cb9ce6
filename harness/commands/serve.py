"""`rmh serve`: the vault over JSON-RPC 2.0 and MCP on stdin/stdout, for one agent.

Nothing but protocol frames reaches stdout: before anything else runs, the real stdout is
duplicated to a private descriptor for the frames, and fd 1 and `sys.stdout` are pointed at
stderr, so a stray print (ours, a library's, a C extension's, a child process's) lands in the
log. Logs go to stderr through `StderrSink` (harness/stderr_sink.py): a client that never reads
that pipe costs dropped log lines, never a server stuck in write(2). Exit code 0 after end of
input or SIGTERM (session-end work flushed).
"""

from __future__ import annotations

import argparse
import atexit
import logging
import os
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from pathlib import Path

import anyio

from harness.commands.notes import positive_int
from harness.compose import open_vault
from harness.config import Config, ConfigError, SandboxSection, load
from harness.llm import Broker
from harness.mcp import OVERSIZE, mcp_methods
from harness.methods import Harness, Repl, map_exception, method_table
from harness.rlm_tools import RlmTools
from harness.served_sessions import LedgerSessions, note_texts
from harness.stderr_sink import StderrSink
from harness.stdio import require_stdout
from harness.write_quota import WriteLimits, WriteQuota
from rpc import DEFAULT_MAX_FRAME, Dispatcher, StdioServer
from sandbox import TIER_NAMES, HostFunction, Sandbox, SandboxConfig
from vault import (
    ErasurePending,
    IndexUnusable,
    LedgerError,
    NotAVault,
    PathRefused,
    StateRefused,
    Vault,
    journal_stamp,
    storage_error,
)

# Cheap methods answered without waiting for a slot, ahead of queued work.
CONTROL_METHODS = ("ping", "status")
EXIT_DRAIN_S = 1.0  # at exit, the most time given to log lines a client is slow to read


def protect_stdout() -> int:
    """Reserve the real stdout for frames; return its new descriptor. A stdout the caller
    closed is a StreamError (one line, exit 1): no answer could reach the client."""
    require_stdout()
    proto = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto


def sandbox_config(cfg: Config, *, tier: str | None = None, deadline_s: float | None = None,
                   unsafe: bool = False) -> SandboxConfig:
    """[sandbox] of rmh.toml, overridden by --tier/--deadline/--unsafe-no-sandbox; a
    ConfigError names a value the sandbox refuses (a root worker_user, an unknown tier)."""
    section = cfg.sandbox
    try:
        return _sandbox_config(section, tier, deadline_s, unsafe, bool(cfg.llm.api_key))
    except ValueError as exc:
        raise ConfigError(f"[sandbox]: {exc}") from None


def _sandbox_config(section: SandboxSection, tier: str | None, deadline_s: float | None,
                    unsafe: bool, secret: bool) -> SandboxConfig:
    return SandboxConfig(
        deadline_s=section.deadline_s if deadline_s is None else deadline_s,
        memory_mb=section.memory_mb,
        output_cap=section.output_cap,
        unsafe_no_sandbox=section.unsafe_no_sandbox or unsafe,
        tier=tier or section.tier,
        secret_configured=secret,
        worker_user=section.worker_user,
        max_tasks=section.max_tasks,
    )


def write_quota(cfg: Config) -> WriteQuota:
    """The REPL session's write budget from [sandbox] (harness/write_quota.py)."""
    s = cfg.sandbox
    return WriteQuota(WriteLimits(s.write_bytes_per_exec, s.notes_per_exec,
                                  s.write_bytes_per_session, s.notes_per_session))


def sandbox_factory(cfg: Config, tier: str | None = None) -> partial[Repl]:
    """Build the REPL from [sandbox] in rmh.toml when first needed; its vault writes are
    charged to a fresh write quota per REPL (one per connection)."""
    sb_config = sandbox_config(cfg, tier=tier)

    def make(config: SandboxConfig, functions: Mapping[str, HostFunction]) -> Repl:
        return Sandbox(config, write_quota(cfg).wrap(functions))

    return partial(make, sb_config)


def quiet_stderr() -> StderrSink:
    """Point `sys.stderr` and `sys.stdout` (stray prints: `protect_stdout`) at a sink that
    never blocks its writers on a pipe the client does not read; at exit (after a traceback
    too) what is queued gets at most EXIT_DRAIN_S to go out."""
    sink = StderrSink(2)
    sys.stderr = sys.stdout = sink
    atexit.register(sink.drain, EXIT_DRAIN_S)
    return sink


def cmd_serve(args: argparse.Namespace) -> int:
    proto_fd = protect_stdout()
    sink = quiet_stderr()
    logging.basicConfig(
        stream=sink,
        level=getattr(logging, str(args.log_level).upper(), logging.WARNING),
        format="rmh %(levelname)s %(name)s: %(message)s",
    )
    return _serve(args, proto_fd)


def _serve(args: argparse.Namespace, proto_fd: int) -> int:
    try:
        cfg = load(vault=args.vault)
        repl_factory = sandbox_factory(cfg, args.tier)
        stamp = journal_stamp(cfg.require_vault())  # before the open: none finished unseen
        vault = open_vault(cfg, dense=not args.no_dense)
    except ErasurePending as exc:  # another process's erasure: served again once it is done
        print(f"rmh: {exc.public()}", file=sys.stderr)
        return serve_pending(args, proto_fd, exc, Reopen(args, cfg, repl_factory, stamp))
    except (ConfigError, NotAVault, IndexUnusable, LedgerError, PathRefused) as exc:  # answer
        # the client anyway (harness/unready.py): a server that only exits is "disconnected"
        print(f"rmh: {exc}", file=sys.stderr)
        return serve_unready(args, proto_fd, exc)
    except sqlite3.DatabaseError as exc:  # a page of a file damaged: found by its first read
        typed = storage_error(exc)
        if not isinstance(typed, (IndexUnusable, LedgerError)):
            raise
        print(f"rmh: {typed}", file=sys.stderr)
        return serve_unready(args, proto_fd, typed)
    ready = Ready(args, cfg, vault, repl_factory)
    dispatcher = Dispatcher(ready.methods, map_exception=map_exception,
                            max_frame=args.max_frame, control=CONTROL_METHODS,
                            oversize=OVERSIZE)
    return _run(dispatcher, args, proto_fd, ready.shutdown, ready.broker.close)


class Ready:
    """The method table of a served vault, with what its shutdown and exit close."""

    def __init__(self, args: argparse.Namespace, cfg: Config, vault: Vault,
                 repl_factory: partial[Repl]) -> None:
        self.broker = Broker.from_config(cfg.llm)
        ledger = vault.ledger
        hooks = (LedgerSessions(ledger, vault, texts=note_texts(vault))
                 if ledger is not None else None)
        if hooks is not None:
            recovered = hooks.recover()  # sessions whose process died (kill -9): rewards now
            if recovered:
                logging.getLogger("rmh.serve").info("recovered dead sessions %s", recovered)
        self.harness = Harness(cfg, vault, repl_factory=repl_factory, rlm=RlmTools(self.broker),
                               hooks=hooks)
        self.methods = {**method_table(self.harness), **mcp_methods(self.harness)}

    async def shutdown(self) -> None:
        await self.harness.shutdown()


class Reopen:
    """`rmh serve` started while another process's erasure was pending (ErasurePending at the
    open: every call answers erasure_pending, -32019): before each frame, when the vault's
    intent journal changed since the last try (one stat: `journal_stamp`), open the vault
    again; once it opens (the erasure finished: `rmh doctor`, or this open finished it), serve
    it, without a restart. An open that fails again leaves the unready table as it was."""

    def __init__(self, args: argparse.Namespace, cfg: Config, repl_factory: partial[Repl],
                 stamp: tuple[int, int, int] | None) -> None:
        self.args, self.cfg, self.repl_factory = args, cfg, repl_factory
        self.root = cfg.require_vault()
        self.stamp = stamp  # the journal's before the open that failed
        self.lock = anyio.Lock()
        self.ready: Ready | None = None
        self.dispatcher: Dispatcher | None = None

    async def __call__(self) -> None:
        if self.ready is not None or journal_stamp(self.root) == self.stamp:
            return
        async with self.lock:
            stamp = journal_stamp(self.root)
            if self.ready is not None or stamp == self.stamp:
                return
            self.stamp = stamp
            try:
                vault = await anyio.to_thread.run_sync(
                    partial(open_vault, self.cfg, dense=not self.args.no_dense))
            except Exception as exc:  # still pending, or anything else: the unready table
                logging.getLogger("rmh.serve").info("still not serving: %s", _public(exc))
                return  # stays (a frame must not fail for it); tried again at the next change
            try:
                self.ready = Ready(self.args, self.cfg, vault, self.repl_factory)
            except Exception:
                vault.close()
                logging.getLogger("rmh.serve").exception("the vault opened, serving it failed")
                return
            assert self.dispatcher is not None
            self.dispatcher.replace(self.ready.methods)
            logging.getLogger("rmh.serve").info("the pending erasure is finished: serving")

    async def shutdown(self) -> None:
        if self.ready is not None:
            await self.ready.shutdown()

    def close(self) -> None:
        if self.ready is not None:
            self.ready.broker.close()


def _public(exc: Exception) -> str:
    return exc.public() if isinstance(exc, ErasurePending) else str(exc)


def serve_pending(args: argparse.Namespace, proto_fd: int, exc: ErasurePending,
                  reopen: Reopen) -> int:
    """Serve as `serve_unready` does while the erasure is pending (without the erased names),
    and the vault once it is finished (`reopen`)."""
    from harness.unready import unready_methods

    table = unready_methods(exc.public(), str(reopen.root), exc.code_name, exc.fix,
                            restart=False)
    dispatcher = Dispatcher(table, map_exception=map_exception, max_frame=args.max_frame,
                            control=CONTROL_METHODS, oversize=OVERSIZE, refresh=reopen)
    reopen.dispatcher = dispatcher
    return _run(dispatcher, args, proto_fd, reopen.shutdown, reopen.close)


def serve_unready(args: argparse.Namespace, proto_fd: int, exc: Exception) -> int:
    """Serve the MCP handshake with every tool saying what to do (no vault to serve, its
    index or learning log cannot be opened, or `.rmh` or a file of it is a refused link)."""
    from harness.unready import unready_methods

    reason = (exc.reason if isinstance(exc, NotAVault) else str(exc))
    given = args.vault
    vault = str(Path(given).absolute()) if given else None
    if isinstance(exc, NotAVault):
        vault = exc.root
    kind = (exc.code_name if isinstance(exc, (IndexUnusable, LedgerError, PathRefused))
            else "not_a_vault")
    fix = None if not isinstance(exc, PathRefused) else exc.fix if isinstance(
        exc, StateRefused) else (  # `.rmh` itself: its own fix; a file of it linked:
        f"put a file or folder of rmh's own at `{exc.path}` in place of the symlink (one "
        "missing is made again)")
    if isinstance(exc, ConfigError):  # the vault is there: `rmh init` was no fix (PLUG5)
        fix = ("correct what the reason names, in rmh.toml (the vault's, or $RMH_CONFIG) or "
               "the environment")
    dispatcher = Dispatcher(unready_methods(reason, vault, kind, fix),
                            map_exception=map_exception, max_frame=args.max_frame,
                            control=CONTROL_METHODS, oversize=OVERSIZE)
    return _run(dispatcher, args, proto_fd)


async def _nothing() -> None:
    return None


def _run(dispatcher: Dispatcher, args: argparse.Namespace, proto_fd: int,
         on_shutdown: Callable[[], Awaitable[None]] = _nothing,
         close: Callable[[], None] = lambda: None) -> int:
    """Serve `dispatcher` on the protocol descriptor until the client closes it, then `close`
    what the table held (the LLM broker)."""
    server = StdioServer(dispatcher, on_shutdown=on_shutdown, max_in_flight=args.max_in_flight)
    try:
        anyio.run(server.run, 0, proto_fd)
    finally:
        close()
    os.close(proto_fd)
    return 0


MIN_FRAME = 1024  # room for any error answer (the longest, -32090's, is about 200 bytes)


def frame_bytes(value: str) -> int:
    """argparse type of --max-frame: an integer of at least MIN_FRAME (a usage error)."""
    number = positive_int(value)
    if number < MIN_FRAME:
        raise argparse.ArgumentTypeError(
            f"must be at least {MIN_FRAME}: a smaller cap refuses every request, and the "
            "error answer passes it too")
    return number


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the vault to one agent: JSON-RPC 2.0 and MCP over stdin/stdout",
        description="Serve the vault over newline-delimited JSON-RPC 2.0 (and MCP) on "
        "stdin/stdout. Nothing but protocol is written to stdout; logs go to stderr.",
    )
    p.add_argument("--no-dense", action="store_true",
                   help="skip the ONNX embedder (keyword, graph and conjunctive signals only)")
    # a 0 or negative bound was a traceback once serving began (MCPRPC, session 28); one
    # under MIN_FRAME answered every request "frame too large", over the cap (REVIEW42)
    p.add_argument("--max-frame", type=frame_bytes, default=DEFAULT_MAX_FRAME, metavar="BYTES",
                   help=f"largest accepted or sent frame, at least {MIN_FRAME} (default 8 MiB)")
    p.add_argument("--max-in-flight", type=positive_int, default=64, metavar="N",
                   help="most requests running at once; more wait, while ping and status "
                   "are still answered (default 64)")
    p.add_argument("--tier", choices=sorted(TIER_NAMES), default=None,
                   help="sandbox tier for exec (default: [sandbox] tier, else auto)")
    p.add_argument("--log-level", default="warning",
                   choices=["debug", "info", "warning", "error"], help="stderr log level")
    p.set_defaults(func=cmd_serve)
