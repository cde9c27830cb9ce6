"""Which conversation notes to archive (reversibly), and why: DMF survival + the 4D rule.

Two rules, both read from the notes' own frontmatter (a pure function of the corpus and
`today`; no wall clock):

- **dmf** (seed 001), L0 turn notes: Δn = the turns of the conversation said after this one
  (by their `date`, naive UTC, then tick; by tick alone where a turn of it has no readable
  date), newer interactions; archive when Ω_eff(Δn) = Ω · 2^(−Δn / H(Ω)) < `survival.ARCHIVE_BELOW`.
  A turn that is the evidence of a fact not itself archived is kept (the fact cites it).
- **lifecycle** (seed 002), L2 fact notes: archive when older than 365 days (today −
  last_confirmed) AND confidence < 0.6 AND fewer than 2 confirmations
  (`lifecycle.archivable`). L3 rules, L1 sessions and entity notes are never proposed.

Notes the corpus already marks archived are skipped. Archiving itself is the caller's business
(the harness records it in the learning ledger); nothing here writes or deletes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from itertools import pairwise
from typing import Any

from ..storage.corpus import Corpus
from . import survival
from .facts import fact_from_frontmatter
from .formats import naive_utc
from .lifecycle import (
    ARCHIVE_CONFIDENCE,
    ARCHIVE_CONFIRMATIONS,
    ARCHIVE_DAYS,
    archivable,
    link_target,
)

RULES: tuple[str, ...] = ("lifecycle", "dmf")


@dataclass(frozen=True)
class ArchiveDecision:
    """Archive note `note` (stable id `id`) because of `rule`; `reason` says with what numbers."""

    note: str
    id: int
    rule: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"note": self.note, "id": self.id, "rule": self.rule, "reason": self.reason}


def _turn(fm: Mapping[str, Any]) -> tuple[str, int, float] | None:
    tick, omega = fm.get("tick"), fm.get("omega")
    if fm.get("tier") != "L0" or not isinstance(tick, int) or isinstance(tick, bool):
        return None
    if not isinstance(omega, (int, float)):
        return None
    return str(fm.get("conversation", "")), tick, float(omega)


def _when(value: Any) -> datetime | None:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    return naive_utc(value) if isinstance(value, datetime) else None


def _newer(corpus: Corpus, turns: list[tuple[int, tuple[str, int, float]]]) -> dict[int, int]:
    """Δn of each turn (corpus index -> how many turns of its conversation came after it).
    By time, so that a file listing its sessions newest first does not decay its newest
    turns fastest (CONV6: by tick alone the 2024 session of such a file was archived and the
    2023 one kept). Where time agrees with the file order, or a turn of the conversation has
    no readable date: the last tick minus the turn's, as before (a turn erased since still
    counts as an interaction)."""
    by_conv: dict[str, list[tuple[int, int, datetime | None]]] = {}
    for i, (conv, tick, _omega) in turns:
        by_conv.setdefault(conv, []).append((i, tick, _when(corpus.frontmatter[i].get("date"))))
    out: dict[int, int] = {}
    for rows in by_conv.values():
        by_tick = sorted(rows, key=lambda r: (r[1], r[0]))
        times = [when for _, _, when in by_tick if when is not None]
        if len(times) < len(rows) or all(a <= b for a, b in pairwise(times)):
            last = by_tick[-1][1]  # time agrees with the file (or is unknown): by tick
            out.update((i, last - tick) for i, tick, _ in rows)
            continue
        by_time = sorted(((when, tick, i) for i, tick, when in rows if when is not None))
        out.update((i, len(by_time) - 1 - n) for n, (_, _, i) in enumerate(by_time))
    return out


def archive_decisions(corpus: Corpus, today: date) -> tuple[ArchiveDecision, ...]:
    """Every note to archive as of `today`, sorted by (rule order, path)."""
    decisions: list[ArchiveDecision] = []
    cited: set[str] = set()
    for i in range(len(corpus.ids)):
        fm = corpus.frontmatter[i]
        fact = fact_from_frontmatter(fm)
        if fact is None:
            continue
        if fact.tier == "L2" and archivable(fact, today):
            if not corpus.archived[i]:
                age = (today - fact.last_confirmed).days
                decisions.append(ArchiveDecision(
                    corpus.paths[i], corpus.ids[i], "lifecycle",
                    f"last confirmed {age} days ago (> {ARCHIVE_DAYS}), confidence "
                    f"{fact.confidence:.3f} < {ARCHIVE_CONFIDENCE}, {fact.confirmations} "
                    f"confirmation(s) < {ARCHIVE_CONFIRMATIONS}"))
            continue
        sources = fm.get("sources")
        for s in sources if isinstance(sources, list) else []:
            target = link_target(s)
            if target:
                cited.add(target if target.endswith(".md") else target + ".md")
    turns = [(i, t) for i in range(len(corpus.ids)) if (t := _turn(corpus.frontmatter[i]))]
    newer_of = _newer(corpus, turns)
    for i, (_conv, _tick, omega) in turns:
        newer = newer_of[i]
        if corpus.archived[i] or corpus.paths[i] in cited:
            continue
        if survival.archivable(omega, newer):
            decisions.append(ArchiveDecision(
                corpus.paths[i], corpus.ids[i], "dmf",
                f"Ω_eff = {survival.effective(omega, newer):.4f} < {survival.ARCHIVE_BELOW} "
                f"(Ω = {omega:.4f}, {newer} newer interactions, half-life "
                f"{survival.half_life(omega):.0f})"))
    return tuple(sorted(decisions, key=lambda d: (RULES.index(d.rule), d.note, d.id)))
