"""A hub with more backlinks than one result may hold (MAX_RESULT_ITEMS) is listed whole in
pages through every surface's `limit` and `offset` (before: only QuotaExceeded, whose
"ask for less" had no way to ask)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.vault_ops import MAX_RESULT_ITEMS, VaultCalls
from tests.harness.vault_calls import vault_calls
from vault import QuotaExceeded

REFERRERS = MAX_RESULT_ITEMS + 3


@pytest.fixture(scope="module")
def calls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VaultCalls]:
    root = tmp_path_factory.mktemp("hub") / "v"
    (root / "r").mkdir(parents=True)
    (root / "hub.md").write_text("# hub\n")
    for i in range(REFERRERS):
        (root / "r" / f"r{i:05d}.md").write_text("[[hub]]\n")
    with vault_calls(root) as calls:
        yield calls


def test_a_hub_s_backlinks_are_refused_whole_and_listed_in_pages(calls: VaultCalls) -> None:
    with pytest.raises(QuotaExceeded):
        calls.backlinks("hub")
    pages = [calls.backlinks("hub", limit=MAX_RESULT_ITEMS, offset=offset)
             for offset in range(0, REFERRERS + MAX_RESULT_ITEMS, MAX_RESULT_ITEMS)]
    assert [len(p) for p in pages] == [MAX_RESULT_ITEMS, 3, 0]
    assert [p for page in pages for p in page] == [f"r/r{i:05d}.md" for i in range(REFERRERS)]
    near = calls.neighbors("hub", limit=5, offset=REFERRERS - 2)
    assert near == [f"r/r{i:05d}.md" for i in range(REFERRERS - 2, REFERRERS)]
