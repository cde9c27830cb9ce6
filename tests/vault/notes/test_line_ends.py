"""Notes from other platforms: classic-Mac lone-CR line ends read as lines (as CodeMirror,
Obsidian's editor, splits `\\r\\n?|\\n`), the bytes kept; one tag per case and Unicode form."""

from __future__ import annotations

import hashlib
import random
import unicodedata
from pathlib import Path

import pytest

from vault import Vault
from vault.notes.edits import Edit, apply, size_after
from vault.notes.note import parse, rewrite_links, update_frontmatter

WORDS = ["alpha", "bravo", "café", "Ünï", "delta", "echo", "foxtrot", "gamma"]


def _note(rng: random.Random, nl: str) -> str:
    """A generated note: frontmatter (tags, aliases), headings, links, inline tags."""
    w = rng.sample(WORDS, 5)
    lines = ["---", f"tags: [{w[0]}, area/{w[1]}]", "aliases:", f"  - {w[2]} alias", "---",
             f"# {w[3]} heading", "", f"Text [[{w[4]}]] and #{w[1]}x.", "", f"## Sub {w[0]}",
             f"- item [[{w[2]}|shown]] #{w[3]}"]
    rng.shuffle(lines[5:])
    return nl.join(lines) + nl


@pytest.mark.parametrize("seed", range(6))
def test_a_lone_cr_note_parses_as_its_lf_twin(seed: int) -> None:
    rng = random.Random(seed)
    lf = _note(rng, "\n")
    cr = lf.replace("\n", "\r")
    a, b = parse(lf), parse(cr)
    assert (b.frontmatter, b.tags, b.aliases, b.headings) == (
        a.frontmatter, a.tags, a.aliases, a.headings)
    assert [(x.target, x.start, x.end) for x in b.links] == [
        (x.target, x.start, x.end) for x in a.links]
    assert b.text == cr and b.body == cr[b.body_start:]  # the text as written
    # a rewrite changes the link and no line end
    out = rewrite_links(cr, lambda link: link.target + "2")
    assert "\n" not in out and out.count("\r") == cr.count("\r")
    assert [x.target for x in parse(out).links] == [x.target + "2" for x in a.links]


def _edits(rng: random.Random) -> list[Edit]:
    w = rng.choice(WORDS)
    return [Edit("append", f"added {w}\n"), Edit("append", f"no line end {w}"),
            Edit("prepend", f"top {w}\n"), Edit("replace", f"new {w}", find="Text"),
            Edit("section", f"new body {w}\nline two", heading=rng.choice(["Sub", "#"]))]


@pytest.mark.parametrize("seed", range(6))
def test_rmh_writes_a_lone_cr_note_as_its_lf_twin_in_crs(seed: int) -> None:
    """A frontmatter change and every edit of a lone-CR note give the LF twin's result with
    CRs: the block is the block (not a second one prepended), and no LF is added."""
    rng = random.Random(seed)
    for _ in range(10):
        lf = _note(rng, "\n")
        if rng.random() < 0.3:
            lf = lf[lf.index("---\n", 4) + 4:]  # no frontmatter
        if rng.random() < 0.3:
            lf = lf.rstrip("\n")  # no final line end
        cr = lf.replace("\n", "\r")
        changes = {"status": rng.choice(["done", None]), "tags": rng.choice([None, ["x", "y"]]),
                   "n": rng.randint(0, 9)}
        assert update_frontmatter(cr, changes) == update_frontmatter(lf, changes).replace(
            "\n", "\r")
        for edit in _edits(rng):
            if edit.kind == "section":
                edit = Edit("section", edit.text, heading=parse(lf).headings[-1])
            want = apply(lf, edit).replace("\n", "\r")
            cr_edit = Edit(edit.kind, edit.text.replace("\n", "\r"), edit.heading, edit.find)
            assert apply(cr, cr_edit) == want, (edit, cr)
            assert size_after(cr, cr_edit) == len(want.encode())


@pytest.mark.parametrize("seed", range(3))
def test_a_vault_reads_lone_cr_notes_without_changing_them(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "v"
    root.mkdir()
    texts = {f"n{i}.md": _note(rng, rng.choice(["\r", "\r\n", "\n"])) for i in range(6)}
    for name, text in texts.items():
        (root / name).write_bytes(text.encode())
    sums = {n: hashlib.sha256((root / n).read_bytes()).hexdigest() for n in texts}
    with Vault.init(root) as v:
        for name, text in texts.items():
            rec = v.read(name, learn=False)
            twin = parse(text.replace("\r\n", "\n").replace("\r", "\n"))
            assert rec.tags == twin.tags and rec.aliases == twin.aliases, name
            assert rec.frontmatter == twin.frontmatter
            assert rec.text == text
    assert {n: hashlib.sha256((root / n).read_bytes()).hexdigest() for n in texts} == sums


@pytest.mark.parametrize("seed", range(4))
def test_one_note_s_tag_in_two_unicode_forms_and_cases_is_one_tag(seed: int) -> None:
    """Obsidian's tags are case-insensitive (its help, "Tags"), and a tag typed decomposed on
    macOS is the same tag: `read` lists it once, as first written."""
    rng = random.Random(seed)
    for _ in range(20):
        tag = rng.choice(["café", "Ünï", "naïve/x", "Ωmega", "résumé"])
        forms = [f(tag) for f in (str, str.upper, str.lower)]
        forms = [unicodedata.normalize(rng.choice(["NFC", "NFD"]), t) for t in forms]
        rng.shuffle(forms)
        text = f"---\ntags: [{forms[0]}]\n---\n" + " ".join(f"#{t}" for t in forms[1:]) + "\n"
        assert parse(text).tags == (forms[0],), forms


@pytest.mark.parametrize("plain", [False, True])
def test_a_link_s_spaces_are_trimmed_as_obsidian_trims_them(tmp_path: Path, plain: bool) -> None:
    """Obsidian reads `[[ lead]]` and `[[lead ]]` as `lead`: a file named ` lead.md` or
    `lead .md` (Linux/macOS allow it; Windows and Obsidian's own rename strip it) is reached
    by no wiki-link (find-unlinked-files#21: "a bug in Obsidian itself"), and `lead.md`, when
    it exists, is reached by all three spellings. rmh agrees (a decision kept, session 30)."""
    root = tmp_path / "v"
    root.mkdir()
    for name in (" lead.md", "lead .md", " lead .md") + (("lead.md",) if plain else ()):
        (root / name).write_text("file\n", encoding="utf-8")
    (root / "from.md").write_text("[[ lead]] [[lead ]] [[lead]] [[ lead |x]]\n",
                                  encoding="utf-8")
    with Vault.init(root) as v:
        links = v.read("from.md", learn=False).links
    assert [x.target for x in links] == ["lead"] * 4
    assert [x.resolved for x in links] == [("lead.md" if plain else None)] * 4
