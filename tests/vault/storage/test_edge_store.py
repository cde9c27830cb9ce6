"""Persisted link edges (edge_store.py): a snapshot in a new process takes the resolved edges
from the store instead of resolving every link, equal to a resolving build; renames, new
aliases, deletes and edited links between processes make the store stale (resolved again and
re-saved); a broken or tampered store is ignored, never a crash."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from vault import Vault
from vault.storage import edge_store


def _write(root: Path) -> None:
    notes = {
        "people/Alice.md": "---\naliases: [Al]\n---\n# Alice\nWorks with [[Bob]] on [[Billing]].\n",
        "people/Bob.md": "# Bob\nReports to [[Al]]; see [notes](../topics/Billing.md) and "
                         "[[Bob]] and [[Nobody]].\n",
        "topics/Billing.md": "# Billing\nOwned by [[Alice#Role]] and [[people/Bob|Bobby]].\n",
        "topics/Payments.md": "# Payments\n![[Billing]] [[Ghost]]\n",
        "Carol.md": "# Carol\n[[Payments]] [[Billing^x]]\n",
    }
    for rel, text in notes.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _edges(root: Path) -> list[tuple[str, str]]:
    with Vault.open(root) as v:
        c = v.corpus()
        return [(c.paths[a], c.paths[b]) for a, b in c.edges]


def _fresh(root: Path, tmp: Path) -> list[tuple[str, str]]:
    """The edges a resolving build gives: a copy of the vault without the store."""
    copy = tmp / f"fresh-{len(list(tmp.iterdir()))}"
    shutil.copytree(root, copy)
    (copy / ".rmh" / edge_store.FILE).unlink(missing_ok=True)
    return _edges(copy)


def _stamp(root: Path) -> tuple[int, int]:
    st = (root / ".rmh" / edge_store.FILE).stat()
    return st.st_ino, st.st_mtime_ns


def test_a_new_process_takes_the_edges_from_the_store(tmp_path: Path) -> None:
    root = tmp_path / "v"
    _write(root)
    Vault.init(root).close()
    first = _edges(root)
    assert len(first) >= 6 and (root / ".rmh" / edge_store.FILE).is_file()
    kept = _stamp(root)
    assert _edges(root) == first  # loaded: not resolved and saved again
    assert _stamp(root) == kept
    assert first == _fresh(root, tmp_path)


@pytest.mark.parametrize("change", ["rename", "alias", "delete", "edit link", "add note"])
def test_changes_between_processes_resolve_again(tmp_path: Path, change: str) -> None:
    root = tmp_path / "v"
    _write(root)
    Vault.init(root).close()
    before = _edges(root)
    if change == "rename":  # [[Billing]] links now dangle, [[Billing^x]] too
        (root / "topics" / "Billing.md").rename(root / "topics" / "Invoicing.md")
    elif change == "alias":  # the dangling [[Ghost]] now resolves
        (root / "Carol.md").write_text("---\naliases: [Ghost]\n---\n# Carol\n[[Payments]]\n")
    elif change == "delete":
        (root / "people" / "Bob.md").unlink()
    elif change == "edit link":
        (root / "Carol.md").write_text("# Carol\n[[Alice]] [[Billing^x]]\n")
    else:
        (root / "Nobody.md").write_text("# Nobody\n[[Carol]]\n")
    after = _edges(root)
    assert after != before
    assert after == _fresh(root, tmp_path)
    kept = _stamp(root)
    assert _edges(root) == after and _stamp(root) == kept  # and the store holds them now


@pytest.mark.parametrize("damage", ["garbage", "torn", "ids of no note", "unsorted",
                                    "lengths differ", "other digest"])
def test_a_broken_or_tampered_store_is_ignored(tmp_path: Path, damage: str) -> None:
    root = tmp_path / "v"
    _write(root)
    Vault.init(root).close()
    good = _edges(root)
    store = root / ".rmh" / edge_store.FILE
    with np.load(store, allow_pickle=False) as z:
        meta = {k: z[k] for k in z.files}
    if damage == "garbage":
        store.write_bytes(b"not an npz")
    elif damage == "torn":
        store.write_bytes(store.read_bytes()[: store.stat().st_size // 2])
    else:
        if damage == "ids of no note":
            meta["dst"] = meta["dst"] + 1000
        elif damage == "unsorted":
            meta["src"], meta["dst"] = meta["src"][::-1].copy(), meta["dst"][::-1].copy()
        elif damage == "lengths differ":
            meta["dst"] = meta["dst"][:-1]
        else:
            meta["digest"] = np.str_("0" * 64)
        with open(store, "wb") as fh:
            np.savez(fh, **meta)
    assert _edges(root) == good
    kept = _stamp(root)  # rewritten whole by that search
    assert _edges(root) == good and _stamp(root) == kept
