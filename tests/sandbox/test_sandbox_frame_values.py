"""A worker frame may hold at most `channel.MAX_VALUES` JSON values. The supervisor parses each
frame whole, outside every rlimit of the cell, and a small value costs the parser ~20 times
its bytes: a cell that wrote its own 8 MiB call frame of 2.8 million `{}` took the
supervisor's RSS from 17 to 239 MB and was accepted, once per host call (50 a cell). Now such
a frame is refused before it is parsed (ProtocolViolation, worker restarted), a note's body
full of commas still passes (a string is one value), and an honest call over the cap is
refused in the worker with a ValueError, the cell going on. Every real tier."""

from __future__ import annotations

import json
import random
import tracemalloc
from typing import Any

import pytest

from sandbox.channel import MAX_VALUES, values_over

from .conftest import Host, run_attack

# The cell reaches the worker's channel through a stub's closure and writes one call frame of
# ~8 MiB (the default max_frame) of ELEMENT, then reads the reply if one comes.
_FORGED = """
import os, struct
worker = next(c.cell_contents for c in ping.__closure__ if hasattr(c.cell_contents, 'channel'))
n = ((8 << 20) - 200) // (len(ELEMENT) + 1)
body = ('{"t":"call","id":%d,"fn":"ping","args":[[' % worker.exec_id
        + ",".join([ELEMENT] * n) + ']],"kwargs":{}}').encode()
with worker.channel.lock:
    os.write(worker.channel.out_fd, struct.pack(">I", len(body)) + body)
    worker.channel.recv()
"""
_ELEMENTS = ("{}", "[]", "0", '""', "1.5", "null", '{"a":[]}')


@pytest.mark.parametrize("element", _ELEMENTS)
def test_a_frame_of_many_small_values_is_refused_before_it_is_parsed(
        host: Host, element: str) -> None:
    tracemalloc.start()
    try:
        result = run_attack(host, _FORGED.replace("ELEMENT", repr(element)), deadline_s=30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.error is not None and result.error.type == "ProtocolViolation", \
        result.to_json()
    assert "JSON values" in result.error.message and result.state_lost
    assert peak < 48 << 20, f"the supervisor allocated {peak >> 20} MiB parsing one frame"


def test_long_strings_full_of_json_punctuation_pass(host: Host) -> None:
    """A string is one value whatever it holds: prose with a million commas is not refused."""
    result = run_attack(host, "text = 'a, b: [c] {d}' * 250_000\nlen(ping(text)) == len(text)",
                        deadline_s=30)
    assert result.ok and result.value == "True", result.to_json()


def test_an_honest_call_over_the_cap_is_refused_in_the_worker(host: Host) -> None:
    cell = f"""
try:
    ping([0] * {MAX_VALUES + 10})
except ValueError as exc:
    r = str(exc)
len(ping(list(range({MAX_VALUES // 2})))), r
"""
    result = run_attack(host, cell, deadline_s=30)
    assert result.ok and not result.state_lost, result.to_json()
    assert result.value is not None and "JSON values" in result.value
    assert result.value.startswith(f"({MAX_VALUES // 2}, ")


def _document(rng: random.Random, depth: int) -> Any:
    """A random JSON document with no empty container (each would count one value more)."""
    kind = rng.randrange(6 if depth < 4 else 3)
    if kind == 0:
        return rng.choice([0, -12, 3.5, True, None, 10**30])
    if kind in (1, 2):
        return "".join(rng.choice('ab,:[]{}"\\\n\u00e9') for _ in range(rng.randrange(12)))
    if kind == 3:
        return [_document(rng, depth + 1) for _ in range(rng.randrange(1, 5))]
    return {f"k{i},:[{{": _document(rng, depth + 1) for i in range(rng.randrange(1, 5))}


def _count(value: Any) -> int:
    if isinstance(value, list):
        return 1 + sum(_count(v) for v in value)
    if isinstance(value, dict):
        return 1 + sum(1 + _count(v) for v in value.values())
    return 1


@pytest.mark.parametrize("seed", range(200))
def test_the_bound_is_exact_without_empty_containers(seed: int) -> None:
    rng = random.Random(seed)
    document = _document(rng, 0)
    body = json.dumps(document, ensure_ascii=rng.random() < 0.5).encode()
    count = _count(document)
    assert not values_over(body, count), (body, count)
    assert values_over(body, count - 1), (body, count)


@pytest.mark.parametrize("size", [(8 << 20) + 1, 20 << 20, 64 << 20])
def test_a_call_whose_arguments_pass_the_frame_cap_names_the_function(
        host: Host, size: int) -> None:
    """PLUG5 (session 31): `rlm_call('x' * 100_000_000, q)` was a ValueError "message of
    100000073 bytes exceeds the 8388608-byte cap", naming neither the call nor what to do."""
    cell = f"""
try:
    ping('x' * {size})
except ValueError as exc:
    r = str(exc)
r, ping('small')
"""
    result = run_attack(host, cell, deadline_s=60)
    assert result.ok and not result.state_lost, result.to_json()
    assert result.value is not None and "the arguments of ping()" in result.value
    assert "(pass less)" in result.value and str(8 << 20) in result.value, result.value
