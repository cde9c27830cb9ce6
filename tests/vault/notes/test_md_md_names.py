"""A note whose title ends in `.md` (`trailing.md.md`, title `trailing.md`), VAULT11 session 37.

Obsidian names such a file `trailing.md` and reaches it by `[[trailing.md]]`, `[[trailing.md.md]]`
and `[x](trailing.md.md)`. The scan cuts one `.md` from a target and the resolver cut a second,
so before, every one of those links dangled,
`read trailing.md` was note_not_found, the note had no backlinks, and a move to such a name
rewrote its links into `[[x.md]]`, which names `x`, so the move broke every link to the note."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault import Vault

NAMES = ["trailing.md.md", "sub/Deep.MD.md", "dots.md.md.md"]


@pytest.mark.parametrize("name", NAMES)
def test_links_reads_and_moves_reach_a_note_whose_title_ends_in_md(
        tmp_path: Path, name: str) -> None:
    root = tmp_path / "v"
    (root / "sub").mkdir(parents=True)
    (root / name).write_text("the note\n", encoding="utf-8")
    title = Path(name).name[:-3]  # "trailing.md"
    stem = name[:-3]  # its path without the file's .md
    (root / "Refs.md").write_text(
        f"as Obsidian [[{title}]] whole [[{title}.md]] path [[{stem}.md]] md [x]({name}) "
        f"heading [[{title}#H|a]]\n", encoding="utf-8")
    v = Vault.init(root)
    try:
        assert v.read(title).note == name
        assert v.read(name).note == name
        assert [ln.resolved for ln in v.links("Refs")] == [name] * 5
        assert v.backlinks(name) == ["Refs.md"]
        assert v.doctor()["dangling_links"] == []
        moved = "elsewhere/renamed.md.md"
        v.move(name, moved)
        assert [ln.resolved for ln in v.links("Refs")] == [moved] * 5
        (root / "elsewhere" / "renamed.md").write_text("a plain note of that name\n",
                                                       encoding="utf-8")
        v.sync()  # the links a move wrote name the moved note exactly, not `renamed.md`
        assert [ln.resolved for ln in v.links("Refs")] == [moved] * 5
        (root / "elsewhere" / "renamed.md").unlink()
        v.sync()
        v.move(moved, "plain")
        assert [ln.resolved for ln in v.links("Refs")] == ["plain.md"] * 5
        v.move("plain", name)
        assert [ln.resolved for ln in v.links("Refs")] == [name] * 5
    finally:
        v.close()


def test_a_plain_note_keeps_its_links_beside_one_named_like_it_with_md(tmp_path: Path) -> None:
    """`[[x]]` and `[[x.md]]` are `x.md` when it exists (the file's own name first, as
    Obsidian), and `[[x.md.md]]` is `x.md.md`."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "x.md").write_text("plain\n", encoding="utf-8")
    (root / "x.md.md").write_text("doubled\n", encoding="utf-8")
    (root / "R.md").write_text("[[x]] [[x.md]] [[x.md.md]] [a](x.md) [b](x.md.md)\n",
                               encoding="utf-8")
    v = Vault.init(root)
    try:
        assert [ln.resolved for ln in v.links("R")] == [
            "x.md", "x.md", "x.md.md", "x.md", "x.md.md"]
        assert v.read("x").note == "x.md" and v.read("x.md").note == "x.md"
        assert v.read("x.md.md").note == "x.md.md"
    finally:
        v.close()
