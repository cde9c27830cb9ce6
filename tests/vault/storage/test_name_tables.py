"""The resolver's name tables kept beside the saved note columns (storage/name_tables.py): saved
with the columns (or, when missing, by the first process that resolves a name over them), a
later process loads each instead of building it, and either answers every lookup as a resolver
built from the rows; a table of another stamp, damaged, or naming a position outside the
notes is built again."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from vault.notes import name_index
from vault.notes.rows import LinkRow
from vault.storage import mapped_arrays, name_tables
from vault.storage.index import Index
from vault.storage.snapshot import Snapshot, build_snapshot
from vault.storage.store import Store
from vault.storage.sync import sync

NAMES = ["Foo", "foo", "Bar", "Café", "Straße", "a b"]
TABLES = ("keys", "names", "aliases")


def _vault(tmp: Path, seed: int) -> Path:
    rng = random.Random(seed)
    root = tmp / "v"
    for k in range(40):
        name = f"{rng.choice(['', 'a/', 'b/c/'])}{rng.choice(NAMES)} {k % 7}.md"
        aliases = rng.sample(["nick", "Nick", "Foo", "hub"], rng.randint(0, 2))
        front = f"---\naliases: [{', '.join(aliases)}]\n---\n" if aliases else ""
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"{front}text [[{rng.choice(NAMES)} {k % 5}]]\n")
    (root / ".rmh").mkdir()
    store = Store(root)
    index = Index.open(root / ".rmh" / "index.sqlite")
    sync(store, index)
    build_snapshot(index, root / ".rmh")  # the columns saved, and their name tables
    index.close()
    for name in TABLES:
        assert (root / ".rmh" / f"{name_tables.PREFIX}{name}.bin").is_file()
    return root


def _loaded(root: Path) -> tuple[Snapshot, Index]:
    index = Index.open(root / ".rmh" / "index.sqlite")
    snap = build_snapshot(index, root / ".rmh")
    assert snap.corpus.stamp is not None
    return snap, index


def _answers(snap: Snapshot) -> list[object]:
    r = snap.resolver
    queries = [f"{n} {k}" for n in NAMES for k in range(7)] + ["nick", "hub", "a/Foo 1", "x"]
    out: list[object] = [dict(r.by_key), dict(r.by_alias), dict(r.by_name)]
    for q in queries:
        for src in ("a/x.md", "b/c/y.md", "z.md"):
            out.append(r.resolve(LinkRow(q, None, None, None, False, "wiki"), src))
            out.append(r.resolve(LinkRow(f"../{q}.md", None, None, None, False, "markdown"),
                                 src))
    return out


def _rows(root: Path) -> list[object]:
    index = Index.open(root / ".rmh" / "index.sqlite")
    try:
        return _answers(build_snapshot(index))  # no folder: from the rows
    finally:
        index.close()


@pytest.mark.parametrize("seed", range(3))
def test_saved_by_the_first_process_loaded_by_the_next(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    root = _vault(tmp_path, seed)
    expected = _rows(root)
    snap, index = _loaded(root)
    assert _answers(snap) == expected
    index.close()
    for name in TABLES:  # gone: the first process to resolve builds and saves them again
        (root / ".rmh" / f"{name_tables.PREFIX}{name}.bin").unlink()
    snap, index = _loaded(root)
    assert _answers(snap) == expected
    index.close()
    for name in TABLES:
        assert (root / ".rmh" / f"{name_tables.PREFIX}{name}.bin").is_file()
    built: list[int] = []
    real = name_index.KeyIndex.build.__func__  # type: ignore[attr-defined]

    def counted(cls: type[name_index.KeyIndex], *args: object) -> name_index.KeyIndex:
        built.append(1)
        return real(cls, *args)  # type: ignore[no-any-return]

    monkeypatch.setattr(name_index.KeyIndex, "build", classmethod(counted))
    snap, index = _loaded(root)
    assert _answers(snap) == expected
    assert built == []  # every table loaded, none built
    index.close()


@pytest.mark.parametrize("how", ["other stamp", "other size", "flipped byte", "outside",
                                 "entries"])
def test_a_table_that_does_not_fit_is_built_again(tmp_path: Path, how: str) -> None:
    root = _vault(tmp_path, 7)
    expected = _rows(root)
    snap, index = _loaded(root)
    _answers(snap)
    index.close()
    path = root / ".rmh" / f"{name_tables.PREFIX}names.bin"
    got = mapped_arrays.read(path, name_tables.MAGIC)
    assert got is not None
    head, arrays = dict(got[0]), {"table": np.array(got[1]["table"])}
    if how == "other stamp":
        head["stamp"] = "0" * 64
    elif how == "other size":
        head["notes"] += 1
    elif how == "outside":  # a slot naming a position past the last note
        table = arrays["table"]
        table[np.flatnonzero(table != name_index.EMPTY)[0]] |= 0xFFFF
    elif how == "entries":
        head["entries"] += 1
    mapped_arrays.write(path, name_tables.MAGIC, head, arrays)
    if how == "flipped byte":
        data = bytearray(path.read_bytes())
        data[-9] ^= 0x40
        path.write_bytes(data)
    snap, index = _loaded(root)
    assert _answers(snap) == expected
    index.close()
    again = mapped_arrays.read(path, name_tables.MAGIC)
    assert again is not None and again[0]["stamp"] == snap.corpus.stamp  # saved again
    assert again[0]["entries"] == int(np.count_nonzero(again[1]["table"]
                                                       != name_index.EMPTY))
