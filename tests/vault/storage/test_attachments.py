"""Doctor tells missing attachments from dangling note links, and resolves attachment links to
files that exist as Obsidian does (storage.attachments)."""

from __future__ import annotations

import posixpath
import random
import unicodedata
from pathlib import Path

import pytest

from vault import Vault
from vault.storage.attachments import is_attachment, resolves


def test_what_is_an_attachment() -> None:
    assert is_attachment("diagram.png") and is_attachment("files/Report.PDF")
    assert is_attachment("board.canvas") and is_attachment("img.png#page=2")
    assert not is_attachment("Some Note") and not is_attachment("Release 1.2")
    assert not is_attachment("Note.md") and not is_attachment("Note.md#Heading")
    # Obsidian's accepted formats include `3gp` (audio): an extension may start with a digit
    assert is_attachment("clip.3gp") and is_attachment("rec/Voice.3GP#t=5")
    assert not is_attachment("v 2.10") and not is_attachment("Note 3.md")


def test_an_embedded_3gp_file_is_an_attachment_not_a_dangling_note(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / "audio").mkdir(parents=True)
    (root / "audio" / "clip.3gp").write_bytes(b"\x00\x00\x00\x18ftyp3gp4")
    (root / "A.md").write_text("![[clip.3gp]] ![[lost.3gp]]\n", encoding="utf-8")
    with Vault.init(root) as v:
        assert [(i.target, i.attachment) for i in v.links("A")] == [
            ("clip.3gp", "audio/clip.3gp"), ("lost.3gp", None)]
        doc = v.doctor()
    assert doc["dangling_links"] == [] and doc["attachment_links"] == 1
    assert doc["missing_attachments"] == [{"note": "A.md", "target": "lost.3gp"}]


def test_resolution_like_obsidian() -> None:
    files = ["assets/Diagram.png", "notes/local.pdf"]
    assert resolves("diagram.png", "x/Note.md", files)  # by file name anywhere
    assert resolves("assets/diagram.png", "Note.md", files)  # vault path
    assert resolves("local.pdf", "notes/Note.md", files)  # next to the note
    assert resolves("../notes/local.pdf", "other/Note.md", files)  # relative
    assert not resolves("missing.png", "Note.md", files)


def test_doctor_reports_attachments_apart(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / "assets").mkdir(parents=True)
    (root / "assets" / "diagram.png").write_bytes(b"\x89PNG")
    (root / "A.md").write_text("![[diagram.png]] ![[gone.png]] [[Ghost]] "
                               "![[assets/diagram.png]] [[B]]\n", encoding="utf-8")
    (root / "B.md").write_text("b\n", encoding="utf-8")
    with Vault.init(root) as v:
        doc = v.doctor()
    assert doc["dangling_links"] == [{"note": "A.md", "target": "Ghost"}]
    assert doc["missing_attachments"] == [{"note": "A.md", "target": "gone.png"}]
    assert doc["attachment_links"] == 2


def test_links_name_the_file_an_attachment_link_reaches(tmp_path: Path) -> None:
    """`Vault.links` gives an existing attachment's file (as doctor counts it resolved), a
    missing one none, and a note link its note; `read` lists the same links."""
    from vault.storage.attachments import attachment_path

    files = ["assets/Diagram.png", "notes/diagram.png", "notes/local.pdf"]
    assert attachment_path("diagram.png", "notes/N.md", files) == "notes/diagram.png"
    assert attachment_path("diagram.png", "x/N.md", files) == "notes/diagram.png"  # shorter
    assert attachment_path("missing.png", "N.md", files) is None
    root = tmp_path / "v"
    (root / "assets").mkdir(parents=True)
    (root / "assets" / "diagram.png").write_bytes(b"\x89PNG")
    (root / "A.md").write_text("![[diagram.png]] ![[gone.png]] [[Ghost]] [[B]]\n",
                               encoding="utf-8")
    (root / "B.md").write_text("b\n", encoding="utf-8")
    with Vault.init(root) as v:
        got = [(i.target, i.resolved, i.attachment) for i in v.links("A")]
        assert got == [("diagram.png", None, "assets/diagram.png"), ("gone.png", None, None),
                       ("Ghost", None, None), ("B", "B.md", None)]
        assert [(i.target, i.resolved, i.attachment) for i in v.read("A").links] == got


@pytest.mark.parametrize("seed", range(4))
def test_read_names_the_file_of_each_attachment_link_as_links_does(
        tmp_path: Path, seed: int) -> None:
    """`read` (vault.read, MCP and sandbox `read`) gives each link as `links` gives it: an
    embed of an existing image, PDF or canvas names its file (README, vault.read), where
    `read` said null, as for a file that is not there."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    files = sorted({f"{rng.choice(['', 'assets/', 'a b/c/'])}{rng.choice(['pic', 'Scan 1', 'Ü'])}"
                    f"{i}.{rng.choice(['png', 'pdf', 'canvas', 'mp3'])}" for i in range(6)})
    for f in files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_bytes(bytes(range(seed, seed + 9)))
    for n in range(3):
        shown = rng.sample(files, 3)
        lines = [f"![[{f.rsplit('/', 1)[-1]}]] [[{f}|f]] ![[gone{n}.png]] [[N{(n + 1) % 3}]]"
                 for f in shown]
        (root / f"N{n}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with Vault.init(root) as v:
        for n in range(3):
            links = v.links(f"N{n}")
            assert sum(i.attachment is not None for i in links) == 6
            assert v.read(f"N{n}").links == tuple(links)


def _obsidian_pick(target: str, source: str, files: list[str]) -> str | None:
    """The slow obvious twin of `attachment_path`: Obsidian's `getLinkpathDest` order
    (notes/links.py) over names compared casefolded in NFC."""
    def key(p: str) -> str:
        return unicodedata.normalize("NFC", unicodedata.normalize("NFD", p).casefold())

    folder = posixpath.dirname(source)
    if target.startswith(("./", "../")):
        rel = posixpath.normpath(posixpath.join(folder, target))
        return next((f for f in files if key(f) == key(rel)), None)
    exact = [f for f in files if key(f) == key(target.lstrip("/"))]
    if exact or target.startswith("/"):
        return min(exact, default=None)
    ends = [f for f in files if key(f).endswith("/" + key(target))]
    under = [f for f in ends if folder and key(f).startswith(key(folder) + "/")]
    return min(under or ends, key=lambda f: (len(f), f), default=None)


@pytest.mark.parametrize("seed", range(6))
def test_an_attachment_link_reaches_the_file_obsidian_would(tmp_path: Path, seed: int) -> None:
    """Generated files sharing names across folders, some written decomposed (a macOS vault
    synced to Linux): each embed reaches the file Obsidian's rule picks (the vault path, else
    under the note's folder, else the shorter path), through `links`, `read` and doctor; the
    code-point-first file, or a composed name typed for a decomposed file, is not it."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    folders = ["", "a/", "a/long/dir/", "proj/", "proj/assets/", "z/", "sub/", "proj/sub/"]
    names = ["img.png", "Caf\u00e9.png", "shot.PNG", "r\u00e9sum\u00e9.pdf"]
    files: list[str] = []
    for folder in folders:
        for name in rng.sample(names, 2):
            disk = unicodedata.normalize(rng.choice(["NFC", "NFD"]), folder + name)
            if all(unicodedata.normalize("NFC", f) != unicodedata.normalize("NFC", disk)
                   for f in files):
                files.append(disk)
                (root / disk).parent.mkdir(parents=True, exist_ok=True)
                (root / disk).write_bytes(b"\x89PNG")
    files.sort()
    links = [rng.choice(["", "sub/", "./sub/", "../z/", "/a/"]) + rng.choice(names)
             for _ in range(10)]
    for src in ("N.md", "proj/P.md", "a/long/Q.md"):
        (root / src).parent.mkdir(parents=True, exist_ok=True)
        (root / src).write_text(" ".join(f"![[{t}]]" for t in links) + "\n", encoding="utf-8")
    with Vault.init(root) as v:
        missing = {(m["note"], m["target"]) for m in v.doctor()["missing_attachments"]}
        for src in ("N.md", "proj/P.md", "a/long/Q.md"):
            want = [_obsidian_pick(t, src, files) for t in links]
            assert [i.attachment for i in v.links(src)] == want
            assert [i.attachment for i in v.read(src).links] == want
            assert {t for t, w in zip(links, want, strict=True) if w is None} == {
                t for s, t in missing if s == src}
