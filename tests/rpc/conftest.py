"""Shared fixtures for the rpc tests: the JSON-RPC 2.0 specification's example methods."""

from __future__ import annotations

from typing import Any

import pytest

from rpc import AsyncMethod, Dispatcher


async def subtract(minuend: int, subtrahend: int) -> int:
    return minuend - subtrahend


async def sum_(*args: int) -> int:
    return sum(args)


async def ignore(*args: Any, **kwargs: Any) -> None:
    return None


async def get_data() -> list[Any]:
    return ["hello", 5]


async def explode() -> None:
    raise RuntimeError("secret text /home/user/private/path")


async def echo(value: Any = None) -> Any:
    return value


SPEC_METHODS: dict[str, AsyncMethod] = {
    "subtract": subtract,
    "sum": sum_,
    "update": ignore,
    "notify_hello": ignore,
    "notify_sum": ignore,
    "get_data": get_data,
    "explode": explode,
    "echo": echo,
}


@pytest.fixture
def dispatcher() -> Dispatcher:
    return Dispatcher(SPEC_METHODS)
