"""Frontmatter entries dumped before, remembered (`frontmatter._dump_entry`'s memo).

An ingest renders the same `tier: L0`, speaker and session lines thousands of times, and each
dump is a PyYAML emit and a load to check it reads back (most of a note's rendering). An entry
is a function of its key and its exact value, so it is kept by (key, the value as JSON: 1, 1.0
and true differ, as `frontmatter.canonical` compares them); a nonzero int is the key's entry
for 0 with its digits put in (an int is plain digits whatever the key). Bounded: emptied when
`MAX` entries are held. What a dump returns is what the fresh dump returns (tests:
test_conv_ingest_scale.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

MAX = 8192


class Remembered:
    """`fresh` (key, value) -> entry, each distinct (key, value) computed once."""

    def __init__(self, fresh: Callable[[str, Any], str]) -> None:
        self.fresh = fresh
        self._held: dict[tuple[str, str], str] = {}

    def __call__(self, key: str, value: Any) -> str:
        if type(value) is int and value:
            zero = self(key, 0)
            if zero.endswith(" 0\n"):
                return f"{zero[:-2]}{value}\n"
        memo = (key, json.dumps(value, ensure_ascii=False))
        text = self._held.get(memo)
        if text is None:
            text = self.fresh(key, value)  # raises for a value that cannot be dumped: not held
            if len(self._held) >= MAX:
                self._held.clear()
            self._held[memo] = text
        return text
