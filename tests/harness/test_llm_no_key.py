"""A model on api.openai.com (base_url unset, or spelt out) with no API key is one typed
error naming the setting, and nothing is sent (PLUG5, session 31): each attempt went out
with the placeholder key, so the user saw a 401 or, offline, "cannot reach", three times."""

from __future__ import annotations

import pytest

from harness.config import LlmSection
from harness.llm import Broker, LlmUnavailable

from .llm_stub_endpoint import ChatEndpoint

OPENAI = ["", "https://api.openai.com/v1", "https://API.OpenAI.com/v1/",
          " https://api.openai.com/v1/chat/completions\n", "https://api.openai.com:443/v1"]
NO_KEY = ["", "  ", "\n"]


@pytest.mark.parametrize("base_url", OPENAI)
@pytest.mark.parametrize("key", NO_KEY)
def test_openai_without_a_key_is_refused_before_any_request(base_url: str, key: str) -> None:
    section = LlmSection(base_url=base_url, api_key=key, model="gpt-4o-mini")
    with Broker.from_config(section) as broker:
        budget = broker.new_budget()
        with pytest.raises(LlmUnavailable, match=r"^api\.openai\.com needs an API key: set "
                           r"\$OPENAI_API_KEY or \[llm\] api_key"):
            broker.call("slice", "question", budget)
        # one attempt counted (as for a base_url that is no URL), final: no retry went out
        assert budget.calls == 1 and [e.outcome for e in broker.ledger] == ["unavailable"]


def test_a_local_server_needs_no_key() -> None:
    with ChatEndpoint() as ep, Broker.from_config(
            LlmSection(base_url=ep.url, model="m")) as broker:
        assert broker.call("slice", "q1", broker.new_budget()) == "answer to q1"
        assert ep.count == 1
