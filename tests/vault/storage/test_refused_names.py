"""A name that is no note of the vault and that no vault path may be (traversal, absolute,
backslash, NUL, a symlink leaving the vault) is refused as a path (PathRefused, path_refused)
by every vault function that takes a note, as a write of it always was; before, every reading
function (read, links, backlinks, neighbors, edit, delete, move's source, forget_plan) answered
NoteNotFound for it while write answered PathRefused. The answer is the same whether or not
something exists outside the vault under that name."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault import NoteNotFound, NoteSkipped, PathRefused, Vault
from vault.notes import edits

REFUSED = ("../../etc/passwd", "/etc/passwd", "sub/../../etc/passwd", "sub/../keep",
           "keep\x00.md", "..\\..\\etc\\passwd", "sub\\a", "escape.md", "escape",
           "out/passwd", "out/no such file", "gone.md")


def _vault(tmp_path: Path) -> Vault:
    v = Vault.init(tmp_path / "v")
    v.write("keep.md", "hello [[sub/a]]\n")
    v.write("sub/a.md", "a\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("secret\n", encoding="utf-8")
    os.symlink(outside / "passwd", v.root / "escape.md")
    os.symlink(outside / "missing", v.root / "gone.md")  # dangling, outside
    os.symlink(outside, v.root / "out")
    v.close()
    return Vault.open(tmp_path / "v")


def _calls(v: Vault, name: str) -> dict[str, Callable[[], Any]]:
    return {
        "read": lambda: v.read(name),
        "resolve": lambda: v.resolve(name),
        "links": lambda: v.links(name),
        "backlinks": lambda: v.backlinks(name),
        "neighbors": lambda: v.neighbors(name),
        "edit": lambda: v.edit(name, edits.Edit("append", "x")),
        "delete": lambda: v.delete(name),
        "move": lambda: v.move(name, "moved.md"),
        "move to": lambda: v.move("keep", name),
        "write": lambda: v.write(name, "x"),
        "forget_plan": lambda: v.forget_plan([name]),
    }


@pytest.mark.parametrize("name", REFUSED)
def test_every_function_refuses_a_name_no_vault_path_may_be(tmp_path: Path, name: str) -> None:
    v = _vault(tmp_path)
    try:
        for what, call in _calls(v, name).items():
            with pytest.raises(PathRefused) as caught:
                call()
            assert "secret" not in str(caught.value), what
            assert caught.value.code_name == "path_refused"
        assert sorted(p.name for p in v.root.iterdir() if not p.name.startswith(".")) == [
            "escape.md", "gone.md", "keep.md", "out", "sub"]
        assert v.read("keep").text == "hello [[sub/a]]\n"
    finally:
        v.close()


def test_the_answer_outside_does_not_depend_on_what_exists_there(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    try:
        answers = []
        for name in ("out/passwd", "out/no such file", "../../etc/passwd", "../../no/such"):
            with pytest.raises(PathRefused) as caught:
                v.read(name)
            answers.append(caught.value.reason)
        assert answers == ["symlink leaves the vault"] * 2 + ["parent component '..'"] * 2
    finally:
        v.close()


def test_names_inside_the_vault_keep_their_answers(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    try:
        with pytest.raises(NoteNotFound):
            v.read("nothere")
        with pytest.raises(NoteNotFound):
            v.read("sub/nothere")
        (v.root / "bad\nname.md").write_text("words\n", encoding="utf-8")
        with pytest.raises(NoteSkipped):  # a file of the vault the scan skipped
            v.read("bad\nname.md")
        assert v.read("sub/a").text == "a\n"
    finally:
        v.close()
