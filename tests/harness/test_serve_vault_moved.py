"""A vault moved, renamed or replaced while `rmh serve` runs (VAULT10, session 36).

Before: once the vault's folder was renamed away, the server's next sync found nothing at its
path and removed every note from the index (a delete event each in the learning log: the
learned links were lost), answering searches with no hits; with another folder put at the old
path a `vault.write` landed in that stranger; renamed back, the index kept only that stray
note. Now every call answers `not_a_vault` (-32001, `data.reason` saying why) while the path
names another folder or none, nothing is synced or written, and once the vault is back it
serves as before. Real `rmh serve --no-dense`, raw frames, each step generated in an order
drawn by the seed."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.harness.raw_server import RawServer
from tests.harness.test_cli_notes import rmh

pytestmark = pytest.mark.slow


def _calls(seed: int) -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(seed)
    calls = [("vault.search", {"query": "kiwi"}), ("vault.read", {"note": "Alpha"}),
             ("vault.list", {}), ("vault.backlinks", {"note": "Beta"}),
             ("vault.write", {"note": f"Stray{seed}", "content": "stray [[Alpha]]\n"}),
             ("vault.edit", {"note": "Alpha", "kind": "append", "text": "more\n"})]
    rng.shuffle(calls)
    return calls


@pytest.mark.parametrize("seed", [1, 2])
def test_a_vault_moved_away_is_refused_never_emptied_and_serves_again_back(
        tmp_path: Path, seed: int) -> None:
    vault, away = tmp_path / "v", tmp_path / "away"
    vault.mkdir()
    (vault / "Alpha.md").write_text("Alpha kiwi, see [[Beta]].\n", encoding="utf-8")
    (vault / "Beta.md").write_text("Beta mango.\n", encoding="utf-8")
    assert rmh("--vault", str(vault), "init", "--no-dense").returncode == 0
    server = RawServer(vault)
    assert server.call("vault.search", {"query": "kiwi"})["result"]["hits"]
    assert server.call("vault.read", {"note": "Alpha"})["result"]
    os.rename(vault, away)
    for stranger in (False, True):
        if stranger:  # another folder at the vault's path, notes and all
            vault.mkdir()
            (vault / "Alpha.md").write_text("Imposter kiwi.\n", encoding="utf-8")
        for method, params in _calls(seed):
            error = server.call(method, params).get("error")
            assert error is not None and error["code"] == -32001, (method, error)
            assert "while open" in error["data"]["reason"]
    assert sorted(p.name for p in vault.iterdir()) == ["Alpha.md"]  # nothing written there
    shutil.rmtree(vault)
    os.rename(away, vault)
    hits = server.call("vault.search", {"query": "kiwi"})["result"]["hits"]
    assert [h["note"] for h in hits][:1] == ["Alpha.md"]
    listed = server.call("vault.list", {})["result"]["items"]
    assert [i["note"] for i in listed] == ["Alpha.md", "Beta.md"]
    assert server.call("vault.backlinks", {"note": "Beta"})["result"]
    stderr = server.close()
    assert "Traceback" not in stderr
    done = rmh("--vault", str(vault), "learning", "--json")
    events = json.loads(done.stdout)["events"]
    assert "delete" not in events, events  # no note was ever removed
