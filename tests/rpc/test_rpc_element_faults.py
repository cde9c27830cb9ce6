"""A bug outside a method's own call costs that element's answer alone.

`call_method` turns whatever a method raises into an error for its id, but an element could
still fail around it: its result failing as it is encoded with anything but TypeError,
ValueError or RecursionError (a mapping another task changes while it is read: RuntimeError),
an exception map that answers with no error object. On main such a failure left its task,
the batch's task group failed, and the server's last resort answered the whole frame with
one -32603, id null: every sibling's answer lost, a notification's bug answered. Now each
such element is -32603 for its own id (nothing for a notification), the others answered."""

from __future__ import annotations

import json
from typing import Any

import anyio

from rpc import Dispatcher, InFlight

from .conftest import SPEC_METHODS


class Changing(dict[str, Any]):
    """A result that fails as it is read, as a dict changed during iteration does."""

    def items(self) -> Any:
        raise RuntimeError("dictionary changed size during iteration")


async def changing() -> Any:
    return {"outer": Changing(a=1)}


async def refused() -> None:
    raise KeyError("a domain error the map mistakes")


def bad_map(exc: Exception) -> Any:
    return "not an error object" if isinstance(exc, KeyError) else None  # a mapper's bug


METHODS = {**SPEC_METHODS, "changing": changing, "refused": refused}


def answer(frame: list[dict[str, Any]] | dict[str, Any]) -> Any:
    d = Dispatcher(METHODS, map_exception=bad_map)
    flight = InFlight()
    out = anyio.run(d.dispatch, json.dumps(frame).encode(), flight)
    assert flight.running == 0  # every id freed
    return None if out is None else json.loads(out)


def req(method: str, rid: Any = None, *params: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": list(params)}
    return msg if rid is None else {**msg, "id": rid}


def test_a_batch_answers_every_request_when_one_fails_outside_its_method() -> None:
    out = answer([req("echo", 1, "a"), req("changing", 2), req("refused", 3),
                  req("changing"), req("refused"), req("sum", 4, 1, 2)])
    assert [a["id"] for a in out] == [1, 2, 3, 4]
    assert out[0]["result"] == "a" and out[3]["result"] == 3
    for failed in out[1:3]:
        assert failed["error"] == {"code": -32603, "message": "Internal error"}


def test_a_single_request_failing_outside_its_method_is_answered_under_its_id() -> None:
    for method in ("changing", "refused"):
        assert answer(req(method, "x")) == {
            "jsonrpc": "2.0", "error": {"code": -32603, "message": "Internal error"},
            "id": "x"}
        assert answer(req(method)) is None  # a notification is never answered
