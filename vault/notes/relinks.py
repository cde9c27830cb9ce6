"""How a move rewrites links (notes/links.py resolves them): the links to the moved note in
the notes that refer to it, and the moved note's own links that must follow it. Pure: text in,
text out; every other byte is kept (note.py `rewrite_links`)."""

from __future__ import annotations

import bisect
import posixpath
from collections.abc import Callable, Sequence

from .links import Resolver
from .note import Link, rewrite_links


def retarget(
    before: Resolver, src_path: str, note_id: int, wiki_text: str, new_path: str
) -> Callable[[Link], str | None]:
    """A `rewrite_links` callback for a move: every link in note `src_path` that meant
    `note_id` before the move gets its new name (`wiki_text` for wiki-links, the relative path
    for markdown links; `rewrite_links` does the %-encoding); other links stay as written,
    and so does a link by one of the note's aliases (`[[Al]]` for Alice.md): the alias moves
    with the note and still names it, and the text the reader sees stays the alias."""

    def rewrite(link: Link) -> str | None:
        if link.kind == "markdown":
            if before.resolve_markdown(link.target, src_path) != note_id:
                return None
            return posixpath.relpath(new_path, posixpath.dirname(src_path) or ".")
        if not link.target or before.resolve_name(link.target, src_path) != note_id:
            return None
        return wiki_text

    return rewrite


def follow(before: Resolver, after: Resolver, old_path: str,
           new_path: str) -> Callable[[Link], str | None]:
    """A `rewrite_links` callback for the moved note itself: each of its links that meant a
    note when written at `old_path` (resolved with `before`) but would not mean it from
    `new_path` (with `after`) gets that note's name as seen from there: the relative path for
    a markdown link (`[a](Alice.md)` moved from people/ to team/ -> `../people/Alice.md`), the
    shortest unique name for a wiki-link. Links that still mean the same note stay as
    written, so a rename within a folder changes no byte of the note."""

    def rewrite(link: Link) -> str | None:
        if link.kind == "markdown":
            meant = before.resolve_markdown(link.target, old_path)
            if meant is None or after.resolve_markdown(link.target, new_path) == meant:
                return None
            return posixpath.relpath(after.id_path[meant], posixpath.dirname(new_path) or ".")
        if not link.target:
            return None
        meant = before.resolve_wiki(link.target, old_path)
        if meant is None or after.resolve_wiki(link.target, new_path) == meant:
            return None
        return after.link_text(meant)

    return rewrite


def moved(before: Resolver, note_id: int, new_path: str) -> Resolver:
    """The resolver `before` with note `note_id` at `new_path` (same id, same aliases): what
    the index will resolve with once the move is made, computed before making it."""
    pos = bisect.bisect_left(before.ids, note_id)
    if pos == len(before.ids) or before.ids[pos] != note_id:
        return before  # not in this resolver (written since its snapshot): nothing to follow
    paths = list(before.paths)
    paths[pos] = new_path
    return before.plus(before.ids, paths, before.aliases, (), (pos,))


def relink_plan(
    read: Callable[[str], str],
    referrers: Sequence[int],
    note_id: int,
    before: Resolver,
    after: Resolver,
    old_path: str,
    new_path: str,
) -> list[tuple[str, str, str]]:
    """The rewrites a move of note `note_id` from `old_path` to `new_path` needs, computed
    before anything changes: the links to it in each referrer (by id, resolved with `before`,
    the names as they were) as Obsidian does, then the moved note's own links that must follow
    it (`follow`). `read(path)` gives a note's text by its path after the move (`new_path`:
    the moved note). Returns (path after the move, text now, new text) of each note whose text
    changes, in `referrers` order, the moved note last; other bytes are kept (rewrite_links)."""
    texts: dict[str, tuple[str, str]] = {}  # path -> (text now, text after the rewrites)
    rewrites = [(after.id_path[src],
                 retarget(before, after.id_path[src], note_id, after.link_text(note_id),
                          new_path)) for src in referrers]
    for path, rewrite in [*rewrites, (new_path, follow(before, after, old_path, new_path))]:
        if path not in texts:
            text = read(path)
            texts[path] = (text, text)
        now, planned = texts[path]
        texts[path] = (now, rewrite_links(planned, rewrite))
    order = [p for p in texts if p != new_path] + [new_path]  # the moved note last
    return [(p, *texts[p]) for p in order if texts[p][0] != texts[p][1]]
