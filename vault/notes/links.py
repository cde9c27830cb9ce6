"""Link resolution over the whole vault, as Obsidian does it.

A wiki-link target `Name` or `Folder/Name` resolves, case-insensitively, as Obsidian's
`MetadataCache.getLinkpathDest` does (as de-minified in public copies of its app.js):
  1. to the note whose vault path (without `.md`) equals the target, even when the linking
     note's folder holds one of that name (`[[Alice]]` in `work/x.md` is `Alice.md`);
  2. else to the notes whose path ends with `/target` (file name match for a bare name):
     those under the linking note's folder (at any depth) first, then the shorter path
     (characters, not folders: `a/b/X.md` before `longer/X.md`), then the path in code-point
     order (so a result never depends on scan order);
  3. else to the unique note with that alias.
A target that starts with `/` is the path from the vault root and resolves to that note only.
Names compare by `fold`: casefolded and in one Unicode normal form, so a link typed `[[Über]]`
(NFC, as Linux and Windows keyboards write it) finds `Über.md` written NFD (as macOS file
systems and sync tools may store it), and the other way round.
A target that starts with `./` or `../` is a path relative to the linking note's folder and
resolves to that note only (Obsidian's "relative path to file" links).
Markdown links (`.md` optional, %-decoded by the scan, `#heading` cut) resolve by the same rules
1 and 2 (and `/`, `./`, `../`), never by alias: Obsidian passes their decoded path to the same
`getLinkpathDest`, so `[x](Note.md)` in `proj/a.md` is the root's `Note.md` even when
`proj/Note.md` exists (that one is `[x](./Note.md)`), and `[x](sub/N.md)` is the vault path
`sub/N.md` before `proj/sub/N.md`, which it reaches by rule 2 (under the folder) when there is none.
Unresolved links are kept as dangling (resolved = None).

Spellings of one path (`Note.md` and `note.md` on a case-sensitive file system; `Café.md`
composed and decomposed) are one name to a link, and one rule picks among them everywhere,
for links and for `read` (`by_path`, `by_title`) alike: the note spelled exactly as written
(code points, `.md` as written or added: `spelling` 0, else but for the case of `.md`: 1), else
the first by path in code-point order. A link always takes that pick; `read` takes it only
when a note is spelled as written (or there is only one), and otherwise answers AmbiguousNote
listing them, so whenever `read NAME` answers, it names the note `[[NAME]]` resolves to.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import AmbiguousNote
from .folding import folds
from .generated_names import unclaimed
from .link_keys import _last, alias_keys, fold, name_key, path_key, spelling, strip_md, title_of
from .name_index import IdPaths, KeyIndex, LazyKeyIndex, Lookup, Stored
from .rows import LinkRow

# The version of the rules above: what a link resolves to. The stores of resolved edges
# (storage/edge_store.py, storage/note_store.py) name it, so a change of the rules rebuilds
# them instead of serving the old rules' edges. 2: `[[./x]]` and `[[../x]]` resolve.
# 3: names compare by `fold` (NFC and NFD spellings are one name). 4: spellings of one path
# pick the one spelled as written, else the first in code-point order (was: the highest id);
# markdown links resolve by name as wiki-links do, and without `.md`. 5: the vault path before
# the linking note's folder, then notes under that folder, then the shorter path (was: the
# folder first, then fewer folders); `[[/x]]` only from the root, as Obsidian (session 28).
# 6: markdown links by rules 1 and 2 alone, as Obsidian: no "relative, then root" first
# (`[x](Note.md)` in `proj/` was `proj/Note.md` before the root's `Note.md`) (session 29).
# 7: a target is the note `target.md`, else `target.md.md` (was: its `.md` cut a second time,
# so no link reached a note titled `x.md`, file `x.md.md`, as Obsidian links it) (session 37).
# 8: an entity note ingest wrote yields a bare name a user's note holds (generated_names.py).
RULES = 8

SHORT = 8  # notes sharing a file name that `_exact` scans rather than look the path key up


@dataclass(frozen=True, eq=False)
class Resolver:
    """Name tables for one set of notes: the ascending `ids`, `paths` and `aliases` columns
    (the corpus's own, shared, not copied) and three `KeyIndex` tables over their positions
    (path key, file name, alias), each candidate checked against the columns (name_index.py).

    `by_key`, `by_name`, `by_alias`, `path_id` and `id_path` read as the dicts they were
    (casefolded path without .md -> id, the highest id of several; casefolded title -> paths,
    sorted; casefolded alias -> ids, ascending; path <-> id)."""

    ids: Sequence[int]
    paths: Sequence[str]
    aliases: Sequence[Sequence[str]]
    keys: KeyIndex  # path_key -> positions
    names: KeyIndex  # name_key -> positions
    alias_index: KeyIndex  # alias key -> positions

    @classmethod
    def over(cls, ids: Sequence[int], paths: Sequence[str], aliases: Sequence[Sequence[str]],
             stored: Callable[[str], Stored] | None = None) -> Resolver:
        """The resolver over aligned columns (`ids` ascending), which it keeps, not copies;
        with `stored`, each table ("keys", "names", "aliases") is loaded from, or built and
        kept in, `stored(name)` (name_index.py `Stored`)."""
        def kept(name: str) -> Stored | None:
            return None if stored is None else stored(name)

        return cls(  # each table built when first read (name_index.py `LazyKeyIndex`)
            ids, paths, aliases,
            LazyKeyIndex(lambda: ((path_key(p), i) for i, p in enumerate(paths)),
                         stored=kept("keys")),
            LazyKeyIndex(lambda: ((name_key(p), i) for i, p in enumerate(paths)),
                         stored=kept("names")),
            LazyKeyIndex(lambda: ((k, i) for i, a in enumerate(aliases) for k in alias_keys(a)),
                         stored=kept("aliases")),
        )

    @classmethod
    def build(cls, paths: Mapping[int, str], aliases: Mapping[int, Sequence[str]]) -> Resolver:
        """The resolver of id -> path and id -> aliases mappings (tests and tools)."""
        ids = tuple(sorted(paths))
        return cls.over(ids, tuple(paths[i] for i in ids),
                        tuple(tuple(aliases.get(i, ())) for i in ids))

    def plus(self, ids: Sequence[int], paths: Sequence[str], aliases: Sequence[Sequence[str]],
             realiased: Sequence[int], renamed: Sequence[int] = (),
             removed: Sequence[int] = ()) -> Resolver:
        """The resolver over columns that follow this one's: the notes at `removed`
        (ascending positions of this one's columns) are gone and every later note moves
        down by the removed ones before it (vault/shift.py); after that, positions from
        `len(self.paths) - len(removed)` on are added notes, those at `realiased` have new
        aliases, those at `renamed` new paths (same id), every other position is the same
        note with the same path. O(added + realiased + renamed + removed + extra),
        amortised: the tables are shared (a removal is kept beside them: name_index.py
        `minus`) and the entries added to their `extra`, until they must fold into a
        rebuild."""
        added = range(len(self.paths) - len(removed), len(paths))
        named = [(k, p) for p in (*realiased, *added) for k in alias_keys(aliases[p])]
        placed = [*renamed, *added]
        gone = self.keys.dropped + len(removed)
        if (folds(self.keys.extra + len(placed) + gone, len(self.paths))
                or folds(self.alias_index.extra + len(named) + gone, len(self.paths))):
            return Resolver.over(ids, paths, aliases)
        return Resolver(  # an old path's or alias's entry stays: the check against the
            ids, paths, aliases,  # columns drops it (a position may repeat: `_named`)
            self.keys.minus(removed).plus((path_key(paths[p]), p) for p in placed),
            self.names.minus(removed).plus((name_key(paths[p]), p) for p in placed),
            self.alias_index.minus(removed).plus(named),
        )

    # -- lookups (positions; every candidate checked against the columns) ---------------------

    def _pick(self, positions: Sequence[int], written: str) -> int | None:
        """Among notes that are spellings of one path, the one rule (module docstring): the
        one spelled as `written`, else the first by path in code-point order."""
        if len(positions) < 2:
            return positions[0] if positions else None
        paths = self.paths
        return min(positions, key=lambda p: (spelling(paths[p], written), paths[p]))

    def _key_position(self, key: str, written: str = "") -> int | None:
        paths = self.paths
        return self._pick([p for p in self.keys.positions(key) if path_key(paths[p]) == key],
                          written)

    def _key_id(self, key: str, written: str = "") -> int | None:
        p = self._key_position(key, written)
        return None if p is None else self.ids[p]

    def _name_positions(self, name: str) -> list[int]:
        """Positions of the notes with file name `name`, by path in code-point order."""
        return [p for p, _ in self._named(name)]

    def _alias_ids(self, key: str) -> tuple[int, ...]:
        aliases = self.aliases
        found = {p for p in self.alias_index.positions(key) if key in alias_keys(aliases[p])}
        return tuple(self.ids[p] for p in sorted(found))

    def _path_id(self, path: str) -> int | None:
        paths = self.paths
        for p in self.keys.positions(path_key(path)):
            if paths[p] == path:
                return self.ids[p]
        return None

    @property
    def by_key(self) -> Mapping[str, int]:
        return Lookup(self._key_id, lambda: (path_key(p) for p in self.paths))

    @property
    def by_name(self) -> Mapping[str, tuple[str, ...]]:
        return Lookup(lambda n: tuple(self.paths[p] for p in self._name_positions(n)) or None,
                      lambda: (name_key(p) for p in self.paths))

    @property
    def by_alias(self) -> Mapping[str, tuple[int, ...]]:
        return Lookup(lambda k: self._alias_ids(k) or None,
                      lambda: (k for a in self.aliases for k in alias_keys(a)))

    @property
    def path_id(self) -> Mapping[str, int]:
        return Lookup(self._path_id, lambda: self.paths)

    @property
    def id_path(self) -> Mapping[int, str]:
        return IdPaths(self.ids, self.paths)

    def nbytes(self) -> int:
        """Bytes of the tables (beyond the shared columns)."""
        return self.keys.nbytes() + self.names.nbytes() + self.alias_index.nbytes()

    # -- resolution -----------------------------------------------------------------------------

    def _named(self, name: str) -> list[tuple[int, str]]:
        """(position, path key) of the notes with file name `name`, by path (code points)."""
        paths, found = self.paths, []
        for p in self.names.positions(name):
            key = path_key(paths[p])
            if _last(key) == name:
                found.append((p, key))
        if len(found) > 1:  # a renamed note's position may be filed twice (`plus`)
            found = sorted(set(found), key=lambda e: paths[e[0]])
        return found

    def _exact(self, key: str, named: list[tuple[int, str]], written: str) -> int | None:
        """`_key_position(key, written)` given `named`, the notes named `basename(key)`: every
        note with that path key is among them (name_key), so a short list answers it."""
        if len(named) > SHORT:
            return self._key_position(key, written)
        return self._pick([p for p, k in named if k == key], written)

    def _candidates(self, key: str, named: list[tuple[int, str]], written: str,
                    folder: str = "", first: bool = False) -> list[int]:
        """The notes `key` may mean, best first: the one at that vault path, else every note
        whose path ends with `/key`: those under `folder` (the linking note's) first, then
        the shorter path, then code points; spellings of one path together, the pick first.
        `first`: only the best, in one pass (no sort: a link to a name thousands of notes
        share, `index.md` in every folder, costs O(notes of that name))."""
        at = self._exact(key, named, written) if key else None
        if at is not None or not key:
            return [] if at is None else [at]
        paths, tail = self.paths, "/" + key
        found = [(p, k) for p, k in named if ("/" + k).endswith(tail)]
        if "/" not in key:
            found = self._unclaimed(key, found)
        if len(found) < 2:
            return [p for p, _ in found]
        under = fold(folder) + "/" if folder else ""
        if first:
            near = [e for e in found if e[1].startswith(under)] or found
            best = min(near, key=lambda e: (len(paths[e[0]]), paths[e[0]]))[1]
            return [self._pick([p for p, k in found if k == best], written) or 0]
        found.sort(key=lambda e: (not e[1].startswith(under), len(paths[e[0]]), paths[e[0]]))
        rank: dict[str, int] = {}  # spellings of one path: together, the picked one first
        for i, (_, k) in enumerate(found):
            rank.setdefault(k, i)
        found.sort(key=lambda e: (rank[e[1]], spelling(paths[e[0]], written), paths[e[0]]))
        return [p for p, _ in found]

    def candidates(self, target: str) -> list[str]:
        """Every note path a wiki target could mean, best first (rule 2's order, no folder)."""
        bare = target.strip().lstrip("/")
        key = path_key(bare)
        return [self.paths[p] for p in self._candidates(key, self._named(_last(key)), bare)]

    def resolve_wiki(self, target: str, source: str | None = None) -> int | None:
        """The note id a `[[target]]` written in note `source` points to, or None: by path or
        file name (`resolve_name`), else by alias (rule 3; never for a relative target)."""
        found = self.resolve_name(target, source)
        bare = target.strip()
        if found is not None or bare.startswith(("./", "../")):
            return found
        ids = self._alias_ids(path_key(bare))
        return ids[0] if len(ids) == 1 else None

    def resolve_name(self, target: str, source: str | None = None) -> int | None:
        """`resolve_wiki` by rules 1 and 2 alone (path, file name; no alias). One lookup of
        the target's file name serves the path lookup (`_exact`).

        A stored target has the `.md` written after it cut (`[[x.md]]` and `[[x]]` are `x`),
        so it names, as Obsidian's `[[x]]` or `[[x.md]]`: the note `x.md`, else `x.md.md`
        (the note titled `x.md`, which Obsidian links as `[[x.md]]`); a target given with
        its `.md` (`Note.md`, as a caller may pass it) is last also the note `Note.md`."""
        bare = target.strip()
        found = self._resolve_path(bare + ".md", source)
        if found is None and bare:
            found = self._resolve_path(bare + ".md.md", source)
        if found is None and bare.lower().endswith(".md"):
            found = self._resolve_path(bare, source)
        return found

    def _resolve_path(self, bare: str, source: str | None) -> int | None:
        """`resolve_name` of `bare`, a path whose `.md` (if any) is the file's."""
        folder = posixpath.dirname(source) if source is not None else ""
        if bare.startswith(("./", "../")):  # explicitly relative: that path and no other
            rel = posixpath.normpath(posixpath.join(folder, bare))
            return None if rel.startswith("..") else self._key_id(path_key(rel), rel)
        written = bare.lstrip("/")
        key = path_key(written)
        at = self._key_position(key, written) if key else None
        if at is not None:  # the note at that vault path (rule 1), looked up by its key: not
            return self.ids[at]  # a scan of every note of its name (a day's `chat 08-00`)
        named = self._named(_last(key))
        if bare.startswith("/"):  # from the vault root: that path and no other
            at = self._exact(key, named, written) if key else None
            return None if at is None else self.ids[at]
        found = self._candidates(key, named, written, folder, first=True)
        return self.ids[found[0]] if found else None

    def resolve_markdown(self, target: str, source: str) -> int | None:
        """The note id a markdown link `[x](target)` written in `source` points to (`target`
        decoded, `.md` and `#heading` dropped): rules 1 and 2 as `resolve_name`, as Obsidian
        resolves it; the vault path first, so a path relative to the folder of `source` names
        the note there only when written with `./` or when no other note has that vault path."""
        return self.resolve_name(target, source)

    def resolve(self, link: LinkRow, source: str) -> int | None:
        """Resolve one stored link of note `source`. `[[#Heading]]` points to the note itself."""
        if link.kind == "markdown":
            return self.resolve_markdown(link.target, source)
        if not link.target:
            return self._path_id(source)
        return self.resolve_wiki(link.target, source)

    def by_path(self, note: str) -> int | None:
        """The id of the note at vault path `note` (`.md` optional). The exact path wins (on
        a case-sensitive file system `Case.md` and `case.md` are two notes, and each path
        names its own); else the one path that equals it case-insensitively; several such
        paths and none exact: AmbiguousNote listing them."""
        raw = note.strip().lstrip("/")
        for exact in (raw,) if raw.lower().endswith(".md") else (raw + ".md", raw):
            found = self._path_id(exact)
            if found is not None:
                return found
        key, paths = path_key(raw), self.paths
        hits = sorted({p for p in self.keys.positions(key) if path_key(paths[p]) == key},
                      key=lambda p: paths[p])
        if len(hits) > 1:
            return self._one(note, hits, raw)
        return self.ids[hits[0]] if hits else None

    def _one(self, note: str, spellings: list[int], written: str) -> int:
        """Of several spellings of one path, the one spelled as `written` (`spelling` 0, else
        1: the links' pick, `_pick`); none: AmbiguousNote listing them."""
        paths = self.paths
        best = self._pick(spellings, written)
        assert best is not None  # several spellings
        if spelling(paths[best], written) == 2:
            raise AmbiguousNote(note, [paths[p] for p in spellings])
        return self.ids[best]

    def by_title(self, note: str, as_link: bool = False) -> int | None:
        """The id of the one note whose file name, else alias, is `note` (a bare name).

        None when nothing matches or `note` has a folder; AmbiguousNote when several do,
        unless `as_link`: then a file name several notes share names the note `[[note]]`
        written at the vault root resolves to (`resolve_name`: the shortest path), and is
        AmbiguousNote only when another path is as short (a tie the links break by code
        points). A name ending in `.md` is also the title it spells (`trailing.md`:
        `trailing.md.md`)."""
        written = note.strip().lstrip("/")
        key = fold(written)  # a title ending in `.md` first (`trailing.md`: `trailing.md.md`)
        if not (written.lower().endswith(".md") and self._name_positions(key)):
            key = path_key(written)
        if "/" in key:
            return None
        named = self._named(key)
        found = [p for p, _ in self._unclaimed(key, named)]
        if len(found) < len(named) and not as_link:  # a user's note holds it too: never pick
            raise AmbiguousNote(note, sorted({*(self.paths[p] for p, _ in named),
                                              *(self.id_path[i] for i in self._alias_ids(key))}))
        if len(found) > 1:
            if len({path_key(self.paths[p]) for p in found}) == 1:  # one path, spelled apart
                return self._one(note, found, note.strip().lstrip("/"))
            best = self._as_link(written, found) if as_link else None
            if best is not None:
                return self._one(note, best, written) if len(best) > 1 else self.ids[best[0]]
            raise AmbiguousNote(note, [self.paths[p] for p in found])
        if found:
            return self.ids[found[0]]
        ids = self._alias_ids(key)
        if len(ids) > 1:
            raise AmbiguousNote(note, sorted(self.id_path[i] for i in ids))
        return ids[0] if ids else None

    def _as_link(self, written: str, found: list[int]) -> list[int] | None:
        """Of `found`, the notes of one file name, the spellings of the path `[[written]]`
        at the vault root resolves to; None when another path is as short as that one."""
        got = self.resolve_name(written)
        if got is None:
            return None
        paths = self.paths
        key, size = path_key(self.id_path[got]), len(self.id_path[got])
        if any(len(paths[p]) == size and path_key(paths[p]) != key for p in found):
            return None
        return [p for p in found if path_key(paths[p]) == key] or None

    def link_text(self, note_id: int) -> str:
        """The shortest target that uniquely names a note (what a rewritten link uses)."""
        path = self.id_path[note_id]
        title = title_of(path)
        if title.lower().endswith(".md"):  # `[[x.md]]` is read as `x`: the `.md` written
            return title + ".md" if len(self._name_positions(fold(title))) == 1 else path
        held = self._unclaimed(fold(title), self._named(fold(title)))
        if len(held) == 1 and self.ids[held[0][0]] == note_id:
            return title
        return strip_md(path)

    def _unclaimed(self, name: str, found: list[tuple[int, str]]) -> list[tuple[int, str]]:
        """`found` (notes of file name `name`) less the entity notes a user's note outranks."""
        ids = self._alias_ids
        return unclaimed(found, self.paths, lambda: [self.id_path[i] for i in ids(name)])
