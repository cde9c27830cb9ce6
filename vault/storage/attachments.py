"""Attachment links (`![[diagram.png]]`, `[[files/report.pdf]]`): wiki-links to files that
are not notes, resolved the way Obsidian resolves them. (A markdown link to such a file,
`[report](files/report.pdf)`, is no link at all to rmh: markdown_scan.py.)

A link target is an attachment when its last path part has an extension other than `.md`:
letters and digits, a letter among them (`diagram.png`, `plan.canvas`, `clip.3gp`, which
Obsidian embeds as audio; not `Release 1.2`). It resolves to
an existing file by the rules a note link resolves by (notes/links.py, Obsidian's
`getLinkpathDest`; names caseless, NFC and NFD alike, as a macOS-synced vault stores them):
the exact vault path; else a path that ends with the target (`assets/x/diagram.png` for
`x/diagram.png`, or the file name anywhere in the vault: Obsidian's "shortest path when
possible" links name only the file), under the linking note's folder first, then the
shorter path. Doctor reports the ones that resolve to no file as
missing attachments, apart from dangling note links.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence

from ..notes.link_keys import fold

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
    """The file of `files` (vault paths) the attachment `target` linked from note `source`
    names, by the rules a note link resolves by (notes/links.py, Obsidian's
    `getLinkpathDest`), names compared by `fold` (caseless, NFC and NFD alike): the file at
    that vault path; else the files whose path ends with `/target`: those under the note's
    folder (at any depth) first, then the shorter path, then code points. `./x`, `../x`: that
    path relative to the note's folder only; `/x`: that vault path only. None if none."""
    bare = target.split("#", 1)[0].strip()
    folder = posixpath.dirname(source)
    if bare.startswith(("./", "../")):
        rel = posixpath.normpath(posixpath.join(folder, bare))
        want, anywhere = ("" if rel.startswith("..") else fold(rel)), False
    else:
        want, anywhere = fold(bare.lstrip("/")), not bare.startswith("/")
    if not want:
        return None
    under = fold(folder) + "/" if folder else ""
    best: tuple[bool, int, str] | None = None
    for path in files:
        key = fold(path)
        if key == want:
            return path
        if anywhere and key.endswith("/" + want):
            rank = (not key.startswith(under), len(path), path)
            best = rank if best is None or rank < best else best
    return None if best is None else best[2]


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
