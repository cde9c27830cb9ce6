"""Edits touch one span: every character outside it is kept (hypothesis), and refusals are
typed. vault.notes.edits."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault import EDIT_KINDS, Edit, EditRefused
from vault.notes.edits import apply, body_start, headings, size_after
from vault.notes.frontmatter import BOM, find_block

LINE = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"),
               max_size=30)
NEWLINE = st.sampled_from(["\n", "\r\n"])


@st.composite
def notes(draw: st.DrawFn) -> str:
    """Markdown with optional frontmatter and BOM, headings, fences and odd line endings."""
    parts: list[str] = []
    if draw(st.booleans()):
        parts.append("\ufeff")
    if draw(st.booleans()):
        nl = draw(NEWLINE)
        parts.append(f"---{nl}title: x{nl}---{nl}")
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["text", "heading", "fence"]))
        nl = draw(NEWLINE)
        if kind == "heading":
            parts.append("#" * draw(st.integers(1, 3)) + " " + draw(st.sampled_from(
                ["Plans", "Log", "Notes"])) + nl)
        elif kind == "fence":
            parts.append(f"```{nl}# not a heading{nl}```{nl}")
        else:
            parts.append(draw(LINE) + nl)
    if draw(st.booleans()):
        parts.append(draw(LINE))  # a last line without a newline
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(notes(), LINE)
def test_append_keeps_every_byte_before(text: str, added: str) -> None:
    out = apply(text, Edit("append", added))
    assert out.startswith(text) and out.endswith(added)
    assert len(out) - len(text) - len(added) in (0, 1)


@settings(max_examples=300, deadline=None)
@given(notes(), LINE)
def test_prepend_keeps_frontmatter_and_body(text: str, added: str) -> None:
    at = body_start(text)
    out = apply(text, Edit("prepend", added))
    first = re.split(r"\r\n|\r|\n", text[at:])[0]
    block = re.fullmatch(r" {0,3}(#{1,6}([ \t].*)?|(`{3,}|~{3,}).*)", first) is not None
    ended = block and added and not added.endswith(("\n", "\r"))
    own = re.match(r"\r\n|\r|\n", text[at + len(first):])
    mac = "\r" in text and "\n" not in text
    nl = own.group() if own else ("\r" if mac else "\n")
    assert out == text[:at] + added + (nl if ended else "") + text[at:]


@settings(max_examples=300, deadline=None)
@given(notes(), LINE)
def test_section_replaces_only_its_lines(text: str, new: str) -> None:
    heads = [h for h in headings(text, body_start(text)) if h[3] == "Plans"]
    if len(heads) != 1:
        with pytest.raises(EditRefused):
            apply(text, Edit("section", new, heading="Plans"))
        return
    _, hi, level, _ = heads[0]
    out = apply(text, Edit("section", new, heading="Plans"))
    assert out.startswith(text[: hi])  # the heading and everything before it
    later = [h[0] for h in headings(text, hi) if h[2] <= level]
    end = later[0] if later else len(text)
    assert out.endswith(text[end:])  # the next section onwards
    assert new in out[hi:len(out) - (len(text) - end)]


@settings(max_examples=300, deadline=None)
@given(notes(), st.sampled_from(["Plans", "x", "a", "#"]), LINE)
def test_replace_changes_exactly_the_occurrences(text: str, find: str, new: str) -> None:
    count = text.count(find)
    if count == 0:
        with pytest.raises(EditRefused):
            apply(text, Edit("replace", new, find=find, expected_count=None))
        return
    with pytest.raises(EditRefused) as refused:
        apply(text, Edit("replace", new, find=find, expected_count=count + 1))
    assert refused.value.found == count and refused.value.expected == count + 1
    out = apply(text, Edit("replace", new, find=find, expected_count=count))
    assert out == new.join(text.split(find))


def test_section_examples() -> None:
    text = "# T\nintro\n## Plans\nold\n### Sub\nsub\n## Log\nkept\r\n"
    assert apply(text, Edit("section", "new\n", heading="## Plans")) == (
        "# T\nintro\n## Plans\nnew\n## Log\nkept\r\n")
    assert apply(text, Edit("section", "x", heading="Sub")) == (
        "# T\nintro\n## Plans\nold\n### Sub\nx\n## Log\nkept\r\n")
    assert apply("## Plans", Edit("section", "a\n", heading="Plans")) == "## Plans\na\n"
    with pytest.raises(EditRefused, match="0 headings"):
        apply(text, Edit("section", "x", heading="### Plans"))
    fenced = "```\n## Plans\n```\n## Plans\nold\n"
    assert apply(fenced, Edit("section", "n\n", heading="Plans")) == (
        "```\n## Plans\n```\n## Plans\nn\n")


def test_prepend_goes_after_frontmatter() -> None:
    assert apply("---\na: 1\n---\nbody\n", Edit("prepend", "top\n")) == (
        "---\na: 1\n---\ntop\nbody\n")
    assert apply("\ufeffbody", Edit("prepend", "top ")) == "\ufefftop body"
    assert apply("body", Edit("append", "more")) == "body\nmore"


@st.composite
def edits(draw: st.DrawFn) -> Edit:
    kind = draw(st.sampled_from(EDIT_KINDS))
    text = draw(st.text(st.characters(exclude_categories=["Cs"]), max_size=40))
    heading = draw(st.sampled_from(["Plans", "## Log", "Notes", "", "#"]))
    find = draw(st.sampled_from(["Plans", "x", "a", "\n", "é", ""]))
    count = draw(st.sampled_from([None, 1, 2, 3]))
    return Edit(kind, text, heading=heading, find=find, expected_count=count)


@settings(max_examples=500, deadline=None)
@given(notes(), edits())
def test_size_after_is_the_size_apply_produces(text: str, edit: Edit) -> None:
    """The size is computed without building the text, and refuses exactly when apply does."""
    try:
        expected = len(apply(text, edit).encode("utf-8"))
    except EditRefused:
        with pytest.raises(EditRefused):
            size_after(text, edit)
        return
    assert size_after(text, edit) == expected


def test_size_after_of_an_amplifying_replace_builds_nothing() -> None:
    text = "x" * 1000
    edit = Edit("replace", "y" * 300_000, find="x", expected_count=1000)
    assert size_after(text, edit) == 300_000_000  # computed, not built


def _shaped(rng: random.Random) -> str:
    """A note with frontmatter as an editor may leave it: a BOM, CRLF, a `...` fence, and the
    closing fence ending the file (no newline, or a lone CR)."""
    nl = rng.choice(["\n", "\r\n"])
    text = rng.choice(["", BOM]) + f"---{nl}tags: [a]{nl}title: x{nl}" + rng.choice(["---", "..."])
    return text + rng.choice(["", "", "\r", nl, nl + "body", nl + "# H" + nl + "x" + nl])


def test_prepend_and_append_keep_a_block_whatever_its_last_line() -> None:
    """`---\\ntags: [a]\\n---` + prepend "top" was `---top`: the block's closing fence fused
    with the text, and the note lost its tags. Seeded generation over the shapes."""
    for seed in range(300):
        rng = random.Random(seed)
        text, added = _shaped(rng), rng.choice(["top", "top\n", "a\r\nb", ""])
        edit = Edit("prepend", added) if rng.random() < 0.5 else Edit("append", added)
        out = apply(text, edit)
        block = find_block(out)
        assert block is not None and out[block.yaml_start:block.yaml_end] == text[
            block.yaml_start:block.yaml_end], (seed, text, out)
        assert edit.text in out[block.body_start:], (seed, text, out)
        assert size_after(text, edit) == len(out.encode()), (seed, text, out)


def test_prepend_before_a_heading_or_fence_ends_its_line() -> None:
    """`rmh edit N prepend --text top` (and an agent's MCP `edit` of "top") on a note that opens
    with `# Title` made `top# Title`: the heading became a line of text. Text that ends a line,
    or lands before ordinary text, is inserted as given."""
    assert apply("# A\nalpha\n", Edit("prepend", "top")) == "top\n# A\nalpha\n"
    assert apply("---\na: 1\n---\n## B\n", Edit("prepend", "top")) == "---\na: 1\n---\ntop\n## B\n"
    assert apply("```\ncode\n```\n", Edit("prepend", "top")) == "top\n```\ncode\n```\n"
    assert apply("# A\r\nx\r\n", Edit("prepend", "top")) == "top\r\n# A\r\nx\r\n"
    assert apply("# A", Edit("prepend", "top")) == "top\n# A"
    assert apply("# A\n", Edit("prepend", "top\n")) == "top\n# A\n"
    assert apply("#tag body\n", Edit("prepend", "top ")) == "top #tag body\n"
    for text in ("# A\nalpha\n", "```\ncode\n```\n", "\ufeff# A"):
        edit = Edit("prepend", "top")
        assert size_after(text, edit) == len(apply(text, edit).encode())


def test_a_heading_after_a_byte_order_mark_is_a_section() -> None:
    """A note saved with a BOM (Windows Notepad) whose first line is `# Plans`: `rmh edit N
    section --heading Plans` was refused, "heading 'Plans' matches 0 headings"."""
    text = "\ufeff# Plans\nold\n## Later\nkeep\n"
    assert apply(text, Edit("section", "new\n", heading="Plans")) == "\ufeff# Plans\nnew\n"
    assert apply(text, Edit("section", "n", heading="Later")) == "\ufeff# Plans\nold\n## Later\nn"
    assert [h[2:] for h in headings(text, body_start(text))] == [(1, "Plans"), (2, "Later")]
    assert apply("\ufeff# Plans\n", Edit("prepend", "top")) == "\ufefftop\n# Plans\n"
