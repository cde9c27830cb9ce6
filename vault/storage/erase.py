"""Erasure with proof, the storage half: what to erase, the trash copies, and the proof scan.

`rmh forget` removes a note's text from everything rmh keeps (the folder, `.rmh/trash/`, the
index's rows and embedding keys, the learned event log: see `Vault.forget`), vacuums the
SQLite files so freed pages keep nothing, and ends with a proof: every file rmh owns is read
byte for byte and searched for the erased strings (`scan`). Erasure is a hard delete, unlike
`delete`, which is reversible by design.

What counts as the erased strings ("needles"): the subject given with `--subject` (every note
whose path, title, frontmatter or body names it as a whole word, case-insensitively, is
erased: storage/mentions.py), and for each erased note its vault-relative path and every line
of its text of at least `LINE_MIN` characters that no surviving note contains (a line shared
with a note that stays, such as a template heading, is that note's text, not a trace). The
scan compares case-folded bytes, so "Alice" finds "ALICE": the subject as a whole word in
text (mentions.count_in_bytes: a short name is no trace where it is chance bytes, such as a
hex digest or a vector), the other needles as they are, read in blocks with an overlap of the
longest needle, so a match across a block boundary is found.

A settings file (the caller names it: `rmh.toml`) is the operator's, written by no rmh code
from a note: a string setting that is a place in the file system (an absolute path, "~...",
"C:\\...") names the user's folders (a models folder under Ann's home, when forgetting
Ann), which rmh can neither erase nor change without breaking the setting. Its occurrences
of the subject are reported apart (`Proof.settings`: the file and the setting's key), not as
traces, so the proof does not fail forever on a layout the user chose; the subject anywhere
else in that file (a comment, any other value), and every other needle, is a trace as in any
file. A note holding the path of Ann's home folder still names Ann: notes are never read this way.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ..plural import counted
from .mentions import count_in_bytes, count_in_sqlite, data_extents, fold, mentions, pattern
from .paths import copy_name, printable

LINE_MIN = 20  # characters: shorter lines ("## Notes", "- [ ] todo") are too common to prove
BLOCK = 1 << 20
_COPY = re.compile(r" \((\d{1,9})\)(\.[^./]*)?$")  # a copy's " (n)" (storage/paths.py copy_name)


@dataclass(frozen=True)
class ErasurePlan:
    """What `Vault.forget` removes (and, with `--dry-run`, only shows)."""

    notes: tuple[str, ...]  # vault-relative paths of the notes erased
    ids: tuple[int, ...]  # their index ids (keys of the learned state)
    trash: tuple[str, ...]  # entries of .rmh/trash/ erased (relative to it)
    needles: tuple[str, ...]  # the strings the proof scans for
    chunk_keys: tuple[str, ...]  # embedding-cache keys of their chunks
    subject: str = ""  # `--subject`: the one needle the proof reads as a whole word
    named: tuple[str, ...] = ()  # the notes named one by one (not for naming the subject)
    shadows: tuple[str, ...] = ()  # paths of notes that stay holding an erased path (`scan`)
    # hidden files rmh left beside notes (storage/leftovers.py: an editor's save a take-back
    # kept) that are an erased note's or name the subject (vault paths)
    hidden: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = {"notes": list(self.notes), "ids": list(self.ids), "trash": list(self.trash),
               "needles": len(self.needles), "embedding_keys": len(self.chunk_keys)}
        return {**out, "hidden": list(self.hidden)} if self.hidden else out


@dataclass(frozen=True)
class Proof:
    """The scan after erasure: files read, and where an erased string was still found."""

    files: int
    # Every file is named as `scan` names it for the search: its path from the vault folder,
    # a file outside it (the shared embedding cache) by its base name; never a host path.
    found: dict[str, int] = field(default_factory=dict)  # file -> occurrences
    # files and folders there that could not be read (not missing): they may hold it still
    unread: tuple[str, ...] = ()
    # settings file -> keys of its file-system paths naming the subject (no trace: module doc)
    settings: dict[str, list[str]] = field(default_factory=dict)

    @property
    def occurrences(self) -> int:
        return sum(self.found.values())

    @property
    def complete(self) -> bool:
        """Nothing found, and every file read."""
        return not self.found and not self.unread

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"files": self.files, "occurrences": self.occurrences,
                               "found": dict(sorted(self.found.items())),
                               "unread": list(self.unread)}
        if self.settings:
            doc["in_settings_paths"] = dict(sorted(self.settings.items()))
        return doc

    def summary(self) -> str:
        """One line: each file named as `paths.printable` shows it (a file name is any bytes:
        a newline in one wrote a line of its own, an escape sequence acted on the terminal)."""
        where = "" if not self.found else ": " + ", ".join(map(printable, sorted(self.found)))
        unread = "" if not self.unread else (
            f"; {len(self.unread)} could not be read: " + ", ".join(map(printable, self.unread)))
        apart = "; ".join(f"{printable(f)} ({', '.join(keys)})"
                          for f, keys in sorted(self.settings.items()))
        apart = f"; the subject names a folder in settings (not a trace): {apart}" if apart else ""
        return (f"{counted(self.occurrences, 'occurrence')} in {counted(self.files, 'file')}{where}"
                f"{unread}{apart}")


def names(text: str, subject: str) -> bool:
    """Whether `text` names `subject`: as a whole word, case-insensitively (storage/
    mentions.py; an empty subject names nothing)."""
    return mentions(text, subject)


def distinctive_lines(text: str, surviving: Iterable[str], *, folded: bool = False
                      ) -> list[str]:
    """Lines of `text` (stripped, at least LINE_MIN characters) found in no surviving text,
    in order of first appearance, once each. With `folded`, the surviving texts are already
    case-folded (a caller checking many notes against one vault folds it once)."""
    lines = list(dict.fromkeys(ln.strip() for ln in text.splitlines()
                               if len(ln.strip()) >= LINE_MIN))
    if not lines:
        return []
    shared: set[str] = set()
    for other in surviving:
        low = other if folded else other.casefold()
        shared.update(ln for ln in lines if ln.casefold() in low)
    return [ln for ln in lines if ln not in shared]


def trash_copies(trash_root: Path, paths: Sequence[str], subject: str) -> list[str]:
    """Entries of the trash (relative to it, sorted) that are copies of `paths` (the same
    path, or the " (n)" copies `Store.trash` makes) or whose bytes name `subject`."""
    if not trash_root.is_dir():
        return []
    wanted = set(paths)
    copies: dict[str, set[str]] = {}  # " (n)" -> the names `copy_name` gives copy n
    out: list[str] = []
    for file in sorted(_files(trash_root)):
        rel = file.relative_to(trash_root).as_posix()
        tag = _COPY.search(rel)
        if tag and tag[1] not in copies:
            copies[tag[1]] = {copy_name(p, int(tag[1])) for p in paths}
        if rel in wanted or (tag and rel in copies[tag[1]]) or names_bytes(file, subject):
            out.append(rel)
    return out


def scan(files: Iterable[Path], needles: Sequence[str], subject: str = "",
         root: Path | None = None, shadows: Sequence[str] = (),
         *, unread: Sequence[Path] = (), settings: Sequence[Path] = ()) -> Proof:
    """Read every file (missing ones skipped) and count the needles' case-folded occurrences
    in its bytes and in its name: `subject` as a whole word in text (storage/mentions.py), the
    other needles (paths, lines of at least LINE_MIN characters) as plain bytes. The name of
    a file under `root` (the vault) is its path from there, of any other its base name: the
    folders above are the user's, not rmh's (a vault under /home/ann failed every proof of
    `--subject Ann`); the proof names it so too, in `found`, `unread` and `settings` alike.
    `shadows`: the paths of notes that stay which hold an erased path (`Joann.md` holds
    `Ann.md`): each of their occurrences takes back the needles it holds,
    so a note that stays is no trace of one erased. A file that cannot be read (a note the
    user made unreadable), and `unread` (folders `owned_files` could not list), are named in
    the proof's `unread`: the proof cannot say they are clean. `settings`: settings files
    (module docstring), their file-system paths naming `subject` reported apart
    (`Proof.settings`)."""
    folded = [n.casefold().encode("utf-8") for n in dict.fromkeys(needles) if n and n != subject]
    within = [(s, sum(s.count(n) for n in folded))
              for s in (x.casefold().encode("utf-8") for x in dict.fromkeys(shadows))]
    within = [(s, k) for s, k in within if k]
    count, found, apart = 0, dict[str, int](), dict[str, list[str]]()
    skipped = [_name(p, root) for p in unread]
    configs = {os.path.realpath(f) for f in settings}
    config_names = {os.path.basename(f) for f in configs}
    for file in sorted(set(files)):
        try:
            plain = _count(file, folded) - sum(k * _count(file, [s]) for s, k in within)
            if file.name in config_names and os.path.realpath(file) in configs:
                named, keys = _in_settings(file, subject)
                apart.update({_name(file, root): keys} if keys else {})
            else:
                named = count_in_bytes(file, subject) + count_in_sqlite(file, subject)
            hits = max(plain, 0) + named
        except FileNotFoundError:
            continue
        except OSError:
            skipped.append(_name(file, root))
            continue
        count += 1
        name = _name(file, root)
        encoded = name.casefold().encode("utf-8", "surrogateescape")
        hits += max(sum(encoded.count(n) for n in folded)  # a name that keeps the text is a
                    - sum(k * encoded.count(s) for s, k in within), 0)  # trace too
        hits += mentions(name, subject)
        if hits:
            found[name] = found.get(name, 0) + hits  # two outside files of one base name
    return Proof(count, found, tuple(sorted(set(skipped))), apart)


def _in_settings(file: Path, subject: str) -> tuple[int, list[str]]:
    """The subject's whole-word occurrences in the settings file `file` outside its string
    settings that are file-system paths, and the keys of those paths that name it. A path is
    taken out where it stands in the file as written (an escaped one stays: counted); a file
    that is no TOML (or no UTF-8) keeps every occurrence."""
    if not subject:
        return 0, []
    raw = file.read_bytes().decode("utf-8", "surrogateescape")
    try:
        doc = tomllib.loads(raw)
    except ValueError:  # TOMLDecodeError, a lone surrogate
        return len(pattern(subject).findall(fold(raw))), []
    rest, keys = raw, []
    for key, value in _path_settings(doc, ""):
        if value in rest and mentions(value, subject):
            rest = rest.replace(value, "")
            keys.append(key)
    return len(pattern(subject).findall(fold(rest))), keys


def _path_settings(value: object, key: str) -> Iterator[tuple[str, str]]:
    """(dotted key, value) of every string setting of a TOML document that is a place in the
    file system: absolute ("/...", "C:\\..." or "C:/..."), or under a home ("~...")."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _path_settings(v, f"{key}.{k}" if key else str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _path_settings(v, key)
    elif isinstance(value, str) and _PATH.match(value):
        yield key, value


_PATH = re.compile(r"(?:/|~|[A-Za-z]:[\\/])")


def _name(file: Path, root: Path | None) -> str:
    """`file`'s path from `root` when it lies under it, else its base name."""
    if root is not None and file.is_relative_to(root):
        return file.relative_to(root).as_posix()
    return file.name


def owned_files(root: Path, extra: Iterable[Path] = (),
                unread: list[Path] | None = None) -> list[Path]:
    """Every regular file in the vault folder (notes, attachments, `.rmh/` and the trash
    included) and the `extra` files that exist (the shared embedding cache and its WAL); the
    folders that could not be listed are added to `unread`."""
    out = list(_files(root, unread))
    out += [p for p in extra if p.is_file()]
    return out


def _files(root: Path, unread: list[Path] | None = None) -> Iterator[Path]:
    def failed(exc: OSError) -> None:
        if unread is not None and not isinstance(exc, FileNotFoundError) and exc.filename:
            unread.append(Path(exc.filename))

    for folder, dirs, files in os.walk(root, onerror=failed):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink():
                yield path


def names_bytes(file: Path, subject: str) -> bool:
    try:
        return count_in_bytes(file, subject) > 0
    except OSError:
        return False


def _count(file: Path, needles: Sequence[bytes]) -> int:
    """Occurrences of `needles` in the file's case-folded bytes, block by block with an
    overlap of the longest needle minus one byte, so nothing is counted twice or missed; a
    sparse file's holes are skipped (mentions.data_extents) unless a needle holds a NUL."""
    if not needles:
        return 0
    keep = max(map(len, needles)) - 1
    total = 0
    with open(file, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        nul = any(b"\0" in n for n in needles)
        for start, end in [(0, size)] if nul else data_extents(fh, size):
            fh.seek(start)
            total += _count_from(fh, end - start, needles, keep)
    return total


def _count_from(fh: BinaryIO, length: int, needles: Sequence[bytes], keep: int) -> int:
    """`_count` over the next `length` bytes of `fh` (one data extent)."""
    total, tail = 0, b""
    while length > 0 and (block := fh.read(min(BLOCK, length))):
        length -= len(block)
        text = tail + _fold(block)
        for needle in needles:
            # Count the matches that end inside the new bytes only (the tail was counted).
            start = 0
            while (i := text.find(needle, start)) >= 0:
                if i + len(needle) > len(tail):
                    total += 1
                start = i + 1
        tail = text[-keep:] if keep > 0 else b""
    return total


def _fold(data: bytes) -> bytes:
    """Case-fold bytes: UTF-8 text folded as text, anything undecodable kept as is."""
    return data.decode("utf-8", errors="surrogateescape").casefold().encode(
        "utf-8", errors="surrogateescape")
