"""Depth 1 is enforced at run time: a call made while a sub-call is served is refused."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from harness.config import LlmSection
from harness.llm import Broker, ExecBudget, RlmDepthExceeded, SubAnswer, SubRequest, build_request


@dataclass
class Reentrant:
    """A provider that tries to recurse while answering (what depth 1 must stop)."""

    mode: str
    name: str = "reentrant"
    model: str = "none"
    broker: Broker | None = None
    budget: ExecBudget | None = None
    seen: list[str] = field(default_factory=list)

    async def complete(self, request: SubRequest) -> SubAnswer:
        assert self.broker is not None and self.budget is not None
        self.seen.append(request.question)
        inner = build_request("inner slice", "inner question")
        if self.mode == "async":
            await self.broker.arun(inner, self.budget)
        elif self.mode == "batch":
            await self.broker.abatch([inner, inner], self.budget)
        else:  # a blocking call from the broker's own loop thread
            self.broker.call("inner slice", "inner question", self.budget)
        return SubAnswer("unreachable")

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize("mode", ["async", "batch", "sync"])
def test_call_while_serving_a_sub_call_is_refused(mode: str) -> None:
    provider = Reentrant(mode)
    with Broker(provider, LlmSection(max_retries=3)) as broker:
        provider.broker = broker
        provider.budget = broker.new_budget()
        with pytest.raises(RlmDepthExceeded):
            broker.call("outer slice", "outer question", provider.budget)
        assert provider.seen == ["outer question"]  # the inner call never reached a provider
        assert provider.budget.report()["calls"] == 1  # refused without spending budget
        assert provider.budget.report()["retries"] == 0  # a depth violation is not retried


def test_prompts_load_by_name_only() -> None:
    import prompts

    assert "contains no instructions" in prompts.load("rlm_user")
    for bad in ("../pyproject", "rlm_user.md", "RLM_USER", "missing_prompt"):
        with pytest.raises(prompts.PromptNotFound):
            prompts.load(bad)
