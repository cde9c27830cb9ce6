"""NDJSON framing: splitting is chunking-invariant, oversize lines are dropped in bounded memory."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from rpc import FrameTooLarge, LineSplitter, encode


def split_all(data: bytes, cuts: list[int], max_frame: int = 64) -> list[object]:
    s = LineSplitter(max_frame)
    out: list[object] = []
    prev = 0
    for cut in sorted(c % (len(data) + 1) for c in cuts):
        out += s.feed(data[prev:cut])
        prev = max(prev, cut)
    out += s.feed(data[prev:])
    out += s.close()
    return out


def test_lines_crlf_and_blank_lines() -> None:
    s = LineSplitter()
    assert s.feed(b'{"a":1}\r\n\n  \n{"b"') == [b'{"a":1}']
    assert s.feed(b":2}\n") == [b'{"b":2}']
    assert s.close() == []


def test_final_line_without_newline_is_a_frame() -> None:
    s = LineSplitter()
    assert s.feed(b"[1]") == []
    assert s.close() == [b"[1]"]


def test_oversize_line_reported_once_then_resync() -> None:
    s = LineSplitter(max_frame=10)
    out = s.feed(b"x" * 25)
    assert out == [FrameTooLarge(10)]
    assert s.feed(b"y" * 25) == []  # still the same line: nothing buffered, nothing reported
    assert s.buffered == 0
    assert s.feed(b"zz\nok\n") == [b"ok"]


def test_line_of_exactly_the_cap_is_accepted() -> None:
    s = LineSplitter(max_frame=5)
    assert s.feed(b"12345\n123456\n7\n") == [b"12345", FrameTooLarge(5), b"7"]


def test_100_mb_line_without_newline_uses_bounded_memory() -> None:
    cap = 8 * 1024 * 1024
    s = LineSplitter(cap)
    chunk = b"a" * 65_536
    reports = []
    high_water = 0
    for _ in range(100 * 1024 * 1024 // len(chunk)):
        reports += s.feed(chunk)
        high_water = max(high_water, s.buffered)
    assert reports == [FrameTooLarge(cap)]
    assert high_water <= cap
    assert s.close() == []  # the over-long line never becomes a frame, even at end of input


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(max_size=80).map(lambda b: b.replace(b"\n", b"")), max_size=8),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=10),
)
def test_splitting_is_independent_of_chunking(lines: list[bytes], cuts: list[int]) -> None:
    data = b"".join(line + b"\n" for line in lines)
    once = split_all(data, [])
    assert split_all(data, cuts) == once
    expected: list[object] = []
    for line in lines:
        if len(line) > 64:
            expected.append(FrameTooLarge(64))
        elif line.rstrip(b"\r").strip():
            expected.append(line.rstrip(b"\r"))
    assert once == expected


@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(), kids, max_size=4),
    max_leaves=20,
))
def test_encode_is_one_line_and_round_trips(value: object) -> None:
    frame = encode(value)
    assert frame.endswith(b"\n") and frame.count(b"\n") == 1
    assert json.loads(frame) == value


def test_encode_escapes_lone_surrogates() -> None:
    frame = encode({"s": "\ud800"})
    assert frame.count(b"\n") == 1 and json.loads(frame) == {"s": "\ud800"}
