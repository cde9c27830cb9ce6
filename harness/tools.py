"""The REPL's host functions, derived from the operation table (harness.operations).

The REPL table is derived from harness.operations, one part at a time, so later capabilities
add a part, not an edit: `build_functions(vault_functions(ops), conversation_functions(ops),
rlm.functions(ops))`. Each function checks its arguments like every other surface, maps
failures through harness.errors.to_repl, and presents the signature and help text its
declaration generates (`help(name)` shows "name(signature)", the summary, then the details).
"""

from __future__ import annotations

from collections.abc import Mapping
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


def host_function(op: Operation, env: Targets) -> HostFunction:
    """`op` as a REPL host function: checked arguments, the REPL projection, typed errors."""
    bound = BoundOperation.of(op, env.target(op.part), env.ops.thread)
    name = op.repl or op.name

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            value = bound.call(op.arguments(args, kwargs))
        except Exception as exc:
            raise to_repl(exc, name) from exc
        return op.repl_view(value) if op.repl_view is not None else value

    call.__name__ = call.__qualname__ = name
    call.__signature__ = signature(op.params)  # type: ignore[attr-defined]
    return HostFunction(call, help_doc(op), signature_text(op.params, op.returns))


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
