"""Fixtures shared by the harness tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from harness.config import load
from harness.methods import Harness
from vault import Vault


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    """A connection over a two-note vault (Alpha links to Beta), shut down afterwards."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "Alpha.md").write_text("Alpha links to [[Beta]].\n", encoding="utf-8")
    (root / "Beta.md").write_text("Beta is here.\n", encoding="utf-8")
    vault = Vault.init(root)
    h = Harness(load(vault=root, env={}), vault)
    yield h
    anyio.run(h.shutdown)
