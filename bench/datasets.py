"""Benchmark data as in-memory vaults: one `Corpus` per LoCoMo conversation or LongMemEval
haystack, plus the questions asked of it with their evidence (as note positions).

Vault shape (what `rmh ingest` of a conversation would write): one note per turn (LoCoMo;
LongMemEval at --granularity turn) or per session (LongMemEval --granularity session), with
speaker and date in frontmatter and a `[[Speaker]]` link in the body; a LoCoMo turn also links
the previous turn of its session (the turn it replies to). LongMemEval turn documents are user
turns only (official protocol), so the turn a user turn replies to, the assistant's, is not in
the vault: user turns are not linked to each other (an earlier version linked consecutive user
turns as if one replied to the other; BENCHMARKS.md gives both). Speaker notes are hubs of the
link graph and are marked archived, so they shape PageRank but are never ranked (evaluation is
over turns or sessions only, as both benchmarks define it).

LoCoMo (Maharana et al. 2024): categories 1-4 (5 = adversarial, excluded); evidence = dialog
ids ("D1:3"); an image turn's BLIP caption is part of its text, as in the released data.
LongMemEval-S (Wu et al. 2024), official retrieval protocol: a session document is its user
turns joined; a turn document is one user turn; evidence = answer sessions (ids containing
"answer") whose user turns carry `has_answer` (turn level: those user turns); abstention
questions (`_abs`) and questions without user-side evidence are excluded and counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, TextIO

from vault import Corpus


class DatasetError(ValueError):
    """A LoCoMo / LongMemEval file rmh cannot read (names the file, the item, the problem)."""


class _Stream:
    """A JSON text read a chunk at a time: the next non-blank character, the next value."""

    def __init__(self, fh: TextIO, chunk: int) -> None:
        self.fh, self.chunk, self.buf, self.at = fh, chunk, "", 0

    def peek(self) -> str:
        """The next non-blank character ("" at the end of the file), reading on as needed."""
        while True:
            while self.at < len(self.buf) and self.buf[self.at] in " \t\r\n":
                self.at += 1
            if self.at < len(self.buf):
                return self.buf[self.at]
            more = self.fh.read(self.chunk)
            if not more:
                return ""
            self.buf, self.at = more, 0

    def value(self) -> Any:
        """The JSON value that starts at the next non-blank character, reading on until it is
        complete."""
        self.peek()
        while True:
            try:
                item, self.at = _DECODER.raw_decode(self.buf, self.at)
                return item
            except json.JSONDecodeError:
                more = self.fh.read(max(self.chunk, len(self.buf) - self.at))
                if not more:
                    raise
                self.buf, self.at = self.buf[self.at:] + more, 0


_DECODER = json.JSONDecoder()


def _items(path: Path, chunk: int = 1 << 20) -> Iterator[Any]:
    """The items of the file's top-level JSON list, one at a time (a BOM is dropped): a
    LongMemEval_M file holds gigabytes, and parsed whole it would take several times that."""
    try:
        with path.open(encoding="utf-8-sig") as fh:
            s = _Stream(fh, chunk)
            first = s.peek()
            if first != "[":
                what = f"it starts with {first!r}" if first else "it is empty"
                raise DatasetError(f"{path}: a JSON list is expected, {what}")
            s.at += 1
            if s.peek() == "]":
                return
            n = 0
            while True:
                try:
                    item = s.value()
                except json.JSONDecodeError as e:
                    raise DatasetError(f"{path}: not a JSON file (item {n}: {e.msg})") from None
                yield item
                n += 1
                sep = s.peek()
                if sep == "]":
                    return
                if sep != ",":
                    raise DatasetError(f"{path}: not a JSON file (after item {n - 1})")
                s.at += 1
    except UnicodeDecodeError:
        raise DatasetError(f"{path}: not a JSON file (not UTF-8)") from None


def _field(path: Path, where: str, obj: Any, key: str, kind: type | tuple[type, ...]) -> Any:
    """obj[key], which must be of `kind`, or a DatasetError naming the file and `where`."""
    if not isinstance(obj, dict):
        raise DatasetError(f"{path}: {where} is not an object")
    if key not in obj:
        raise DatasetError(f"{path}: {where} has no {key!r}")
    if not isinstance(obj[key], kind):
        raise DatasetError(f"{path}: {where} {key!r} is a {type(obj[key]).__name__}")
    return obj[key]


_DIA = re.compile(r"D\s*(\d+)\s*:\s*(\d+)")


def dialog_ids(evidence: Any) -> list[str]:
    """LoCoMo evidence as canonical "D<session>:<turn>" ids: an entry may hold several
    ("D8:6; D9:17", "D1:3 D1:5") or odd spacing ("D1: 3"); anything else is kept stripped."""
    out: list[str] = []
    for e in evidence if isinstance(evidence, list) else [evidence]:
        text = str(e)
        found = [f"D{a}:{b}" for a, b in _DIA.findall(text)]
        out.extend(found or ([text.strip()] if text.strip() else []))
    return out


@dataclass(frozen=True)
class Question:
    qid: str
    text: str
    category: str
    evidence: frozenset[int]  # corpus positions
    asked_on: date | None = None  # the date the question is asked on (LongMemEval's)


@dataclass(frozen=True)
class Haystack:
    name: str
    corpus: Corpus
    questions: tuple[Question, ...]


@dataclass
class _Builder:
    generation: int
    paths: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    bodies: list[str] = field(default_factory=list)
    front: list[dict[str, Any]] = field(default_factory=list)
    archived: list[bool] = field(default_factory=list)
    edges: set[tuple[int, int]] = field(default_factory=set)
    hubs: dict[str, int] = field(default_factory=dict)

    def add(
        self, path: str, title: str, body: str, front: dict[str, Any], hub: bool = False
    ) -> int:
        self.paths.append(path)
        self.titles.append(title)
        self.bodies.append(body)
        self.front.append(front)
        self.archived.append(hub)
        return len(self.paths) - 1

    def hub(self, name: str) -> int:
        if name not in self.hubs:
            self.hubs[name] = self.add(f"people/{name}.md", name, "", {"type": "person"}, True)
        return self.hubs[name]

    def link(self, a: int, b: int) -> None:
        if a != b:
            self.edges.add((a, b))

    def corpus(self) -> Corpus:
        n = len(self.paths)
        return Corpus(
            generation=self.generation,
            ids=tuple(range(1, n + 1)),
            paths=tuple(self.paths),
            titles=tuple(self.titles),
            aliases=tuple(() for _ in range(n)),
            bodies=tuple(self.bodies),
            frontmatter=tuple(self.front),
            content_hashes=tuple("" for _ in range(n)),
            edges=tuple(sorted(self.edges)),
            archived=tuple(self.archived),
        )


def _sessions(path: Path, where: str, c: Any) -> list[tuple[int, list[Any]]]:
    """A LoCoMo conversation's sessions by number (gaps allowed), each a list of turns."""
    if not isinstance(c, dict):
        raise DatasetError(f"{path}: {where} 'conversation' is not an object")
    found = sorted((int(m.group(1)), k) for k in c
                   if (m := re.fullmatch(r"session_(\d+)", k)) is not None)
    return [(n, _field(path, where, c, key, list)) for n, key in found]


def _category(path: Path, where: str, qa: Any) -> int:
    cat = qa.get("category", 0) if isinstance(qa, dict) else None
    try:
        return int(cat)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DatasetError(f"{path}: {where} category {cat!r} is not a number") from None


def load_locomo(path: Path) -> Iterator[Haystack]:
    """One haystack per conversation; questions of categories 1-4 with resolvable evidence."""
    for ci, conv in enumerate(_items(path)):
        where = f"conversation {ci}"
        name = str(_field(path, where, conv, "sample_id", (str, int)))
        b = _Builder(generation=1_000_000 + ci)
        dia: dict[str, int] = {}
        for s, turns in _sessions(path, where, _field(path, where, conv, "conversation", dict)):
            date = str(conv["conversation"].get(f"session_{s}_date_time", ""))
            prev: int | None = None
            for ti, turn in enumerate(turns):
                at = f"{where} session_{s} turn {ti}"
                speaker = str(_field(path, at, turn, "speaker", str))
                did = str(_field(path, at, turn, "dia_id", (str, int)))
                text = str(turn.get("text", ""))
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                slug = did.replace(":", "-")
                pos = b.add(
                    f"session-{s}/{slug}.md",
                    slug,
                    f"[[{speaker}]]: {text}",
                    {"speaker": speaker, "date": date, "session": s, "dia_id": did},
                )
                dia[(dialog_ids(did) or [did])[0]] = pos
                b.link(pos, b.hub(speaker))
                if prev is not None:
                    b.link(pos, prev)
                prev = pos
        questions = []
        for qi, qa in enumerate(_field(path, where, conv, "qa", list)):
            cat = _category(path, f"{where} qa {qi}", qa)
            if cat not in (1, 2, 3, 4):
                continue
            ev = frozenset(dia[e] for e in dialog_ids(qa.get("evidence", [])) if e in dia)
            if not ev:
                continue
            text = _field(path, f"{where} qa {qi}", qa, "question", (str, int))
            questions.append(Question(f"{name}#{qi}", str(text), str(cat), ev))
        yield Haystack(name, b.corpus(), tuple(questions))


def locomo_excluded(path: Path) -> dict[str, int]:
    """How many LoCoMo questions of categories 1-4 were dropped for unresolvable evidence."""
    dropped = 0
    for ci, conv in enumerate(_items(path)):
        where = f"conversation {ci}"
        sessions = _sessions(path, where, _field(path, where, conv, "conversation", dict))
        ids = {(dialog_ids(str(t.get("dia_id", ""))) or [""])[0] for _, turns in sessions
               for t in turns if isinstance(t, dict)}
        for qi, qa in enumerate(_field(path, where, conv, "qa", list)):
            if _category(path, f"{where} qa {qi}", qa) in (1, 2, 3, 4) and not any(
                e in ids for e in dialog_ids(qa.get("evidence", []))
            ):
                dropped += 1
    return {"no_resolvable_evidence": dropped}


def _lme_sessions(path: Path, where: str, item: Any) -> list[tuple[str, str, list[Any]]]:
    """(session id, date, turns) of one LongMemEval question, checked."""
    ids = _field(path, where, item, "haystack_session_ids", list)
    dates = _field(path, where, item, "haystack_dates", list)
    sessions = _field(path, where, item, "haystack_sessions", list)
    if not len(ids) == len(dates) == len(sessions):
        raise DatasetError(f"{path}: {where} has {len(ids)} haystack_session_ids, "
                           f"{len(dates)} haystack_dates, {len(sessions)} haystack_sessions")
    for si, turns in enumerate(sessions):
        if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
            raise DatasetError(f"{path}: {where} haystack_sessions[{si}] is not a list of turns")
        for t in turns:
            _field(path, f"{where} haystack_sessions[{si}] turn", t, "role", str)
    return [(str(i), str(d), t) for i, d, t in zip(ids, dates, sessions, strict=True)]


def load_longmemeval(
    path: Path, granularity: str, excluded: dict[str, int], abstention: bool = False
) -> Iterator[Haystack]:
    """One haystack per question (its own session history); `excluded` counts the dropped.
    With `abstention`, the `_abs` questions (whose answer is in no session) are kept, with
    category "abstention" and no evidence (bench/bench_abstain.py)."""
    for qi, item in enumerate(_items(path)):
        qid = str(_field(path, f"item {qi}", item, "question_id", (str, int)))
        where = f"question {qid}"
        question = str(_field(path, where, item, "question", (str, int)))
        abstains = qid.endswith("_abs")
        if abstains and not abstention:
            excluded["abstention"] = excluded.get("abstention", 0) + 1
            continue
        b = _Builder(generation=2_000_000 + qi)
        user = b.hub("User")
        evidence: set[int] = set()
        for si, (sid, when, turns) in enumerate(_lme_sessions(path, where, item), start=1):
            # Titles never carry the dataset's session ids (they contain the word "answer").
            answer = "answer" in sid
            user_turns = [(j, t) for j, t in enumerate(turns) if t.get("role") == "user"]
            if granularity == "session":
                text = "\n".join(str(t.get("content", "")) for _, t in user_turns)
                pos = b.add(f"sessions/s{si}.md", f"Session {si}", f"[[User]]:\n{text}",
                            {"speaker": "user", "date": when})
                b.link(pos, user)
                if answer and any(t.get("has_answer") for _, t in user_turns):
                    evidence.add(pos)
                continue
            for j, t in user_turns:
                pos = b.add(f"sessions/s{si}/t{j + 1}.md", f"Session {si} turn {j + 1}",
                            f"[[User]]: {t.get('content', '')}",
                            {"speaker": "user", "date": when, "session": si})
                b.link(pos, user)
                if answer and t.get("has_answer"):
                    evidence.add(pos)
        if abstains:
            q = Question(qid, question, "abstention", frozenset())
            yield Haystack(qid, b.corpus(), (q,))
            continue
        if not evidence:
            excluded["no_user_evidence"] = excluded.get("no_user_evidence", 0) + 1
            continue
        q = Question(qid, question, str(item.get("question_type", "")),
                     frozenset(evidence), asked_day(str(item.get("question_date", ""))))
        yield Haystack(qid, b.corpus(), (q,))


def asked_day(text: str) -> date | None:
    """LongMemEval's "2023/05/30 (Tue) 22:53" as a date; None when it is not one."""
    m = re.match(r"\s*(\d{4})[-/](\d{1,2})[-/](\d{1,2})", text)
    if m is None:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None
