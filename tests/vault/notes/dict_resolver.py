"""The resolver as it was before the compact tables: plain dicts over every note (session 5).

The oracle the compact `vault.notes.links.Resolver` is checked against (test_name_tables.py):
the same rules, the same answers, only the storage differs. Kept verbatim but for the name and
the rules changed since: relative `[[./x]]`, `[[../x]]`; names compared by `fold`, not
`casefold` (NFC and NFD one name) (session 20); spellings of one path pick the one spelled as
written, else the first in code-point order, for links and `by_path` / `by_title` alike, and
markdown links fall back to the wiki rules but aliases (session 21: notes/links.py RULES 4);
the vault path before the linking note's folder, notes under that folder first, then by path
length, and `[[/x]]` only from the root, as Obsidian's getLinkpathDest (session 28: RULES 5);
markdown links by those rules alone, as Obsidian, no relative-then-root step (session 29: RULES 6).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vault.errors import AmbiguousNote
from vault.notes.link_keys import fold, spelling, strip_md, title_of
from vault.notes.rows import LinkRow


@dataclass(frozen=True)
class DictResolver:
    """Name tables for one set of note paths (and aliases)."""

    by_key: Mapping[str, int]  # folded path without .md -> id (the first path, code points)
    variants: Mapping[str, tuple[str, ...]]  # folded path without .md -> its paths, sorted
    by_name: Mapping[str, tuple[str, ...]]  # folded title -> paths
    by_alias: Mapping[str, tuple[int, ...]]  # folded alias -> ids
    path_id: Mapping[str, int]
    id_path: Mapping[int, str]

    @classmethod
    def build(cls, paths: Mapping[int, str], aliases: Mapping[int, Sequence[str]]) -> DictResolver:
        variants: dict[str, list[str]] = {}
        by_name: dict[str, list[str]] = {}
        by_alias: dict[str, list[int]] = {}
        for note_id in sorted(paths):
            path = paths[note_id]
            variants.setdefault(fold(strip_md(path)), []).append(path)
            by_name.setdefault(fold(title_of(path)), []).append(path)
            for alias in aliases.get(note_id, ()):
                ids = by_alias.setdefault(fold(alias.strip()), [])
                if note_id not in ids:
                    ids.append(note_id)
        path_id = {p: i for i, p in paths.items()}
        return cls(
            by_key={k: path_id[min(v)] for k, v in variants.items()},
            variants={k: tuple(sorted(v)) for k, v in variants.items()},
            by_name={k: tuple(sorted(v)) for k, v in by_name.items()},
            by_alias={k: tuple(v) for k, v in by_alias.items()},
            path_id=path_id,
            id_path=dict(paths),
        )

    def _pick(self, written: str) -> int | None:
        """The note a written path names among the spellings of its folded path: the one
        spelled as written, else the first in code-point order."""
        found = self.variants.get(fold(strip_md(written)), ())
        if not found:
            return None
        return self.path_id[min(found, key=lambda p: (spelling(p, written), p))]

    def candidates(self, target: str, folder: str = "") -> list[str]:
        """Every note path a wiki target could mean, best first (rule 2's order): the vault
        path, else the paths ending with it, under `folder` first, then by length."""
        written = target.strip().lstrip("/")
        key = fold(strip_md(written))
        if not key:
            return []
        if key in self.variants:
            return [self.id_path[self._pick(written) or 0]]
        name = posixpath.basename(key)
        found = [
            p
            for p in self.by_name.get(name, ())
            if ("/" + fold(strip_md(p))).endswith("/" + key)
        ]
        under = fold(folder) + "/" if folder else ""
        found.sort(key=lambda p: (not fold(p).startswith(under), len(p), p))
        first: dict[str, int] = {}
        for i, p in enumerate(found):
            first.setdefault(fold(strip_md(p)), i)
        return sorted(found, key=lambda p: (first[fold(strip_md(p))], spelling(p, written), p))

    def _by_name(self, target: str, source: str | None) -> int | None:
        """Rules 1 and 2 for the file `target.md`, else `target.md.md` (session 37)."""
        found = self._by_name_once(target.strip() + ".md", source)
        if found is None and target.strip():
            found = self._by_name_once(target.strip() + ".md.md", source)
        if found is None and target.strip().lower().endswith(".md"):
            found = self._by_name_once(target, source)
        return found

    def _by_name_once(self, target: str, source: str | None) -> int | None:
        """Rules 1 and 2: a relative or rooted path (only it), else the candidates."""
        folder = posixpath.dirname(source) if source is not None else ""
        if target.strip().startswith(("./", "../")):  # relative: that path only (session 20)
            rel = posixpath.normpath(posixpath.join(folder, target.strip()))
            return None if rel.startswith("..") else self._pick(rel)
        if target.strip().startswith("/"):  # from the vault root: that path only (session 28)
            return self._pick(target.strip().lstrip("/"))
        found = self.candidates(target, folder)
        return self.path_id[found[0]] if found else None

    def resolve_wiki(self, target: str, source: str | None = None) -> int | None:
        """The note id a `[[target]]` written in note `source` points to, or None."""
        found = self._by_name(target, source)
        if found is not None or target.strip().startswith(("./", "../")):
            return found
        ids = self.by_alias.get(fold(strip_md(target.strip())), ())
        return ids[0] if len(ids) == 1 else None

    def resolve_markdown(self, target: str, source: str) -> int | None:
        """The note id a markdown link `[x](target)` written in `source` points to: rules 1
        and 2 as a wiki-link, no alias (session 29: no "relative, then root" first)."""
        return self._by_name(target, source)

    def resolve(self, link: LinkRow, source: str) -> int | None:
        """Resolve one stored link of note `source`. `[[#Heading]]` points to the note itself."""
        if link.kind == "markdown":
            return self.resolve_markdown(link.target, source)
        if not link.target:
            return self.path_id.get(source)
        return self.resolve_wiki(link.target, source)

    def by_path(self, note: str) -> int | None:
        """The id of the note at vault path `note` (`.md` optional): the exact path first,
        else the one path equal to it case-insensitively (several: AmbiguousNote)."""
        raw = note.strip().lstrip("/")
        for exact in (raw,) if raw.lower().endswith(".md") else (raw + ".md", raw):
            if exact in self.path_id:
                return self.path_id[exact]
        hits = list(self.variants.get(fold(strip_md(raw)), ()))
        return self._one(note, hits, raw)

    def _one(self, note: str, hits: list[str], written: str) -> int | None:
        if len(hits) > 1:
            best = min(hits, key=lambda p: (spelling(p, written), p))
            if spelling(best, written) == 2:
                raise AmbiguousNote(note, hits)
            return self.path_id[best]
        return self.path_id[hits[0]] if hits else None

    def by_title(self, note: str) -> int | None:
        """The id of the one note whose file name, else alias, is `note` (a bare name).

        None when nothing matches or `note` has a folder; AmbiguousNote when several do."""
        key = fold(strip_md(note.strip().lstrip("/")))
        if note.strip().lower().endswith(".md") and fold(note.strip().lstrip("/")) in self.by_name:
            key = fold(note.strip().lstrip("/"))  # the title `x.md` (`x.md.md`), session 37
        if "/" in key:
            return None
        paths = self.by_name.get(key, ())
        if len(paths) > 1 and len({fold(strip_md(p)) for p in paths}) == 1:
            return self._one(note, list(paths), note.strip().lstrip("/"))
        if len(paths) > 1:
            raise AmbiguousNote(note, list(paths))
        if paths:
            return self.path_id[paths[0]]
        ids = self.by_alias.get(key, ())
        if len(ids) > 1:
            raise AmbiguousNote(note, sorted(self.id_path[i] for i in ids))
        return ids[0] if ids else None

    def link_text(self, note_id: int) -> str:
        """The shortest target that uniquely names a note (what a rewritten link uses)."""
        path = self.id_path[note_id]
        title = title_of(path)
        if title.lower().endswith(".md"):  # `[[x.md]]` is stored `x`: the `.md` written
            return title + ".md" if len(self.by_name.get(fold(title), ())) == 1 else path
        if len(self.by_name.get(fold(title), ())) == 1:
            return title
        return strip_md(path)

