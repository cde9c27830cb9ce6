"""Cancellation never leaves a request unanswered by mistake (PROTO3, session 30).

Generated interleavings of a target request and a cancel of it (`$/cancelRequest` or MCP's
`notifications/cancelled`, as a notification or with an id, ids of every JSON type), the cancel
sent before, while or after the target runs, or in one batch with it (either order), through
the one dispatch path with one connection's `InFlight`. The only request left without an
answer is a target alone in its frame that MCP's notification cancelled while it ran (MCP:
the receiver does not respond). Before: `notifications/cancelled` sent with an id cancelled the
target, which was never answered, while the cancel was answered `result: null`; and a batch of
a request and MCP's cancel of it got no answer at all.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from rpc import Dispatcher, InFlight, id_key

IDS = st.one_of(st.none(), st.integers(-(2**53), 2**53), st.text(max_size=6),
                st.floats(allow_nan=False, allow_infinity=False, width=32))
WHEN = ("before", "during", "after", "batch-after", "batch-before")


def expected(when: str, method: str, cancel_has_id: bool) -> tuple[Any, Any]:
    """(the target's answer: "done", -32800 or None for none; the cancel's answer)."""
    if method == "notifications/cancelled" and cancel_has_id:
        return "done", -32601  # a notification method called as a request: refused, no effect
    cancel_answer = ("ok" if cancel_has_id else None)
    if when in ("before", "after", "batch-before"):
        return "done", cancel_answer  # nothing in flight to cancel
    if when == "during" and method == "notifications/cancelled":
        return None, cancel_answer  # MCP: a cancelled request gets no response
    return -32800, cancel_answer


def outcome(answer: dict[str, Any] | None) -> Any:
    if answer is None:
        return None
    if "error" in answer:
        return answer["error"]["code"]
    return answer["result"] if answer["result"] == "done" else "ok"


async def play(when: str, method: str, target_id: Any, cancel_id: Any,
               cancel_has_id: bool) -> list[dict[str, Any]]:
    release = anyio.Event()
    started = anyio.Event()

    async def block() -> str:
        started.set()
        await release.wait()
        return "done"

    d = Dispatcher({"block": block})
    flight = InFlight(max_running=5)
    answers: list[dict[str, Any]] = []
    target = {"jsonrpc": "2.0", "method": "block", "id": target_id}
    name = "requestId" if method == "notifications/cancelled" else "id"
    cancel: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": {name: target_id}}
    if cancel_has_id:
        cancel["id"] = cancel_id

    async def send(message: Any) -> None:
        out = await d.dispatch(json.dumps(message).encode(), flight)
        if out is not None:
            got = json.loads(out)
            answers.extend(got if isinstance(got, list) else [got])

    def answered() -> bool:
        return any(id_key(a["id"]) == id_key(target_id) for a in answers)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            if when == "before":
                await send(cancel)
                tg.start_soon(send, target)
                release.set()
            elif when == "during":
                tg.start_soon(send, target)
                await started.wait()
                await send(cancel)
                release.set()
            elif when == "after":
                tg.start_soon(send, target)
                release.set()
                while not answered():
                    await anyio.sleep(0)
                await send(cancel)
            else:
                release.set()
                await send([target, cancel] if when == "batch-after" else [cancel, target])
    assert flight.running == 0
    return answers


@settings(max_examples=80, deadline=None)
@given(when=st.sampled_from(WHEN),
       method=st.sampled_from(["$/cancelRequest", "notifications/cancelled"]),
       target_id=IDS, cancel_id=IDS, cancel_has_id=st.booleans())
@example(when="during", method="notifications/cancelled", target_id=3, cancel_id=177,
         cancel_has_id=True)
@example(when="batch-after", method="notifications/cancelled", target_id="s1", cancel_id=None,
         cancel_has_id=False)
def test_every_request_is_answered_unless_mcp_cancelled_it_alone(
        when: str, method: str, target_id: Any, cancel_id: Any, cancel_has_id: bool) -> None:
    assume(not cancel_has_id or id_key(cancel_id) != id_key(target_id))
    answers = anyio.run(play, when, method, target_id, cancel_id, cancel_has_id)
    by_id: dict[str, list[dict[str, Any]]] = {}
    for a in answers:
        by_id.setdefault(id_key(a["id"]), []).append(a)
    want_target, want_cancel = expected(when, method, cancel_has_id)
    target_answers = by_id.pop(id_key(target_id), [])
    assert len(target_answers) <= 1, answers
    assert outcome(target_answers[0] if target_answers else None) == want_target, answers
    cancel_answers = by_id.pop(id_key(cancel_id), []) if cancel_has_id else []
    assert len(cancel_answers) <= 1 and not by_id, answers
    assert outcome(cancel_answers[0] if cancel_answers else None) == want_cancel, answers
    if want_cancel == -32601:
        assert cancel_answers[0]["error"]["data"]["method"] == "notifications/cancelled"
