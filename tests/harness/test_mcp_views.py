"""The compact MCP views (harness.mcp_views): what they keep, what they drop, and that a cut
snippet ends at a sentence or a word, never inside one."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.mcp_views import (
    ELLIPSIS,
    MAX_USED,
    SNIPPET_MAX,
    ask_view,
    read_view,
    search_view,
    sentence_cut,
)


def test_search_view_keeps_what_a_model_uses() -> None:
    result = {"query": "q", "hits": [
        {"note": "People/Alice.md", "title": "Alice", "score": 0.0522294154733477, "id": 4,
         "snippet": "Alice owns billing."},
        {"note": "Log/2026-03-03 delay.md", "title": "Delay note", "score": 0.04, "id": 3,
         "snippet": "Queue backlog.", "date": "2026-03-03", "speaker": "Bob"},
        {"note": "Log/x.md", "title": "x", "score": 0.01, "id": 5, "snippet": "s",
         "date": "2026-04-01", "receipt": {"fused": 0.0123456789}}]}
    view = search_view(result)
    assert "query" not in view
    assert view["hits"][0] == {"note": "People/Alice.md", "score": 0.0522,
                               "snippet": "Alice owns billing."}
    assert view["hits"][1] == {"note": "Log/2026-03-03 delay.md", "score": 0.04,
                               "title": "Delay note", "snippet": "Queue backlog.",
                               "speaker": "Bob"}
    assert view["hits"][2]["date"] == "2026-04-01"
    assert view["hits"][2]["receipt"] == {"fused": 0.0123}


def test_search_view_keeps_the_reranker_s_score_of_a_hit_it_placed() -> None:
    """REV (session 34): fix34 gave `vault.search` hits the reranker placed their `rerank`
    (the score they are ordered by; `rmh search` prints it), but the MCP view dropped it, so
    an MCP client saw the reranker's order beside fused scores that contradict it."""
    result = {"hits": [
        {"note": "b.md", "title": "b", "score": 0.02, "id": 2, "snippet": "s", "rerank": 0.91},
        {"note": "a.md", "title": "a", "score": 0.05, "id": 1, "snippet": "s", "rerank": 0.4},
        {"note": "c.md", "title": "c", "score": 0.03, "id": 3, "snippet": "s"}]}
    hits = search_view(result)["hits"]
    assert [h.get("rerank") for h in hits] == [0.91, 0.4, None]
    assert [h["score"] for h in hits] == [0.02, 0.05, 0.03]


@given(st.text(alphabet=st.characters(codec="utf-8", categories=("L", "Zs", "Po")),
               max_size=600))
def test_a_cut_snippet_fits_and_ends_at_a_sentence_or_a_word(text: str) -> None:
    cut = sentence_cut(text)
    assert len(cut) <= SNIPPET_MAX
    if len(text) <= SNIPPET_MAX:
        assert cut == text
        return
    body = cut.removesuffix(ELLIPSIS).rstrip()
    assert text.startswith(body)
    assert body.endswith((".", "!", "?")) or cut.endswith(ELLIPSIS)


def test_sentence_cut_prefers_a_sentence_end() -> None:
    first = "Alice owns the billing service and reviews every invoice change herself. "
    text = first + "Bob " * 60
    assert sentence_cut(text) == first.rstrip() + " " + ELLIPSIS


def test_ask_view_returns_the_answer_and_the_notes_it_rests_on() -> None:
    found = [{"note": f"n{i}.md", "value": v, "pass": 1, "query": "q"}
             for i, v in enumerate([2.0, 1.9, 1.2, 1.0, 0.99, 0.9, 0.5])]
    result = {"question": "q", "answer": "A.", "resolved": True, "stop": "resolved",
              "notes": [f["note"] for f in found], "found": found, "trace": [{"x": 1}],
              "usage": {}}
    view = ask_view(result)
    assert view == {"answer": "A.", "resolved": True, "stop": "resolved",
                    "notes": ["n0.md", "n1.md", "n2.md", "n3.md"]}
    many = {**result, "found": [{**f, "value": 1.0} for f in found]}
    assert len(ask_view(many)["notes"]) == MAX_USED


def test_read_view_drops_the_id_and_empty_fields() -> None:
    record = {"id": 4, "note": "a.md", "title": "a", "hash": "h", "text": "t",
              "frontmatter": {}, "frontmatter_error": None, "tags": [], "aliases": [],
              "links": [{"target": "b"}]}
    assert read_view(record) == {"note": "a.md", "title": "a", "hash": "h", "text": "t",
                                 "links": [{"target": "b"}]}
