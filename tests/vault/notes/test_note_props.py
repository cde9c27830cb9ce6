"""Property tests of vault.note: parse never raises, render/parse and update round trips."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault.notes.note import parse, render, rewrite_links, update_frontmatter

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Each example of these dumps YAML and loads it back a few times (pure-Python emitter).
YAML_SETTINGS = settings(SETTINGS, max_examples=200)

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
frontmatters = st.dictionaries(st.text(), values, max_size=6)

# Text built from the characters that make markdown and YAML interesting.
markdownish = st.lists(
    st.sampled_from(
        [
            *"-.#[]()!|^`~%<>: \n\r\tabc12_/\"'*{}&é",
            *["---\n", "```", "[[", "]]", "%%", ".md", "<!--", "-->", "tags: ", "\n---\n"],
        ]
    ),
    max_size=60,
).map("".join)


def same(a: Any, b: Any) -> bool:
    """Equal including key order and int/float/bool distinctions."""
    return json.dumps(a) == json.dumps(b)


@SETTINGS
@given(st.text() | markdownish)
def test_parse_never_raises_and_offsets_are_consistent(text: str) -> None:
    note = parse(text)
    assert note.text == text
    assert note.body == text[note.body_start :]
    if note.frontmatter_error is not None:
        assert note.frontmatter == {} and note.body_start == 0
    json.dumps(note.frontmatter)  # JSON-safe
    for link in note.links:
        assert 0 <= link.start < link.end <= len(text)
    assert [ln.start for ln in note.links] == sorted(ln.start for ln in note.links)


@SETTINGS
@given(st.text() | markdownish)
def test_identity_edits_return_the_text_unchanged(text: str) -> None:
    assert rewrite_links(text, lambda link: None) == text
    assert rewrite_links(text, lambda link: link.target) == text
    if parse(text).frontmatter_error is None:
        assert update_frontmatter(text, {}) == text


@pytest.mark.slow
@YAML_SETTINGS
@given(frontmatters, st.text() | markdownish)
def test_render_parse_round_trip(fm: dict[str, Any], body: str) -> None:
    note = parse(render(fm, body))
    assert note.frontmatter_error is None
    assert same(note.frontmatter, fm)
    assert note.body == body


@pytest.mark.slow
@YAML_SETTINGS
@given(frontmatters, st.text(), values, st.text() | markdownish)
def test_update_reads_back_and_keeps_other_lines(
    fm: dict[str, Any], key: str, value: Any, body: str
) -> None:
    text = render(fm, body)
    out = update_frontmatter(text, {key: value})
    note = parse(out)
    assert note.body == body
    if value is None:
        assert key not in note.frontmatter
        rest = {k: v for k, v in fm.items() if k != key}
    else:
        assert same(note.frontmatter[key], value)
        rest = {**fm, key: value}
    assert same(note.frontmatter, rest)
    # render() writes one entry per key, so the exact expected bytes are known: the other keys'
    # lines are unchanged and the changed key sits where it was (or at the end when new).
    if (rest and fm) or (rest and text != body):
        assert out == render(rest, body)
    elif rest:  # a block was created (with the text's own line ending) in front of the text
        assert out.endswith(text)
    assert update_frontmatter(out, {key: value}) == out  # setting it again changes nothing


@SETTINGS
@given(st.text() | markdownish, st.sampled_from(["New Name", "a/b", "x%y (1)"]))
def test_rewrite_keeps_everything_but_targets(text: str, new: str) -> None:
    before = parse(text)
    out = rewrite_links(text, lambda link: new if link.target else None)
    after = parse(out)
    if before.frontmatter_error is None and after.frontmatter_error is None:
        assert len(after.links) == len(before.links)
        for a, b in zip(before.links, after.links, strict=True):
            assert (a.heading, a.block, a.alias, a.embed, a.kind) == (
                b.heading,
                b.block,
                b.alias,
                b.embed,
                b.kind,
            )
            assert b.target == (new if a.target else "")


def test_update_fills_the_empty_block_render_wrote_for_a_dashed_body() -> None:
    # Found by hypothesis in CI: a body that starts with "---" gets an empty block from render().
    text = render({}, "---")
    assert text == "---\n---\n---"
    out = update_frontmatter(text, {"": []})
    assert out == render({"": []}, "---")
    assert parse(out).body == "---"
