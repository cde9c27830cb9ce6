"""Which value of a single-valued key is the newest is decided by when it was said, not by
where its session stands in the file (CONV6, session 32: a file listing its 2024 session
before its 2023 one made the 2023 value carry `supersedes` and weakened the 2024 one; the same
sessions in date order gave the opposite). Generated: sessions on distinct dates (1969 to
9999, leap days among them, some with a UTC offset), each stating one of a few cities or
employers, in several file orders; every order must give the same fact notes, byte for
byte, and the newest one by date carries `supersedes`. (On main, a time with an offset among
naive ones was also compared by file position only.)"""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

from vault.conversation.events import build_events
from vault.conversation.fact_notes import fact_notes
from vault.conversation.facts import build_facts, conflict_groups, latest
from vault.conversation.formats import Conversation, Session, Turn

CITIES = ("Rome", "Paris", "Lisbon", "Oslo")
FIRMS = ("Acme", "Globex", "Initech")
DAYS = (datetime(1969, 7, 20, 20, 17), datetime(2024, 2, 29, 23, 59), datetime(2023, 3, 26, 2, 30),
        datetime(9999, 12, 31, 23, 0), datetime(2000, 2, 29, 0, 0), datetime(1970, 1, 1, 0, 0))


def utc(when: datetime) -> datetime:
    if when.tzinfo is None:
        return when
    try:
        return when.astimezone(UTC).replace(tzinfo=None)
    except OverflowError:  # past the year 9999 in UTC: as written
        return when.replace(tzinfo=None)


def sessions(seed: int) -> list[Session]:
    rnd = random.Random(seed)
    days = rnd.sample(DAYS, rnd.randint(2, 4))
    out = []
    for i, day in enumerate(days):
        when = day + timedelta(minutes=rnd.randint(0, 30))
        if rnd.random() < 0.5:  # a simple-format time with an offset, among naive UTC ones
            when = when.replace(tzinfo=timezone(timedelta(hours=rnd.randint(-12, 14))))
        said = (f"I live in {rnd.choice(CITIES)}." if rnd.random() < 0.7
                else f"I work at {rnd.choice(FIRMS)}.")
        turns = (Turn(f"s{i}-1", "Al", said, when, role="user"),
                 Turn(f"s{i}-2", "Bo", "Noted.", when + timedelta(minutes=1), role="user"))
        out.append(Session(f"s{i}", when, turns))
    return out


def facts_of(order: list[Session]) -> tuple[list[tuple[str, str]], dict[str, str]]:
    conv = Conversation("ab", tuple(order))
    records = build_facts(build_events(conv, use_nlp=False), use_nlp=False)
    newest = {f"{k[0]} {k[1]}": latest(g).fact.value for k, g in conflict_groups(records).items()}
    return fact_notes("ab", records, {}), newest


@pytest.mark.parametrize("seed", range(16))
def test_the_newest_value_is_the_one_said_last_by_time_in_any_file_order(seed: int) -> None:
    base = sessions(seed)
    by_time = sorted(base, key=lambda s: utc(s.when))
    want_notes, want_newest = facts_of(by_time)
    for order in itertools.islice(itertools.permutations(base), 6):
        assert facts_of(list(order)) == (want_notes, want_newest), [s.session_id for s in order]
    said = {"lives_in": "I live in ", "works_at": "I work at "}
    for key, prefix in said.items():  # the value stated on the latest date is the newest
        values = [t.text.removeprefix(prefix).rstrip(".") for s in by_time for t in s.turns
                  if t.speaker == "Al" and t.text.startswith(prefix)]
        if len(set(values)) > 1:
            assert want_newest[f"al {key}"].casefold() == values[-1].casefold()
