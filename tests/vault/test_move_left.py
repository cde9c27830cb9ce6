"""A move whose referrer changes between the plan and its rewrite (an editor saves it; rmh's
write lock does not stop an editor): the editor's text is kept, its links to the moved note
rewritten, and the move's result names what it could not rewrite (`not_rewritten`, with why)
instead of reporting plain success."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vault.writes as writes_module
from vault import Vault
from vault.errors import NoteExists, NoteNotFound
from vault.notes.records import GONE_MEANWHILE
from vault.storage.intents import apply_move

FATE = st.sampled_from(["kept", "edited", "unlinked", "removed"])


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fates=st.lists(FATE, min_size=1, max_size=6))
def test_referrers_changed_meanwhile_are_relinked_or_named_with_why(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        fates: list[str]) -> None:
    """An editor's save between the plan and the rewrite: its text is kept and its links to
    the old name (written while the note was there: they meant it) are rewritten, the
    referrer reported rewritten (NOTES-REV2 finding 2: left dangling, reported left); one
    that no longer links the note is neither; one removed is named with why."""
    root = tmp_path_factory.mktemp("v")
    (root / "Target.md").write_text("the target\n", encoding="utf-8")
    names = [f"R{i}.md" for i in range(len(fates))]
    for name in names:
        (root / name).write_text(f"{name} links to [[Target]].\n", encoding="utf-8")
    real = apply_move

    def editor_saves_first(store: Any, intent: Any, *args: Any, **kwargs: Any) -> Any:
        for name, fate in zip(names, fates, strict=True):  # after the plan, before the rewrite
            if fate == "edited":
                (root / name).write_text("the editor's own [[Target]] text\n", encoding="utf-8")
            elif fate == "unlinked":
                (root / name).write_text("the editor's own text\n", encoding="utf-8")
            elif fate == "removed":
                (root / name).unlink()
        return real(store, intent, *args, **kwargs)

    with Vault.init(root) as v:
        monkeypatch.setattr(writes_module, "apply_move", editor_saves_first)
        res = v.move("Target", "sub/Renamed")
        monkeypatch.undo()
        assert res.not_rewritten == tuple((n, GONE_MEANWHILE) for n, f in zip(
            names, fates, strict=True) if f == "removed")
        assert sorted(res.rewritten) == [n for n, f in zip(names, fates, strict=True)
                                         if f in ("kept", "edited")]
        doc = res.to_json()
        assert doc["not_rewritten"] == [{"note": n, "reason": r} for n, r in res.not_rewritten]
        assert v.doctor()["dangling_links"] == []
    for name, fate in zip(names, fates, strict=True):
        text = (root / name).read_text(encoding="utf-8") if fate != "removed" else ""
        assert text == {"edited": "the editor's own [[Renamed]] text\n",
                        "unlinked": "the editor's own text\n", "removed": "",
                        "kept": f"{name} links to [[Renamed]].\n"}[fate]


def test_a_plain_move_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "A.md").write_text("a\n", encoding="utf-8")
    (tmp_path / "B.md").write_text("[[A]]\n", encoding="utf-8")
    with Vault.init(tmp_path) as v:
        res = v.move("A", "C")
    assert res.rewritten == ("B.md",) and res.not_rewritten == ()
    assert res.to_json()["not_rewritten"] == []


def _remove(root: Path) -> type[Exception]:
    (root / "a" / "Target.md").unlink()
    return NoteNotFound


def _rename_folder(root: Path) -> type[Exception]:
    (root / "a").rename(root / "a2")
    return NoteNotFound


def _take_new(root: Path) -> type[Exception]:
    (root / "b").mkdir(exist_ok=True)
    (root / "b" / "Moved.md").write_text("another program's note\n", encoding="utf-8")
    return NoteExists


@pytest.mark.parametrize("n", range(1, 5))  # the intent recorded: 4 operations
@pytest.mark.parametrize("other", [_remove, _rename_folder, _take_new],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_move_whose_note_went_or_whose_name_was_taken_after_its_plan_is_refused(
        tmp_path: Path, n: int, other: Callable[[Path], type[Exception]]) -> None:
    """Another program (no lock) removes the note, renames its folder, or puts a file at the
    new path after the move's N-th file operation, before its rename: nothing can move. On
    main the plan was rolled back and the move still answered success (`moved ... rewrote
    links in 0 notes`), the note not moved (docs/measurements/session31/
    STORE5_folder_rename). Now it is refused, no intent left, every file as the other
    program left it."""
    root = tmp_path / "v"
    (root / "a").mkdir(parents=True)
    (root / "a" / "Target.md").write_text("the target\n", encoding="utf-8")
    (root / "R.md").write_text("R links [[Target]] and [t](a/Target.md)\n", encoding="utf-8")
    with Vault.init(root) as v:
        counted, start = v.store.count_op, v.store.ops
        wants: list[type[Exception]] = []
        left: list[dict[str, bytes]] = []

        def count() -> None:
            counted()
            if v.store.ops - start == n and not (root / "b" / "Moved.md").exists():
                wants.append(other(root))
                left.append(_files(root))

        v.store.count_op = count  # type: ignore[method-assign]
        with pytest.raises((NoteNotFound, NoteExists)) as refused:
            v.move("a/Target", "b/Moved")  # main: answered success, nothing moved
        v.store.count_op = counted  # type: ignore[method-assign]
    assert isinstance(refused.value, wants[0])
    assert _files(root) == left[0]
    assert not list((root / ".rmh" / "intents").glob("*.json"))


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*.md")) if ".rmh" not in p.parts}
