"""An ordinary note's date as a context passage (vault/conversation/passages.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from vault.conversation.passages import note_date

MTIME = int(datetime(2026, 12, 1, tzinfo=UTC).timestamp() * 1e9)


def test_a_daily_note_is_dated_by_its_name_before_its_file_time() -> None:
    """As search dates it (retrieval/when.py name_day): a copied vault's file times are the
    day of the copy, its daily notes' names are not."""
    assert note_date({}, MTIME, "Daily/2023-03-25.md") == datetime(2023, 3, 25)
    assert note_date({"date": "2023-01-02"}, MTIME, "Daily/2023-03-25.md") == datetime(2023, 1, 2)
    assert note_date({}, MTIME, "2023-03-25/plain.md") == datetime(2026, 12, 1)
    assert note_date({}, MTIME) == datetime(2026, 12, 1)
