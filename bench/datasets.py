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
from typing import Any

from vault import Corpus


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


def load_locomo(path: Path) -> Iterator[Haystack]:
    """One haystack per conversation; questions of categories 1-4 with resolvable evidence."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for ci, conv in enumerate(data):
        c = conv["conversation"]
        b = _Builder(generation=1_000_000 + ci)
        dia: dict[str, int] = {}
        s = 1
        while f"session_{s}" in c:
            date = str(c.get(f"session_{s}_date_time", ""))
            prev: int | None = None
            for turn in c[f"session_{s}"]:
                speaker, did = str(turn["speaker"]), str(turn["dia_id"])
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
                dia[did] = pos
                b.link(pos, b.hub(speaker))
                if prev is not None:
                    b.link(pos, prev)
                prev = pos
            s += 1
        questions = []
        for qi, qa in enumerate(conv["qa"]):
            cat = int(qa.get("category", 0))
            if cat not in (1, 2, 3, 4):
                continue
            ev = frozenset(dia[e.strip()] for e in qa.get("evidence", []) if e.strip() in dia)
            if not ev:
                continue
            questions.append(Question(f"{conv['sample_id']}#{qi}", str(qa["question"]),
                                      str(cat), ev))
        yield Haystack(str(conv["sample_id"]), b.corpus(), tuple(questions))


def locomo_excluded(path: Path) -> dict[str, int]:
    """How many LoCoMo questions of categories 1-4 were dropped for unresolvable evidence."""
    data = json.loads(path.read_text(encoding="utf-8"))
    dropped = 0
    for conv in data:
        c = conv["conversation"]
        ids = {t["dia_id"] for k, v in c.items() if k.startswith("session_") and isinstance(v, list)
               for t in v}
        for qa in conv["qa"]:
            if int(qa.get("category", 0)) in (1, 2, 3, 4) and not any(
                e.strip() in ids for e in qa.get("evidence", [])
            ):
                dropped += 1
    return {"no_resolvable_evidence": dropped}


def load_longmemeval(
    path: Path, granularity: str, excluded: dict[str, int], abstention: bool = False
) -> Iterator[Haystack]:
    """One haystack per question (its own session history); `excluded` counts the dropped.
    With `abstention`, the `_abs` questions (whose answer is in no session) are kept, with
    category "abstention" and no evidence (bench/bench_abstain.py)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for qi, item in enumerate(data):
        qid = str(item["question_id"])
        abstains = qid.endswith("_abs")
        if abstains and not abstention:
            excluded["abstention"] = excluded.get("abstention", 0) + 1
            continue
        b = _Builder(generation=2_000_000 + qi)
        user = b.hub("User")
        evidence: set[int] = set()
        sessions = zip(item["haystack_session_ids"], item["haystack_dates"],
                       item["haystack_sessions"], strict=True)
        for si, (sid, when, turns) in enumerate(sessions, start=1):
            # Titles never carry the dataset's session ids (they contain the word "answer").
            answer = "answer" in str(sid)
            user_turns = [(j, t) for j, t in enumerate(turns) if t.get("role") == "user"]
            if granularity == "session":
                text = "\n".join(str(t.get("content", "")) for _, t in user_turns)
                pos = b.add(f"sessions/s{si}.md", f"Session {si}", f"[[User]]:\n{text}",
                            {"speaker": "user", "date": str(when)})
                b.link(pos, user)
                if answer and any(t.get("has_answer") for _, t in user_turns):
                    evidence.add(pos)
                continue
            for j, t in user_turns:
                pos = b.add(f"sessions/s{si}/t{j + 1}.md", f"Session {si} turn {j + 1}",
                            f"[[User]]: {t.get('content', '')}",
                            {"speaker": "user", "date": str(when), "session": si})
                b.link(pos, user)
                if answer and t.get("has_answer"):
                    evidence.add(pos)
        if abstains:
            q = Question(qid, str(item["question"]), "abstention", frozenset())
            yield Haystack(qid, b.corpus(), (q,))
            continue
        if not evidence:
            excluded["no_user_evidence"] = excluded.get("no_user_evidence", 0) + 1
            continue
        q = Question(qid, str(item["question"]), str(item.get("question_type", "")),
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
