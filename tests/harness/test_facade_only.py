"""Harness reads the vault through facade methods only (issue 28, item 1): no module of harness
reaches into an open vault's parts (`v.engine`, `v.index`, `v.usage`, `v.store`, `v.live`)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARTS = re.compile(r"\b(?:v|vault|self\.vault)\.(engine|index|usage|store|live)\b")


def test_harness_never_reaches_into_the_vault_parts() -> None:
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
             for path in sorted((ROOT / "harness").rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if PARTS.search(line)]
    assert found == []


def test_the_pattern_catches_a_reach() -> None:
    assert PARTS.search("counts = v.index.counts()")
    assert PARTS.search("if isinstance(self.vault.usage, Ledger):")
    assert not PARTS.search("usage = resp.usage")
