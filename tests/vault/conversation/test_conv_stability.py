"""Stability of extraction: Jaccard of two runs' collision sets, with the differing pairs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.vault.conversation.test_conv_ndm_golden import seed_dialogue
from vault import (
    ConversationFormatError,
    Vault,
    conversation_from_corpus,
    conversation_stability,
    ingest_conversations,
)


def test_supplied_lists_against_automatic_extraction_on_the_seed() -> None:
    st = conversation_stability(seed_dialogue(fifth=False, supplied=True), "supplied")
    # supplied: t0-t1 (pottery class), t1-t2 (carla); automatic adds t0-t2 (the vase: the
    # file says "Alice's vase" in t2 but "vase" in t0, so run A does not link them)
    assert st.pairs == (2, 3) and st.common == 2
    assert st.jaccard == pytest.approx(2 / 3)
    (d,) = st.differing
    assert (d.run, d.i, d.j, d.turns, d.shared) == ("B", 0, 2, ("t0", "t2"), ("vase",))


def test_normalisation_against_rows_as_written() -> None:
    st = conversation_stability(seed_dialogue(fifth=False), "normalisation")
    # "the pottery class" vs "a pottery class", "a vase" vs "the vase": written apart, no link
    assert st.pairs == (3, 1) and st.jaccard == pytest.approx(1 / 3)
    assert [(d.run, d.turns) for d in st.differing] == [("A", ("t0", "t1")), ("A", ("t0", "t2"))]
    assert st.to_json()["jaccard"] == pytest.approx(0.333333)


def test_supplied_mode_needs_lists_and_vault_round_trip(tmp_path: Path) -> None:
    with pytest.raises(ConversationFormatError):
        conversation_stability(seed_dialogue(), "supplied")
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, seed_dialogue())
        back = conversation_from_corpus(v.corpus(), "seed")
        assert back.turns() == seed_dialogue().turns()
        with pytest.raises(ConversationFormatError):
            conversation_from_corpus(v.corpus(), "nope")
