"""storage/live.py: the stale-temp sweep rides on the first full sync's scan (or, for a vault
closed before any, runs at close): dead writers' temporaries go, in every folder; a live
writer's, this process's in-flight ones and a folder named like a temporary stay."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vault import Vault


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _vault(tmp: Path) -> tuple[Path, list[str], list[str]]:
    root = tmp / "v"
    (root / "a" / "b").mkdir(parents=True)
    (root / "n.md").write_text("n\n")
    (root / "a" / "b" / "m.md").write_text("m\n")
    Vault.init(root).close()
    dead = _dead_pid()
    stale = [f".n.md.rmh-tmp-{dead}-0", f"a/b/.m.md.rmh-tmp-{dead}-3", f"a/.x.md.rmh-tmp-{dead}-1"]
    kept = [f".n.md.rmh-tmp-{os.getppid()}-2", ".other", "a/.hidden.md"]
    for rel in stale + kept:
        (root / rel).write_text("tmp")
    (root / f".d.md.rmh-tmp-{dead}-9").mkdir()  # a folder named like one: not removed
    kept.append(f".d.md.rmh-tmp-{dead}-9")
    return root, stale, kept


@pytest.mark.parametrize("how", ["open", "explicit sync", "close", "first call"])
def test_stale_temps_go_at_the_first_full_sync_or_at_close(tmp_path: Path, how: str) -> None:
    root, stale, kept = _vault(tmp_path)
    if how == "open":  # the watcher's open sync
        v = Vault.open(root)
        gone_before_close = True
    elif how == "first call":  # no watcher: the first call's full sync
        v = Vault.open(root, watch=False)
        assert all((root / rel).exists() for rel in stale)
        v.search("n")
        gone_before_close = True
    else:
        v = Vault.open(root, auto_sync=False)
        assert all((root / rel).exists() for rel in stale)  # no scan yet
        if how == "explicit sync":
            v.sync()
        gone_before_close = how == "explicit sync"
    assert all(not (root / rel).exists() for rel in stale) == gone_before_close
    v.close()
    assert not any((root / rel).exists() for rel in stale)
    assert all((root / rel).exists() for rel in kept)


def test_a_read_only_vault_sweeps_nothing(tmp_path: Path) -> None:
    root, stale, _ = _vault(tmp_path)
    os.chmod(root / ".rmh", 0o555)
    try:
        if os.access(root / ".rmh", os.W_OK):
            pytest.skip("running as a user who can write anything")
        with Vault.open(root) as v:
            assert v.read_only
    finally:
        os.chmod(root / ".rmh", 0o755)
    assert all((root / rel).exists() for rel in stale)
