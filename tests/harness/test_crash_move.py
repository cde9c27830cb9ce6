"""`rmh move` killed after each of its file operations, through the real CLI (issue 27 item
2): the next process to open the vault finishes (or undoes) the journalled move, so after it
every note is either as it was or as the whole move leaves it, no link dangles, no intent is
left (bench/crash_move.py; bench/bench_crash_move.py runs it with 300 referrers).

The sweep's `rmh move` and `rmh doctor` are real processes forked from a server that imported
the CLI once (tests/forks.py): the move still dies by SIGKILL after its N-th operation."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.crash_move import NEW, OLD, REPO, Runner, kill_at, make_template, reference, rmh, texts
from tests.forks import CLI_PRELOAD, ForkServer, cli_runner

pytestmark = pytest.mark.slow
REFERRERS = 4  # every file operation is a kill point; more referrers repeat the rewrite


def test_a_move_killed_at_every_file_operation_leaves_no_dangling_link(tmp_path: Path) -> None:
    template = make_template(tmp_path / "template", REFERRERS)
    before, after = reference(template, tmp_path / "reference")
    assert sum(before[p] != after.get(p) for p in before) == REFERRERS + 1  # all rewritten
    points = []
    with ForkServer(CLI_PRELOAD, workdir=tmp_path / "forks", cwd=REPO) as server:
        for n in range(1, 1000):
            point = kill_at(template, tmp_path / "work", n, before, after,
                            runner=cli_runner(server, REPO))
            points.append(point)
            assert point.state in ("old", "new"), point
            assert point.dangling == 0 and point.pending == 0, point
            if not point.killed:
                break
    assert not points[-1].killed and points[-1].state == "new"
    assert len(points) > 3 * REFERRERS  # a kill after each op: intent, rename, every rewrite
    assert {p.state for p in points} == {"old", "new"}
    assert any(p.recovered == "rolled forward" for p in points)


def test_a_referrer_rewritten_before_recovery_keeps_its_text_and_gets_its_link(
        tmp_path: Path) -> None:
    """Killed right after the rename; an editor then rewrites one referrer whole, linking the
    old name (its buffer's link: the move was never acknowledged), and deletes another. The
    recovery keeps the editor's text with its link rewritten, reported written (was: left,
    the link dangling, NOTES-REV2 finding 2), and reports the deleted one left."""
    template = make_template(tmp_path / "template", 3)
    work = tmp_path / "work"
    shutil.copytree(template, work)
    # killed right after the rename (the catch-up record of the copy's stamp, its inodes
    # new: 2 ops, storage/catch_up.py restamp; intent: 3; the rename: link, unlink, fsync)
    assert rmh(work, "move", OLD, NEW, fault_after=8).returncode == -9
    assert (work / NEW).exists() and not (work / OLD).exists()
    edited = work / "r" / "Ref 001.md"
    edited.write_text("Someone rewrote this meanwhile: [[Target]].\n", encoding="utf-8")
    (work / "r" / "Ref 002.md").unlink()
    done = rmh(work, "doctor", "--json")  # the next open recovers first; doctor reports it
    assert done.returncode == 0, done.stderr
    vault = json.loads(done.stdout)["vault"]
    (outcome,) = vault["intents"]["recovered"]
    assert outcome["state"] == "rolled forward" and outcome["left"] == ["r/Ref 002.md"]
    assert outcome["written"] == ["r/Ref 000.md", "r/Ref 001.md", NEW]
    assert edited.read_text(encoding="utf-8") == (
        "Someone rewrote this meanwhile: [[Target Moved]].\n")
    assert vault["dangling_links"] == []
    assert b"[[Target Moved]]" in texts(work)["r/Ref 000.md"]
    assert not list((work / ".rmh" / "intents").glob("*.json"))


def killed_moves(tmp_path: Path, template: Path, work: Path) -> Iterator[tuple[int, Runner]]:
    """For n = 1, 2, ...: `work` a fresh copy of `template`, `rmh move OLD NEW` in it killed
    after its n-th file operation; yields n and the runner for the next commands, until a
    move runs to its end (asserted to succeed)."""
    with ForkServer(CLI_PRELOAD, workdir=tmp_path / "forks", cwd=REPO) as server:
        runner = cli_runner(server, REPO)
        for n in range(1, 1000):
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(template, work)
            moved = rmh(work, "move", OLD, NEW, fault_after=n, runner=runner)
            if moved.returncode != -9:
                assert moved.returncode == 0, moved.stderr
                return
            yield n, runner


def _editor_saves(path: Path, text: str) -> None:
    """As editors save: the whole text to a temporary beside the note, renamed over it."""
    tmp = path.with_name(f".{path.name}.swp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def test_a_move_killed_anywhere_then_its_referrers_saved_by_an_editor_leaves_no_link_dangling(
        tmp_path: Path) -> None:
    """Killed after each file operation; before the next process opens the vault an editor
    saves every referrer with a line of its own added (written whole to a temporary and
    renamed, as editors save), under the link line and above it. The recovery makes the
    plan's link rewrites over the editor's text (storage/intents.py, notes/merge3.py): no
    link dangles, every editor line is kept, nothing is left pending (ADVSTORE2's probe:
    links dangled at 65 of 76 kill points)."""
    template = make_template(tmp_path / "template", 3)
    refs = sorted(p.relative_to(template).as_posix() for p in (template / "r").glob("*.md"))
    work = tmp_path / "work"
    moves = 0
    for n, runner in killed_moves(tmp_path, template, work):
        for i, rel in enumerate(refs):
            text = (work / rel).read_text(encoding="utf-8")
            _editor_saves(work / rel, f"Editor's top line {i}.\n{text}" if i % 2 else
                          f"{text}Editor's line {i} at {n}.\n")
        doc = rmh(work, "doctor", "--json", runner=runner)
        assert doc.returncode == 0, doc.stderr
        vault = json.loads(doc.stdout)["vault"]
        assert vault["intents"]["pending"] == [], n
        assert vault["dangling_links"] == [], (n, vault["intents"]["recovered"])
        now = texts(work)
        done = NEW in now
        assert done != (OLD in now), n  # killed before the intent: nothing moved
        moves += done
        for i, rel in enumerate(refs):
            assert (b"Editor's top line" if i % 2 else b"Editor's line") in now[rel], n
            assert (b"[[Target Moved]]" in now[rel]) == done, n
            assert (b"[[Target]]" in now[rel]) != done, n
        assert all(o["left"] == [] for o in vault["intents"]["recovered"]), n
    assert moves > 6  # killed after the intent, the rename, every rewrite: all finished


ADDED = ("see [[Target]] again.\n", "and [[A/target|x]].\n", "and [[Target#Head|h]].\n",
         "md [t](../a/Target.md#h).\n", None)  # None: a copy of the referrer's first line


def test_a_link_to_the_old_name_an_editor_adds_before_recovery_is_rewritten_not_dangling(
        tmp_path: Path) -> None:
    """Killed after each file operation; before the next process an editor saves every
    referrer (temp file and rename) with a line of its own linking the moved note by its old
    name: bare, by path in another case, with a heading, markdown, a copy of a link line.
    Whenever the next open recovers the move, each such link is rewritten as the plan
    rewrote the others (the editor's other bytes kept), the referrer reported written, no
    link dangles. Killed after the intent is finished (the move whole), the editor's links
    to the old name are the user's own: doctor lists them. On main the recovery kept them
    as written and reported the files written: 7 dangled at each of 26 kill points
    (docs/measurements/session30/MOVE3_added_link-before.out)."""
    template = make_template(tmp_path / "template", len(ADDED))
    refs = sorted(p.relative_to(template).as_posix() for p in (template / "r").glob("*.md"))
    work = tmp_path / "work"
    recoveries = 0
    for n, runner in killed_moves(tmp_path, template, work):
        for rel, line in zip(refs, ADDED, strict=True):
            text = (work / rel).read_text(encoding="utf-8")
            _editor_saves(work / rel, text + (line or text.splitlines(keepends=True)[0]))
        doc = rmh(work, "doctor", "--json", runner=runner)
        assert doc.returncode == 0, doc.stderr
        vault = json.loads(doc.stdout)["vault"]
        recovered, dangling = vault["intents"]["recovered"], vault["dangling_links"]
        assert vault["intents"]["pending"] == [], n
        now = texts(work)
        if (work / OLD).exists():
            assert dangling == [] and NEW not in now, n  # killed before the intent
            continue
        if not recovered:  # killed after the move was whole: the editor's own links
            assert {d["note"] for d in dangling} <= set(refs), n
            continue
        recoveries += 1
        assert dangling == [], (n, recovered)
        (outcome,) = recovered
        assert outcome["left"] == [], n  # each written, or holding its rewrite already
        for rel, line in zip(refs, ADDED, strict=True):
            if line is not None:  # the editor's line, its link to the moved note's name
                assert line.replace("[[Target", "[[Target Moved").replace(
                    "[[A/target", "[[Target Moved").replace(
                    "../a/Target.md", "../b/Target%20Moved.md").encode() in now[rel], n
            assert b"[[Target]]" not in now[rel], n
    assert recoveries > 6


UNLISTED = {"r/Other.md": "see [[Target]] and [md](../a/Target.md#Head).\n",
            "Top.md": "and [[a/target|x]], [[Target#Head]].\n",  # no link to a/Target before
            "deep/er/Near.md": "and [[Target]].\n"}  # deep/er/Target.md's, from its folder


def test_a_link_to_the_old_name_an_editor_adds_to_a_note_the_plan_did_not_list_is_rewritten(
        tmp_path: Path) -> None:
    """Killed after each file operation; before the next process an editor saves two notes
    that did not link to the moved note when the move was planned (so its plan does not list
    them), each with links to its old name (and one with a link to another note of its name,
    which stays as written). Whenever the next open recovers the move (the
    move unacknowledged: those links meant the note that moved), they are rewritten by the
    plan's rule, the files reported written, and no link dangles. Killed after the intent is
    finished, the links are the user's own, written after the whole move: doctor lists them.
    On main the recovery left them dangling and reported nothing."""
    template = make_template(tmp_path / "template", 2)
    (template / "deep" / "er").mkdir(parents=True)
    for rel in [*UNLISTED, "deep/er/Target.md"]:
        (template / rel).write_text("Nothing linked here.\n", encoding="utf-8")
    assert rmh(template, "init", "--no-dense").returncode == 0
    work = tmp_path / "work"
    recoveries = 0
    for n, runner in killed_moves(tmp_path, template, work):
        for rel, line in UNLISTED.items():
            _editor_saves(work / rel, (work / rel).read_text(encoding="utf-8") + line)
        doc = rmh(work, "doctor", "--json", runner=runner)
        assert doc.returncode == 0, doc.stderr
        vault = json.loads(doc.stdout)["vault"]
        recovered, dangling = vault["intents"]["recovered"], vault["dangling_links"]
        assert vault["intents"]["pending"] == [], n
        now = texts(work)
        if (work / OLD).exists():
            assert dangling == [] and NEW not in now, n  # killed before the intent
            continue
        if not recovered:  # killed after the move was whole: the editor's own links
            assert {d["note"] for d in dangling} == {"r/Other.md", "Top.md"}, n
            continue
        recoveries += 1
        assert dangling == [], (n, recovered)
        (outcome,) = recovered
        assert {"r/Other.md", "Top.md"} <= set(outcome["written"]), n
        assert "deep/er/Near.md" not in outcome["written"] and outcome["left"] == [], n
        assert now["r/Other.md"].endswith(
            b"see [[Target Moved]] and [md](../b/Target%20Moved.md#Head).\n"), n
        assert now["Top.md"].endswith(b"and [[Target Moved|x]], [[Target Moved#Head]].\n"), n
        assert now["deep/er/Near.md"].endswith(b"and [[Target]].\n"), n
    assert recoveries > 4


def test_a_command_on_the_old_name_of_a_move_its_open_finished_says_where_it_went(
        tmp_path: Path) -> None:
    """Killed after its intent, before its rename: the user still sees a/Target.md and moves
    it elsewhere. The open finishes the first move, so the note is not found at the old name;
    the answer names where the finished move put it (was: a bare `note not found`)."""
    template = make_template(tmp_path / "template", 2)
    work = tmp_path / "work"
    shutil.copytree(template, work)
    assert rmh(work, "move", OLD, NEW, fault_after=5).returncode == -9
    assert (work / OLD).exists() and not (work / NEW).exists()
    again = rmh(work, "move", "--json", "a/Target", "c/Third")
    assert again.returncode == 1
    error = json.loads(again.stdout)["error"]
    assert error["kind"] == "note_not_found" and error["moved_to"] == NEW
    assert f"moved it to {NEW!r}" in error["message"]
    assert (work / NEW).exists() and not (work / OLD).exists()
