"""A pair given more than once in one rlm_batch is sent once (PLUG5, session 31): each copy
was sent (up to five at once, each a call of the exec's budget) and answered apart, so one
batch gave different answers to the same pair, and a batch of 10 copies with one call left
passed the "refused before anything is sent" check, sent one and raised RlmBudgetExceeded.
Real `openai` client against a real endpoint on loopback; requests counted there."""

from __future__ import annotations

import pytest

from harness.config import LlmSection
from harness.llm import Broker

from .llm_stub_endpoint import ChatEndpoint, Reply

PAIRS = {"a": ("slice a", "question a"), "b": ("slice b", "question a"),
         "c": ("slice a", "question c")}
BATCHES = ["aaaaaaaaaa", "ababa", "abc" * 5, "cba" + "a" * 12, "a", "abcabcabcabcabcabcabcabc"]


@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("left", ["exactly", "plenty"])
def test_each_distinct_pair_is_sent_once(batch: str, left: str) -> None:
    distinct = len(set(batch))
    with ChatEndpoint(lambda n, body: Reply(text=f"answer {n}", delay_s=0.05)) as ep, \
            Broker.from_config(LlmSection(base_url=ep.url, model="m")) as broker:
        budget = broker.new_budget()
        spent = budget.limit - distinct if left == "exactly" else 0
        for i in range(spent):
            broker.call("other", f"q{i}", budget)
        before = ep.count
        answers = broker.batch([PAIRS[k] for k in batch], budget)
        assert ep.count - before == distinct and budget.calls == spent + distinct
        assert ep.max_in_flight <= 5
    by_pair = {k: {a for k2, a in zip(batch, answers, strict=True) if k2 == k} for k in batch}
    assert all(len(one) == 1 for one in by_pair.values()), by_pair  # the same pair, one answer
    assert len({a for (a,) in by_pair.values()}) == distinct
