"""Write budgets for the REPL: bytes written and notes touched by host functions, per exec and
per session (escape suite cases 12 and 30: 100,000 writes in a loop, thousands of notes).

`WriteQuota.wrap(functions)` returns the host-function table with every vault-writing function
(`WRITERS`: the operations whose declared effect, `Operation.writes`, names the note and the
content arguments, read by name) charged by what it produces: the note's UTF-8
size AFTER the write counts as bytes (a write: its content; an edit: the whole note as it
will be, so `replace` of a short `find` by a long text, `expected_count` times, is charged
count x text), a write's folders FOLDER_BYTES each (`folder_charge`), and a note name not
yet written in the exec (or the session) counts as one note. The bytes left are handed to
the write as a `WriteTicket` (harness/vault_ops.py): the vault computes the note's size
after an edit arithmetically and refuses it, before any new
text is built, when it would pass what is left (or the vault's MAX_NOTE_BYTES). A call that
would pass a limit raises `vault.QuotaExceeded` in the worker and writes nothing. Only calls
that succeeded are counted (a writer that does not report its size through the ticket is
charged its content argument). A call's arguments are checked once, before the charge, and
run as checked (`OperationCall.bind` and `.run`). The exec boundary is
the sandbox's own (`sandbox.current_exec().serial`), so no caller has to reset anything; calls
made outside an exec are charged to the session only.
`correct` (`REPORTING`) writes notes its arguments do not name (a supersede's new value's
note): it is charged what it reports through the ticket once it ran.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from sandbox import HostFunction, HostFunctionError, current_exec
from vault import QuotaExceeded

from .operations import OPERATIONS, Operation
from .tools import OperationCall
from .vault_ops import write_ticket

# REPL function -> its operation, for every operation that declares an effect on the vault
# (`Operation.writes`: which argument names the note, which holds the content). The content's
# size is only the first check (no write produces less than it adds); the charge is the
# note's size after the write (the ticket).
WRITERS: dict[str, Operation] = {op.repl: op for op in OPERATIONS
                                 if op.repl is not None and op.writes is not None}


# Writers whose notes and bytes are known once they ran (`correct`: the note, and on a
# supersede the new value's note): refused before they run when the quota has no room for the
# notes they may write, then charged the notes they wrote and those notes' sizes after, which
# they report through the ticket. One such call can pass the byte budget by what it wrote (a
# fact note: a few hundred bytes); the next is refused.
REPORTING: dict[str, Operation] = {op.repl: op for op in OPERATIONS if op.repl == "correct"}


def _may_write(arguments: Mapping[str, Any]) -> list[str]:
    """The quota keys a `correct` call may write: its note, and a new note on a supersede."""
    key = str(arguments["note"]).strip().lower()
    return [key, key + "\0superseding"] if arguments.get("action") == "supersede" else [key]


FOLDER_BYTES = 4096  # what a folder costs the disk (a block of ext4 and most file systems)


def folder_charge(op: Operation, arguments: Mapping[str, Any]) -> int:
    """Bytes charged for the folders a `write` may create: FOLDER_BYTES for each folder of the
    note's path, whether or not it exists (an over-estimate: a note in a three-deep folder
    pays 12 KiB, 200 of them 2.4 MiB of the exec's 8). Without it a one-byte note under a
    1,000-character path made ~490 folders for one byte of quota: 57,450 folders and 231 MB
    of disk in one 300 s cell (docs/measurements/session25/NOTES-SBX.md). An edit names a
    note that exists, in folders that do."""
    if op.repl != "write" or op.writes is None:
        return 0
    note = str(arguments[op.writes.note]).strip().strip("/")
    return FOLDER_BYTES * note.count("/")


def _target(op: Operation, arguments: Mapping[str, Any]) -> tuple[str, int]:
    """The note a call of `op` writes (its quota key) and the UTF-8 size of its content, read
    by name from the call's checked arguments."""
    assert op.writes is not None
    note, content = arguments[op.writes.note], arguments[op.writes.content]
    return note.strip().lower(), len(content.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class WriteLimits:
    """Caps; defaults 8 MiB / 200 notes per exec, 64 MiB / 2,000 notes per session."""

    exec_bytes: int = 8 << 20
    exec_notes: int = 200
    session_bytes: int = 64 << 20
    session_notes: int = 2_000


@dataclass
class _Tally:
    bytes: int = 0
    notes: set[str] = field(default_factory=set)


class WriteQuota:
    """The counters of one REPL session (one sandbox)."""

    def __init__(self, limits: WriteLimits) -> None:
        self.limits = limits
        self.session = _Tally()
        self.exec = _Tally()
        self._exec_serial = -1
        self._lock = threading.Lock()

    def _charge(self, notes: list[str], size: int, commit: bool) -> int:
        """Commit `size` bytes for `notes`, or check that they fit and return the bytes left
        (the smallest of the exec's and the session's)."""
        lim = self.limits
        left = lim.session_bytes
        with self._lock:
            ctx = current_exec()
            if ctx is not None and ctx.serial != self._exec_serial:
                self._exec_serial, self.exec = ctx.serial, _Tally()
            tallies = [(self.session, lim.session_bytes, lim.session_notes, "session")]
            if ctx is not None:
                tallies.append((self.exec, lim.exec_bytes, lim.exec_notes, "exec"))
            for tally, max_bytes, max_notes, scope in tallies:
                if commit:
                    tally.bytes += size
                    tally.notes.update(notes)
                elif tally.bytes + size > max_bytes:
                    raise QuotaExceeded(f"bytes written per {scope}", max_bytes)
                elif len(tally.notes) + len(set(notes) - tally.notes) > max_notes:
                    raise QuotaExceeded(f"notes written per {scope}", max_notes)
                left = min(left, max_bytes - tally.bytes)
        return left

    def report(self) -> dict[str, int]:
        with self._lock:
            return {"exec_bytes": self.exec.bytes, "exec_notes": len(self.exec.notes),
                    "session_bytes": self.session.bytes, "session_notes": len(self.session.notes)}

    def _guard(self, op: Operation, fn: OperationCall) -> Callable[..., Any]:
        @functools.wraps(fn)  # keeps the signature the host checks calls against
        def call(*args: Any, **kwargs: Any) -> Any:
            arguments = fn.bind(args, kwargs)  # once: a bad argument fails here, charged nothing
            if op.writes is None:  # a REPORTING writer
                keys, size = _may_write(arguments), 0
            else:
                key, size = _target(op, arguments)
                keys = [key]
            folders = folder_charge(op, arguments)
            try:
                left = self._charge(keys, size + folders, commit=False)
            except QuotaExceeded as exc:
                raise HostFunctionError(type(exc).__name__, str(exc)) from exc
            with write_ticket(left - folders) as ticket:
                result = fn.run(arguments)
            self._charge(list(ticket.notes or keys[:1]),
                         folders + (size if ticket.size is None else ticket.size), commit=True)
            return result

        return call

    def wrap(self, functions: Mapping[str, HostFunction]) -> dict[str, HostFunction]:
        """`functions` with every writer in `WRITERS` charged against this quota (a writer is
        the operation's own host function, harness.tools.OperationCall)."""
        out = dict(functions)
        for name, f in functions.items():
            op = WRITERS.get(name) or REPORTING.get(name)
            if op is not None:
                if not isinstance(f.fn, OperationCall):
                    raise TypeError(f"writer {name!r} is not an operation's host function")
                out[name] = replace(f, fn=self._guard(op, f.fn))
        return out
