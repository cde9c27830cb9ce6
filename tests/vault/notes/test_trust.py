"""Trust fields on a note (vault/notes/trust.py): a pure, canonical rewrite of the note."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.notes.note import parse, render
from vault.notes.trust import (
    STATES,
    apply,
    kept_fields,
    not_current,
    transition,
    trust_of,
)

FACT = render({"tier": "L2", "kind": "fact", "subject": "sarah", "key": "lives_in",
               "value": "paris", "first_observed": "2024-05-01"},
              "# sarah lives in paris\n\nFact (L2), fact: confidence 0.700.\n\n> i live in paris\n")

text_st = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
fields_st = st.fixed_dictionaries({
    "trust": st.sampled_from(STATES), "trust_by": text_st.filter(str.strip),
    "trust_at": st.sampled_from(["2026-12-03T10:00:00+00:00", "2026-01-01"]),
}, optional={"trust_reason": text_st.filter(str.strip),
             "superseded_by": st.lists(st.just("[[conversations/c/facts/x|x]]"), min_size=1,
                                       max_size=2)})


def test_a_note_without_trust_is_provisional_and_current() -> None:
    t = trust_of(parse(FACT).frontmatter)
    assert (t.state, t.by, t.at, t.current) == ("provisional", "extraction", "2024-05-01", True)
    assert not not_current(parse(FACT).frontmatter)


def test_transition_records_the_state_before_and_rejects_unknown_states() -> None:
    fm = parse(FACT).frontmatter
    f1 = transition(fm, "rejected", "user", "2026-12-03T10:00:00+00:00", "wrong")
    assert f1["trust"] == "rejected" and f1["trust_history"] == [
        {"state": "provisional", "by": "extraction", "at": "2024-05-01", "reason": ""}]
    text = apply(FACT, f1)
    fm2 = parse(text).frontmatter
    assert not_current(fm2) and trust_of(fm2).reason == "wrong"
    assert "> Trust: rejected by user at 2026-12-03T10:00:00+00:00 (wrong)" in text
    f2 = transition(fm2, "confirmed", "agent:s1", "2026-12-04")
    assert [h["state"] for h in f2["trust_history"]] == ["provisional", "rejected"]
    assert "trust_reason" not in f2
    with pytest.raises(ValueError):
        transition(fm, "maybe", "user", "2026-12-03")


@settings(max_examples=150, deadline=None)
@given(first=fields_st, second=fields_st)
def test_apply_is_canonical_whatever_the_note_held_before(first: dict[str, object],
                                                         second: dict[str, object]) -> None:
    """Re-ingest relies on it: the same fields on the freshly rendered note give the bytes the
    corrected file has, whatever states it went through."""
    once = apply(FACT, second)
    assert apply(apply(FACT, first), second) == once
    assert apply(once, second) == once
    fm = parse(once).frontmatter
    assert kept_fields(fm) == {k: v for k, v in second.items()}
    assert trust_of(fm).state == second["trust"]
    assert not_current(fm) == (second["trust"] == "rejected" or "superseded_by" in second)
    # the body keeps every line it had, with exactly one trust line
    assert once.count("> Trust:") == 1 and "> i live in paris" in once
    assert apply(once, {}) == FACT
