"""Values of a whole corpus kept while it is the current one (conversation/per_corpus.py):
computed once per corpus object, again for a new one, dropped with the corpus; `context`'s
turn items and stale sources through it equal a fresh computation."""

from __future__ import annotations

import gc
from pathlib import Path

from vault import Vault
from vault.conversation import corrections, layout, per_corpus
from vault.storage.corpus import Corpus, empty_corpus


def test_computed_once_per_corpus_object_and_dropped_with_it() -> None:
    calls: list[int] = []

    def compute() -> tuple[int, ...]:
        calls.append(1)
        return (len(calls),)

    a: Corpus | None = empty_corpus(1)
    b = empty_corpus(1)  # equal to a, but another object: another generation's corpus
    assert a is not None and a == b
    assert per_corpus.kept("t", a, compute) == (1,)
    assert per_corpus.kept("t", a, compute) == (1,)
    assert per_corpus.kept("t", b, compute) == (2,)
    assert per_corpus.kept("other", b, compute) == (3,)
    del b
    gc.collect()
    assert "t" not in per_corpus._kept and "other" not in per_corpus._kept
    assert per_corpus.kept("t", a, compute) == (4,)
    a = None
    gc.collect()
    assert "t" not in per_corpus._kept


def test_context_inputs_equal_a_fresh_computation(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    for k in range(6):
        (root / f"t{k}.md").write_text(
            f"---\nconversation: c{k % 2}\nsession: 1\nturn: {k}\nspeaker: Ann\n"
            f"date: 2026-01-0{k + 1}\n---\nAnn: turn {k} about the garden\n")
    (root / "fact.md").write_text(
        "---\nkind: fact\nstatement: ann likes roses\ntrust: rejected\ntrust_by: user\n"
        "trust_at: '2026-01-09'\nsources: ['[[t1]]']\n---\nann likes roses\n")
    with Vault.init(root) as v:
        corpus = v.corpus()
        for conversation in (None, "c0", "c1"):
            got = layout.items_from_corpus(corpus, conversation)
            assert got == layout._items(corpus, conversation)
            assert layout.items_from_corpus(corpus, conversation) is got  # kept
        assert dict(corrections.stale_sources(corpus)) == dict(
            corrections._stale_sources(corpus))
        (root / "t9.md").write_text("---\nconversation: c0\nturn: 9\nspeaker: Bo\n---\nBo: hi\n")
        v.sync()
        newer = v.corpus()
        assert newer is not corpus
        assert len(layout.items_from_corpus(newer, "c0")) == len(
            layout._items(newer, "c0"))
