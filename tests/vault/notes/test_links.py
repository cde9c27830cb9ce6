"""Link resolution as Obsidian does it: names, folders, collisions, aliases, markdown links."""

from __future__ import annotations

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


def test_collision_prefers_same_folder_then_shortest_path() -> None:
    r = res()
    assert r.resolve_wiki("Alice", "work/other.md") == 2
    assert r.resolve_wiki("Alice", "elsewhere/n.md") == 1
    assert r.resolve_wiki("Meeting", "x.md") == 4  # same depth: the shorter path
    assert r.resolve_wiki("Meeting", "notes/today.md") == 4
    assert r.resolve_wiki("deep/Project X") == 3  # partial path suffix


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
