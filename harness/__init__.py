"""What an extension of rmh may use from the harness (harness.extensions lists the points it
plugs into): the command-line helpers a command module needs, the ask loop (`ask_loop`), the Ray
cluster helpers, the hooks daemon's client, and the prompt hook's recall paths (for benchmarks).

The public names are listed once, in `__init__.pyi` (one `from .module import name as name`
line each; a renamed one `as _Public`): type checkers read it as this package's stub, and this
module reads it at import to build the table below. Names are loaded on first use (PEP 562
`__getattr__`), so `rmh` pays nothing for what it does not run. Every rmh process (each client
hook among them) imports this package, so it imports nothing itself: no `typing`, no
`pathlib` (harness/hooks_fast.py's budget).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every hook process
if TYPE_CHECKING:
    from typing import Any


def _surface() -> dict[str, tuple[str, str]]:
    """Public name -> (module relative to this package, attribute), read from the stub."""
    table: dict[str, tuple[str, str]] = {}
    with open(__file__[: -len(".py")] + ".pyi", encoding="utf-8") as stub:
        for line in stub.read().splitlines():
            if line.startswith("from ."):  # from .module import attr as Public (or _Public)
                module, _, names = line[len("from "):].partition(" import ")
                attr, _, public = names.partition(" as ")
                table[public.removeprefix("_")] = (module, attr)
    return table


_LAZY = _surface()
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    """Load a public name on first use and keep it in the module (later lookups are plain)."""
    import importlib

    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'harness' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
