"""Generated notes the user moved or deleted: where a re-ingest finds them (ingest.py).

A generated note is known by what it is about, not by where it lies: `identity` reads it from
the frontmatter the ingest writes (a turn: its conversation, session and turn; a session: its
conversation and session; an entity: its key; a fact: its subject, key and value; an episode:
its session and first tick). A note the ingest wrote before (the record, `generated.Record`,
has its generated path) that is no longer at that path was moved, renamed (`rmh move`, `mv`,
an editor) or deleted by the user:

- moved: the note in the vault with the same identity, elsewhere, is the same note. The ingest
  treats it there as it would at its own path (unchanged: updated in place; edited: kept, or
  rewritten after a trash copy with `regenerate`), and the links of the conversation's other
  notes point to where it is by the shortest name that is unique (`relink`), as `rmh move` and
  Obsidian (its default setting) leave them, so a note whose links only followed the move is
  no hand edit. Two notes
  claiming one identity (a copy): the one found last time (`Record.at`), else the first by path.
- deleted (no note has its identity): the user did not want it; it is not written again
  (`IngestReport.left_deleted`), unless `regenerate` asks for every note as generated.
- moved onto a path this ingest generates for another note (a turn the transcript adds
  since): that note is written there as over any bytes not the ingest's (the user's to the
  trash), and the moved one again at its own path: not deleted, the user did not delete it.

A note whose identity fields the user changed and that is no longer at its path is not found:
it stays as the user left it, and the note it was counts as deleted (nothing is lost). A
note that was never written by the ingest (no record) is not looked for: a new turn's note is
just absent. Nothing here runs when every note is at its generated path (an unchanged
transcript, every turn of a client hook).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..notes.note import parse
from ..storage.corpus import Corpus
from .generated import Record, hashed

if TYPE_CHECKING:
    from ..core import Vault

KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "L0": ("turn", ("session", "turn")), "L1": ("session", ("session",)),
    "entity": ("entity", ("key",)), "L2": ("fact", ("subject", "key", "value")),
    "L3": ("fact", ("subject", "key", "value")), "episodic": ("episode", ("session", "first_tick")),
}


def identity(fm: Mapping[str, Any]) -> tuple[str, ...] | None:
    """What a generated note is about (module docstring); None for any other note."""
    kind = KINDS.get(str(fm.get("tier")))
    conversation = fm.get("conversation")
    if kind is None or conversation is None:
        return None
    return (kind[0], str(conversation), *(str(fm.get(f, "")) for f in kind[1]))


@dataclass(frozen=True)
class Followed:
    """A conversation's notes where they are now: `notes` at those paths, their links
    following; `origin`: path now -> generated path (the moved ones); `names`: generated path
    -> the name links give it now (the moved ones); `deleted`: generated paths not written
    again."""

    notes: list[tuple[str, str]]
    origin: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    deleted: tuple[str, ...] = ()


def follow(corpus: Corpus, stored: Mapping[str, str], record: Record,
           notes: Sequence[tuple[str, str]], regenerate: bool,
           name: Callable[[str], str]) -> Followed:
    """`notes` (generated path, text) with each the ingest wrote before and the user moved
    followed to where it is, and those the user deleted left out (module docstring);
    `name(path)`: the wiki-link target of the note at `path`."""
    gone = [p for p, _ in notes if p not in stored and record.hashes(p) is not None
            and not record.pending(p)]
    if not gone:
        return Followed(list(notes))
    texts = dict(notes)
    want: dict[tuple[str, ...], str] = {}
    for path in gone:
        ident = identity(parse(texts[path]).frontmatter)
        if ident is not None:
            want.setdefault(ident, path)
    found: dict[str, list[str]] = {}
    displaced: set[str] = set()  # moved onto a path this ingest generates for another note
    for path, fm in zip(corpus.paths, corpus.frontmatter, strict=True):
        ident = identity(fm) if fm else None
        if ident is not None and ident in want:
            if path not in texts:
                found.setdefault(want[ident], []).append(path)
            elif want[ident] != path:
                displaced.add(want[ident])
    moved: dict[str, str] = {}
    for path, where in found.items():
        last = record.at(path)
        ranked = sorted(where)
        moved[path] = next((q for q in ranked if hashed(q) == last), ranked[0])
    deleted = () if regenerate else tuple(p for p in gone
                                          if p not in moved and p not in displaced)
    names = {p: name(q) for p, q in moved.items()}
    out = [(moved.get(p, p), relink(t, names)) for p, t in notes if p not in deleted]
    return Followed(out, {q: p for p, q in moved.items()}, names, deleted)


def relink(text: str, names: Mapping[str, str]) -> str:
    """`text` with its links to each moved note's generated path (`layout.link`'s form,
    `[[folder/Note|label]]`) by the name `names` gives it."""
    for old, new in names.items():
        text = text.replace(f"[[{old.removesuffix('.md')}|", f"[[{new}|")
    return text


def unlink(text: str, names: Mapping[str, str]) -> str:
    """`relink` undone: `text` with its links by each moved note's name back to the generated
    path (a note `rmh move` rewrote, as the ingest wrote it)."""
    for old, new in names.items():
        text = text.replace(f"[[{new}|", f"[[{old.removesuffix('.md')}|")
    return text


def namer(vault: Vault) -> Callable[[str], str]:
    """The wiki-link target of a note by its path: the shortest unique name, as `rmh move`
    writes it (`Resolver.link_text`); the path itself for a note not in the index."""
    resolver = vault.resolver()

    def name(path: str) -> str:
        note_id = resolver.path_id.get(path)
        return path.removesuffix(".md") if note_id is None else resolver.link_text(note_id)

    return name
