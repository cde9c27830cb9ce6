"""Markdown links against a model of Obsidian's resolver (obsidian_model.py), and what a
move writes for them. The vaults are generated so that the model's known differences from rmh
do not arise: no folder name is a prefix or suffix of another but its own sub-folders, names
are NFC, and a `./` link names a file."""

from __future__ import annotations

import posixpath
import random
from urllib.parse import quote

import pytest

from vault.notes.link_keys import strip_md
from vault.notes.links import Resolver
from vault.notes.markdown_scan import Link, scan_body
from vault.notes.relinks import moved, names_meaning, relink_plan, relinked

from .obsidian_model import obsidian

FOLDERS = ["", "proj", "proj/sub", "Z\u00fcrich x", "(par) f", "50% q", "sub", "hash#d"]
NAMES = ["Note", "note", "Plan (v2)", "50% done", "Caf\u00e9 #1", "a&b", "x y", "v1.2 notes"]


def forms(source: str, target: str) -> list[str]:
    """Every way Obsidian's settings (and hands) write a link from `source` to `target`:
    the name (shortest), the vault path (absolute), `/` + it, the relative path as Obsidian's
    "relative path to file" writes it (no `./`), and with `./`."""
    rel = posixpath.relpath(target, posixpath.dirname(source) or ".")
    return [posixpath.basename(target), target, "/" + target, rel,
            rel if rel.startswith("../") else "./" + rel]


def link(rng: random.Random, path: str) -> str:
    """A markdown link to `path` as written: `.md` or not, %-encoded or in `<...>`, a heading
    or not."""
    if rng.random() < 0.3:
        path = strip_md(path)
    head = rng.choice(["", "#Top"])
    if rng.random() < 0.3 and not any(c in path for c in "<>#"):
        return f"[t](<{path}{head}>)"
    return f"[t]({quote(path, safe='/()&')}{head})"


def vault(rng: random.Random) -> dict[str, str]:
    """Notes named alike in the root, in the linking notes' folders and elsewhere, each
    linking to some of them in every form."""
    paths = sorted({posixpath.join(rng.choice(FOLDERS), rng.choice(NAMES)) + ".md"
                    for _ in range(12)})
    paths = [p for i, p in enumerate(paths)  # one spelling of a path (no `Note`/`note`)
             if all(p.lower() != q.lower() for q in paths[:i])]
    return {p: " ".join(link(rng, f) for t in rng.sample(paths, 3) for f in forms(p, t)) + "\n"
            for p in paths}


def targets(text: str) -> list[str]:
    return [s.link.target for s in scan_body(text).sites]


def meanings(notes: dict[str, str], resolver: Resolver) -> dict[str, list[int | None]]:
    return {p: [resolver.resolve_markdown(t, p) for t in targets(text)]
            for p, text in notes.items()}


@pytest.mark.parametrize("seed", range(40))
def test_markdown_links_resolve_as_obsidian_s_getlinkpathdest(seed: int) -> None:
    """Every form of link between notes named alike in the root, the linking note's folder
    and elsewhere: rmh's note is the model's (a bare `Note.md` in `proj/` is the root's)."""
    notes = vault(random.Random(seed))
    paths = sorted(notes)
    resolver = Resolver.build(dict(enumerate(paths, 1)), {})
    for source, text in notes.items():
        for site in scan_body(text).sites:
            written = site.link.target + (".md" if site.md_suffix else "")
            want = obsidian(written, source, paths)
            got = resolver.resolve_markdown(site.link.target, source)
            assert (None if got is None else resolver.id_path[got]) == want, (source, written)


def style(target: str) -> str:
    return "/" if target.startswith("/") else "./" if target.startswith(("./", "../")) else ""


@pytest.mark.parametrize("seed", range(40))
def test_moves_keep_every_markdown_link_s_note_and_style(seed: int) -> None:
    """After each of a sequence of moves (names clashing with the root's, the linking folder's
    and others'), every link means the note it meant (by id), under rmh's rule and the model's;
    a link whose text still meant that note is not changed; a rewritten one keeps its form
    (`/`, `./`/`../`, a bare name a bare name or path; a bare path may gain `./` or `../`;
    `/` and the vault path is the last resort of each). A link to another note that the moved
    note now takes (Obsidian's rule, as Obsidian does) is counted, not a failure."""
    rng = random.Random(seed)
    notes = vault(rng)
    ids = {p: i for i, p in enumerate(sorted(notes), 1)}
    for _ in range(6):
        paths = {i: p for p, i in ids.items()}
        before = Resolver.build(paths, {})
        old_path = rng.choice(sorted(notes))
        new_path = posixpath.join(rng.choice(FOLDERS), rng.choice(NAMES) + " " + rng.choice(
            ["", "m", "#2"]).strip()).strip() + ".md"
        if any(new_path.lower() == p.lower() for p in notes):
            continue
        note_id = ids[old_path]
        after = moved(before, note_id, new_path)
        meant = meanings(notes, before)
        referrers = [ids[p] for p in sorted(notes)  # the other notes (snapshot.py)
                     if note_id in meant[p] and p != old_path]
        text_of = {new_path if p == old_path else p: t for p, t in notes.items()}
        for path, _, new in relink_plan(text_of.__getitem__, referrers, note_id, before, after,
                                        old_path, new_path):
            text_of[path] = new
        ids[new_path] = ids.pop(old_path)
        now = meanings(text_of, after)
        all_paths = sorted(text_of)
        for path, text in text_of.items():
            was_path = old_path if path == new_path else path
            olds, news = targets(notes[was_path]), targets(text)
            assert len(olds) == len(news)
            for old, new, m, n in zip(olds, news, meant[was_path], now[path], strict=True):
                if m != note_id and n == note_id and m != n:
                    continue  # captured by the moved note, as in Obsidian
                assert n == m, (was_path, old, new, old_path, new_path)
                model = obsidian(new, path, all_paths)  # `.md` dropped: looked up with it
                assert model == (None if n is None else after.id_path[n]), (path, new)
                if after.resolve_markdown(old, path) == m:
                    assert new == old, (path, old, new)
                elif style(old) or "/" not in old:  # a bare name: a name or a path
                    assert style(new) in (style(old), "/"), (old, new)
        notes = text_of


@pytest.mark.parametrize(("new_path", "want"), [
    ("proj/X.md", "./X"),  # bare `X.md` would be the root's X.md: `./`
    ("proj/other/X.md", "other/X"),  # no vault path `other/X.md`: bare, as written
    ("z/X.md", "../z/X"),
    ("proj/sub/Y.md", "sub/Y"),
])
def test_a_bare_relative_link_stays_bare_unless_the_root_would_take_it(
        new_path: str, want: str) -> None:
    """`[x](sub/X.md)` in `proj/a.md` ("relative path to file", as Obsidian writes it: no
    `./`) meant `proj/sub/X.md` (no vault path `sub/X.md`): after a move it is the path from
    `proj/`, with `./` only where the vault path would win."""
    paths = {1: "X.md", 2: "proj/sub/X.md", 3: "proj/a.md"}
    before = Resolver.build(paths, {})
    after = moved(before, 2, new_path)
    plan = relink_plan(lambda p: "[x](sub/X.md)\n", [3], 2, before, after, "proj/sub/X.md",
                       new_path)
    (new,) = targets(plan[0][2])
    assert new == want and after.resolve_markdown(new, "proj/a.md") == 2


def meaning(resolver: Resolver, link: Link, source: str) -> int | None:
    return (resolver.resolve_markdown(link.target, source) if link.kind == "markdown"
            else resolver.resolve_wiki(link.target, source))


def wiki_or_markdown(rng: random.Random, path: str) -> str:
    return link(rng, path) if rng.random() < 0.5 else f"[[{strip_md(path)}|w]]"


@pytest.mark.parametrize("seed", range(40))
def test_a_link_an_editor_adds_to_the_moved_note_is_rewritten_without_a_resolver(
        seed: int) -> None:
    """A move's plan made over a file an editor saved since (a killed move recovered, or a
    save between the plan and its swap): their new line links the moved note by its old
    name in every form, wiki or markdown, and copies a line the plan rewrote. `relinked`,
    with the names the plan recorded alone (no resolver), rewrites each so that it means the
    moved note after the move, as the plan's resolver would; every other link keeps its
    note (NOTES-REV2 finding 2: such links were kept as written and dangled)."""
    rng = random.Random(seed)
    notes = vault(rng)
    paths = sorted(notes)
    ids = {p: i for i, p in enumerate(paths, 1)}
    before = Resolver.build({i: p for p, i in ids.items()}, {})
    checked = 0
    for old_path in paths:
        new_path = posixpath.join(rng.choice(FOLDERS), rng.choice(NAMES) + " m.md")
        if any(new_path.lower() == p.lower() for p in notes):
            continue
        note_id = ids[old_path]
        after = moved(before, note_id, new_path)
        referrers = [ids[p] for p in paths if p != old_path and note_id in [
            before.resolve_markdown(t, p) for t in targets(notes[p])]]
        text_of = {new_path if p == old_path else p: t for p, t in notes.items()}
        for path, now, new in relink_plan(text_of.__getitem__, referrers, note_id, before,
                                          after, old_path, new_path):
            src = old_path if path == new_path else path
            added = " ".join(wiki_or_markdown(rng, f) for f in forms(src, old_path))
            theirs = f"{added} {now.splitlines()[0]}\n{now}"
            wiki = after.link_text(note_id)
            got = relinked(theirs, (now, new), src, path, old_path, new_path, wiki,
                           names_meaning(before, note_id, src))
            if got is None:  # a wiki-link cannot name it: the caller leaves the file
                assert "[[" in added and any(c in wiki for c in "[]|#")
                continue
            olds, news = scan_body(theirs).sites, scan_body(got).sites
            assert len(olds) == len(news)
            for o, n in zip(olds, news, strict=True):
                was = meaning(before, o.link, src)
                now_id = meaning(after, n.link, path)
                assert now_id == was or (now_id == note_id and path == new_path), (
                    path, o.link.target, n.link.target)
                checked += was == note_id
    assert checked > 0
