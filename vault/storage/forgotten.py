"""What `rmh forget` erased, kept so that nothing rmh does brings it back.

A conversation's notes are made again from its transcript whenever it is ingested, and a
client hook ingests its transcript at every turn: without this record, the first ingest after
`rmh forget --subject Ann` wrote Ann's turns, session summary and entity notes again from the
transcript, which rmh does not own. The erasure writes

    .rmh/forgotten.json = {"version": 1, "subjects": [[n, h], ...], "paths": [h, ...]}

before its first change: for a subject, h = blake2b(SALT + its words) with n the number of
words (its letter-and-digit runs, case-folded, joined by one space: "Ann Lee", "ann-lee" and
"ANN  LEE" are one subject); for every note erased by name, h of its vault-relative path (a
note erased for naming the subject may come back without it: a session's summary of its
other turns). A digest,
not the text: the proof after the erasure finds no erased string here, though a guess can
still be checked against a digest of so few bytes (stated in README). Nothing is ever removed
from the record (the user forgot it for good), and nothing here reads a clock.

`Forgotten.names(text)` says whether a text holds a forgotten subject's words in a row (the
conversation ingest drops a turn whose speaker or text does, and any note it would write that
still does); `Forgotten.path(p)` whether a note at `p` was erased (the ingest writes none
there again). A subject that is more than words and joiners ("C++", "@ann", "++") is kept
and matched by its white-space-separated tokens instead (h = blake2b(SALT + "\x01" + its
tokens)), sentence punctuation around each stripped: as words "C++" would be "c". A record that
is there but cannot be read (damaged, not a regular file, another version's) stops both its
readers and its writer with one OSError (EIO) saying so, nothing written: an erasure would
drop every subject recorded there, and an ingest would write the erased turns back from the
transcript (before, it read such a record as empty and did).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..notes.text import SPACELESS_CLASS, search_form
from .fileops import create_temp, fsync_dir, open_regular
from .mentions import case_fold, fold

NAME = "forgotten.json"
VERSION = 1
SALT = b"rmh-forgotten-1\x00"
_LEGACY = re.compile(r"[^\W_]+")  # words before a spaceless script's letters were each one
# a letter of a script written without spaces is a word of its own (storage/mentions.py)
_WORDS = re.compile(f"[{SPACELESS_CLASS}]|[^\\W_{SPACELESS_CLASS}]+")
# words and the joiners a name is written with (a Thai vowel sign is no `\w`, yet of a word)
_WORDLIKE = re.compile(f"[\\w\\s'\u2019.\\-{SPACELESS_CLASS}]+")
_EDGE = ".,;:!?\"'()[]{}<>*`|\u2019\u201c\u201d"  # sentence punctuation around a token
TOKENS = "\x01"  # a token entry's digest input starts so: never a words entry's


def _nothing() -> None:
    return None


def _digest(text: str) -> str:
    return hashlib.blake2b(SALT + text.encode("utf-8", "surrogatepass"),
                           digest_size=16).hexdigest()


def tokens(text: str) -> list[str]:
    """A text's white-space-separated pieces, case-folded and composed, without the sentence
    punctuation around them: what a subject that is more than words ("C++", "@ann") is
    matched by."""
    return _pieces(fold(text))


def _pieces(folded: str) -> list[str]:
    return [t for t in (p.strip(_EDGE) for p in folded.split()) if t]


def _subject(subject: str) -> tuple[int, str] | None:
    """The record's entry for `subject`: by its words when it is made of words (and joiners:
    "Ann Lee", "ann-lee", "O'Neil"), else by its tokens (so "C++" is not the word "c", which
    would leave out every turn saying "vitamin c"); None when it has neither."""
    if _WORDLIKE.fullmatch(fold(subject)) is not None:
        ws = words(subject)
        if ws:
            return len(ws), _digest(" ".join(ws))
    ts = tokens(subject)
    return (len(ts), _digest(TOKENS + " ".join(ts))) if ts else None


def words(text: str) -> list[str]:
    """A text's letter-and-digit runs, case-folded and composed (mentions.fold), each letter
    of a script written without spaces a word of its own ("山田太郎さん" is 6 words, so its
    subject "山田太郎" is 4 of them in a row: as one run it named no turn of Japanese prose
    and a re-ingest wrote its turns back): what a subject is matched by."""
    return _WORDS.findall(fold(text))


@dataclass(frozen=True)
class Forgotten:
    """The record (module docstring); empty: nothing forgotten."""

    subjects: frozenset[tuple[int, str]] = frozenset()
    paths: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.subjects or self.paths)

    def names(self, text: str) -> bool:
        """Whether `text` holds a forgotten subject's words (or tokens) in a row."""
        if not self.subjects:
            return False
        as_typed = case_fold(text)
        folded = search_form(as_typed)  # fold(text)
        ws, ts = _WORDS.findall(folded), _pieces(folded)
        # records an older rmh wrote: such runs kept whole; points and letter variants kept
        # as written (`mentions.case_fold`)
        olds, old_ts = [_LEGACY.findall(folded)], []
        if folded != as_typed:
            olds += [_LEGACY.findall(as_typed), _WORDS.findall(as_typed)]
            old_ts = _pieces(as_typed)
        for n in sorted({n for n, _ in self.subjects}):
            wanted = {h for m, h in self.subjects if m == n}
            if any(_digest(" ".join(w[i:i + n])) in wanted
                   for w in (ws, *olds) for i in range(len(w) - n + 1)):
                return True
            if any(_digest(TOKENS + " ".join(t[i:i + n])) in wanted
                   for t in (ts, old_ts) for i in range(len(t) - n + 1)):
                return True
        return False

    def path(self, path: str) -> bool:
        """Whether a note at vault-relative `path` was erased."""
        return bool(self.paths) and _digest(path) in self.paths


def load(state_dir: Path) -> Forgotten:
    """The record in `state_dir` (the vault's `.rmh/`); empty when there is none, OSError when
    one is there that cannot be read (module docstring)."""
    return _read(state_dir)


def _read(state_dir: Path) -> Forgotten:
    """The record; empty when there is none, OSError when one is there that cannot be read
    (damaged, not a regular file, another version's)."""
    try:
        with open_regular(state_dir / NAME) as fh:
            doc = json.loads(fh.read().decode("utf-8"))
    except FileNotFoundError:
        return Forgotten()
    except (OSError, ValueError, RecursionError) as exc:
        raise _unreadable(exc) from exc
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise _unreadable("not a version 1 record")
    subjects, paths = doc.get("subjects", []), doc.get("paths", [])
    if not (isinstance(subjects, list) and all(
            isinstance(s, list) and len(s) == 2 and type(s[0]) is int and s[0] > 0
            and isinstance(s[1], str) for s in subjects)):
        raise _unreadable("a damaged subject entry")  # no rmh writes one: a part was lost
    if not (isinstance(paths, list) and all(isinstance(p, str) for p in paths)):
        raise _unreadable("a damaged path entry")
    return Forgotten(frozenset((s[0], s[1]) for s in subjects), frozenset(paths))


def _unreadable(why: object) -> OSError:
    return OSError(errno.EIO, f".rmh/{NAME} (what earlier erasures keep from coming back) "
                   f"cannot be read ({why}): repair it first (moved aside, the "
                   "subjects erased before come back at the next ingest of their transcript)")


def remember(state_dir: Path, subject: str, paths: Iterable[str],
             count_op: Callable[[], None] = _nothing) -> None:
    """Add `subject` (when it has words) and `paths` to the record, durably: a temporary,
    fsynced, renamed, the folder fsynced (`count_op` after each: the store's fault-injection
    seam). OSError when it cannot be written (a full disk, a read-only folder), or when the
    record there cannot be read: writing a new one would drop what it holds, and the subjects
    erased before would come back at the next ingest."""
    old = _read(state_dir)
    entry = _subject(subject)
    subjects = set(old.subjects) | ({entry} if entry is not None else set())
    every = set(old.paths) | {_digest(p) for p in paths}
    if subjects == old.subjects and every == old.paths:
        return
    doc = {"version": VERSION, "subjects": sorted([n, h] for n, h in subjects),
           "paths": sorted(every)}
    target = state_dir / NAME
    tmp = state_dir / f".{NAME}.{os.getpid()}.tmp"
    try:
        with create_temp(tmp) as fh:
            fh.write(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("ascii"))
            fh.flush()
            os.fsync(fh.fileno())
        count_op()
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    count_op()
    fsync_dir(str(state_dir), done=count_op)
