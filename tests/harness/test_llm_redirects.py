"""Redirects count: each one the HTTP client follows is a call of the exec's budget, one is
followed per attempt, and a loop or a redirect to no http(s) URL is one typed error (PLUG5,
session 31): a 307 loop was 11 to 16 requests at the endpoint per counted call (32 and 47
for one rlm_call in two runs, hundreds for an exec's 15), reported as "cannot reach".
Requests counted at the endpoints, real `openai` client, real servers on loopback."""

from __future__ import annotations

from typing import Any

import pytest

from harness.config import LlmSection
from harness.llm import Broker, LlmUnavailable, RlmBudgetExceeded

from .llm_stub_endpoint import ChatEndpoint, Reply

LOOPS = [(status, shape) for status in (307, 308) for shape in ("self", "pair")]


def _moved(status: int, to: list[str]) -> Any:
    return lambda n, body: Reply(status=status, headers=(("Location", to[0]),))


@pytest.mark.parametrize(("status", "shape"), LOOPS)
def test_a_redirect_loop_costs_each_request_a_call_and_ends_typed(status: int,
                                                                    shape: str) -> None:
    to_a: list[str] = [""]
    to_b: list[str] = [""]
    with ChatEndpoint(_moved(status, to_b)) as a, ChatEndpoint(_moved(status, to_a)) as b:
        to_a[0] = a.url + "/chat/completions"
        to_b[0] = (a if shape == "self" else b).url + "/chat/completions"
        with Broker.from_config(LlmSection(base_url=a.url, model="m")) as broker:
            budget = broker.new_budget()
            with pytest.raises(LlmUnavailable, match="which is no endpoint to follow"):
                broker.call("slice", "q0", budget)
            assert a.count + b.count == budget.calls == 2  # one attempt, one redirect, final
            failures = 1
            while True:  # the same loop until the exec's budget is spent
                try:
                    broker.call("slice", f"q{failures}", budget)
                except LlmUnavailable:
                    failures += 1
                except RlmBudgetExceeded:
                    break
            assert a.count + b.count == budget.calls == budget.limit, (a.count, b.count)


def test_one_redirect_is_followed_and_counted() -> None:
    with ChatEndpoint(lambda n, body: Reply(text="tea")) as target:
        to = [target.url + "/chat/completions"]
        with ChatEndpoint(_moved(307, to)) as old, Broker.from_config(
                LlmSection(base_url=old.url, model="m")) as broker:
            budget = broker.new_budget()
            assert broker.call("slice", "q", budget) == "tea"
            assert (old.count, target.count, budget.calls) == (1, 1, 2)


@pytest.mark.parametrize("location", ["file:///etc/passwd", "ftp://127.0.0.1/x",
                                      "gopher://127.0.0.1:70/"])
def test_a_redirect_to_no_http_url_is_named(location: str) -> None:
    with ChatEndpoint(_moved(307, [location])) as ep, Broker.from_config(
            LlmSection(base_url=ep.url, model="m")) as broker:
        budget = broker.new_budget()
        with pytest.raises(LlmUnavailable, match="which is no endpoint to follow"):
            broker.call("slice", "q", budget)
        assert ep.count == 1 and budget.calls == 2  # charged before its URL is refused
