"""How a move rewrites links (notes/links.py resolves them): the links to the moved note in
the notes that refer to it, and the moved note's own links that must follow it. Pure: text in,
text out; every other byte is kept (note.py `rewrite_links`)."""

from __future__ import annotations

import bisect
import posixpath
from collections.abc import Callable, Collection, Sequence

from .link_keys import path_key, strip_md
from .links import Resolver
from .note import Link, rewrite_links


def markdown_target(after: Resolver, written: str, note_id: int, was: str, old_src: str,
                    src: str) -> str | None:
    """What a markdown link written `written` (decoded, `.md` dropped) in note `src` (at
    `old_src` before the move) that meant note `note_id` (at `was` before the move) is
    rewritten to, so that it means that note under `after` (links.py): None when it still
    does (no byte changes), else a target in the style written, the first of its forms that
    resolves to the note:
    - `./x` or `../x`: the path relative to the folder of `src`, with `./` or `../`;
    - `/x`: the path from the vault root, with `/`;
    - a bare name (`Note`, Obsidian's "shortest path when possible"): the file name, else the
      vault path, as Obsidian writes a name other notes share;
    - a bare path relative to the folder of `old_src` (Obsidian's "relative path to file"
      writes `sub/Note.md`, no `./`): the relative path, with `./` when a bare one would be
      taken to another note (the vault path wins: `Note.md` in `proj/` is the root's);
    - another bare path (Obsidian's "absolute path in vault"): the vault path.
    Each falls back to `/` and the vault path, which names that note only."""
    if after.resolve_markdown(written, src) == note_id:
        return None
    bare, path = written.strip(), after.id_path[note_id]
    # a note titled `x.md` keeps its file's `.md` in every form (`x.md.md`): the writer adds
    # none to a target ending in `.md`, and `x.md` would name a note `x.md` first (session 37)
    cut = (lambda p: p) if strip_md(path).lower().endswith(".md") else strip_md
    new = cut(path)  # the relative path of the file (`a.md` from `a/` is `../a`)
    rel = cut(posixpath.relpath(path, posixpath.dirname(src) or "."))
    dotted = rel if rel.startswith("../") else "./" + rel
    if bare.startswith(("./", "../")):
        forms = [dotted]
    elif bare.startswith("/"):
        forms = []
    elif "/" not in bare:
        forms = [cut(posixpath.basename(path)), new]
    elif (path_key(posixpath.normpath(posixpath.join(posixpath.dirname(old_src), bare)))
          == path_key(was) != path_key(bare)):
        forms = [rel, dotted]
    else:
        forms = [new]
    forms.append("/" + new)
    return next((f for f in forms if after.resolve_markdown(f, src) == note_id), forms[-1])


def retarget(before: Resolver, after: Resolver, src: str, note_id: int,
             wiki_text: str) -> Callable[[Link], str | None]:
    """A `rewrite_links` callback for a move: every link in note `src` (another note than the
    moved one) that meant `note_id` before the move gets its new name (`wiki_text`
    for wiki-links, `markdown_target` for markdown links: in the style written; `rewrite_links`
    does the %-encoding); other links stay as written, and so does a link by one of the
    note's aliases (`[[Al]]` for Alice.md): the alias moves with the note and still names it,
    and the text the reader sees stays the alias."""
    was = before.id_path.get(note_id, "")

    def rewrite(link: Link) -> str | None:
        if link.kind == "markdown":
            if before.resolve_markdown(link.target, src) != note_id:
                return None
            return markdown_target(after, link.target, note_id, was, src, src)
        if not link.target or before.resolve_name(link.target, src) != note_id:
            return None
        return wiki_text

    return rewrite


Reach = Callable[[str, str], str | None]  # (attachment target, linking note) -> its file


def file_target(written: str, old_path: str, new_path: str, reach: Reach) -> str | None:
    """What an attachment link written `written` in the note moving from `old_path` to
    `new_path` is rewritten to, so that it reaches the same file (`reach`, storage/
    attachments.py: the file a target reaches from a note, None for none or no attachment):
    None when it still does or reached none; else in the style written, the first form that
    reaches it, as `markdown_target` chooses: `./x`/`../x` relative to the new folder; a bare
    name the file name, else the vault path; a path the vault path; each falling back to
    `/` and the vault path. A form a wiki-link cannot hold (`[`, `]`, `|`, `#`) is skipped;
    none left: None (the link is left as written)."""
    file = reach(written, old_path)
    if file is None or reach(written, new_path) == file:
        return None
    bare = written.strip()
    rel = posixpath.relpath(file, posixpath.dirname(new_path) or ".")
    if bare.startswith(("./", "../")):
        forms = [rel if rel.startswith("../") else "./" + rel]
    elif bare.startswith("/"):
        forms = []
    elif "/" not in bare:
        forms = [posixpath.basename(file), file]
    else:
        forms = [file]
    forms.append("/" + file)
    fit = [f for f in forms if not any(c in f for c in "[]|#\n\r")]
    return next((f for f in fit if reach(f, new_path) == file), fit[-1] if fit else None)


def follow(before: Resolver, after: Resolver, old_path: str,
           new_path: str, reach: Reach | None = None) -> Callable[[Link], str | None]:
    """A `rewrite_links` callback for the moved note itself: each of its links that meant a
    note when written at `old_path` (resolved with `before`) but would not mean it from
    `new_path` (with `after`) gets that note's name as seen from there: for a markdown link
    `markdown_target` (`[a](../people/Alice.md)` moved from work/ to team/x/ ->
    `../../people/Alice.md`), the shortest unique name for a wiki-link. Links that still mean
    the same note stay as written, so a rename within a folder changes no byte of the note.
    With `reach`, a wiki-link naming no note that reached an attachment's file from
    `old_path` and would not from `new_path` is rewritten to reach it (`file_target`)."""

    def rewrite(link: Link) -> str | None:
        if link.kind == "markdown":
            meant = before.resolve_markdown(link.target, old_path)
            if meant is None:
                return None
            return markdown_target(after, link.target, meant, before.id_path[meant], old_path,
                                   new_path)
        if not link.target:
            return None
        meant = before.resolve_wiki(link.target, old_path)
        if meant is None:
            return None if reach is None else file_target(link.target, old_path, new_path,
                                                          reach)
        if after.resolve_wiki(link.target, new_path) == meant:
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
    reach: Reach | None = None,
) -> list[tuple[str, str, str]]:
    """The rewrites a move of note `note_id` from `old_path` to `new_path` needs, computed
    before anything changes: the links to it in each referrer (by id, resolved with `before`,
    the names as they were) as Obsidian does, then the moved note's own links that must follow
    it (`follow`; with `reach`, its attachment links too). `referrers` are the other notes
    (a note's link to itself is the moved note's own: `follow`). `read(path)` gives a
    note's text by its path after the move (`new_path`: the moved note). Returns (path after
    the move, text now, new text) of each note whose text changes, in `referrers` order, the
    moved note last; other bytes are kept (rewrite_links)."""
    texts: dict[str, tuple[str, str]] = {}  # path -> (text now, text after the rewrites)
    rewrites = [(after.id_path[src],
                 retarget(before, after, after.id_path[src], note_id, after.link_text(note_id)))
                for src in referrers]
    own = follow(before, after, old_path, new_path, reach)
    for path, rewrite in [*rewrites, (new_path, own)]:
        if path not in texts:
            text = read(path)
            texts[path] = (text, text)
        now, planned = texts[path]
        texts[path] = (now, rewrite_links(planned, rewrite))
    order = [p for p in texts if p != new_path] + [new_path]  # the moved note last
    return [(p, *texts[p]) for p in order if texts[p][0] != texts[p][1]]


def meaning(text: str, resolver: Resolver, src: str, note_id: int) -> int:
    """How many links in note `src`'s `text` mean note `note_id` under `resolver`, read as the
    index reads them (a link inside code, math or a comment is none)."""
    found = 0

    def visit(link: Link) -> None:
        nonlocal found
        target = link.target
        if link.kind == "markdown":
            found += resolver.resolve_markdown(target, src) == note_id
        elif target:
            found += resolver.resolve_name(target, src) == note_id

    rewrite_links(text, visit)
    return found


def unread(plan: Sequence[tuple[str, str, str]], before: Resolver, after: Resolver,
           note_id: int, new_path: str) -> list[str]:
    """The referrers in `plan` (`relink_plan`) whose rewritten text holds fewer links meaning
    the moved note than before the move: a new name holding a backtick, `$`, `%%` or `<!--`
    can open code, math or a comment with a character the note already holds, and the links
    rewritten to that name are then text; a move that would lose them is refused (session 41)."""
    return [path for path, now, new in plan if path != new_path
            and meaning(new, after, path, note_id) < meaning(now, before, path, note_id)]


def names_meaning(before: Resolver, note_id: int, src: str) -> tuple[str, ...]:
    """The path keys by which a bare link target written in note `src` meant note `note_id`
    under `before` (rules 1 and 2: its vault path, and each shorter trailing part of it that
    resolved to it from there), in order. A move's plan records them for each file it
    rewrites, so a process without a resolver (the recovery of a killed move) still tells a
    link to the moved note that an editor wrote since the plan (`relinked`)."""
    parts = strip_md(before.id_path[note_id]).split("/")
    tails = ["/".join(parts[i:]) for i in range(len(parts))]
    return tuple(path_key(t) for t in tails if before.resolve_name(t, src) == note_id)


def _targets(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    rewrite_links(text, lambda link: found.append((link.kind, link.target)))
    return found


def relinked(text: str, planned: tuple[str, str], src: str, here: str, old: str, new: str,
             wiki: str, names: Collection[str]) -> str | None:
    """`text` (a file a move planned to rewrite from `planned[0]` to `planned[1]`, changed
    since by somebody else: at `src` when planned, at `here` now) with each link that meant
    the moved note (`old` -> `new`) when the plan was made rewritten, as Obsidian rewrites
    every link to a moved note: a link written as one the plan rewrote in that file gets the
    same new target (the same text in the same note meant the same note: the moved note's own
    links that `follow` it too); else a link whose target meant it (`./x`, `../x` by path
    from `src`'s folder, `/x` by vault path, a bare target by `names`, `names_meaning`) gets
    `wiki` (a wiki-link, as `retarget`), or for a markdown link as written: `wiki` (a bare
    name), the vault path (a bare path, or `/x`), the path relative to `here` (`./x`).
    Other bytes are kept (rewrite_links). None when a wiki-link that meant it cannot name it
    now (`wiki` holds `#`, `|`, `[` or `]`)."""
    before, after = _targets(planned[0]), _targets(planned[1])
    seen = ({b: a[1] for b, a in zip(before, after, strict=True) if a != b}
            if len(before) == len(after) else {})
    old_key, keys = path_key(old), frozenset(names)
    folder = posixpath.dirname(src)
    unwritable: list[Link] = []

    def meant(bare: str) -> str | None:  # the new target of one that meant the moved note
        if bare.startswith(("./", "../")):
            rel = posixpath.normpath(posixpath.join(folder, bare))
            if rel.startswith("..") or path_key(rel) != old_key:
                return None
            rel = strip_md(posixpath.relpath(new, posixpath.dirname(here) or "."))
            return rel if rel.startswith("../") else "./" + rel
        if bare.startswith("/"):
            return "/" + strip_md(new) if path_key(bare.lstrip("/")) == old_key else None
        if not bare or path_key(bare) not in keys:
            return None
        return wiki if "/" not in bare else strip_md(new)

    def rewrite(link: Link) -> str | None:
        if (same := seen.get((link.kind, link.target))) is not None:
            return same
        target = meant(link.target.strip())
        if link.kind == "markdown" or target is None:
            return target
        if any(c in wiki for c in "[]|#"):  # a wiki-link, rewritten as the plan does
            unwritable.append(link)
            return None
        return wiki

    done = rewrite_links(text, rewrite)
    return None if unwritable else done
