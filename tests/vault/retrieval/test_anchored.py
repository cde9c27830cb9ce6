"""A time named without a year, in a memory whose notes stop before it (vault/retrieval/
anchored.py): "what broke on Monday" asked months after the notes means the latest Monday the
notes hold, not a Monday no note is of; a time the notes do hold is never moved; a time named
with its year or counted from today is never moved. Through the real demo vault and `rmh`
as a user runs it, and through generated vaults on the search engine."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pytest

from vault.notes.clocks import WEEKDAYS
from vault.notes.times_asked import asked_ranges
from vault.retrieval.anchored import anchored
from vault.retrieval.pipeline import SearchEngine
from vault.retrieval.when import SLACK
from vault.storage.corpus import Corpus

from ..retrieval_fixtures import make_corpus

ROOT = Path(__file__).resolve().parents[3]
NOW = date(2026, 12, 7)  # a Monday, months after every note below
SERVICES = ("auth", "billing", "search", "gateway", "ledger", "export", "ingest")
FAULTS = ("an expired certificate", "a full disk", "a queue backlog", "a memory leak",
          "a bad deploy", "a DNS timeout")


def rmh(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=True)


def test_the_demo_answers_what_broke_on_monday_with_the_outage(tmp_path: Path) -> None:
    """Session 40's new user: `rmh demo`, then "what broke on Monday" put Bob's note ("He runs
    the Monday incident review") above the outage that happened on a Monday, in `search` and
    in `ask` (whose answer set the search's head leads)."""
    demo = tmp_path / "demo"
    rmh("demo", str(demo), cwd=tmp_path)
    for question, want in (("what broke on Monday", "Incidents/2026-03-02 auth outage.md"),
                           ("what went wrong on Tuesday",
                            "Incidents/2026-03-03 billing delay.md")):
        got = json.loads(rmh("--vault", str(demo), "search", question, "-k", "3", "--json",
                             "--no-learn", cwd=tmp_path).stdout)
        assert got["hits"][0]["note"] == want, (question, [h["note"] for h in got["hits"]])
        asked = json.loads(rmh("--vault", str(demo), "ask", question, "--json",
                               cwd=tmp_path).stdout)
        assert asked["notes"][0] == want, (question, asked["notes"][:3])


def incidents(rng: random.Random, days: list[date], weekday: str) -> Corpus:
    """One incident note per day of `days` (frontmatter date, "On <its weekday> the ...")
    and two undated notes that say `weekday` as a habit, short (so BM25 prefers them: "broke"
    is in no note, as in the demo)."""
    rows = [(f"incident {i}", f"On {WEEKDAYS[d.weekday()].title()} the "
                              f"{rng.choice(SERVICES)} service went down with "
                              f"{rng.choice(FAULTS)} during the rollout and was restored.")
            for i, d in enumerate(days)]
    rows += [("review", f"The {weekday.title()} review of the week's changes."),
             ("standup", f"Standup every {weekday.title()} at ten.")]
    c = make_corpus(rows)
    return replace(c, frontmatter=tuple([{"date": d.isoformat()} for d in days] + [{}, {}]))


@pytest.mark.parametrize("seed", range(6))
def test_a_weekday_the_notes_stop_before_is_the_latest_one_they_hold(seed: int) -> None:
    rng = random.Random(seed)
    weekday = rng.choice(WEEKDAYS[:5])
    start = NOW - timedelta(days=rng.randint(120, 400))
    days = sorted({start + timedelta(days=rng.randint(0, 60)) for _ in range(12)})
    same = [d for d in days if WEEKDAYS[d.weekday()] == weekday]
    if not same:  # make sure the weekday asked is among the notes' days
        d = days[-1] + timedelta(days=(WEEKDAYS.index(weekday) - days[-1].weekday()) % 7)
        days, same = [*days, d], [d]
    corpus = incidents(rng, days, weekday)
    engine = SearchEngine.lexical()
    q = f"what broke on {weekday.title()}?"
    hits = engine.search(corpus, q, 3, now=NOW).hits
    want = f"incident {days.index(same[-1])}"
    assert hits[0].title == want, (q, [h.title for h in hits])
    assert "the latest the notes found hold" in hits[0].receipt["stages"]["when"]
    # a note of the Monday asked (the latest one) keeps the question's own reading
    last = NOW - timedelta(days=(NOW.weekday() - WEEKDAYS.index(weekday)) % 7 or 7)
    fresh = incidents(random.Random(seed), [*days, last], weekday)
    got = engine.search(fresh, q, 3, now=NOW).hits
    assert got[0].title == f"incident {len(days)}", [h.title for h in got]
    assert "the latest the notes found hold" not in got[0].receipt["stages"]["when"]


@pytest.mark.parametrize("seed", range(4))
def test_only_times_named_without_a_year_move(seed: int) -> None:
    rng = random.Random(seed)
    held = [date(2024, 6, 3), date(2024, 3, 15), date(2024, 12, 25), date(2024, 5, 8)]
    old = sorted([d.toordinal() for d in held] + [
        date(2024, rng.randint(1, 12), rng.randint(1, 28)).toordinal() for _ in range(20)])
    days = np.array(rng.sample(old, len(old)), dtype=np.int64)  # in any order
    for q in ("what happened on Monday?", "what did we decide in March?",
              "what happened at Christmas?", "what happened on 8 May?"):
        asked = asked_ranges(q, NOW)
        got, moved = anchored(asked, days, NOW, SLACK)
        assert moved == tuple(r.expr for r in asked), q
        for r in got:  # the latest of that name holding a note, before the one asked
            assert r.start < asked[0].start
            assert any(r.start.toordinal() <= d <= r.end.toordinal() for d in old), q
    for q in ("what happened in March 2026?", "what happened two weeks ago?",
              "what happened last week?", "what happened in the last 30 days?",
              "what happened on 2026-03-19?", "what happened in 2025?"):
        asked = asked_ranges(q, NOW)
        assert asked, q
        assert anchored(asked, days, NOW, SLACK) == (asked, ()), q
    no_days = np.zeros(0, dtype=np.int64)
    asked = asked_ranges("what happened on Monday?", NOW)
    assert anchored(asked, no_days, NOW, SLACK) == (asked, ())
