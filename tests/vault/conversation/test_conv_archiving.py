"""Archive decisions: the 4D rule for L2 facts and DMF Omega_eff for turns (reversible)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from tests.vault.conversation.test_conv_facts import TABS
from vault import Corpus, Vault, archive_decisions, ingest_conversations
from vault.conversation import survival


def corpus(notes: Sequence[tuple[str, Mapping[str, Any]]],
           archived: frozenset[str] = frozenset()) -> Corpus:
    """A hand-built corpus: ids 1..n in the given order."""
    n = len(notes)
    paths = tuple(p for p, _ in notes)
    titles = tuple(p.rsplit("/", 1)[-1][:-3] for p in paths)
    return Corpus(1, tuple(range(1, n + 1)), paths, titles, ((),) * n, ("",) * n,
                  tuple(fm for _, fm in notes), ("0",) * n, (), tuple(p in archived for p in paths))


def fact(conf: float, count: int, last: str, tier: str = "L2",
         sources: list[str] | None = None) -> dict[str, Any]:
    return {"tier": tier, "subject": "s", "key": "lives_in", "value": "x", "confidence": conf,
            "first_observed": "2023-01-01", "last_confirmed": last, "confirmations": count,
            "sessions": ["s1"], "sources": sources or []}


def turn(tick: int, omega: float, conv: str = "c") -> dict[str, Any]:
    return {"tier": "L0", "conversation": conv, "tick": tick, "omega": omega}


def test_lifecycle_rule_needs_all_three_conditions() -> None:
    today = date(2024, 1, 2) + timedelta(days=366)
    notes = [
        ("f/old weak single.md", fact(0.5, 1, "2024-01-02")),
        ("f/just a year.md", fact(0.5, 1, (today - timedelta(days=365)).isoformat())),
        ("f/confident.md", fact(0.6, 1, "2024-01-02")),
        ("f/confirmed twice.md", fact(0.5, 2, "2024-01-02")),
        ("f/rule.md", fact(0.5, 1, "2024-01-02", tier="L3")),
        ("f/already.md", fact(0.5, 1, "2024-01-02")),
    ]
    got = archive_decisions(corpus(notes, frozenset({"f/already.md"})), today)
    assert [(d.note, d.rule) for d in got] == [("f/old weak single.md", "lifecycle")]
    assert got[0].id == 1 and "366 days" in got[0].reason and "0.500 < 0.6" in got[0].reason


def test_dmf_archives_weak_old_turns_counted_in_newer_interactions() -> None:
    # Omega = 0.2: H = 180, Omega_eff < 0.05 once 2^(-dn/180) < 0.25, i.e. dn > 360.
    weak, strong = 0.2, 0.9
    notes = [(f"t/{k}.md", turn(k, weak if k < 2 else strong)) for k in range(3)]
    notes.append(("t/last.md", turn(362, weak)))
    notes.append(("other/0.md", turn(0, weak, conv="d")))  # its own conversation: dn = 0
    got = archive_decisions(corpus(notes), date(2030, 1, 1))
    assert [d.note for d in got] == ["t/0.md", "t/1.md"]
    assert survival.effective(weak, 361) < survival.ARCHIVE_BELOW <= survival.effective(weak, 360)
    assert got[0].rule == "dmf" and "362 newer interactions" in got[0].reason
    cited = [*notes, ("f/keep.md", fact(0.9, 3, "2029-12-01", sources=["[[t/0|0]]"]))]
    assert [d.note for d in archive_decisions(corpus(cited), date(2030, 1, 1))] == ["t/1.md"]


def test_decisions_over_an_ingested_conversation(tmp_path: Path) -> None:
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, TABS)
        assert archive_decisions(v.corpus(), date(2024, 6, 1)) == ()
        later = archive_decisions(v.corpus(), date(2025, 6, 1))
        assert [d.note.rsplit("/", 1)[-1] for d in later] == [
            "payments api depends on auth service.md", "sarah lives in paris.md"]
        assert all(d.rule == "lifecycle" for d in later)
        assert later == archive_decisions(v.corpus(), date(2025, 6, 1))
