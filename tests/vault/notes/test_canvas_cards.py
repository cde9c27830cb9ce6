"""notes/canvas_cards.py: the file cards of an Obsidian canvas naming a moved note, rewritten
with every other byte kept."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as hs

from vault.notes.canvas_cards import is_canvas, moved_cards

OBSIDIAN = (  # as Obsidian saves a canvas: tab-indented, one node per line
    '{\n\t"nodes":[\n'
    '\t\t{"id":"a1","type":"file","file":"a/Target.md","x":-10,"y":20,"width":400,"height":400},\n'
    '\t\t{"id":"b2","type":"text","text":"see \\"file\\":\\"a/Target.md\\"","x":1,"y":2,'
    '"width":3,"height":4},\n'
    '\t\t{"id":"c3","type":"file","file":"a/Target.md","subpath":"#Head","x":0,"y":0,'
    '"width":1,"height":1},\n'
    '\t\t{"id":"d4","type":"file","file":"a/Sib.md","x":0,"y":0,"width":1,"height":1}\n'
    '\t],\n\t"edges":[\n\t\t{"id":"e","fromNode":"a1","fromSide":"right","toNode":"d4",'
    '"toSide":"left"}\n\t]\n}')


def test_only_the_cards_naming_the_note_change_and_every_other_byte_stays() -> None:
    out = moved_cards(OBSIDIAN, "a/Target.md", "b/Target Moved.md")
    assert out == OBSIDIAN.replace('"file":"a/Target.md"', '"file":"b/Target Moved.md"')
    doc = json.loads(out)
    assert [n.get("file") for n in doc["nodes"]] == [
        "b/Target Moved.md", None, "b/Target Moved.md", "a/Sib.md"]
    assert "a/Target.md" in doc["nodes"][1]["text"]  # a text card's words are not a card


def test_no_card_or_no_canvas_is_none() -> None:
    assert moved_cards(OBSIDIAN, "a/Other.md", "b/x.md") is None
    for text in ("", "not json", "[]", '{"nodes": 3}', '{"edges": []}'):
        assert moved_cards(text, "a/Target.md", "b/x.md") is None


def test_a_path_written_with_escapes_is_rewritten_as_obsidian_writes_the_file() -> None:
    text = '{"nodes":[{"id":"x","type":"file","file":"a\\/T\\u00e9.md"}],"edges":[]}'
    out = moved_cards(text, "a/Té.md", "b/Té 2.md")
    assert out is not None
    assert json.loads(out) == {"nodes": [{"id": "x", "type": "file", "file": "b/Té 2.md"}],
                               "edges": []}
    ascii_escaped = '{"nodes":[{"type":"file","file":"a/T\\u00e9.md"}]}'
    assert moved_cards(ascii_escaped, "a/Té.md", "b/Ü.md") == (
        '{"nodes":[{"type":"file","file":"b/\\u00dc.md"}]}')


def test_is_canvas() -> None:
    assert is_canvas("x/Board.canvas") and is_canvas("B.CANVAS")
    assert not is_canvas("x/Board.canvas.md") and not is_canvas("canvas")


@given(hs.lists(hs.sampled_from(["a/T.md", "b/U.md", "c d/é.md"]), min_size=1, max_size=6),
       hs.sampled_from(["a/T.md", "c d/é.md"]), hs.sampled_from(["", "\t", 2]),
       hs.booleans())
def test_any_canvas_rewrites_exactly_its_cards_to_the_note(
        files: list[str], old: str, indent: str | int, ascii_only: bool) -> None:
    doc = {"nodes": [{"id": str(i), "type": "file", "file": f} for i, f in enumerate(files)],
           "edges": []}
    text = json.dumps(doc, indent=indent or None, ensure_ascii=ascii_only)
    out = moved_cards(text, old, "n/Moved ü.md")
    if old not in files:
        assert out is None
        return
    assert out is not None
    assert [n["file"] for n in json.loads(out)["nodes"]] == [
        "n/Moved ü.md" if f == old else f for f in files]
    assert len(out.splitlines()) == len(text.splitlines())  # its layout kept


def test_text_cards_are_relinked_with_every_other_byte_kept() -> None:
    """FIX36: a text card's markdown goes through `relink` (a move's link rewrite); only the
    `"text"` members it changes are replaced, even beside no file card of the note."""
    text = ('{"nodes":[{"id":"t","type":"text","text":"a [[Old]]\\nb","x":1},\n'
            ' {"id":"u", "type" : "text", "text" : "no link","zz":[1]},'
            '{"id":"v","type":"text","text":"a [[Old]]\\nb"}],"edges":[],"k":"kept"}')
    out = moved_cards(text, "x/Old.md", "y/New.md", lambda t: t.replace("[[Old]]", "[[New]]"))
    assert out == text.replace("[[Old]]", "[[New]]")
    assert moved_cards(text, "x/Old.md", "y/New.md", lambda t: None) is None
    assert moved_cards(text, "x/Old.md", "y/New.md") is None  # no relink: text cards kept
