"""A fact note whose dates are ISO text with a time ("2023-02-28T23:30:00-05:00", "...Z",
as another tool or a hand edit writes them) is a fact, judged by `rmh lifecycle` on the day
as written, exactly as the same note dated by day; before, it was no fact and never archived.
Judged at pinned days across leap days, before 1970 and far ahead: the same answer twice."""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path

from vault import Vault
from vault.conversation.archiving import archive_decisions

OFFSETS = ("", "Z", "+00:00", "-05:00", "+14:00", "-12:00", "+05:30")


def _note(name: str, last: str, confidence: float, confirmations: int) -> str:
    return (f"---\ntier: L2\nkey: k{name}\nsubject: s\nvalue: v\nconfidence: {confidence}\n"
            f"confirmations: {confirmations}\nfirst_observed: 1960-01-01\n"
            f"last_confirmed: {last}\n---\nfact {name}\n")


def test_a_fact_dated_with_a_time_is_judged_as_the_same_fact_dated_by_day(
        tmp_path: Path) -> None:
    rng = random.Random(5)
    days = [date(1965, 1, 1) + timedelta(days=rng.randrange(40000)) for _ in range(30)]
    days += [date(2024, 2, 29), date(2023, 2, 28), date(1969, 12, 31)]
    with Vault.init(tmp_path / "v") as v:
        for k, day in enumerate(days):
            conf, count = rng.choice((0.5, 0.7)), rng.choice((1, 2))
            stamp = (f"{day.isoformat()}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00"
                     f"{rng.choice(OFFSETS)}")
            v.write(f"day/{k:02d}.md", _note(f"d{k}", day.isoformat(), conf, count))
            v.write(f"time/{k:02d}.md", _note(f"t{k}", stamp, conf, count))
        corpus = v.corpus()
        for today in (date(2025, 3, 1), date(2025, 2, 28), date(1970, 1, 1),
                      date(9999, 12, 31), date(1, 1, 1), *days[:5]):
            got = archive_decisions(corpus, today)
            assert got == archive_decisions(v.corpus(), today)  # pinned: the same answer
            by_day = [(d.note[4:], d.reason) for d in got if d.note.startswith("day/")]
            by_time = [(d.note[5:], d.reason) for d in got if d.note.startswith("time/")]
            assert by_time == by_day, today
            assert all(int(d.reason.split()[2]) > 365 for d in got)
        assert archive_decisions(corpus, date(9999, 12, 31))  # the rule does archive some
