"""A count said in words: "1 note", "0 notes", "3 notes", for every count a person reads (CLI
lines, receipts' stage reports, RPC messages, errors). The harness's commands print through
it too (harness/commands/output.py), so there is one rule: "(1 notes)" and "passed over: 1
notes" were printed where a count was formatted by hand (NEWUSER9, REV39, HOUSE40)."""

from __future__ import annotations


def counted(n: int, noun: str, nouns: str = "") -> str:
    """`n` and `noun`, the plural (`nouns`, else NOUN + "s") unless `n` is exactly 1."""
    return f"{n} {noun if n == 1 else nouns or noun + 's'}"
