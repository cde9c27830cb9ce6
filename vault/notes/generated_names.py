"""Names an ingest's entity notes never take from the user's own notes.

`rmh ingest` writes one note per entity at `conversations/<cid>/entities/<key>.md`
(vault/conversation/layout.py `entity_path`; its own notes link them by that path). Such a
note's bare file name (`maya`, `ledger`) is the name a user's note may already hold, as its
file name or an alias (`people/Maya Okafor.md` with alias `Maya`); Obsidian's rule (a file
name before an alias, then the shorter path) would hand `[[Maya]]`, `read Maya` and a search
for the whole name to the generated note. So an entity note *yields*: where a note outside
`conversations/` holds the same name (file name or alias, compared folded), the entity note is
no candidate for that bare name; by its path it is still reached. Decided from the paths and
aliases alone, whenever links resolve, so a user note made or renamed after the ingest settles
it at once, and a vault with no user note of that name (LoCoMo, LongMemEval) resolves as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Placed = list[tuple[int, str]]  # (position into the paths, path key) of notes of one name

ROOT = "conversations"  # vault/conversation/layout.py ROOT (notes import nothing from there)


def is_entity_note(path: str) -> bool:
    """Whether `path` is where ingest writes an entity note (`<ROOT>/<cid>/entities/<key>.md`)."""
    parts = path.split("/")
    return len(parts) == 4 and parts[0] == ROOT and parts[2] == "entities"


def is_user_note(path: str) -> bool:
    """Whether `path` is outside the folder ingest writes (a note of the user's own)."""
    return not path.startswith(ROOT + "/")


def yielded(named: list[int], paths: Sequence[str]) -> list[int]:
    """`named` (positions into `paths`: the notes a query names whole) less the entity notes
    when a user's note is named too: search puts the note the name resolves to first."""
    if not any(is_user_note(paths[i]) for i in named):
        return named
    return [i for i in named if not is_entity_note(paths[i])]


def unclaimed(found: Placed, paths: Sequence[str], alias_paths: Callable[[], list[str]]) -> Placed:
    """`found` (the notes of one file name) less the entity notes when a user's note holds
    that name: is among `found`, or `alias_paths()` (the notes with it as an alias) has one."""
    if not any(is_entity_note(paths[p]) for p, _ in found):
        return found
    if not (any(is_user_note(paths[p]) for p, _ in found)
            or any(is_user_note(a) for a in alias_paths())):
        return found
    return [(p, k) for p, k in found if not is_entity_note(paths[p])]
