"""A model that writes back lines of the sub-question prompt (small local models do: the
question, "Partial answer so far: ...", its instructions) gives `ask` no sub-questions from
them; a real query among the echoes is still asked, and so is a title the model names (a
name to follow, as test_ask_truncated.py asks "Acme"). Before NEWUSER11
(session 40) each echoed line was searched as a sub-question: pass 2 searched the partial
answer itself ("Partial answer so far: ...") and the question again. A real HTTP endpoint on
loopback (tests/harness/llm_stub_endpoint.py) and a real vault."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.ask import LoopParams, ask
from harness.config import LlmSection
from harness.llm import Broker
from harness.vault_ops import VaultCalls

from .llm_stub_endpoint import ChatEndpoint, Reply
from .vault_calls import vault_calls

NOTES = {"people/Alice.md": "Alice works as an engineer at [[Acme]].\n",
         "orgs/Acme.md": "Acme is a robotics company. Dana founded it in 1999.\n",
         "people/Dana.md": "Dana was born in Lisbon and studied physics.\n"}
QUESTION = "Where was the person born who founded Acme?"


@pytest.fixture
def library(tmp_path: Path) -> Iterator[VaultCalls]:
    with vault_calls(tmp_path / "vault", NOTES) as calls:
        yield calls


def _prompt_lines(user: str) -> list[str]:
    return [ln for ln in user.splitlines() if ln.strip()]


@pytest.mark.parametrize("extra", ["", "Lisbon birth records"])
@pytest.mark.parametrize("pick", ["all", "question and answer", "bare question"])
def test_lines_the_prompt_holds_are_no_sub_questions(library: VaultCalls, pick: str,
                                                     extra: str) -> None:
    sent: list[list[str]] = []

    def script(n: int, body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        if "search queries" not in user:
            return Reply(text="Acme is a robotics company.")  # a partial answer
        lines = _prompt_lines(user)
        if pick == "question and answer":
            lines = [ln for ln in lines if ln.startswith(("Question:", "Partial answer"))]
        elif pick == "bare question":  # the question without its "Question: "
            lines = [QUESTION]
        lines = [ln for ln in lines if not ln.startswith("- ")]  # titles: test_ask_truncated
        sent.append(lines)
        return Reply(text="\n".join([*lines, extra]))

    with ChatEndpoint(script) as ep, Broker.from_config(
        LlmSection(base_url=ep.url, model="stub", retry_backoff_s=0.0)
    ) as broker:
        result = ask(QUESTION, library, broker, broker.new_budget(), k=2,
                     params=LoopParams(pool=1, feedback=False))
    assert sent, "the model was never asked for sub-questions"
    asked = [q for step in result.trace for q in step["sub_questions"]]
    echoes = {ln.strip().casefold() for batch in sent for ln in batch}
    assert not [q for q in asked if q.casefold() in echoes], asked
    assert (extra in asked) if extra else True, asked  # (the rest: the loop's own queries)
