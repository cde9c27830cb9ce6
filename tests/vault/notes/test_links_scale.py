"""A path link among many notes of one file name (session 30 CHATPERF): a chat ingest gives
every day's turn at 08:00 the name `chat 08-00`, and every turn links its neighbours by path.
Resolving such a link looks the path up, not every note of that name: its CPU cost does not
grow with them (main: 1.6 ms a link among 2,000, 25 us among 20)."""

from __future__ import annotations

import time

from vault.notes.links import Resolver


def _cpu_per_link(days: int) -> float:
    paths = {i + 1: f"conversations/chat/{2000 + i // 336}-{i // 28 % 12 + 1:02d}-"
                    f"{i % 28 + 1:02d}/chat 08-00.md" for i in range(days)}
    resolver = Resolver.build(paths, {})
    links = [(p[:-3], i) for i, p in paths.items()]
    best = float("inf")
    for _ in range(3):
        t = time.process_time()
        for target, want in links:
            assert resolver.resolve_wiki(target, "conversations/chat/x.md") == want
        best = min(best, (time.process_time() - t) / days)
    return best


def test_a_path_link_costs_the_same_among_many_notes_of_its_name() -> None:
    few, many = _cpu_per_link(50), _cpu_per_link(2000)
    assert many < 5 * few + 2e-5, (few, many)
