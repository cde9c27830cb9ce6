"""The recursive query loop behind `ask(question, budget=10)`: passes that earn their keep.

Value. Pass 1 searches the question, POOL * k hits deep (its hits are the candidate pool):
value(d) = score(d) / score(top hit). A note found from a parent note p, through p's links or
a sub-query built from p's bridge entities, is worth
    value(d) = DECAY * value(p) * gain(d | gap(p)) * score(d) / score(top hit of that query),
gap(p) = the question's term groups p does not cover (harness/ask_evidence.py; the link
case has no search score and takes 1 for the last factor). A note reached several ways keeps
its best such value and the pass and query that gave it; feedback evidence adds to it.

Relevance feedback (pass 1). For each of the FEEDBACK_FROM best pass-1 hits p, the query
"<question> <the FEEDBACK_TERMS words of p rarest in the vault>" (words the question lacks,
held by at least one other note; rarity = the index's document frequency): pseudo-relevance
feedback (Rocchio 1971; RM3, Abdul-Jaleel et al. 2004) per feedback note, so that each query
follows one aspect of what was found. Each of its k hits adds
    FEEDBACK_WEIGHT * value(p) * score(d) / score(top hit of that query)
to the note's value: evidence adds up (CombSUM, Fox & Shaw 1994), so a note the question
ranked deep that several aspects find again overtakes one only the question found.

One pass runs its queries (pass 1: the question, then its feedback queries), each a search
followed by one hop along the links of its best hits (SPREAD_FROM, up to MAX_LINKED
neighbours read each; not from feedback queries). Sub-queries for the next pass come from
what was found, deterministically, best parent first: for each of the pass's new relevant
notes p with a gap, "<bridge entity> <gap words>" for up to NAMES_PER_NOTE bridge entities of
p; then the groups no gathered note covers, as one query (weight UNCOVERED_WEIGHT in place of
value(p)). With a model configured, prompts/ask_subquestions.md may add up to
MAX_SUBQUESTIONS (run first; one extra sub-call). At most QUERIES_PER_PASS run per pass; a
query asked before is not asked again.

Stop rule. A pass whose queries add (or raise) no note to value >= FLOOR ends the loop
("no new notes"), before its answer call: nothing new was learned. After each other pass the
ORIGINAL question is answered over the answer set with one sub-call, and the pass is resolved
when every term group is covered by one of the RESOLVE_TOP most valuable notes (with a model,
also the answer is not NOT FOUND) ("resolved"). Else: no query left, MAX_PASSES passes, or the
exec's rlm budget spent.

Answer set: the search's head, its first budget // KEEP_PER hits in its order, leads (a
single search's best hits are not traded for recursion); the other slots go to the most
valuable remaining notes, pass-1 hits or notes found by recursion with value >= FLOOR, by
value (ties: discovery order), each with its pass and query, so it compares with
search(question, k=budget) at equal size. Without a broker (the benchmarks) no sub-call is
made and the notes are the same as offline. Trace entries have one fixed schema
(`TraceEntry`); a pass's answer, resolution and sub-questions sit on its last entry.
Constants: BENCHMARKS.md says which were set on which data (bench/knowledge.py seed 15 and
the first five LoCoMo conversations).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from string import Template
from typing import Any, Protocol, TypedDict

import prompts
from vault import content_terms, tokenize

from .ask_evidence import Group, body_of, bridge_names, covered, gain, note_terms, term_groups
from .ask_render import render_note, render_notes
from .extractive import is_not_found
from .llm import Broker, ExecBudget, RlmBudgetExceeded, RlmError, SubRequest

__all__ = ["AskResult", "Found", "Library", "LoopParams", "TraceEntry", "ask", "render_note",
           "render_notes"]

MAX_PASSES = 3
QUERIES_PER_PASS = 4
MAX_SUBQUESTIONS = 3
NAMES_PER_NOTE = 3
SPREAD_FROM = 3
MAX_LINKED = 12
FLOOR = 0.3
DECAY = 0.9
RESOLVE_TOP = 3
UNCOVERED_WEIGHT = 0.5
POOL = 3
FEEDBACK_FROM = 3
FEEDBACK_TERMS = 3
FEEDBACK_WEIGHT = 0.5
KEEP_PER = 5  # the search's first budget // KEEP_PER hits lead the answer set, in its order


@dataclass(frozen=True)
class LoopParams:
    """The loop's knobs (defaults: the module constants); the benchmarks ablate with them."""

    max_passes: int = MAX_PASSES
    floor: float = FLOOR
    decay: float = DECAY
    resolve_top: int = RESOLVE_TOP
    links: bool = True  # value the link neighbours of relevant notes
    bridges: bool = True  # sub-queries from bridge entities
    uncovered: bool = True  # the sub-query of the groups no note covers
    feedback: bool = True  # pass 1's relevance-feedback round
    pool: int = POOL  # pass 1 searches the question pool * k deep
    keep_first: int | None = None  # search's head kept first (None: budget // KEEP_PER)


class Library(Protocol):
    """The vault operations the loop needs, JSON in and out (as harness.tools.VaultOps)."""

    def search(self, query: Any, k: Any = 10) -> dict[str, Any]: ...

    def read(self, note: Any) -> dict[str, Any]: ...

    def neighbors(self, note: Any, hops: Any = 1) -> list[str]: ...

    def document_frequency(self, tokens: Any) -> list[int]: ...


TraceEntry = TypedDict("TraceEntry", {
    "pass": int, "query": str, "origin": str, "parent": str | None, "hits": list[str],
    "new_notes": list[str], "via_links": list[str], "answer": str | None,
    "resolved": bool | None, "missing_terms": list[str], "sub_questions": list[str],
})


@dataclass(frozen=True)
class Found:
    """One note of the answer set: its value, the pass and the query that found it."""

    note: str
    value: float
    pass_no: int
    query: str

    def to_json(self) -> dict[str, Any]:
        return {"note": self.note, "value": self.value, "pass": self.pass_no,
                "query": self.query}


@dataclass(frozen=True)
class AskResult:
    """The answer, the answer set (best first), the per-search trace and why it stopped."""

    question: str
    answer: str
    resolved: bool
    found: tuple[Found, ...]
    trace: tuple[TraceEntry, ...]
    stop: str
    usage: Mapping[str, Any] = field(default_factory=dict)

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(f.note for f in self.found)

    def to_json(self) -> dict[str, Any]:
        return {"question": self.question, "answer": self.answer, "resolved": self.resolved,
                "notes": list(self.notes), "found": [f.to_json() for f in self.found],
                "trace": [dict(t) for t in self.trace], "stop": self.stop,
                "usage": dict(self.usage)}


@dataclass(frozen=True)
class _Query:
    text: str
    origin: str  # question | feedback | bridge | uncovered | model
    parent: str | None
    gap: tuple[Group, ...]
    weight: float
    entity: str = ""  # the bridge entity (origin "bridge")


def _names(record: Mapping[str, Any], entity: str) -> bool:
    """Whether the note is the entity's own note: its title or an alias is the entity."""
    names = [str(record.get("title") or ""), *(str(a) for a in record.get("aliases") or [])]
    return entity.casefold() in {n.casefold() for n in names}


def _entry(pass_no: int, q: _Query) -> TraceEntry:
    return {"pass": pass_no, "query": q.text, "origin": q.origin, "parent": q.parent,
            "hits": [], "new_notes": [], "via_links": [], "answer": None, "resolved": None,
            "missing_terms": [], "sub_questions": []}


class _Gathered:
    """Notes read so far, their terms and best values (module docstring)."""

    def __init__(self, library: Library, groups: list[Group], params: LoopParams) -> None:
        self.library = library
        self.p = params
        self.groups = groups
        self.records: dict[str, Mapping[str, Any]] = {}
        self.terms: dict[str, frozenset[str]] = {}
        self.best: dict[str, Found] = {}  # value = base (best route) + extra (feedback)
        self.base: dict[str, float] = {}
        self.extra: dict[str, float] = {}
        self.spread: set[str] = set()
        self.direct: list[str] = []  # pass-1 hits, search order

    def read(self, note: str) -> frozenset[str]:
        if note not in self.records:
            self.records[note] = self.library.read(note)
            self.terms[note] = note_terms(self.records[note])
        return self.terms[note]

    def offer(self, note: str, value: float, pass_no: int, query: str) -> bool:
        """A route's value: the best route counts (its pass and query are the receipt);
        True when the note rose to value >= FLOOR by it."""
        if self.base.get(note, -1.0) >= value:
            return False
        self.base[note] = value
        return self._set(note, pass_no, query)

    def add(self, note: str, amount: float, pass_no: int, query: str) -> bool:
        """Feedback evidence adds to the note's value (CombSUM); the receipt stays the best
        route's (or this query's, for a note only feedback found)."""
        if amount <= 0:
            return False
        self.extra[note] = self.extra.get(note, 0.0) + amount
        old = self.best.get(note)
        return self._set(note, old.pass_no if old else pass_no, old.query if old else query)

    def _set(self, note: str, pass_no: int, query: str) -> bool:
        old = self.best.get(note)
        value = self.base.get(note, 0.0) + self.extra.get(note, 0.0)
        self.best[note] = Found(note, value, pass_no, query)
        floor = self.p.floor
        return value >= floor and (old is None or old.value < floor or value > old.value)

    def gap(self, note: str) -> tuple[Group, ...]:
        have = self.read(note)
        return tuple(g for g in self.groups if not g.terms <= have)

    def answer_set(self, budget: int) -> list[Found]:
        """The search's head (its first `keep` hits, in its order), then the most valuable
        of the rest that reach the floor (or are pass-1 hits), up to `budget` (module doc)."""
        keep = self.p.keep_first if self.p.keep_first is not None else max(1, budget // KEEP_PER)
        fixed = set(self.direct)
        first = [self.best[n] for n in self.direct[:min(keep, budget)]]
        chosen = {f.note for f in first}
        rest = [f for f in self.ranked() if f.note not in chosen
                and (f.note in fixed or f.value >= self.p.floor)]
        return first + rest[: max(0, budget - len(first))]

    def ranked(self) -> list[Found]:
        order = {n: i for i, n in enumerate(self.best)}
        return sorted(self.best.values(), key=lambda f: (-f.value, order[f.note]))

    def missing(self) -> list[Group]:
        have: frozenset[str] = frozenset().union(
            *(self.terms[f.note] for f in self.best.values() if f.value >= self.p.floor))
        return [g for g in self.groups if not g.terms <= have]

    def resolved(self) -> bool:
        have: frozenset[str] = frozenset().union(
            *(self.terms[f.note] for f in self.ranked()[: self.p.resolve_top]
              if f.value >= self.p.floor))
        return len(covered(self.groups, have)) == len(self.groups)


def _run_query(g: _Gathered, q: _Query, pass_no: int, k: int, entry: TraceEntry) -> list[str]:
    """Search one query, value its hits, spread from its best ones; the notes that rose."""
    hits = [(str(h["note"]), float(h.get("score") or 0.0))
            for h in g.library.search(q.text, k)["hits"]]
    top = max((s for _, s in hits), default=0.0)
    rose: list[str] = []
    for note, score in hits:
        entry["hits"].append(note)
        if note not in g.best:
            entry["new_notes"].append(note)
        if q.origin == "question" and note not in g.direct:
            g.direct.append(note)
        rel = score / top if top > 0 else 0.0
        g.read(note)
        if q.origin == "feedback":
            if g.add(note, FEEDBACK_WEIGHT * q.weight * rel, pass_no, q.text):
                rose.append(note)
            continue
        value = rel if q.origin == "question" else (
            g.p.decay * q.weight * gain(q.gap, g.read(note)) * rel)
        if q.origin == "bridge" and not _names(g.records[note], q.entity):
            value = 0.0  # a bridge query finds the note of its entity, not its namesakes
        if g.offer(note, value, pass_no, q.text):
            rose.append(note)
    parents = [n for n, _ in hits if n in g.best and g.best[n].value >= g.p.floor
               and n not in g.spread][:SPREAD_FROM] if g.p.links and q.origin != "feedback" else []
    for parent in parents:
        g.spread.add(parent)
        gap, weight = g.gap(parent), g.best[parent].value
        if not gap:
            continue
        for other in g.library.neighbors(parent, 1)[:MAX_LINKED]:
            other = str(other)
            value = g.p.decay * weight * gain(gap, g.read(other))
            if value <= 0:
                continue
            if other not in g.best and other not in entry["via_links"]:
                entry["via_links"].append(other)
            if g.offer(other, value, pass_no, f"link from {parent}"):
                rose.append(other)
    return rose


def _feedback_queries(g: _Gathered, question: str, asked: set[str]) -> list[_Query]:
    """Pass 1's feedback round (module docstring): one query per best pass-1 hit, the
    question plus the hit's FEEDBACK_TERMS rarest words that the question lacks and that some
    other note holds (a word only the hit holds cannot find another note)."""
    own = set(tokenize(question))
    out: list[_Query] = []
    for parent in g.direct[:FEEDBACK_FROM]:
        value = g.best[parent].value
        if value < g.p.floor:
            continue
        words = list(dict.fromkeys(t for t in content_terms(tokenize(body_of(g.records[parent])))
                                   if t not in own and not t.isdigit()))
        df = g.library.document_frequency(words)
        rare = sorted((n, i) for i, n in enumerate(df) if n > 1)[:FEEDBACK_TERMS]
        if not rare:
            continue
        text = f"{question} {' '.join(words[i] for _, i in sorted(rare, key=lambda r: r[1]))}"
        if text.casefold() in asked:
            continue
        asked.add(text.casefold())
        out.append(_Query(text, "feedback", parent, tuple(g.groups), value))
    return out


def _next_queries(g: _Gathered, question: str, rose: Sequence[str], asked: set[str],
                  model: Sequence[str]) -> list[_Query]:
    """The next pass's queries (module docstring), best first, unasked, at most QUERIES_PER_PASS."""
    known = {str(r.get("title") or "").casefold() for r in g.records.values()}
    scored: list[tuple[float, int, _Query]] = []
    for i, text in enumerate(model):
        scored.append((2.0, i, _Query(text, "model", None, tuple(g.groups), 1.0)))
    parents = sorted(dict.fromkeys(rose), key=lambda n: (-g.best[n].value, n))[:SPREAD_FROM]
    parents = parents if g.p.bridges else []
    for parent in parents:
        gap, value = g.gap(parent), g.best[parent].value
        if not gap:
            continue
        words = " ".join(grp.surface for grp in gap)
        for name in bridge_names(g.records[parent], question, known)[:NAMES_PER_NOTE]:
            pri = value * len(gap) / max(1, len(g.groups))
            scored.append((pri, len(scored), _Query(f"{name} {words}", "bridge", parent, gap,
                                                    value, name)))
    missing = g.missing()
    if missing and g.p.uncovered:
        text = " ".join(grp.surface for grp in missing)
        pri = UNCOVERED_WEIGHT * len(missing) / max(1, len(g.groups))
        scored.append((pri, len(scored), _Query(text, "uncovered", None, tuple(missing),
                                                UNCOVERED_WEIGHT)))
    out: list[_Query] = []
    for _, _, q in sorted(scored, key=lambda t: (-t[0], t[1])):
        if q.text.casefold() not in asked and len(out) < QUERIES_PER_PASS:
            asked.add(q.text.casefold())
            out.append(q)
    return out


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


def ask(question: str, library: Library, broker: Broker | None = None,
        calls: ExecBudget | None = None, *, budget: int = 10, k: int | None = None,
        params: LoopParams | None = None) -> AskResult:
    """Run the loop (module doc): at most `budget` notes; `k` hits per search (default budget).

    `calls` is the exec's rlm budget (one answer sub-call per pass, one more for model-made
    sub-questions); with `broker` None the loop only retrieves (answer "").
    """
    if budget < 1:
        raise ValueError("budget must be >= 1")
    depth = budget if k is None else k
    p = params or LoopParams()
    g = _Gathered(library, term_groups(question), p)
    queue = [_Query(question, "question", None, tuple(g.groups), 1.0)]
    asked = {question.casefold()}
    trace: list[TraceEntry] = []
    answer, resolved, stop = "", False, "max passes"
    model = broker is not None and broker.provider.name != "extractive"
    for pass_no in range(1, p.max_passes + 1):
        if not queue:
            stop = "no sub-questions left"
            break
        rose: list[str] = []
        for q in queue:
            trace.append(_entry(pass_no, q))
            rose += _run_query(g, q, pass_no, depth * p.pool if q.origin == "question" else depth,
                               trace[-1])
        if pass_no == 1 and p.feedback:
            for q in _feedback_queries(g, question, asked):
                trace.append(_entry(pass_no, q))
                rose += _run_query(g, q, pass_no, depth, trace[-1])
        last = trace[-1]
        if not rose:
            stop = "no new notes"
            break
        top = g.answer_set(budget)
        missing = g.missing()
        last["missing_terms"] = [grp.surface for grp in missing]
        if broker is not None and calls is not None:
            slice_text = render_notes([g.records[f.note] for f in top],
                                      broker.limits.slice_max_chars)
            try:
                answer = broker.call(slice_text, question, calls)
            except RlmBudgetExceeded:
                stop = "budget spent"
                break
            last["answer"] = answer
        resolved = g.resolved() and not (model and is_not_found(answer))
        last["resolved"] = resolved
        if resolved:
            stop = "resolved"
            break
        if pass_no == p.max_passes:
            break
        subs: list[str] = []
        if model and broker is not None and calls is not None:
            titles = [str(g.records[f.note].get("title", "")) for f in top]
            try:
                subs = model_subquestions(broker, calls, question, answer, titles)
            except RlmBudgetExceeded:
                stop = "budget spent"
                break
            except RlmError:
                subs = []
        queue = _next_queries(g, question, rose, asked, subs)
        last["sub_questions"] = [q.text for q in queue]
    usage = calls.report() if calls is not None else {}
    return AskResult(question=question, answer=answer, resolved=resolved,
                     found=tuple(g.answer_set(budget)), trace=tuple(trace), stop=stop,
                     usage=usage)
