"""A context line names what a turn's time words mean ("yesterday = 2024-05-06"), but not a
date the turn already writes: a Claude Code turn citing `[[2026-03-02 auth outage]]` was
recalled by the prompt hook as "... auth outage]]). (2026-03-02 = 2026-03-02)"."""

from __future__ import annotations

from datetime import date, datetime

from vault.conversation.items import Item


def _item(dates: tuple[tuple[str, date, date], ...]) -> Item:
    return Item(1, "c", "s", "t1", "Ann", datetime(2026, 3, 3, 9, 30), "text", (), dates)


def test_a_date_the_turn_writes_is_not_annotated() -> None:
    day = date(2026, 3, 2)
    assert _item((("2026-03-02", day, day),)).render() == "[2026-03-03 09:30] Ann: text"
    assert _item((("yesterday", day, day),)).render() == (
        "[2026-03-03 09:30] Ann: text (yesterday = 2026-03-02)")
    both = _item((("2026-03-02", day, day), ("last week", date(2026, 2, 23), date(2026, 3, 1))))
    assert both.render().endswith("text (last week = 2026-02-23..2026-03-01)")
    assert _item((("2026-03-02", day, date(2026, 3, 4)),)).render().endswith(
        "(2026-03-02 = 2026-03-02..2026-03-04)")
    assert _item((("2026-03-02", day, day),)).render(labels=False) == "Ann: text"
