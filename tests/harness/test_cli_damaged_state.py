"""Damaged files in `.rmh/`, through the real CLI: a derived file that does not read is
computed again (the same answer as before the damage), and what cannot be rebuilt is a typed
error on one line, never a traceback; no note changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import make_vault, rmh
from tests.vault.storage.test_saved_arrays import raise_zip_version, tear_npy_header

pytestmark = pytest.mark.slow


def notes_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))
            if ".rmh" not in p.parts}


def hits(root: Path) -> list[str]:
    r = rmh("--vault", str(root), "search", "who owns billing", "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    return [h["note"] for h in json.loads(r.stdout)["hits"]]


def test_derived_arrays_numpy_fails_on_oddly_are_rebuilt(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    want, notes = hits(root), notes_of(root)
    state = root / ".rmh"
    zips = sorted(state.glob("*.npz"))
    rows = sorted(state.glob("dense-rows-*.npy"))
    assert zips and rows
    for path in zips:
        raise_zip_version(path)
    for path in rows:
        tear_npy_header(path)
    assert hits(root) == want
    assert notes_of(root) == notes
