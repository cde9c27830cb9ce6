"""An ingest's cost per note (session 30 CHATPERF): its notes are indexed in one sync, not one
per note, and a note's frontmatter values are dumped as YAML once per distinct value, with the
bytes a fresh dump gives (bench/bench_chat_ingest.py measures the times)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from vault import Vault, ingest_conversations, load_transcript
from vault.conversation.ingest import notes_for
from vault.notes import frontmatter


def _export(n: int) -> str:
    return "".join(f"{13 + i // 40:02d}/01/2024, {8 + i % 40 // 4:02d}:{i % 4 * 15:02d} - "
                   f"Name {i % 3}: words {i}\n" for i in range(n))


@pytest.mark.parametrize("n", [10, 80])
def test_an_ingest_indexes_its_notes_in_one_sync(tmp_path: Path, n: int) -> None:
    with Vault.init(tmp_path / "v") as v:
        before = v.index.generation()
        got = ingest_conversations(v, load_transcript(_export(n), "auto", "c").conversations,
                                   use_nlp=False)
        assert len(got.written) > n
        assert v.index.generation() - before <= 2  # main: one generation a note
        assert {p for p in got.written} <= set(v.corpus().paths)  # every note indexed


def test_a_conversations_notes_dump_each_distinct_value_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    (conv,) = load_transcript(_export(200), "auto", "c").conversations
    dumps: list[object] = []
    real = yaml.dump

    def counted(*args: Any, **kwargs: Any) -> Any:
        dumps.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(yaml, "dump", counted)
    notes = notes_for(conv)
    fields = sum(n.count("\n", 0, n.index("\n---\n")) for _, n in notes)
    assert fields > 2000
    assert len(dumps) < fields / 2  # main: one dump (or two) per field of every note


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=12), _VALUES)
def test_a_remembered_dump_is_the_bytes_of_a_fresh_one(key: str, value: object) -> None:
    try:
        fresh = frontmatter._dump_entry.fresh(key, frontmatter.plain(value))
    except Exception as exc:
        with pytest.raises(type(exc)):
            frontmatter.dump({key: value})
        return
    assert frontmatter.dump({key: value}) == fresh
    assert frontmatter.dump({key: value}) == fresh  # the second from memory
    if isinstance(value, int) and not isinstance(value, bool):
        assert frontmatter.dump({key: -value}) == frontmatter._dump_entry.fresh(key, -value)
