"""Link resolution as Obsidian does it: names, folders, collisions, aliases, markdown links."""

from __future__ import annotations

import random
from collections.abc import Iterable

import pytest

from vault.errors import AmbiguousNote
from vault.notes.links import Resolver
from vault.notes.rows import LinkRow

PATHS = {
    1: "Alice.md",
    2: "work/Alice.md",
    3: "work/deep/Project X.md",
    4: "notes/Meeting.md",
    5: "archive/Meeting.md",
    6: "people/Robert.md",
}
ALIASES = {6: ("Bob", "Bobby")}


def res() -> Resolver:
    return Resolver.build(PATHS, ALIASES)


def wiki(target: str) -> LinkRow:
    return LinkRow(target, None, None, None, False, "wiki")


def test_exact_path_and_case_insensitive() -> None:
    r = res()
    assert r.resolve_wiki("work/Alice") == 2
    assert r.resolve_wiki("WORK/alice.md") == 2
    assert r.resolve_wiki("project x") == 3


def test_collision_prefers_the_vault_path_then_the_folder_then_the_shorter_path() -> None:
    """Obsidian's getLinkpathDest: the note at the target's vault path; else the notes whose
    path ends with it, those under the linking note's folder first, each by path length."""
    r = res()
    assert r.resolve_wiki("Alice", "work/other.md") == 1  # `Alice.md` is the vault path
    assert r.resolve_wiki("Alice", "elsewhere/n.md") == 1
    assert r.resolve_wiki("Meeting", "x.md") == 4  # the shorter path
    assert r.resolve_wiki("Meeting", "notes/today.md") == 4
    assert r.resolve_wiki("Meeting", "archive/today.md") == 5  # under the folder
    assert r.resolve_wiki("deep/Project X") == 3  # partial path suffix
    r = Resolver.build({1: "a/b/X.md", 2: "longer/X.md", 3: "p/sub/deep/Y.md", 4: "z/Y.md",
                        5: "p/Z.md", 6: "p/q/Z.md", 7: "Z.md"}, {})
    assert r.resolve_wiki("X", "src.md") == 1  # shorter, though deeper
    assert r.resolve_wiki("Y", "p/index.md") == 3  # under p/, though longer
    assert r.resolve_wiki("Y", "src.md") == r.resolve_wiki("Y", "pp/x.md") == 4
    assert r.resolve_wiki("Z", "p/q/n.md") == 7  # the vault path first
    assert r.resolve_wiki("q/Z", "p/n.md") == 6
    assert r.candidates("X") == ["a/b/X.md", "longer/X.md"]


ROOTED = "/"  # a link target starting so names a path from the vault root (not the host)


def test_a_target_from_the_vault_root_names_that_path_only() -> None:
    """`[[/f/Note]]` (ROOTED: Obsidian's vault-root prefix) is the path from the vault root,
    never a note whose path ends so."""
    r = Resolver.build({1: "f/Note.md", 2: "x/f/Note.md", 3: "x/Other.md"}, {3: (ROOTED + "Nick",)})
    assert r.resolve_wiki(ROOTED + "f/Note") == r.resolve_wiki(ROOTED + "F/note.md", "x/a.md") == 1
    assert r.resolve_wiki("f/Note", "x/a.md") == 1
    assert r.resolve_wiki(ROOTED + "Note") is None and r.resolve_wiki(ROOTED + "Other") is None
    assert r.resolve_wiki("Other") == 3


def test_aliases_and_dangling() -> None:
    r = res()
    assert r.resolve_wiki("bob") == 6
    assert r.resolve_wiki("Nobody") is None


def test_relative_wiki_links() -> None:
    """`[[./x]]` and `[[../x]]` (Obsidian's "relative path to file" links) name the path from
    the linking note's folder, and only it; one that climbs out of the vault is dangling."""
    r = res()
    assert r.resolve_wiki("../Alice", "work/a.md") == 1
    assert r.resolve_wiki("./Alice", "work/a.md") == 2
    assert r.resolve_wiki("./deep/Project X.md", "work/a.md") == 3
    assert r.resolve_wiki("../../Alice", "work/deep/z.md") == 1
    assert r.resolve_wiki("./Alice", "notes/m.md") is None  # no notes/Alice.md: not another
    assert r.resolve_wiki("./Alice", "top.md") == 1
    assert r.resolve_wiki("../Alice", "top.md") is None
    assert r.resolve(wiki("../Alice"), "work/a.md") == 1


def test_nfc_and_nfd_spellings_are_one_name() -> None:
    """A file name stored decomposed (NFD: macOS, sync tools) and a link or argument typed
    composed (NFC), or the other way round, name the same note, as the case does not."""
    nfd, nfc = "U\u0308ber", "\u00dcber"
    r = Resolver.build({1: f"{nfd}.md", 2: "caf\u00e9/Menu.md", 3: "x.md"}, {3: ("Gr\u00fcn",)})
    assert r.resolve_wiki(nfc) == r.resolve_wiki(nfd) == r.resolve_wiki("\u00fcBER") == 1
    assert r.resolve_wiki("cafe\u0301/Menu") == 2
    assert r.resolve_wiki("./Menu", "cafe\u0301/a.md") == 2
    assert r.resolve_markdown("cafe\u0301/Menu.md", "a.md") == 2
    assert r.resolve_wiki("Gru\u0308n") == 3
    assert r.by_path(f"{nfc}.md") == r.by_title(nfc) == 1
    assert r.by_title("gru\u0308n") == 3
    assert r.link_text(1) == nfd  # a rewritten link keeps the file's own spelling


def test_markdown_links_relative_then_root() -> None:
    r = res()
    assert r.resolve_markdown("deep/Project%20X.md".replace("%20", " "), "work/a.md") == 3
    assert r.resolve_markdown("../Alice.md", "work/a.md") == 1
    assert r.resolve_markdown("people/Robert.md", "work/deep/z.md") == 6
    assert r.resolve_markdown("../../../../etc/passwd.md", "a.md") is None


def test_same_note_heading_link_resolves_to_source() -> None:
    r = res()
    assert r.resolve(LinkRow("", "Heading", None, None, False, "wiki"), "Alice.md") == 1


def test_link_text_is_shortest_unique() -> None:
    r = res()
    assert r.link_text(3) == "Project X"
    assert r.link_text(2) == "work/Alice"


# -- spellings of one path: one rule for links and `read` ------------------------------------

NFC, NFD = "Caf\u00e9", "Cafe\u0301"
SPELLINGS = ["Note", "note", "NOTE", NFC, NFD, "CAF\u00c9", "\u00dcber", "U\u0308ber", "\u00fcber"]
FOLDERS = ["", "a/", "A/", "a/deep/"]


def _read(r: Resolver, q: str) -> int | str | None:
    """What `read q` answers (vault/storage/live.py `resolve`: by path, else by title)."""
    try:
        found = r.by_path(q)
        return found if found is not None else r.by_title(q)
    except AmbiguousNote:
        return "ambiguous"


def _spelled_vault(rng: random.Random) -> dict[str, int]:
    """Paths that differ only by case or Unicode normal form (and `.md` case), with ids in a
    random order: path -> id."""
    paths = sorted({f"{rng.choice(FOLDERS)}{rng.choice(SPELLINGS)}{rng.choice(['.md', '.MD'])}"
                    for _ in range(rng.randint(4, 24))})
    ids = rng.sample(range(1, 1000), len(paths))
    return dict(zip(paths, ids, strict=True))


def _queries(paths: Iterable[str]) -> list[str]:
    out = [*SPELLINGS, *(f + s for f in FOLDERS for s in SPELLINGS)]
    for p in paths:
        out += [p, p[:-3], p.upper(), p.rsplit("/", 1)[-1][:-3]]
    return sorted(set(out))


@pytest.mark.parametrize("seed", range(30))
def test_read_and_links_pick_the_same_note_among_spellings(seed: int) -> None:
    """Whenever `read NAME` answers, `[[NAME]]` and `[x](NAME)` (written at the root)
    resolve to that very note; and which note a link picks among spellings of one path does
    not depend on the notes' ids (the order they were indexed in)."""
    rng = random.Random(seed)
    by_path = _spelled_vault(rng)
    r = Resolver.build({i: p for p, i in by_path.items()}, {})
    other = rng.sample(range(1000, 2000), len(by_path))  # the same paths, other ids
    again = Resolver.build(dict(zip(other, by_path, strict=True)), {})
    for q in _queries(by_path):
        read = _read(r, q)
        if isinstance(read, int):
            assert r.resolve_wiki(q) == read, (q, r.id_path[read])
            assert r.resolve_markdown(q, "root.md") == read, q
        for src in (None, "a/x.md", "A/x.md"):
            one, two = r.resolve_wiki(q, src), again.resolve_wiki(q, src)
            assert (one and r.id_path[one]) == (two and again.id_path[two]), (q, src)


def test_the_spelling_rule_by_example() -> None:
    """The exact spelling wins; none exact: the first path in code-point order for a link,
    AmbiguousNote for `read`."""
    paths = {9: "Note.md", 3: "note.md", 5: f"{NFC}.md", 2: f"{NFD}.md", 7: "a/Deep.md",
             1: "a/deep.md", 4: "x.MD", 8: "x.md"}
    r = Resolver.build(paths, {})
    assert [r.resolve_wiki(q) for q in ("Note", "note", "NOTE")] == [9, 3, 9]
    assert [r.resolve_wiki(q) for q in (NFC, NFD, "CAF\u00c9")] == [5, 2, 2]  # "e" < "é"
    assert [r.by_path(q) for q in ("Note", "note", NFC, NFD)] == [9, 3, 5, 2]
    for q in ("NOTE", "CAF\u00c9", "DEEP", "X"):
        with pytest.raises(AmbiguousNote):
            _read_strict(r, q)
    assert [r.resolve_wiki(q) for q in ("Deep", "deep", "DEEP")] == [7, 1, 7]
    assert [r.by_title(q) for q in ("Deep", "deep")] == [7, 1]
    assert [r.resolve_wiki(q) for q in ("x", "x.md", "x.MD")] == [8, 8, 4]
    assert [r.by_path(q) for q in ("x", "x.md", "x.MD")] == [8, 8, 4]


def _read_strict(r: Resolver, q: str) -> int | None:
    found = r.by_path(q)
    return found if found is not None else r.by_title(q)


def test_markdown_links_resolve_by_name_as_obsidian_s_shortest_paths() -> None:
    """`[x](Name)` / `[x](Name.md)` (the target as the scan gives it: decoded, `.md`
    dropped) is the note `[[Name]]` finds (Obsidian's getLinkpathDest serves both: the vault
    path first, even with a note of that name in the linking note's folder); never by alias,
    and an explicit `./` or `../` path names that path only."""
    r = res()
    assert r.resolve_markdown("Project X", "x.md") == 3
    assert r.resolve_markdown("deep/Project X", "x.md") == 3
    assert r.resolve_markdown("Robert", "notes/a.md") == 6
    assert r.resolve_markdown("Meeting", "notes/today.md") == 4  # the linking note's folder
    assert r.resolve_markdown("Meeting", "archive/today.md") == 5
    assert r.resolve_markdown("Alice", "work/x.md") == 1  # the vault path: the root's
    assert r.resolve_markdown("./Alice", "work/x.md") == 2
    assert r.resolve_markdown("Bob", "x.md") is None  # an alias is no markdown target
    assert r.resolve_markdown("./Alice", "notes/m.md") is None
    assert r.resolve_markdown("../Alice", "work/m.md") == 1
    assert r.resolve_markdown("Nobody", "x.md") is None
