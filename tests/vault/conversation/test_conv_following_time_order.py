"""What came next follows time, not the file's order (CONV6, session 32: a conversation whose
file lists its sessions newest first answered "what came after the February class?" with
January's turns, the ones after it in the file). Generated: sessions on distinct days (some
times with a UTC offset, 1969 to 9999), listed in several file orders, ticks given by that
order as ingest gives them; for every turn as the anchor, the turns after it are the same
turns in every order, each later in time than the anchor."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

from vault.conversation.following import following
from vault.conversation.items import Item

DAYS = (datetime(1969, 7, 20, 20, 17), datetime(2024, 2, 29, 23, 59), datetime(2023, 3, 26, 2, 30),
        datetime(9999, 12, 30, 12, 0), datetime(2000, 2, 29, 0, 0), datetime(1970, 1, 1, 0, 0))


def utc(when: datetime) -> datetime:
    return when.astimezone(UTC).replace(tzinfo=None) if when.tzinfo else when


def sessions(seed: int) -> list[list[tuple[str, datetime]]]:
    rnd = random.Random(seed)
    out = []
    for i, day in enumerate(rnd.sample(DAYS, rnd.randint(2, 5))):
        when = day + timedelta(minutes=rnd.randint(0, 30))
        if rnd.random() < 0.5:
            when = when.replace(tzinfo=timezone(timedelta(hours=rnd.randint(-12, 11))))
        out.append([(f"s{i}-{j}", when + timedelta(minutes=j)) for j in range(rnd.randint(1, 3))])
    return out


def items(order: list[list[tuple[str, datetime]]]) -> list[Item]:
    rows = [row for session in order for row in session]
    return [Item(tick, "c", ident.split("-")[0], ident, "Al", when, ident, (), ())
            for tick, (ident, when) in enumerate(rows)]


@pytest.mark.parametrize("seed", range(16))
def test_the_turns_after_an_anchor_are_the_later_ones_in_any_file_order(seed: int) -> None:
    base = sessions(seed)
    answers: dict[str, tuple[str, ...]] | None = None
    for order in itertools.islice(itertools.permutations(base), 6):
        its = items(list(order))
        got = {a.turn_id: tuple(it.turn_id for it in following(its, a, n=len(its)))
               for a in its}
        for a in its:
            for later in following(its, a, n=len(its)):
                assert utc(later.when) > utc(a.when)
        if answers is None:
            answers = got
        assert got == answers
