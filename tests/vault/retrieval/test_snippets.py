"""Snippets: the best-matching passage, bounded, deterministic; date/speaker from frontmatter."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vault import Vault
from vault.retrieval.snippets import SNIPPET_CHARS, note_facts, readable, snippet


def test_the_best_sentence_wins_and_ties_go_to_the_earliest() -> None:
    body = ("Intro about nothing. The billing service charges monthly. "
            "Auth tokens rotate every 30 days. Auth tokens again.")
    assert snippet(body, "auth tokens") == body  # fits whole: nothing cut
    # both auth sentences score the same: the earlier one wins; cut sides are marked
    assert snippet(body, "auth tokens", max_chars=40) == "…Auth tokens rotate every 30 days.…"
    assert snippet(body, "zebra", max_chars=25) == "Intro about nothing.…"


def test_links_read_as_text_and_long_passages_are_cut_around_the_match() -> None:
    assert snippet("Owned by [[People/Alice|Alice]] and [[Bob]].", "owner") == (
        "Owned by Alice and Bob.")
    long = ("word " * 100) + "needle here " + ("word " * 100)
    out = snippet(long, "needle")
    assert "needle" in out and len(out) <= SNIPPET_CHARS
    assert out.startswith("…") and out.endswith("…")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2_000), st.text(max_size=50))
def test_bounded_and_deterministic(body: str, query: str) -> None:
    out = snippet(body, query)
    assert len(out) <= SNIPPET_CHARS and out == snippet(body, query)


def test_facts_are_date_and_speaker_only() -> None:
    assert note_facts({"date": date(2023, 5, 8), "speaker": "Caroline", "x": 1}) == {
        "date": "2023-05-08", "speaker": "Caroline"}
    assert note_facts({"date": ["not", "scalar"], "speaker": True}) == {}


def test_search_hits_carry_snippet_and_facts(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Turn.md").write_text("---\ndate: 2023-05-08\nspeaker: Caroline\n---\n"
                                  "Caroline: I went hiking in the Alps last weekend.\n")
    with Vault.init(root) as v:
        hit = v.search("hiking alps", 3).hits[0]
    assert "hiking in the Alps" in hit.snippet
    assert hit.to_json() == {"note": "Turn.md", "title": "Turn", "score": hit.score,
                             "id": hit.id, "snippet": hit.snippet, "date": "2023-05-08",
                             "speaker": "Caroline"}
    assert "receipt" in hit.to_json(receipt=True)


def test_a_dot_inside_a_token_does_not_end_a_sentence() -> None:
    # Found by a new-user review: "version 1.2" once left the snippet "2 on Monday."
    assert readable("We upgraded the billing service to version 1.2 on Monday.") == [
        "We upgraded the billing service to version 1.2 on Monday."]
    assert readable("See example.com for the billing docs. Then ask Bob!") == [
        "See example.com for the billing docs.", "Then ask Bob!"]
    assert readable("Diagram: ![[missing.png]] and more") == ["Diagram: missing.png and more"]
    body = "We upgraded the billing service to version 1.2 on Monday."
    assert snippet(body, "billing upgrade") == body
