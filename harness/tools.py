"""The REPL's host functions, derived from the operation table (harness.operations).

The REPL table is derived from harness.operations, one part at a time, so later capabilities
add a part, not an edit: `build_functions(vault_functions(ops), conversation_functions(ops),
rlm.functions(ops))`. Each function checks its arguments like every other surface, maps
failures through harness.errors.to_repl, and presents the signature and help text its
declaration generates (`help(name)` shows "name(signature)", the summary, then the details).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sandbox import HostFunction

from .binding import BoundOperation, Targets
from .errors import to_repl
from .operations import OPERATIONS, Operation, Part
from .validate import signature, signature_text
from .vault_ops import VaultCalls


def help_doc(op: Operation) -> str:
    """The REPL help of `op` after its signature line: the summary, then the details."""
    return f"{op.summary}\n\n{op.doc}" if op.doc else op.summary


class OperationCall:
    """One operation as a REPL host function: `bind` checks a call's arguments once (a bad one
    raises the REPL's typed error), `run` runs checked arguments and returns the REPL
    projection; calling it does both. A wrapper that must see the checked arguments before
    the operation runs (harness.write_quota) binds and runs it in two steps, never twice."""

    def __init__(self, op: Operation, env: Targets) -> None:
        self.op = op
        self._bound = BoundOperation.of(op, env.target(op.part), env.ops.thread)
        self.__name__ = self.__qualname__ = op.repl or op.name
        self.__signature__ = signature(op.params)

    def bind(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return self.op.arguments(args, kwargs)
        except Exception as exc:
            raise to_repl(exc, self.__name__) from exc

    def run(self, arguments: dict[str, Any]) -> Any:
        try:
            value = self._bound.call(arguments)
        except Exception as exc:
            raise to_repl(exc, self.__name__) from exc
        return self.op.repl_view(value) if self.op.repl_view is not None else value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.run(self.bind(args, kwargs))


def host_function(op: Operation, env: Targets) -> HostFunction:
    """`op` as a REPL host function: checked arguments, the REPL projection, typed errors."""
    return HostFunction(OperationCall(op, env), help_doc(op), signature_text(op.params, op.returns))


def repl_functions(env: Targets, part: Part) -> dict[str, HostFunction]:
    """The REPL functions of one part of the table."""
    return {op.repl: host_function(op, env) for op in OPERATIONS
            if op.part == part and op.repl is not None}


def vault_functions(ops: VaultCalls) -> dict[str, HostFunction]:
    """The vault part of the REPL globals."""
    return repl_functions(Targets(ops), "vault")


def conversation_functions(ops: VaultCalls) -> dict[str, HostFunction]:
    """The conversation part of the REPL globals (context, what_came_next)."""
    return repl_functions(Targets(ops), "conversation")


def build_functions(*parts: Mapping[str, HostFunction]) -> dict[str, HostFunction]:
    """Merge parts of the REPL table; a name defined twice is a programming error."""
    table: dict[str, HostFunction] = {}
    for part in parts:
        for name, fn in part.items():
            if name in table:
                raise ValueError(f"host function {name!r} defined twice")
            table[name] = fn
    return table
