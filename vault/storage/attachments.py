"""Attachment links (`![[diagram.png]]`, `[[files/report.pdf]]`): wiki-links to files that
are not notes, resolved the way Obsidian resolves them. (A markdown link to such a file,
`[report](files/report.pdf)`, is no link at all to rmh: markdown_scan.py.)

A link target is an attachment when its last path part has an extension other than `.md`:
letters and digits, a letter among them (`diagram.png`, `plan.canvas`, `clip.3gp`, which
Obsidian embeds as audio; not `Release 1.2`). It resolves to
an existing file, compared case-insensitively, by: the exact vault path; the path relative to
the linking note's folder; a path that ends with the target (`assets/x/diagram.png` for
`x/diagram.png`); or the file name anywhere in the vault (Obsidian's "shortest path when
possible" links name only the file). Doctor reports the ones that resolve to no file as
missing attachments, apart from dangling note links.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence

_EXT = re.compile(r"\.((?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{1,10})$")


def is_attachment(target: str) -> bool:
    """Whether a link target names a non-note file (see the module doc)."""
    name = target.split("#", 1)[0].rstrip().rsplit("/", 1)[-1]
    m = _EXT.search(name)
    return m is not None and m.group(1).lower() != "md"


def resolves(target: str, source: str, files: Iterable[str]) -> bool:
    """Whether the attachment `target`, linked from note `source`, names an existing file."""
    return attachment_path(target, source, files) is not None


def attachment_path(target: str, source: str, files: Iterable[str]) -> str | None:
    """The file of `files` (vault paths, sorted) the attachment `target` linked from note
    `source` names: the path as written, else relative to the note's folder, else the first
    whose name and folders end as written (caseless, as `resolves` matches); None if none."""
    want = target.split("#", 1)[0].strip().lstrip("/").casefold()
    if not want:
        return None
    relative = posixpath.normpath(posixpath.join(posixpath.dirname(source), want)).casefold()
    suffix = None
    for path in files:
        low = path.casefold()
        if low in (want, relative):
            return path
        if suffix is None and low.endswith("/" + want):
            suffix = path
    return suffix


def split_dangling(dangling: Sequence[tuple[str, str]], files: Sequence[str]
                   ) -> tuple[list[tuple[str, str]], list[tuple[str, str]], int]:
    """(dangling note links, missing attachments, attachment links that resolve), each list
    in the input's (sorted) order."""
    notes: list[tuple[str, str]] = []
    missing: list[tuple[str, str]] = []
    found = 0
    for source, target in dangling:
        if not is_attachment(target):
            notes.append((source, target))
        elif resolves(target, source, files):
            found += 1
        else:
            missing.append((source, target))
    return notes, missing, found
