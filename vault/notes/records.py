"""Plain values the Vault facade returns for notes and links (JSON-safe via to_json)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .hashing import content_hash
from .rows import LinkRow, NoteRow


@dataclass(frozen=True)
class LinkInfo:
    """One link of a note: as written, and what it resolves to (None when dangling)."""

    target: str
    resolved: str | None
    embed: bool = False
    heading: str | None = None
    kind: str = "wiki"
    attachment: str | None = None  # the existing file an attachment link names (not a note)
    block: str | None = None  # the block id of `[[T#^id]]`, without `^`

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "resolved": self.resolved,
            "embed": self.embed,
            "heading": self.heading,
            "block": self.block,
            "kind": self.kind,
            "attachment": self.attachment,
        }


@dataclass(frozen=True)
class NoteRecord:
    """One note as read: its whole text and what was parsed from it."""

    id: int
    note: str
    title: str
    text: str
    body: str
    frontmatter: dict[str, Any] = field(default_factory=dict)
    frontmatter_error: str | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    links: tuple[LinkInfo, ...] = ()
    hash: str = ""  # sha256 hex of the file's bytes (write/edit `expected_hash`)
    size: int = 0  # the file's size in bytes (what a write of this text costs)
    warning: str | None = None  # a write that landed, with a later step failed (disk full)

    def to_json(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "note": self.note,
            "title": self.title,
            "hash": self.hash,
            "text": self.text,
            "frontmatter": self.frontmatter,
            "frontmatter_error": self.frontmatter_error,
            "tags": list(self.tags),
            "aliases": list(self.aliases),
            "links": [ln.to_json() for ln in self.links],
        }
        if self.warning:
            out["warning"] = self.warning
        return out


# Why a referrer's links were not rewritten (MoveResult.not_rewritten).
CHANGED_MEANWHILE = ("changed since the move read it (saved by another program meanwhile): its "
                     "links were left as they are; `rmh doctor` lists those that dangle")
GONE_MEANWHILE = "removed since the move read it"


@dataclass(frozen=True)
class MoveResult:
    """Where a note went and which notes had their links rewritten (the notes linking to it;
    last, the moved note itself when links of its own had to follow it to its new folder);
    `not_rewritten`: (note, why) of each one the move planned to rewrite but left as it was,
    because it changed between the plan and its rewrite (an editor saved it: no edit is lost,
    its links to the old path may now dangle); `replaced`: the trash copies (`.rmh/trash/...`)
    of the moved note's text that a file saved under its old name during the move replaced
    (its editor's save follows it; another note made at the freed name takes its place too,
    storage/intent_merge.py `fold_old`: the text it replaced is kept there, and said)."""

    note: str
    old: str
    rewritten: tuple[str, ...]
    not_rewritten: tuple[tuple[str, str], ...] = ()
    replaced: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"note": self.note, "old": self.old, "rewritten": list(self.rewritten),
                "not_rewritten": [{"note": p, "reason": why} for p, why in self.not_rewritten],
                "replaced": list(self.replaced)}


def link_infos(
    resolved: Sequence[tuple[LinkRow, int | None]], id_path: Mapping[int, str]
) -> list[LinkInfo]:
    """Stored links with their resolved ids as the values the facade returns."""
    return [
        LinkInfo(
            target=ln.target,
            resolved=id_path[dst] if dst is not None else None,
            embed=ln.embed,
            heading=ln.heading,
            kind=ln.kind,
            block=ln.block,
        )
        for ln, dst in resolved
    ]


def record_of(row: NoteRow, text: str, links: Sequence[LinkInfo]) -> NoteRecord:
    """A note's index row, its current text and its links as one record."""
    data = text.encode("utf-8")
    return NoteRecord(
        id=row.id,
        note=row.path,
        title=row.title,
        text=text,
        body=row.body,
        frontmatter=row.frontmatter,
        frontmatter_error=row.frontmatter_error,
        tags=row.tags,
        aliases=row.aliases,
        links=tuple(links),
        hash=content_hash(data),
        size=len(data),
    )
