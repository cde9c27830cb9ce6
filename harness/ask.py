"""The recursive query loop behind `ask(question)`: retrieve, spread along links, answer, recurse.

One pass: search the vault for the pass's query (k hits), spread one hop along wiki-links from
the best new hits, read every note not seen before, and answer the ORIGINAL question with one
sub-call over all notes gathered so far. A model's answer is resolved unless it is NOT FOUND;
an extractive answer (which answers whenever any term overlaps) is resolved only when, also,
every content term of the question occurs in some gathered note. An unresolved pass forms
sub-questions that enter the graph from new points, each queued for its own pass:
- with a model: prompts/ask_subquestions.md asks it for up to MAX_SUBQUESTIONS search queries;
- offline (or if that call fails): deterministically, the question's terms missing from every
  gathered note (one query), then capitalised names in the answer that are not yet a note.
The loop stops when the answer is resolved, a pass finds no new notes, no query is left,
MAX_PASSES passes ran, or the exec's rlm budget is spent (each pass costs one sub-call, plus
one for model-made sub-questions).

Vault access goes through a `Library` (harness.tools.VaultOps satisfies it), so the loop runs
on whatever thread calls it while the vault itself stays on its own thread.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from string import Template
from typing import Any, Protocol

import prompts

from .extractive import is_not_found, terms
from .llm import Broker, ExecBudget, RlmBudgetExceeded, RlmError, SubRequest

MAX_PASSES = 4
MAX_SUBQUESTIONS = 3
MAX_LINKED = 6  # notes added along links per pass
SPREAD_FROM = 3  # new hits whose neighbours are followed
DATE_KEYS = ("date", "created", "updated")
_NAME = re.compile(r"\b[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")
_FRONTMATTER = re.compile(r"\A---\r?\n.*?\r?\n---\r?\n?", re.DOTALL)


class Library(Protocol):
    """The vault operations the loop needs, JSON in and out (as harness.tools.VaultOps)."""

    def search(self, query: Any, k: Any = 10) -> dict[str, Any]: ...

    def read(self, note: Any) -> dict[str, Any]: ...

    def neighbors(self, note: Any, hops: Any = 1) -> list[str]: ...


def render_note(record: Mapping[str, Any], *, max_chars: int | None = None) -> str:
    """A note as slice text: title heading, source and date lines, then the body.

    `record` is a read() result ({"note","title","text","frontmatter"}) or any dict with
    "text" or "body"; frontmatter is dropped from the text (its date and source are shown).
    """
    fm = record.get("frontmatter") or {}
    fm = fm if isinstance(fm, Mapping) else {}
    title = str(record.get("title") or record.get("note") or "untitled")
    lines = [f"## {title}"]
    source = str(record.get("note") or "")
    if fm.get("source"):
        source = f"{source} ({fm['source']})" if source else str(fm["source"])
    if source:
        lines.append(f"source: {source}")
    date = next((str(fm[k]) for k in DATE_KEYS if fm.get(k)), str(record.get("date") or ""))
    if date:
        lines.append(f"date: {date}")
    body = str(record.get("body") or record.get("text") or "")
    body = _FRONTMATTER.sub("", body, count=1).strip()
    if max_chars is not None and len(body) > max_chars:
        body = body[: max(0, max_chars)].rstrip() + " …[truncated]"
    return "\n".join(lines) + "\n\n" + body


def render_notes(records: Sequence[Mapping[str, Any]], max_chars: int) -> str:
    """Several notes in order, separated by blank lines, within `max_chars` in total.

    Every note gets an equal share of the budget; a note shorter than its share passes the
    rest on to the notes after it.
    """
    parts: list[str] = []
    left = max_chars
    for i, record in enumerate(records):
        share = left // (len(records) - i) - 2
        head = render_note({**record, "text": "", "body": ""})
        part = render_note(record, max_chars=max(0, share - len(head) - 16))
        parts.append(part)
        left -= len(part) + 2
    return "\n\n".join(parts)[:max_chars]


@dataclass(frozen=True)
class AskResult:
    """The answer, the notes used (discovery order), the per-pass trace and why it stopped."""

    question: str
    answer: str
    resolved: bool
    notes: tuple[str, ...]
    trace: tuple[Mapping[str, Any], ...]
    stop: str
    usage: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "resolved": self.resolved,
            "notes": list(self.notes),
            "trace": [dict(t) for t in self.trace],
            "stop": self.stop,
            "usage": dict(self.usage),
        }


TRACE_KEYS = ("pass", "query", "hits", "new_notes", "via_links", "answer", "resolved",
              "missing_terms", "sub_questions")


def trace_step(pass_no: int, query: str, hits: list[str], new_notes: list[str],
               via_links: list[str]) -> dict[str, Any]:
    """One pass's trace entry. Every entry has exactly TRACE_KEYS: what a pass did not get to
    is None ("answer", "resolved": the pass stopped before answering) or [] (the lists)."""
    return {"pass": pass_no, "query": query, "hits": hits, "new_notes": new_notes,
            "via_links": via_links, "answer": None, "resolved": None, "missing_terms": [],
            "sub_questions": []}


def missing_terms(question: str, texts: Sequence[str]) -> list[str]:
    """Content terms of the question (suffix-folded) that occur in none of the texts."""
    present: set[str] = set()
    for text in texts:
        present.update(terms(text))
    return [t for t in dict.fromkeys(terms(question)) if t not in present]


def deterministic_subquestions(
    question: str, answer: str, titles: Sequence[str], missing: Sequence[str]
) -> list[str]:
    """Offline sub-questions: the missing terms as one query, then new names in the answer."""
    out: list[str] = []
    if missing:
        out.append(" ".join(missing))
    if not is_not_found(answer):
        known = {t.casefold() for t in titles}
        asked = question.casefold()
        for found in _NAME.findall(answer):
            name = re.sub(r"['’]s$", "", found)
            if not terms(name) or name.casefold() in known or name.casefold() in asked:
                continue  # stop words only ("She", "The"), or already a note / in the question
            if name not in out:
                out.append(name)
    return out[:MAX_SUBQUESTIONS]


def model_subquestions(
    broker: Broker, budget: ExecBudget, question: str, answer: str, titles: Sequence[str]
) -> list[str]:
    """Sub-questions written by the model (prompts/ask_subquestions.md); [] for NONE."""
    listing = "\n".join(f"- {t}" for t in titles)
    user = Template(prompts.load("ask_subquestions")).substitute(
        question=question, answer=answer, titles=listing, limit=MAX_SUBQUESTIONS,
        fence=hashlib.sha256(listing.encode("utf-8")).hexdigest()[:16],
    )
    reply = broker.run(SubRequest(prompts.load("rlm_system"), user), budget)
    queries = [re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", ln).strip() for ln in reply.splitlines()]
    return [q for q in queries if q and q.upper() != "NONE"][:MAX_SUBQUESTIONS]


def ask(
    question: str, library: Library, broker: Broker, budget: ExecBudget, *, k: int = 5
) -> AskResult:
    """Run the loop (module doc) and return the answer, notes used and trace."""
    records: dict[str, Mapping[str, Any]] = {}
    queue: list[str] = [question]
    asked = {question.casefold()}
    trace: list[dict[str, Any]] = []
    answer, resolved, stop = "", False, "max passes"
    for pass_no in range(1, MAX_PASSES + 1):
        if not queue:
            stop = "no sub-questions left"
            break
        query = queue.pop(0)
        hits = [str(h["note"]) for h in library.search(query, k)["hits"]]
        new_hits = [n for n in hits if n not in records]
        linked: list[str] = []
        for note in new_hits[:SPREAD_FROM]:
            for other in library.neighbors(note, 1):
                if other not in records and other not in new_hits and other not in linked:
                    linked.append(other)
        linked = linked[:MAX_LINKED]
        step = trace_step(pass_no, query, hits, new_hits, linked)
        trace.append(step)
        if not new_hits and not linked:
            stop = "no new notes"
            break
        for note in new_hits + linked:
            records[note] = library.read(note)
        slice_text = render_notes(list(records.values()), broker.limits.slice_max_chars)
        try:
            answer = broker.call(slice_text, question, budget)
        except RlmBudgetExceeded:
            stop = "budget spent"
            break
        texts = [str(r.get("title", "")) + "\n" + str(r.get("text", "")) for r in records.values()]
        missing = missing_terms(question, texts)
        offline = broker.provider.name == "extractive"
        resolved = not is_not_found(answer) and not (offline and missing)
        step.update(answer=answer, resolved=resolved, missing_terms=missing)
        if resolved:
            stop = "resolved"
            break
        titles = [str(r.get("title", "")) for r in records.values()]
        subs: list[str] = []
        if not offline:
            try:
                subs = model_subquestions(broker, budget, question, answer, titles)
            except RlmBudgetExceeded:
                stop = "budget spent"
                break
            except RlmError:
                subs = []
        if not subs:
            subs = deterministic_subquestions(question, answer, titles, missing)
        subs = [s for s in subs if s.casefold() not in asked]
        asked.update(s.casefold() for s in subs)
        queue.extend(subs)
        step["sub_questions"] = subs
    return AskResult(
        question=question,
        answer=answer,
        resolved=resolved,
        notes=tuple(records),
        trace=tuple(trace),
        stop=stop,
        usage=budget.report(),
    )
