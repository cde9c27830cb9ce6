"""Values computed from a whole corpus, kept while that corpus is the current one.

`context` reads every turn note (`layout.items_from_corpus`) and every fact's trust
(`corrections.stale_sources`) on each call: at 10^4 notes that decoded every note's
frontmatter again for each prompt a warm hooks daemon answered (~0.07 s of its 0.1 s of CPU,
docs/measurements/session16/NOTES-H7.md). The facade hands out one `Corpus` object per index
generation and archive state (vault/parts.py `corpus`), so a value of a corpus is kept beside
a weak reference to it and given back while the same object is asked about: a new
generation is a new object and computes again. Identity, not equality: comparing two corpora
reads every note. The values are immutable (tuples, read-only mappings).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from ..storage.corpus import Corpus

T = TypeVar("T")

_kept: dict[Hashable, tuple[weakref.ref[Corpus], Any]] = {}
_lock = threading.Lock()


def kept(name: Hashable, corpus: Corpus, compute: Callable[[], T]) -> T:
    """`compute()` for `corpus`, computed once while `corpus` is the object asked about under
    `name` (module docstring)."""
    with _lock:
        got = _kept.get(name)
    if got is not None and got[0]() is corpus:
        value: T = got[1]
        return value
    value = compute()
    with _lock:
        _kept[name] = (weakref.ref(corpus, _purge), value)
    return value


def _purge(_: object) -> None:
    """A corpus is gone: its values go too (they can be large: every turn note)."""
    with _lock:
        for name in [k for k, (ref, _) in _kept.items() if ref() is None]:
            del _kept[name]
