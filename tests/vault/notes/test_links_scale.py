"""A path link among many notes of one file name (session 30 CHATPERF): a chat ingest gives
every day's turn at 08:00 the name `chat 08-00`, and every turn links its neighbours by path.
Resolving such a link looks the path up, not every note of that name (main scanned them all:
1.6 ms a link among 2,000, 25 us among 20, NOTES-CHATPERF). Counted, not timed: the scan of a
name's notes (`Resolver._named`) is never asked for when the link's path is a note."""

from __future__ import annotations

from typing import Any

import pytest

from vault.notes.links import Resolver


@pytest.mark.parametrize("days", [1, 50, 2000])
def test_a_path_link_is_looked_up_not_scanned_among_notes_of_its_name(
        days: int, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = {i + 1: f"conversations/chat/{2000 + i // 336}-{i // 28 % 12 + 1:02d}-"
                    f"{i % 28 + 1:02d}/chat 08-00.md" for i in range(days)}
    resolver = Resolver.build(paths, {})
    scans: list[str] = []
    named = Resolver._named

    def counted(self: Resolver, name: str) -> Any:
        scans.append(name)
        return named(self, name)

    monkeypatch.setattr(Resolver, "_named", counted)
    for want, path in paths.items():
        assert resolver.resolve_wiki(path[:-3], "conversations/chat/x.md") == want
        assert resolver.resolve_wiki("/" + path[:-3], "conversations/chat/x.md") == want
    assert resolver.resolve_wiki("chat 08-00", "conversations/chat/x.md") is not None
    assert scans == ["chat 08-00"]  # only the bare name, which must choose among them
