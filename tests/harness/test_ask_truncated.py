"""An endpoint that cuts the model's sub-questions at max_tokens (`finish_reason: length`):
`ask` keeps the whole lines and drops the cut one. Before LLMPLUG (session 28) the cut line
("Where was Dana bo") was searched as a sub-question, as if the model had written it."""

from __future__ import annotations

import json
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


@pytest.fixture
def library(tmp_path: Path) -> Iterator[VaultCalls]:
    with vault_calls(tmp_path / "vault", NOTES) as calls:
        yield calls


def _cut(text: str) -> bytes:
    msg = {"role": "assistant", "content": text}
    return json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "message": msg, "finish_reason": "length"}]}
                      ).encode()


@pytest.mark.parametrize("cut", ["1. Dana\n2. Where was Dana bo", "1. Dana\n2. Acme\n3. Li"])
def test_a_cut_line_of_sub_questions_is_not_asked(library: VaultCalls, cut: str) -> None:
    def script(n: int, body: dict[str, Any]) -> Reply:
        if "search queries" in body["messages"][1]["content"]:
            return Reply(raw=_cut(cut))
        return Reply(text="NOT FOUND")

    with ChatEndpoint(script) as ep, Broker.from_config(
        LlmSection(base_url=ep.url, model="stub", retry_backoff_s=0.0)
    ) as broker:
        result = ask("Where was the person born who founded Acme?", library, broker,
                     broker.new_budget(), k=1, params=LoopParams(pool=1, feedback=False))
    asked = [q for step in result.trace for q in step["sub_questions"]]
    whole = cut.splitlines()[:-1]
    assert asked and asked[:len(whole)] == [line.split(". ", 1)[1] for line in whole], asked
    assert not any("truncated" in q or q == cut.rsplit(". ", 1)[1] for q in asked), asked
