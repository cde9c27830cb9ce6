"""rmh.toml's [learning] section: the bounds of the learning log (read by config.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LearningSection:
    """Retention of the learning log VAULT/.rmh/learned.sqlite (vault LedgerLimits;
    vault/learning/compact.py): `session_bytes`, what one session's searches, reads and
    writes may add to it (past it they are not recorded, and a search's result says so);
    `log_bytes`, its size past which the oldest events are folded into a stored base state
    (keeping half of it). Sizes count each event's payload plus 32 bytes; 0 turns a bound
    off."""

    session_bytes: int = 8 << 20
    log_bytes: int = 64 << 20
