"""The one amortised rule of the layered structures (storage/overlay.py's overlays, the stat
cache, the link graph, the name tables): when the changes layered over a base fold into a
new base."""

from __future__ import annotations

COMPACT_SHARE = 16  # changes above len(base) // COMPACT_SHARE (and MIN_COMPACT) fold in
MIN_COMPACT = 1024


def folds(changes: int, base: int) -> bool:
    """Whether `changes` layered over `base` rows should fold into a new base (the one
    amortised rule of this room's layered structures: overlays, stat cache, graph)."""
    return changes > max(MIN_COMPACT, base // COMPACT_SHARE)
