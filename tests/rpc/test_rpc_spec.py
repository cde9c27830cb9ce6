"""The JSON-RPC 2.0 specification's own examples (section 7), as golden tests.

Our errors carry an extra `data` member (allowed by the spec: "may be omitted"); it is removed
before comparing, everything else must match the specification exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from rpc import Dispatcher

EXAMPLES = json.loads((Path(__file__).parent / "spec_examples.json").read_text("utf-8"))


def _strip_data(message: Any) -> Any:
    if isinstance(message, list):
        return [_strip_data(m) for m in message]
    if isinstance(message, dict) and isinstance(message.get("error"), dict):
        error = {k: v for k, v in message["error"].items() if k != "data"}
        return {**message, "error": error}
    return message


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_spec_example(dispatcher: Dispatcher, example: dict[str, Any]) -> None:
    out = anyio.run(dispatcher.dispatch, example["request"].encode("utf-8"))
    if example["response"] is None:
        assert out is None
        return
    assert out is not None and out.endswith(b"\n") and out.count(b"\n") == 1
    assert _strip_data(json.loads(out)) == example["response"]


def test_batch_answers_keep_request_order(dispatcher: Dispatcher) -> None:
    frame = json.dumps(
        [{"jsonrpc": "2.0", "method": "echo", "params": [i], "id": i} for i in range(50)]
    )
    out = json.loads(anyio.run(dispatcher.dispatch, frame.encode()) or b"null")
    assert [r["id"] for r in out] == list(range(50))
    assert [r["result"] for r in out] == list(range(50))
