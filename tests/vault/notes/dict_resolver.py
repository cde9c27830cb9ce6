"""The resolver as it was before the compact tables: plain dicts over every note (session 5).

The oracle the compact `vault.notes.links.Resolver` is checked against (test_name_tables.py):
the same rules, the same answers, only the storage differs. Kept verbatim but for the name and
the rules changed since: relative `[[./x]]`, `[[../x]]`; names compared by `fold`, not
`casefold` (NFC and NFD one name) (session 20).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vault.errors import AmbiguousNote
from vault.notes.links import fold, strip_md, title_of
from vault.notes.rows import LinkRow


@dataclass(frozen=True)
class DictResolver:
    """Name tables for one set of note paths (and aliases)."""

    by_key: Mapping[str, int]  # folded path without .md -> id
    by_name: Mapping[str, tuple[str, ...]]  # folded title -> paths
    by_alias: Mapping[str, tuple[int, ...]]  # folded alias -> ids
    path_id: Mapping[str, int]
    id_path: Mapping[int, str]

    @classmethod
    def build(cls, paths: Mapping[int, str], aliases: Mapping[int, Sequence[str]]) -> DictResolver:
        by_key: dict[str, int] = {}
        by_name: dict[str, list[str]] = {}
        by_alias: dict[str, list[int]] = {}
        for note_id in sorted(paths):
            path = paths[note_id]
            by_key[fold(strip_md(path))] = note_id
            by_name.setdefault(fold(title_of(path)), []).append(path)
            for alias in aliases.get(note_id, ()):
                ids = by_alias.setdefault(fold(alias.strip()), [])
                if note_id not in ids:
                    ids.append(note_id)
        return cls(
            by_key=by_key,
            by_name={k: tuple(sorted(v)) for k, v in by_name.items()},
            by_alias={k: tuple(v) for k, v in by_alias.items()},
            path_id={p: i for i, p in paths.items()},
            id_path=dict(paths),
        )

    def candidates(self, target: str) -> list[str]:
        """Every note path a wiki target could mean, best first (rule 2's order, no folder)."""
        key = fold(strip_md(target.strip().lstrip("/")))
        if not key:
            return []
        if key in self.by_key:
            return [self.id_path[self.by_key[key]]]
        name = posixpath.basename(key)
        found = [
            p
            for p in self.by_name.get(name, ())
            if ("/" + fold(strip_md(p))).endswith("/" + key)
        ]
        return sorted(found, key=lambda p: (p.count("/"), len(p), p))

    def resolve_wiki(self, target: str, source: str | None = None) -> int | None:
        """The note id a `[[target]]` written in note `source` points to, or None."""
        if target.strip().startswith(("./", "../")):  # relative: that path only (session 20)
            folder = posixpath.dirname(source) if source is not None else ""
            rel = posixpath.normpath(posixpath.join(folder, target.strip()))
            return None if rel.startswith("..") else self.by_key.get(fold(strip_md(rel)))
        if source is not None and posixpath.dirname(source):
            local = posixpath.join(posixpath.dirname(source), strip_md(target.strip()))
            note_id = self.by_key.get(fold(local))
            if note_id is not None:
                return note_id
        found = self.candidates(target)
        if found:
            if source is not None and len(found) > 1:
                folder = posixpath.dirname(source)
                same = [p for p in found if posixpath.dirname(p) == folder]
                if same:
                    return self.path_id[same[0]]
            return self.path_id[found[0]]
        ids = self.by_alias.get(fold(strip_md(target.strip())), ())
        return ids[0] if len(ids) == 1 else None

    def resolve_markdown(self, target: str, source: str) -> int | None:
        """The note id a markdown link `[x](target)` written in `source` points to."""
        rel = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
        for cand in (rel, posixpath.normpath(target.lstrip("/"))):
            if cand.startswith(".."):
                continue
            note_id = self.by_key.get(fold(strip_md(cand)))
            if note_id is not None:
                return note_id
        return None

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
        key = fold(strip_md(raw))
        hits = sorted(p for p in self.path_id if fold(strip_md(p)) == key)
        if len(hits) > 1:
            raise AmbiguousNote(note, hits)
        return self.path_id[hits[0]] if hits else None

    def by_title(self, note: str) -> int | None:
        """The id of the one note whose file name, else alias, is `note` (a bare name).

        None when nothing matches or `note` has a folder; AmbiguousNote when several do."""
        key = fold(strip_md(note.strip().lstrip("/")))
        if "/" in key:
            return None
        paths = self.by_name.get(key, ())
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
        if len(self.by_name.get(fold(title), ())) == 1:
            return title
        return strip_md(path)

