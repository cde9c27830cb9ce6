"""rmh's deterministic core: notes, the folder, the index, retrieval, learning, lifecycle.

Import from here (`from vault import Vault, Hit`), never from the modules inside. The rooms,
each importing only the ones before it: `notes/` (one note: its text, links, rows, hash),
`storage/` (folder, index, snapshot, embedding cache), `learning/` (event log and learned
state), `retrieval/` (signals, fusion, stages, rerank), the facade (`core.py`: `Vault`), and
`conversation/` (NDM, DMF, 4D), which uses the facade. Besides the facade and its values, a
few building blocks are public because the benchmarks measure them on their own (BM25, the
pair table, the conversation context scorer).

The public names are listed once, in `__init__.pyi` (one `from .module import name as Public`
line each): type checkers read it as this package's stub, and this module reads it at import
to build the table below. Names are loaded on first use (PEP 562 `__getattr__`), so
`from vault import VaultError` does not pay for numpy, scipy and the conversation package: the
CLI starts fast, and a command imports only what it touches.
"""

from __future__ import annotations

from typing import Any


def _surface() -> dict[str, tuple[str, str]]:
    """Public name -> (module relative to this package, attribute), read from the stub."""
    from pathlib import Path

    table: dict[str, tuple[str, str]] = {}
    for line in Path(__file__).with_suffix(".pyi").read_text(encoding="utf-8").splitlines():
        if line.startswith("from ."):  # from .module import attr as Public (or as _Public)
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
        raise AttributeError(f"module 'vault' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
