"""A move rewrites the file cards of the vault's Obsidian canvases (`.canvas`) that show the
moved note, as Obsidian does (on main their cards kept the old path: the card showed a file
that no longer exists), and the links to it in their text cards (before FIX36 they kept the
old name: a dangling `[[a/Target]]` on the board). The canvases are rewrites of the move's
plan (storage/intents.py), so `rmh move` killed after any of its file operations leaves, once
the next process opened the vault, every note and canvas either as it was or as the whole
move leaves it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.crash_move import NEW, OLD, Runner, fresh_process, make_template, rmh
from tests.harness.test_crash_move import killed_moves

OBSIDIAN = (  # as Obsidian saves a canvas: tab-indented, one node per line
    '{\n\t"nodes":[\n'
    f'\t\t{{"id":"a1","type":"file","file":"{OLD}","x":-10,"y":20,"width":400,"height":400}},\n'
    '\t\t{"id":"b2","type":"text","text":"Plan","x":1,"y":2,"width":3,"height":4},\n'
    f'\t\t{{"id":"c3","type":"file","file":"{OLD}","subpath":"#Head","x":0,"y":0}},\n'
    '\t\t{"id":"d4","type":"file","file":"a/Sib.md","x":0,"y":0,"width":1,"height":1}\n'
    '\t],\n\t"edges":[]\n}')
NOTES_BOARD = (  # text cards linking to the note (wiki, by path, aliased, markdown), one not
    '{\n\t"nodes":[\n'  # an unknown member and odd spacing kept
    '\t\t{"id":"t1","type":"text","text":"See [[a/Target]] and [[a/Target|it]]\\n'
    '- [md](../a/Target.md) [[Sib]]","x":0,"y":0,"width":9,"height":9,"zz":{"k":[1,2]}},\n'
    '\t\t{"id":"t2", "type" : "text", "text" : "Only [[a/Sib]] here","x":1,"y":1},\n'
    '\t\t{"id":"t3","type":"text","text":"é [[a/Target#Part]] 🙂","x":2,"y":2}\n'
    '\t],\n\t"edges":[],\n\t"extra":"kept"\n}')
NOTES_AFTER = NOTES_BOARD.replace(
    "[[a/Target]] and [[a/Target|it]]", "[[Target Moved]] and [[Target Moved|it]]").replace(
    "(../a/Target.md)", "(../b/Target%20Moved.md)").replace(
    "[[a/Target#Part]]", "[[Target Moved#Part]]")
BOARDS = {
    "boards/Notes.canvas": NOTES_BOARD,  # text cards only: their links follow the note
    "boards/Plan.canvas": OBSIDIAN,  # two cards show the note, one a sibling, a text card
    "One line.canvas": json.dumps({"nodes": [{"id": "z", "type": "file", "file": OLD}],
                                   "edges": []}),
    "boards/Other.canvas": OBSIDIAN.replace(OLD, "a/Sib.md"),  # none shows it: untouched
    "Not json.canvas": f'{{"nodes": [{{"type": "file", "file": "{OLD}"',  # no canvas
}


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".rmh" not in p.parts and p.suffix in (".md", ".canvas")}


def _template(tmp_path: Path) -> Path:
    template = tmp_path / "template"
    template.mkdir()
    for rel, text in BOARDS.items():
        (template / rel).parent.mkdir(parents=True, exist_ok=True)
        (template / rel).write_text(text, encoding="utf-8")
    return make_template(template, 2)


def test_a_move_rewrites_the_canvas_cards_that_show_the_note(tmp_path: Path) -> None:
    work = tmp_path / "work"
    shutil.copytree(_template(tmp_path), work)
    before = _files(work)
    done = rmh(work, "move", OLD, NEW, "--json")
    assert done.returncode == 0, done.stderr
    written = set(json.loads(done.stdout)["rewritten"])
    assert {"boards/Plan.canvas", "One line.canvas"} <= written
    after = _files(work)
    assert after["boards/Plan.canvas"] == OBSIDIAN.replace(
        f'"file":"{OLD}"', f'"file":"{NEW}"').encode()
    assert json.loads(after["One line.canvas"])["nodes"][0]["file"] == NEW
    assert "boards/Notes.canvas" in written
    assert after["boards/Notes.canvas"] == NOTES_AFTER.encode()  # every other byte kept
    for rel in ("boards/Other.canvas", "Not json.canvas"):
        assert after[rel] == before[rel]


@pytest.mark.slow
def test_a_move_killed_anywhere_leaves_its_canvases_all_old_or_all_new(tmp_path: Path) -> None:
    template = _template(tmp_path)
    reference = tmp_path / "reference"
    shutil.copytree(template, reference)
    before = _files(reference)
    assert rmh(reference, "move", OLD, NEW).returncode == 0
    after = _files(reference)
    assert after["boards/Plan.canvas"] != before["boards/Plan.canvas"]
    work, states = tmp_path / "work", []
    for n, runner in killed_moves(tmp_path, template, work):
        states.append(_state(work, n, before, after, runner))
    states.append(_state(work, 0, before, after, fresh_process))  # the move that ran to its end
    assert states[-1] == "new" and "old" in states
    assert states.count("new") > 4  # killed after the intent, the rename, each rewrite


def _state(work: Path, n: int, before: dict[str, bytes], after: dict[str, bytes],
           runner: Runner) -> str:
    """"old" or "new": the notes and canvases of `work` once the next process opened it
    (nothing pending, no link dangling); asserted never a mix."""
    doc = rmh(work, "doctor", "--json", runner=runner)
    assert doc.returncode == 0, (n, doc.stderr)
    vault = json.loads(doc.stdout)["vault"]
    assert vault["intents"]["pending"] == [] and vault["dangling_links"] == [], n
    now = _files(work)
    state = "old" if now == before else "new" if now == after else "MIXED"
    assert state != "MIXED", (n, sorted(p for p in now if now[p] != (
        after if NEW in now else before).get(p)))
    return state


@pytest.mark.slow
def test_a_canvas_an_editor_saves_between_a_kill_and_recovery_keeps_its_card_and_follows(
        tmp_path: Path) -> None:
    """Killed after each file operation; before the next process opens the vault, Obsidian
    saves the canvases with a card of its own added (whole, by rename). Once opened: the new
    card is kept, every text card links to the note where it now is (rewritten again over
    the editor's save: storage/intent_merge.py), and every file card shows the note where it
    now is (no card of the old path beside a moved note, nor of the new path beside an
    unmoved one)."""
    template = _template(tmp_path)
    work, moves = tmp_path / "work", 0
    for n, runner in killed_moves(tmp_path, template, work):
        board, notes = work / "boards/Plan.canvas", work / "boards/Notes.canvas"
        for canvas in (board, notes):
            doc = json.loads(canvas.read_text(encoding="utf-8"))
            doc["nodes"].append({"id": f"e{n}", "type": "text", "text": f"added at {n}"})
            tmp = canvas.with_name(f".{canvas.name}.swp")
            tmp.write_text(json.dumps(doc, indent="\t"), encoding="utf-8")
            tmp.replace(canvas)
        opened = rmh(work, "doctor", "--json", runner=runner)
        assert opened.returncode == 0, (n, opened.stderr)
        assert json.loads(opened.stdout)["vault"]["intents"]["pending"] == [], n
        moved = (work / NEW).exists()
        assert moved != (work / OLD).exists(), n
        moves += moved
        nodes = json.loads(board.read_text(encoding="utf-8"))["nodes"]
        assert any(x.get("id") == f"e{n}" for x in nodes), n  # the editor's card kept
        shown = {x["file"] for x in nodes if x.get("type") == "file"} - {"a/Sib.md"}
        assert shown == {NEW if moved else OLD}, (n, shown)
        cards = {x["id"]: x["text"] for x in json.loads(notes.read_text(encoding="utf-8"))[
            "nodes"]}  # the text cards' links: where the note is now
        assert cards[f"e{n}"] == f"added at {n}", n
        want = json.loads(NOTES_AFTER if moved else NOTES_BOARD)["nodes"]
        assert [cards[x["id"]] for x in want] == [x["text"] for x in want], (n, cards)
    assert moves > 4  # killed after the intent, the rename, each rewrite: all finished
