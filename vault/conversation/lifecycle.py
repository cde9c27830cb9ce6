"""4D memory lifecycle (seed 002): tiers, facts, promotion, archiving, conflicts, relations.

Tiers: L0 raw turns -> L1 session summaries -> L2 facts and preferences -> L3 rules.
An L2 `Fact` carries confidence, first observed, last confirmed, confirmations (observations,
the first included) and the distinct sessions that stated it. Rules (seed 002, "the code uses
the following baseline"):

- promote to L3 when confidence >= 0.95 AND confirmed in >= 3 sessions AND observed across
  >= 30 days (last_confirmed − first_observed);
- archive (a flag, never a deletion; undone by a new confirmation) when older than 365 days
  (today − last_confirmed) AND confidence < 0.6 AND fewer than 2 confirmations;
- a repeated observation confirms: c ← 1 − (1 − c)(1 − c_obs) (noisy-or), dates widen;
- a different value for the same subject and key is a conflict: both facts are kept side by
  side with their sources, dates and confidences; nothing is overwritten.

Typed relations (seed 002, dimension 4) are frontmatter fields whose values are wiki-links:
``works_on: ["[[Payments]]"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

TIERS: tuple[str, ...] = ("L0", "L1", "L2", "L3")
PROMOTE_CONFIDENCE = 0.95
PROMOTE_SESSIONS = 3
PROMOTE_DAYS = 30
ARCHIVE_DAYS = 365
ARCHIVE_CONFIDENCE = 0.6
ARCHIVE_CONFIRMATIONS = 2
RELATIONS: tuple[str, ...] = (
    "works_on",
    "owns",
    "depends_on",
    "reports_to",
    "uses",
    "affected_by",
    "supersedes",
)


@dataclass(frozen=True)
class Fact:
    """One L2 (or promoted L3) fact: subject, key and value, with its evidence trail."""

    subject: str
    key: str
    value: str
    confidence: float
    first_observed: date
    last_confirmed: date
    confirmations: int
    sessions: tuple[str, ...]
    sources: tuple[str, ...]
    tier: str = "L2"
    archived: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "key": self.key,
            "value": self.value,
            "confidence": round(self.confidence, 4),
            "first_observed": self.first_observed.isoformat(),
            "last_confirmed": self.last_confirmed.isoformat(),
            "confirmations": self.confirmations,
            "sessions": list(self.sessions),
            "sources": list(self.sources),
            "tier": self.tier,
            "archived": self.archived,
        }


def _order(facts: Iterable[Fact]) -> tuple[Fact, ...]:
    return tuple(sorted(facts, key=lambda f: (f.subject, f.key, f.value)))


def observe(
    facts: Sequence[Fact],
    subject: str,
    key: str,
    value: str,
    *,
    confidence: float,
    when: date,
    session: str,
    source: str,
) -> tuple[Fact, ...]:
    """The fact book after one observation (pure; the input is not changed)."""
    if not 0.0 <= confidence <= 1.0:
        raise ValueError(f"confidence must be in [0, 1], got {confidence}")
    out: list[Fact] = []
    matched = False
    for f in facts:
        if (f.subject, f.key, f.value) == (subject, key, value):
            matched = True
            f = replace(
                f,
                confidence=1.0 - (1.0 - f.confidence) * (1.0 - confidence),
                first_observed=min(f.first_observed, when),
                last_confirmed=max(f.last_confirmed, when),
                confirmations=f.confirmations + 1,
                sessions=tuple(sorted(set(f.sessions) | {session})),
                sources=tuple(sorted(set(f.sources) | {source})),
            )
        out.append(f)
    if not matched:
        out.append(Fact(subject, key, value, confidence, when, when, 1, (session,), (source,)))
    return _order(out)


def promotable(fact: Fact) -> bool:
    """confidence >= 0.95 AND >= 3 sessions AND >= 30 days between first and last sighting."""
    return (
        fact.confidence >= PROMOTE_CONFIDENCE
        and len(set(fact.sessions)) >= PROMOTE_SESSIONS
        and (fact.last_confirmed - fact.first_observed).days >= PROMOTE_DAYS
    )


def archivable(fact: Fact, today: date) -> bool:
    """older than 365 days AND confidence < 0.6 AND fewer than 2 confirmations."""
    return (
        (today - fact.last_confirmed).days > ARCHIVE_DAYS
        and fact.confidence < ARCHIVE_CONFIDENCE
        and fact.confirmations < ARCHIVE_CONFIRMATIONS
    )


def apply_rules(facts: Sequence[Fact], today: date) -> tuple[Fact, ...]:
    """Promotion (L3 is kept once reached) and the archive flag, as of `today`."""
    return _order(
        replace(
            f,
            tier="L3" if f.tier == "L3" or promotable(f) else f.tier,
            archived=archivable(f, today),
        )
        for f in facts
    )


@dataclass(frozen=True)
class Conflict:
    """Facts that give different values for one subject and key, strongest first."""

    subject: str
    key: str
    facts: tuple[Fact, ...]


def conflicts(facts: Sequence[Fact], *, include_archived: bool = False) -> tuple[Conflict, ...]:
    """Every (subject, key) with two or more values, side by side, none dropped."""
    groups: dict[tuple[str, str], list[Fact]] = {}
    for f in facts:
        if include_archived or not f.archived:
            groups.setdefault((f.subject, f.key), []).append(f)
    return tuple(
        Conflict(s, k, tuple(sorted(g, key=lambda f: (-f.confidence, f.value))))
        for (s, k), g in sorted(groups.items())
        if len({f.value for f in g}) > 1
    )


@dataclass(frozen=True)
class Relation:
    """A typed edge: `source` --type--> `target` (entity names or note titles)."""

    type: str
    source: str
    target: str

    def __post_init__(self) -> None:
        if self.type not in RELATIONS:
            raise ValueError(f"unknown relation {self.type!r}; one of {', '.join(RELATIONS)}")


def relation_fields(
    relations: Iterable[Relation], source: str, link: Callable[[str], str] = lambda t: f"[[{t}]]"
) -> dict[str, list[str]]:
    """Frontmatter fields of `source`: {type: sorted wiki-links}, types in RELATIONS order."""
    by_type: dict[str, set[str]] = {}
    for r in relations:
        if r.source == source:
            by_type.setdefault(r.type, set()).add(link(r.target))
    return {t: sorted(by_type[t]) for t in RELATIONS if t in by_type}


def link_target(value: object) -> str:
    """The note a frontmatter wiki-link value names ("[[T]]", "[[T|alias]]", "[[T#h]]" -> "T");
    "" when the value is not a wiki-link."""
    text = str(value).strip()
    if not (text.startswith("[[") and text.endswith("]]")):
        return ""
    return text[2:-2].split("|", 1)[0].split("#", 1)[0].strip()


def parse_relation_fields(source: str, frontmatter: Mapping[str, Any]) -> tuple[Relation, ...]:
    """The typed relations a note's frontmatter declares (values "[[Target]]" or "[[T|alias]]")."""
    out: list[Relation] = []
    for t in RELATIONS:
        raw = frontmatter.get(t)
        values = raw if isinstance(raw, list) else [raw] if isinstance(raw, str) else []
        for v in values:
            target = link_target(v)
            if target:
                out.append(Relation(t, source, target))
    return tuple(sorted(out, key=lambda r: (RELATIONS.index(r.type), r.target)))
