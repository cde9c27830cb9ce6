"""bench/obsidian_help.py: a folder of fetched help notes becomes a vault bench/external_vault.py
accepts; image embeds go, other text stays; hub pages are found by the notes they link; a
missing gold note or an already filled output folder is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.external_vault import load
from bench.obsidian_help import build, clean, hubs, main

PAGES = {
    "Plugins/Backlinks.md": ("Backlinks list the notes that link here.\n\n"
                             "Click **Backlinks** ( ![[obsidian-links.svg#icon]] ) in the "
                             "sidebar.\n"),
    "Plugins/Core plugins.md": ("- [[Backlinks]]\n\t- See links.\n- [[Outline]]\n"
                                "- [[Search|find]]\n"),
    "Plugins/Outline.md": "The Outline plugin lists the headings.\n![[Pasted image 8.png]]\n",
    "Plugins/Search.md": "Search finds files. ![alt](https://x.org/a.PNG) [[Plugins/Outline]]\n",
    ".obsidian/workspace.md": "settings, not a note",
}


def notes(root: Path) -> Path:
    for rel, text in PAGES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def questions(path: Path, gold: str) -> Path:
    path.write_text(json.dumps({
        "related": [{"id": "r0", "question": "Which notes link to this one?",
                     "paraphrase": "What points at the page I have open?",
                     "gold": ["Plugins/Backlinks.md"]}],
        "unrelated": [{"id": "u0", "question": "How do I see the headings?", "gold": [gold]}]}))
    return path


def test_the_vault_loads_as_an_external_vault(tmp_path: Path) -> None:
    paths = build(notes(tmp_path / "notes"), tmp_path / "vault")
    assert paths == ["Plugins/Backlinks.md", "Plugins/Core plugins.md", "Plugins/Outline.md",
                     "Plugins/Search.md"]
    back = (tmp_path / "vault" / "Plugins" / "Backlinks.md").read_text()
    assert "svg" not in back and "Click **Backlinks** (  ) in the sidebar." in back
    assert "png" not in (tmp_path / "vault" / "Plugins" / "Outline.md").read_text()
    assert "PNG" not in (tmp_path / "vault" / "Plugins" / "Search.md").read_text()
    ext = load(tmp_path / "vault", questions(tmp_path / "q.json", "Plugins/Outline.md"),
               tmp_path / "copy")
    assert ext.reword("Which notes link to this one?") == "What points at the page I have open?"
    assert hubs(tmp_path / "vault", paths, 3) == [("Plugins/Core plugins.md", 3)]
    assert hubs(tmp_path / "vault", paths, 1)[-1] == ("Plugins/Search.md", 1)


def test_text_other_than_images_is_kept() -> None:
    text = "See [[Internal links|links]] and `![[x.png]]` is how ![[x.png|100]] embeds.\n"
    assert clean(text) == "See [[Internal links|links]] and `` is how  embeds.\n"
    assert clean("![[Document.pdf#page=3]] ![[Note#Heading]]") == (
        "![[Document.pdf#page=3]] ![[Note#Heading]]")


def test_refuses_a_missing_gold_note_and_a_filled_output(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    src = notes(tmp_path / "notes")
    q = questions(tmp_path / "q.json", "Plugins/Random note.md")
    assert main(["--notes", str(src), "--out", str(tmp_path / "v1"), "--questions", str(q)]) == 1
    assert "missing gold notes: Plugins/Random note.md" in capsys.readouterr().out
    with pytest.raises(FileExistsError):
        build(src, tmp_path / "v1")
    q = questions(tmp_path / "q.json", "Plugins/Outline.md")
    assert main(["--notes", str(src), "--out", str(tmp_path / "v2"), "--questions", str(q)]) == 0
    assert "2 of 2 gold notes present" in capsys.readouterr().out
