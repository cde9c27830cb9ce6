"""vault.notes.note: frontmatter parsing, rendering and byte-preserving frontmatter updates."""

from __future__ import annotations

from typing import Any

import pytest

from vault.errors import VaultError
from vault.notes.note import NoteFormatError, parse, render, update_frontmatter

# -- frontmatter -----------------------------------------------------------------------------------


def test_frontmatter_keys_values_and_order() -> None:
    text = "---\nzeta: 1\nalpha: two\ndate: 2024-01-02\nwhen: 2024-01-02T10:00:00Z\nx: 1.5\n---\nB"
    note = parse(text)
    assert list(note.frontmatter) == ["zeta", "alpha", "date", "when", "x"]
    assert note.frontmatter["date"] == "2024-01-02"  # kept as the source string
    assert note.frontmatter["when"] == "2024-01-02T10:00:00Z"
    assert note.frontmatter["x"] == 1.5
    assert note.body == "B" and note.text[note.body_start :] == "B"


def test_yaml_oddities_are_json_safe() -> None:
    text = "---\n1: int key\nnull: n\nnan: .nan\nbin: !!binary aGk=\ns: !!set {a, b}\n---\n"
    fm = parse(text).frontmatter
    assert fm == {"1": "int key", "null": "n", "nan": ".nan", "bin": "aGk=", "s": ["a", "b"]}


@pytest.mark.parametrize(
    "text",
    [
        "no frontmatter\n---\na: 1\n---\n",
        " ---\na: 1\n---\n",
        "---\na: 1\n",  # never closed
        "--- \na: 1\n---\n",
        "----\na: 1\n----\n",
    ],
)
def test_no_frontmatter_block(text: str) -> None:
    note = parse(text)
    assert note.frontmatter == {} and note.frontmatter_error is None
    assert note.body == text and note.body_start == 0


def test_dots_close_the_block_and_empty_block_is_empty() -> None:
    assert parse("---\na: 1\n...\nbody").frontmatter == {"a": 1}
    assert parse("---\na: 1\n...\nbody").body == "body"
    empty = parse("---\n---\nbody")
    assert (empty.frontmatter, empty.frontmatter_error, empty.body) == ({}, None, "body")


@pytest.mark.parametrize(
    "yaml_text",
    [
        "a: [unclosed",
        "a: 1\n  b: 2",
        "- a list\n- not a map",
        "just a string",
        "a: *undefined",
        "a: &x [*x]",  # recursive alias
        "\t- tab",
        "[" * 2000,
    ],
)
def test_broken_yaml_is_recorded_and_the_note_is_never_rewritten(yaml_text: str) -> None:
    text = f"---\n{yaml_text}\n---\nBody with [[Link]] #tag\n"
    note = parse(text)
    assert note.frontmatter_error
    assert note.frontmatter == {}
    assert note.body == text and note.body_start == 0
    assert [ln.target for ln in note.links] == ["Link"]
    with pytest.raises(NoteFormatError) as info:
        update_frontmatter(text, {"a": 1})
    assert isinstance(info.value, VaultError)
    assert info.value.data()["reason"]


def test_alias_bomb_is_refused_not_expanded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 8)]
    note = parse("---\n" + "\n".join(lines) + "\n---\n")
    assert note.frontmatter_error and "too large" in note.frontmatter_error


def test_crlf_note() -> None:
    text = "---\r\ntitle: T\r\ntags: [a]\r\n---\r\n# Head\r\n[[L]] #b\r\n"
    note = parse(text)
    assert note.frontmatter == {"title": "T", "tags": ["a"]}
    assert note.body == "# Head\r\n[[L]] #b\r\n"
    assert note.headings == ("Head",) and note.tags == ("a", "b")
    out = update_frontmatter(text, {"title": "New", "added": 1})
    assert out == "---\r\ntitle: New\r\ntags: [a]\r\nadded: 1\r\n---\r\n# Head\r\n[[L]] #b\r\n"


# -- render ----------------------------------------------------------------------------------------


def test_render() -> None:
    assert render(None, "body") == "body"
    assert render({}, "body") == "body"
    assert render({"b": 1, "a": [1, "x"]}, "body") == "---\nb: 1\na:\n- 1\n- x\n---\nbody"
    assert render({"d": "2024-01-02"}, "") == "---\nd: 2024-01-02\n---\n"


def test_render_protects_a_body_that_looks_like_frontmatter() -> None:
    body = "---\nnot: frontmatter\n---\ntext"
    note = parse(render(None, body))
    assert note.frontmatter == {} and note.body == body


def test_render_round_trips_characters_pyyaml_mishandles() -> None:
    for fm in ({"\x85": None}, {"k": "a\n---\nb"}, {"k": "line\n...\n"}, {"": "\u2028"}):
        note = parse(render(fm, "b"))
        assert note.frontmatter == fm and note.body == "b"


def test_render_refuses_values_that_do_not_round_trip() -> None:
    with pytest.raises(NoteFormatError):
        render({"x": float("nan")}, "")
    with pytest.raises(NoteFormatError):
        render({"x": object()}, "")


# -- update_frontmatter ----------------------------------------------------------------------------

MESSY = (
    "---\n"
    "# leading comment\n"
    'title:   "Quoted  Title"   # trailing comment\n'
    "date: 2024-01-02\n"
    "tags:\n"
    "  - one\n"
    "  - two\n"
    "\n"
    "# between\n"
    "nested:\n"
    "  deep: {a: 1,   b: 2}\n"
    "text: |\n"
    "  line one\n"
    "  # not a comment\n"
    "zzz: 'last'\n"
    "---\n"
    "Body [[Link]]\n"
)


def test_update_with_no_changes_or_same_values_returns_text_unchanged() -> None:
    assert update_frontmatter(MESSY, {}) == MESSY
    assert update_frontmatter(MESSY, {"title": "Quoted  Title", "missing": None}) == MESSY
    assert update_frontmatter("plain body", {"gone": None}) == "plain body"


def test_update_replaces_only_the_changed_entry() -> None:
    out = update_frontmatter(MESSY, {"tags": ["x"]})
    assert out == MESSY.replace("tags:\n  - one\n  - two\n", "tags:\n- x\n")
    out = update_frontmatter(MESSY, {"text": "new"})
    assert out == MESSY.replace("text: |\n  line one\n  # not a comment\n", "text: new\n")
    out = update_frontmatter(MESSY, {"title": "T"})
    assert out == MESSY.replace('title:   "Quoted  Title"   # trailing comment\n', "title: T\n")


def test_update_deletes_appends_and_keeps_unknown_keys_in_order() -> None:
    out = update_frontmatter(MESSY, {"date": None, "new": {"k": [1, 2]}, "zzz": "z"})
    expected = MESSY.replace("date: 2024-01-02\n", "").replace(
        "zzz: 'last'\n", "zzz: z\nnew:\n  k:\n  - 1\n  - 2\n"
    )
    assert out == expected
    note = parse(out)
    assert list(note.frontmatter) == ["title", "tags", "nested", "text", "zzz", "new"]
    assert note.frontmatter["new"] == {"k": [1, 2]}
    assert note.body == "Body [[Link]]\n"


def test_update_keeps_comments_between_entries() -> None:
    out = update_frontmatter(MESSY, {"tags": None})
    assert "\n\n# between\nnested:" in out and "tags" not in parse(out).frontmatter


def test_update_creates_a_block_when_there_is_none() -> None:
    assert update_frontmatter("body\n", {"a": 1}) == "---\na: 1\n---\nbody\n"
    assert update_frontmatter("body\r\nmore", {"a": 1}) == "---\r\na: 1\r\n---\r\nbody\r\nmore"
    assert update_frontmatter("", {"a": "2024-01-02"}) == "---\na: 2024-01-02\n---\n"
    unclosed = "---\nnot closed\n"
    out = update_frontmatter(unclosed, {"a": 1})
    assert parse(out).frontmatter == {"a": 1} and parse(out).body == unclosed


def test_update_fills_an_empty_block() -> None:
    assert update_frontmatter("---\n---\nb", {"a": True}) == "---\na: true\n---\nb"
    assert update_frontmatter("---\na: 1\n---\nb", {"a": None}) == "---\n---\nb"


def test_update_indented_block_keeps_its_indentation() -> None:
    text = "---\n  a: 1\n  b: 2\n---\n"
    assert update_frontmatter(text, {"a": 5, "c": 3}) == "---\n  a: 5\n  b: 2\n  c: 3\n---\n"


def test_update_of_a_block_with_a_duplicate_key_is_refused() -> None:
    """Two keys that load as one (issue 27): a parse error, so an edit never picks one of
    the two values for the user; the text is left as it is."""
    text = "---\na: 1\nb: 2\na: 3\n---\n"
    with pytest.raises(NoteFormatError, match="duplicate key 'a'"):
        update_frontmatter(text, {"a": 9})


@pytest.mark.parametrize("block", [
    "a: 1\na: 2", "1: x\ntrue: y", "1: x\n01: y", "1: x\n0x1: y", "1: x\n'1': y",
    "true: x\nTrue: y", "false: x\nFALSE: y", "null: x\n~: y", "1: x\n1.0: y",
    "m:\n  k: 1\n  k: 2",
])
def test_keys_that_load_as_one_are_a_parse_error(block: str) -> None:
    text = f"---\n{block}\n---\nbody words\n"
    parsed = parse(text)
    assert parsed.frontmatter == {} and parsed.frontmatter_error is not None
    assert "duplicate key" in parsed.frontmatter_error
    assert "body words" in parsed.body  # still searchable as plain text


def test_merge_keys_may_still_be_overridden() -> None:
    parsed = parse("---\nbase: &b {x: 1, y: 2}\nm:\n  <<: *b\n  x: 3\n---\n")
    assert parsed.frontmatter_error is None
    assert parsed.frontmatter["m"] == {"x": 3, "y": 2}


def test_update_falls_back_to_a_full_dump_when_lines_cannot_be_edited() -> None:
    flow = "---\n{a: 1, b: 2}\n---\nbody"
    assert update_frontmatter(flow, {"b": 3}) == "---\na: 1\nb: 3\n---\nbody"
    anchored = "---\na: &x 1\nb: *x\n---\nbody"
    out = update_frontmatter(anchored, {"a": 2})
    assert parse(out).frontmatter == {"a": 2, "b": 1} and parse(out).body == "body"


def test_update_dates_and_tuples_are_stored_as_plain_values() -> None:
    import datetime

    out = update_frontmatter("", {"d": datetime.date(2024, 5, 6), "t": (1, 2)})
    assert parse(out).frontmatter == {"d": "2024-05-06", "t": [1, 2]}


def test_update_refuses_values_that_cannot_round_trip() -> None:
    with pytest.raises(NoteFormatError):
        update_frontmatter(MESSY, {"x": float("inf")})
    with pytest.raises(NoteFormatError):
        update_frontmatter(MESSY, {"x": {1, 2}})


# Plain scalars as Obsidian reads them (YAML 1.2's core schema), not as YAML 1.1 did.
SCALARS: list[tuple[str, Any]] = [
    ("12:30", "12:30"), ("1:30:00", "1:30:00"), ("yes", "yes"), ("No", "No"), ("NO", "NO"),
    ("on", "on"), ("off", "off"), ("y", "y"), ("012345", 12345), ("-012", -12), ("0o17", 15),
    ("0x1F", 31), ("1e5", 100000.0), ("1_000", "1_000"), ("0b101", "0b101"), ("=", "="),
    ("true", True), ("FALSE", False), ("~", None), ("", None), ("1.10", 1.1), ("-.5", -0.5),
    ("2024-01-02", "2024-01-02"), ("2024-01-02T10:00:00", "2024-01-02T10:00:00"),
]


@pytest.mark.parametrize(("plain", "value"), SCALARS)
def test_plain_scalars_read_as_obsidian_reads_them(plain: str, value: Any) -> None:
    """`time: 12:30` is the text "12:30" (YAML 1.1 read 750), `country: NO` the text "NO" (not
    false), `zip: 012345` the number 12345 (not octal 5349); in a list too; and a value
    written back by an edit reads back the same."""
    parsed = parse(f"---\nk: {plain}\nl: [{plain or 'null'}]\n---\nbody\n")
    assert parsed.frontmatter_error is None
    assert parsed.frontmatter == {"k": value, "l": [value]}
    if value is not None:  # (None deletes a key)
        out = update_frontmatter("---\nother: 1\n---\nbody\n", {"k": value})
        assert parse(out).frontmatter == {"other": 1, "k": value}


# Texts a YAML 1.1 reader (PyYAML's safe_load, Jekyll, MkDocs) reads as a bool, a number or
# null, though Obsidian reads them as text; and texts only YAML 1.2 reads otherwise.
TEXTS_1_1 = ["yes", "No", "ON", "off", "y", "N", "12:30", "1:30:00", "1_000", "0b101",
             "+0x_1F", "=", "-1_0.5", "190:20:30.15", ".NaN"]
TEXTS_1_2 = ["012", "0o17", "1e5", "+1", "-.inf", ".5", "true", "Null", "~", ""]


@pytest.mark.parametrize("text", [t + s for t in TEXTS_1_1 + TEXTS_1_2 for s in ("", " x")])
def test_a_text_rmh_writes_reads_as_text_to_yaml_1_1_and_1_2(text: str) -> None:
    """rmh writes a text plain only when both schemas read it as that text: `draft: 'yes'`,
    not `draft: yes` (true to every YAML 1.1 reader of the same vault, as before session 27's
    core schema); a text that is plain to both (`yes x`) is still written plain."""
    import yaml

    for value in (text, [text], {"n": text}):
        out = update_frontmatter("---\nother: 1\n---\nbody\n", {"k": value})
        block = out.split("---\n")[1]
        assert parse(out).frontmatter == {"other": 1, "k": value}
        assert yaml.safe_load(block) == {"other": 1, "k": value}, block
        if text.endswith(" x") and text != " x":  # (a leading space needs quotes)
            assert f"'{text}'" not in block and f'"{text}"' not in block
