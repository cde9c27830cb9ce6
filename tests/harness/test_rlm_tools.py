"""rlm_call / rlm_batch slices bound the host's work (harness/rlm_tools.py): a slice longer
than the cap is refused as soon as it is rendered (rlm_batch never holds more than one), and
no note is read for a slice once the exec's deadline has passed (the cell was answered then:
reading on is host work for nobody). Both failed before: 64 pairs naming a 4 MB note read and
held all 64 (host RSS +530 MiB), and 64 x 50 names went on being read long after the cell's
deadline (docs/measurements/session26/NOTES-HOST.md)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.config import LlmSection
from harness.llm import Broker
from harness.llm_types import RlmSliceTooLarge, RlmTimeout
from harness.rlm_tools import MAX_PAIRS, MAX_SLICE_ITEMS, RlmTools
from sandbox.context import running


class Library:
    """A vault of one note `Big` longer than any slice cap; counts its reads."""

    def __init__(self, chars: int) -> None:
        self.text = "word " * (chars // 5)
        self.reads = 0

    def read(self, note: Any) -> dict[str, Any]:
        self.reads += 1
        return {"note": "Big.md", "title": "Big", "text": self.text, "frontmatter": {}}

    def search(self, query: Any, k: Any = 10) -> dict[str, Any]:
        return {"hits": []}

    def neighbors(self, note: Any, hops: Any = 1) -> list[str]:
        return []

    def document_frequency(self, tokens: Any) -> list[int]:
        return [0 for _ in tokens]


@pytest.fixture(scope="module")
def rlm() -> Iterator[RlmTools]:
    with Broker.from_config(LlmSection()) as broker:  # offline: nothing leaves the machine
        yield RlmTools(broker)


@settings(max_examples=20, deadline=None)
@given(pairs=st.integers(2, MAX_PAIRS), over=st.integers(1, 200_000))
def test_a_batch_refuses_the_first_slice_over_the_cap_before_reading_the_rest(
        rlm: RlmTools, pairs: int, over: int) -> None:
    lib = Library(rlm.broker.limits.slice_max_chars + over)
    with pytest.raises(RlmSliceTooLarge):
        rlm.rlm_batch([["Big", "q"]] * pairs, None, lib)
    assert lib.reads == 1
    with pytest.raises(RlmSliceTooLarge):
        rlm.rlm_call("Big", "q", None, lib)


def test_no_note_is_read_for_a_slice_after_the_exec_deadline(rlm: RlmTools) -> None:
    lib = Library(1_000)
    with running(time.monotonic() - 1), pytest.raises(RlmTimeout):
        rlm.rlm_batch([[["Big"] * MAX_SLICE_ITEMS, "q"]] * MAX_PAIRS, None, lib)
    assert lib.reads == 0
    with running(time.monotonic() - 1), pytest.raises(RlmTimeout):
        rlm.rlm_call(["Big"] * MAX_SLICE_ITEMS, "q", None, lib)
    assert lib.reads == 0


def test_slices_within_the_cap_and_the_deadline_are_answered(rlm: RlmTools) -> None:
    lib = Library(1_000)
    rlm.begin_exec()
    with running(time.monotonic() + 60):
        answers = rlm.rlm_batch([[["Big"] * 3, "q"], ["Big", "q"]], None, lib)
    assert len(answers) == 2 and all(isinstance(a, str) for a in answers)
    assert lib.reads == 4
