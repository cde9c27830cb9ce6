"""A time named by the calendar ("March 2026", "2026-03-19", "in March") has the calendar's
bounds: every note dated inside it goes above a note dated just outside it (retrieval/when.py
EDGE), while a time counted from today ("two weeks ago", "last week") keeps its loose edge;
and a query that names only a time is not re-voted by its frame words' passages
(pipeline.py, second_pass). Session 40's new user: "what happened in March 2026?" put the
1 April planning meeting above the March retro and the March incident."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from vault import NullUsage, Vault
from vault.notes.times_asked import asked_ranges, by_calendar
from vault.retrieval.when import EDGE, SLACK, closeness

NOW = date(2026, 12, 7)
NAMED = ("what happened in March 2026?", "what happened on 2026-03-19?", "in March",
         "what happened on 8 May?", "what happened in 2025?", "at Christmas", "on Monday")
COUNTED = ("what happened two weeks ago?", "what happened last week?", "last month",
           "what happened in the last 30 days?", "three months ago", "yesterday")


def test_a_note_outside_a_calendar_time_is_below_every_note_inside_it() -> None:
    for q in NAMED + COUNTED:
        asked = asked_ranges(q, NOW)
        assert asked, q
        r = asked[0]
        slack = SLACK[r.granularity]
        named = q in NAMED
        assert by_calendar(r.expr) is named, q
        for gap in range(1, slack):
            for day in (r.start - timedelta(days=gap), r.end + timedelta(days=gap)):
                m = closeness(asked[:1], day, ())
                want = (EDGE if named else 1.0) * (1.0 - gap / slack)
                assert m == pytest.approx(want), (q, gap)
                assert m < 1.0
        assert closeness(asked[:1], r.start, ()) == 1.0 == closeness(asked[:1], r.end, ())


SENTENCES = ("The team met in the small room.", "Notes were taken by the on-call engineer.",
             "Action items went to the tracker.", "Everyone agreed on the next steps.",
             "The dashboard was shared on screen.", "Questions were answered at the end.")


def write_vault(root: Path, rng: random.Random) -> list[str]:
    """Notes of several sentences: four dated in March 2026, one on 1 April 2026 whose words
    match the question's ("in", "2026") best, others later; returns the March notes."""
    march = []
    for i, day in enumerate(sorted(rng.sample(range(2, 31), 4))):
        name = f"Meetings/2026-03-{day:02d} meeting {i}.md"
        body = " ".join(rng.sample(SENTENCES, 4))
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"---\ndate: 2026-03-{day:02d}\n---\n# Meeting {i}\n{body}\n")
        march.append(name)
    (root / "Meetings/2026-04-01 Quarterly planning.md").write_text(
        "---\ndate: 2026-04-01\n---\n# 2026-04-01 Quarterly planning\nGoals for Q2 2026 in "
        "production. Security review in May 2026. Hiring in 2026 in the backend team.\n"
        + " ".join(rng.sample(SENTENCES, 3)) + "\n")
    for j, month in enumerate((5, 6, 8)):
        (root / f"Meetings/2026-{month:02d}-10 sync {j}.md").write_text(
            f"---\ndate: 2026-{month:02d}-10\n---\n# Sync {j}\n"
            + " ".join(rng.sample(SENTENCES, 4)) + "\n")
    return march


@pytest.mark.parametrize("seed", range(3))
def test_what_happened_in_a_month_lists_that_month_first(tmp_path: Path, seed: int) -> None:
    march = write_vault(tmp_path, random.Random(seed))
    clock = datetime(2026, 12, 7, 12, tzinfo=UTC).timestamp()
    with Vault.init(tmp_path, usage=NullUsage(lambda: clock)) as v:
        for q in ("what happened in March 2026?", "What did we discuss in March?"):
            hits = v.search(q, 6, learn=False).hits
            assert sorted(h.note for h in hits[:4]) == sorted(march), (
                q, [h.note for h in hits])
