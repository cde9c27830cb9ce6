"""A folder another program removes or swaps for a link while the vault writes into it
(SBX8, session 33): each write is a typed VaultError (PathRefused, NoteNotFound), never a raw
FileNotFoundError (166 of 400 writes on main), and nothing lands outside the vault."""

from __future__ import annotations

import collections
import os
import shutil
import threading
from pathlib import Path

from vault import PathRefused, Vault, VaultError


def test_writes_under_a_swapped_folder_are_typed_errors(tmp_path: Path) -> None:
    outside, root = tmp_path / "outside", tmp_path / "vault"
    outside.mkdir()
    (root / "gen" / "sub").mkdir(parents=True)
    sub = root / "gen" / "sub"
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            try:
                if sub.is_symlink():
                    sub.unlink()
                    sub.mkdir()
                else:
                    shutil.rmtree(sub, ignore_errors=True)
                    os.symlink(outside, sub)
            except OSError:
                pass

    kinds: collections.Counter[str] = collections.Counter()
    with Vault.init(root) as vault:
        swapper = threading.Thread(target=swap, daemon=True)
        swapper.start()
        try:
            for i in range(400):
                try:
                    vault.write(f"gen/sub/x{i}", "text", overwrite=True)
                    kinds["ok"] += 1
                except VaultError as exc:
                    kinds[type(exc).__name__] += 1
                    if isinstance(exc, PathRefused):
                        assert str(tmp_path) not in exc.reason  # no host path
                except OSError as exc:
                    kinds[f"raw {type(exc).__name__}"] += 1
        finally:
            stop.set()
            swapper.join()
    assert not [k for k in kinds if k.startswith("raw ")], kinds
    assert os.listdir(outside) == []
