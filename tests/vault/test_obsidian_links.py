"""Vaults written as Obsidian writes them (files made outside rmh): each link form reads,
resolves and follows a move as Obsidian's "update internal links" would, every other byte kept."""

from __future__ import annotations

import posixpath
import random
from pathlib import Path
from urllib.parse import quote

import pytest

from vault import Vault

from .notes.obsidian_model import obsidian

# File names Obsidian accepts, parentheses among them (`Black Swan (book).md`).
PARTS = ["Black Swan (book)", "Plan (v2) final", "f(x)", "Caf\u00e9 (Paris)", "(draft)", "a&b"]


def obsidian_url(path: str) -> str:
    """A markdown destination as Obsidian writes it: %-encoded as `encodeURI` does, which
    leaves parentheses (and `&`) as they are."""
    return quote(path, safe="/()&")


@pytest.mark.parametrize("seed", range(4))
def test_markdown_links_with_parentheses_resolve_and_follow_a_move(
        tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "v"
    names = sorted({f"{rng.choice(['', 'x/', 'y z/'])}{rng.choice(PARTS)} {i}" for i in range(4)})
    for name in names:
        (root / f"{name}.md").parent.mkdir(parents=True, exist_ok=True)
        (root / f"{name}.md").write_text(f"# {name}\n", encoding="utf-8")
    hub = root / "hub" / "Hub.md"
    hub.parent.mkdir(parents=True)
    lines = [f"- [{i}]({obsidian_url('../' + n + '.md')}#H) and [{i}]({obsidian_url('../' + n)})"
             f" (see above)\n" for i, n in enumerate(names)]
    hub.write_text("".join(lines) + "`[c](../code%20(x).md)`\n", encoding="utf-8")
    with Vault.init(root) as v:
        assert [ln.resolved for ln in v.links("hub/Hub")] == [
            f"{n}.md" for n in names for _ in range(2)]
        assert all(v.backlinks(n) == ["hub/Hub.md"] for n in names)
        moved = [f"moved/{n.rsplit('/', 1)[-1]} m" for n in names]
        for old, new in zip(names, moved, strict=True):
            v.move(old, new)
        assert [ln.resolved for ln in v.links("hub/Hub")] == [
            f"{n}.md" for n in moved for _ in range(2)]
        text = hub.read_text(encoding="utf-8")
        for i, line in enumerate(text.splitlines()[:-1]):  # the link text, `#H` and the
            assert line.startswith(f"- [{i}](../moved/")  # words around each link kept
            assert ".md#H) and [" in line and line.endswith("%20m) (see above)")
        assert text.endswith("`[c](../code%20(x).md)`\n")  # code: no link, left alone


@pytest.mark.parametrize(("key", "tags"), [("Aliases", "Tags"), ("ALIASES", "TAGS"),
                                           ("Alias", "Tag"), ("aliases", "tags")])
def test_aliases_and_tags_under_keys_in_any_case_name_the_note(
        tmp_path: Path, key: str, tags: str) -> None:
    """Obsidian reads `Aliases:`/`Tags:` as it reads `aliases:`/`tags:` (/^alias(es)?$/i,
    /^tags?$/i): a link by the alias resolves, `read` finds the note by it, and its tags list."""
    root = tmp_path / "v"
    (root / "people").mkdir(parents=True)
    (root / "people" / "Robert.md").write_text(
        f"---\n{key}: [Bobby]\n{tags}: [crew]\n---\nR\n",
        encoding="utf-8")
    (root / "Hub.md").write_text("[[Bobby]]\n", encoding="utf-8")
    with Vault.init(root) as v:
        assert [ln.resolved for ln in v.links("Hub")] == ["people/Robert.md"]
        record = v.read("Bobby")
        assert record.note == "people/Robert.md" and record.aliases == ("Bobby",)
        assert record.tags == ("crew",)


@pytest.mark.parametrize("stray", ["Type <!-- to open a comment", "a <!--b", "x<!-- y -- z"])
def test_a_stray_comment_opener_in_a_sentence_hides_no_link(tmp_path: Path, stray: str) -> None:
    """A `<!--` inside a line with no `-->` in its paragraph is text (CommonMark's raw HTML,
    which Obsidian follows): the links after it are links, backlinks and followed by a move."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "Target.md").write_text("# Target\n", encoding="utf-8")
    (root / "Other.md").write_text("# Other\n", encoding="utf-8")
    stray_text = f"{stray}, see [[Target]].\n\nMore: [[Other]] #tagged\n"
    (root / "Stray.md").write_text(stray_text, encoding="utf-8")
    (root / "Block.md").write_text("<!-- hidden\n[[Target]]\n-->\n[[Other]]\n", encoding="utf-8")
    with Vault.init(root) as v:
        assert [ln.resolved for ln in v.links("Stray")] == ["Target.md", "Other.md"]
        assert v.read("Stray").tags == ("tagged",)
        assert v.backlinks("Target") == ["Stray.md"]  # Block.md's is inside its comment
        v.move("Target", "moved/Renamed")
        assert (root / "Stray.md").read_text(encoding="utf-8") == stray_text.replace(
            "[[Target]]", "[[Renamed]]")
        assert (root / "Block.md").read_text(encoding="utf-8").count("[[Target]]") == 1


@pytest.mark.parametrize("seed", range(4))
def test_a_name_shared_by_notes_resolves_as_obsidian_s_getlinkpathdest(
        tmp_path: Path, seed: int) -> None:
    """Obsidian (MetadataCache.getLinkpathDest): the note at the vault path first, even with
    one of that name beside the linking note; else the notes under the linking note's folder,
    then the shorter path (`a/b/X.md` before `longer/X.md`); `[[/X]]` from the root only. The
    links, the backlinks and a move follow that."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    name = rng.choice(["Index", "README", "Caf\u00e9", "Plan (v2)", "x y"])
    f, long = rng.choice(["proj", "a b", "Z\u00fcrich/sub"]), rng.choice(["longer", "zz top"])
    files = {f"{name}.md": "root\n", f"{f}/{name}.md": "beside\n",
             f"a/b/{name} 2.md": "short\n", f"{long}/{name} 2.md": "long\n",
             f"{f}/deep/er/{name} 3.md": "under\n", f"z/{name} 3.md": "elsewhere\n",
             f"w/{name} 4.md": "four\n",
             f"{f}/Linker.md": f"[[{name}]] [[{f}/{name}]] [[{name} 3]] [[/{name} 4]]\n",
             "Top.md": f"[[{name} 2]] [[{name} 3|three]]\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    with Vault.init(root) as v:
        assert [ln.resolved for ln in v.links(f"{f}/Linker")] == [
            f"{name}.md", f"{f}/{name}.md", f"{f}/deep/er/{name} 3.md", None]
        assert [ln.resolved for ln in v.links("Top")] == [f"a/b/{name} 2.md", f"z/{name} 3.md"]
        assert v.backlinks(f"{name}.md") == [f"{f}/Linker.md"]
        assert v.backlinks(f"{long}/{name} 2.md") == []
        v.move(f"{name}.md", f"moved/{name} renamed")
        assert (root / f"{f}/Linker.md").read_text(encoding="utf-8") == (
            f"[[{name} renamed]] [[{f}/{name}]] [[{name} 3]] [[/{name} 4]]\n")
        assert v.backlinks(f"moved/{name} renamed") == [f"{f}/Linker.md"]
        assert [ln.resolved for ln in v.links(f"{f}/Linker")][1] == f"{f}/{name}.md"


@pytest.mark.parametrize("name", ["Note", "Plan (v2)", "Caf\u00e9 50%", "x y"])
def test_a_markdown_link_takes_the_vault_path_before_its_folder_and_a_move_keeps_it(
        tmp_path: Path, name: str) -> None:
    """Obsidian resolves a markdown link's decoded path as a wiki-link's
    (MetadataCache.getLinkpathDest): `[x](Name.md)` in `proj/` is the root's `Name.md` even
    with a `proj/Name.md`, which `[x](./Name.md)` names; `[x](sub/D.md)` is the vault path
    `sub/D.md` before `proj/sub/D.md`. A move writes each link in the style it was written and
    so that it still means its note: `./` where a bare relative path would be the root's."""
    root = tmp_path / "v"
    enc = obsidian_url(name)
    files = {f"{name}.md": "root\n", f"proj/{name}.md": "beside\n", "sub/D.md": "root sub\n",
             "proj/sub/D.md": "beside sub\n", f"z/{name} 2.md": "z\n", f"{name} 2.md": "r2\n",
             "t/Target.md": "t\n",
             "proj/a.md": (f"[n]({enc}.md) [e](./{enc}.md) [f](<{name}.md#Top>) [d](sub/D.md)"
                           f" [s](../z/{enc}%202.md) [t](Target) [u](/t/Target.md)"
                           " [w](t/Target.md)\n")}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    with Vault.init(root) as v:
        assert [ln.resolved for ln in v.links("proj/a")] == [
            f"{name}.md", f"proj/{name}.md", f"{name}.md", "sub/D.md", f"z/{name} 2.md",
            "t/Target.md", "t/Target.md", "t/Target.md"]
        assert v.backlinks(f"{name}.md") == ["proj/a.md"]
        assert v.backlinks("proj/sub/D.md") == []
        v.move(f"z/{name} 2.md", f"proj/{name} 2.md")  # `{name} 2.md` is the root's
        v.move("t/Target.md", "arch/Target.md")
        written = "".join(f"%{ord(c):02X}" if c in " %()" else c for c in name)  # as rmh does
        assert (root / "proj/a.md").read_text(encoding="utf-8") == (
            f"[n]({enc}.md) [e](./{enc}.md) [f](<{name}.md#Top>) [d](sub/D.md)"
            f" [s](./{written}%202.md) [t](Target) [u](/arch/Target.md) [w](arch/Target.md)\n")
        assert [ln.resolved for ln in v.links("proj/a")][4:] == [
            f"proj/{name} 2.md", "arch/Target.md", "arch/Target.md", "arch/Target.md"]


FOLDERS = ["", "proj", "proj/sub", "Z\u00fcrich x", "(par) f", "50% q"]
NAMES = ["Note", "Plan (v2)", "50% done", "Caf\u00e9 #1", "x y", "v1.2 notes"]


def link_forms(source: str, target: str) -> list[str]:
    """A markdown destination to `target` from `source` as each "New link format" writes it
    (Use [[Wikilinks]] off): shortest (the name), absolute (the vault path), relative (no `./`),
    and by hand with `/` or `./`."""
    rel = posixpath.relpath(target, posixpath.dirname(source) or ".")
    return [posixpath.basename(target), target, rel, "/" + target,
            rel if rel.startswith("../") else "./" + rel]


@pytest.mark.parametrize("seed", range(4))
def test_generated_markdown_links_keep_their_notes_through_moves(
        tmp_path: Path, seed: int) -> None:
    """Notes named alike in the root, the linking folders and elsewhere, written outside rmh
    and linked in every form Obsidian writes: each link means the note Obsidian's resolver
    takes (obsidian_model.py), and after each of a sequence of moves (to names that clash) the
    note it meant (a link that the moved note takes from another note, or from none, by the
    vault path as Obsidian would, aside); only notes that linked the moved one change
    (test_relinks.py checks each link's text)."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    paths = sorted({posixpath.join(rng.choice(FOLDERS), rng.choice(NAMES)) + ".md"
                    for _ in range(9)})
    for p in paths:
        dests = [obsidian_url(f) for t in rng.sample(paths, 3) for f in link_forms(p, t)]
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_text(" ".join(f"[t]({d})" for d in dests) + "\n", encoding="utf-8")
    who = {p: p for p in paths}  # path now -> the note's first path (its identity)
    with Vault.init(root) as v:
        def meanings() -> dict[str, list[str | None]]:
            """Each link's note (its identity), checked against Obsidian's (the model's)."""
            found = {p: v.links(p) for p in who}
            for p, links in found.items():
                assert [ln.resolved for ln in links] == [
                    obsidian(ln.target, p, sorted(who)) for ln in links], p
            return {p: [None if ln.resolved is None else who[ln.resolved] for ln in links]
                    for p, links in found.items()}

        meant = meanings()
        for _ in range(4):
            old = rng.choice(sorted(who))
            new = posixpath.join(rng.choice(FOLDERS), rng.choice(NAMES) + " m") + ".md"
            if "#" in new or any(new.lower() == p.lower() for p in who):  # rmh refuses a
                continue  # new name with `#`, as Obsidian does; files may hold one
            texts = {p: (root / p).read_text(encoding="utf-8") for p in who}
            v.move(old, new)
            who[new] = who.pop(old)
            now = meanings()
            for p, links in now.items():
                was = old if p == new else p
                for i, (m, n) in enumerate(zip(meant[was], links, strict=True)):
                    if n == who[new] != m:
                        continue  # taken by the moved note, as in Obsidian
                    assert n == m, (p, i, old, new)
                if p != new and (root / p).read_text(encoding="utf-8") != texts[p]:
                    assert who[new] in meant[was]  # only a note linking the moved one changes
            meant = {p: now[p] for p in who}


@pytest.mark.parametrize("seed", range(4))
def test_a_moved_note_s_attachment_links_still_reach_their_files(
        tmp_path: Path, seed: int) -> None:
    """A move rewrites the moved note's own attachment links that would reach another file,
    or none, from its new folder (`![[./sub/img.png]]`, `![[../z/a.png]]`, a name shared by
    files in several folders), as Obsidian updates every link of a renamed file, in the style
    written; the others, the `!`, a `#page` and the words around are kept."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    stems = ["img", "shot", "Caf\u00e9"]
    files = sorted({f"{rng.choice(['', 'proj/', 'proj/sub/', 'z/', 'a/long/', 'Ün/'])}"
                    f"{rng.choice(stems)}.{rng.choice(['png', 'pdf'])}" for _ in range(12)})
    for f in files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_bytes(b"\x89PNG")
    note = "proj/P.md"
    forms = []
    for f in rng.sample(files, min(6, len(files))):
        rel = posixpath.relpath(f, "proj")
        forms.append(rng.choice([f, posixpath.basename(f), rel if rel.startswith("..")
                                 else "./" + rel]))
    (root / note).write_text("".join(f"- see ![[{t}#page=2]] here\n" for t in forms),
                             encoding="utf-8")
    with Vault.init(root) as v:
        reached = [i.attachment for i in v.links(note)]
        assert all(r is not None for r in reached)
        path = note
        for new in ("elsewhere/deep/P", "P", "Ün/P2", "proj/sub/P3"):
            v.move(path, new)
            path = new + ".md"
            assert [i.attachment for i in v.links(path)] == reached
            lines = (root / path).read_text(encoding="utf-8").splitlines()
            assert all(ln.startswith("- see ![[") and ln.endswith("#page=2]] here")
                       for ln in lines) and len(lines) == len(forms)
        assert v.doctor()["missing_attachments"] == []


@pytest.mark.parametrize("seed", range(3))
def test_read_and_links_name_the_block_of_a_block_link(tmp_path: Path, seed: int) -> None:
    """`[[T#^id]]`, `![[T#^id]]`, `[[#^id]]`: `read` and `links` give the block id (JSON
    `block`), a heading link its heading and no block, as Obsidian's link cache tells them."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    root.mkdir()
    (root / "T.md").write_text("# T\n\n## Part\n\nA line ^b1\n\nAnother ^b-2\n", encoding="utf-8")
    forms: list[str] = []
    want: list[tuple[str, str | None, str | None]] = []
    for _ in range(8):
        block = rng.choice(["b1", "b-2", "x9"])
        kind = rng.randrange(4)
        if kind == 0:
            forms.append(f"[[T#^{block}]]")
            want.append(("T.md", None, block))
        elif kind == 1:
            forms.append(f"![[T#^{block}|shown]]")
            want.append(("T.md", None, block))
        elif kind == 2:
            forms.append(f"[[#^{block}]]")
            want.append(("S.md", None, block))
        else:
            forms.append("[[T#Part]]")
            want.append(("T.md", "Part", None))
    (root / "S.md").write_text(" ".join(forms) + "\n\nHere ^x9\n", encoding="utf-8")
    with Vault.init(root) as v:
        for got in ([(ln.resolved, ln.heading, ln.block) for ln in v.links("S")],
                    [(ln["resolved"], ln["heading"], ln["block"])
                     for ln in v.read("S").to_json()["links"]]):
            assert got == want, forms
