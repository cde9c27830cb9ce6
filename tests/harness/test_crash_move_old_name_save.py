"""`rmh move` killed after each of its file operations, then, before the next process opens
the vault, the moved note's editor saves it under the name it knows, the old one (its text to
a temporary, renamed over `a/Target.md`, as editors save). The move was never acknowledged:
the next open finishes it with the editor's save at the new name (its relative link rewritten
as the plan rewrites it), nothing left at the old name, every link to the note that holds the
save. On main the recovery rolled forward over the stale copy: the save stayed at the old
name, no link to it, the links to a copy without it (18 of 30 kill points,
docs/measurements/session36/STORE11_editor_old_path-before.out)."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from bench.crash_move import NEW, OLD, REPO, Runner, make_template, rmh, texts
from tests.forks import CLI_PRELOAD, ForkServer, cli_runner
from tests.harness.test_crash_move import killed_moves
from tests.vault.editor_saves import save_as_editor

pytestmark = pytest.mark.slow
LINE = "The editor's line, saved under the old name.\n"
FRESH = b"# Another note\nMade under the free name after the move.\n"


def test_a_save_under_the_old_name_before_recovery_follows_the_moved_note(
        tmp_path: Path) -> None:
    template = make_template(tmp_path / "template", 2)
    original = (template / OLD).read_text(encoding="utf-8")
    work, recoveries = tmp_path / "work", 0
    for n, runner in killed_moves(tmp_path, template, work):
        save_as_editor(work / OLD, original + LINE)
        doc = rmh(work, "doctor", "--json", runner=runner)
        assert doc.returncode == 0, doc.stderr
        vault = json.loads(doc.stdout)["vault"]
        assert vault["intents"]["pending"] == [], n
        now = texts(work)
        if not vault["intents"]["recovered"]:  # killed before the intent, or after its end
            continue
        recoveries += 1
        (outcome,) = vault["intents"]["recovered"]
        assert outcome["state"] == "rolled forward" and outcome["left"] == [], (n, outcome)
        assert OLD not in now, (n, outcome)
        assert now[NEW] == (original.replace("(./Sib.md)", "(../a/Sib.md)") + LINE).encode(), n
        assert NEW in outcome["written"], n
        assert vault["dangling_links"] == [], n
        assert all(b"[[Target Moved" in now[r] and b"[[Target]]" not in now[r]
                   for r in now if r.startswith("r/")), n
    assert recoveries > 10


def test_the_recovery_that_makes_the_save_follow_killed_anywhere_is_finished_by_the_next(
        tmp_path: Path) -> None:
    """The move killed right after its rename, the save under the old name made; the next
    open's recovery itself killed after each of its file operations; then the open after it:
    the save at the new name, nothing at the old one, no link dangling, no intent left (a
    first version of the fix, removing the old name by `erase`'s set-aside, left the save at
    both names when killed between its set-aside and its unlink)."""
    template = make_template(tmp_path / "template", 2)
    original = (template / OLD).read_text(encoding="utf-8")
    stage, work = tmp_path / "stage", tmp_path / "work"
    with ForkServer(CLI_PRELOAD, workdir=tmp_path / "forks", cwd=REPO) as server:
        runner = cli_runner(server, REPO)
        _killed_after_rename(template, stage, runner)
        save_as_editor(stage / OLD, original + LINE)
        killed = 0
        for m, first, doc in _recovery_killed_at_each_op(stage, work, runner):
            vault = json.loads(doc.stdout)["vault"]
            now = texts(work)
            assert vault["intents"]["pending"] == [] and vault["dangling_links"] == [], m
            assert OLD not in now and LINE.encode() in now[NEW], m
            killed += first.returncode == -9
    assert killed > 3


def test_another_note_made_at_the_freed_old_name_before_recovery_loses_no_byte(
        tmp_path: Path) -> None:
    """The move killed right after its rename; before the next open the user makes another
    note at the freed old name (nothing tells it from a save of the moved note): the recovery
    makes it follow the links as a save, and the moved note's text it replaced at the new name
    is kept in the trash (REV36: before, the rename over the new name removed it: the moved
    note's bytes found nowhere, REV36_newnote-before-fix.out)."""
    with _another_note_at_the_old_name(tmp_path) as (runner, stage, forms):
        doc = rmh(stage, "doctor", "--json", runner=runner)
    assert doc.returncode == 0, doc.stderr
    everything = [p.read_bytes() for p in stage.rglob("*") if p.is_file()]
    assert FRESH in everything
    assert any(form in everything for form in forms)


def test_the_moved_text_the_new_note_replaced_is_reported_by_the_next_doctor(
        tmp_path: Path) -> None:
    """The same, recovered by another command (`rmh links`), then `rmh doctor`: the recovered
    move's outcome names the trash copy holding the moved note's text the file at the old
    name replaced (FIX37: before, the copy was made and nothing said it, 17 of 23 kill
    points of FIX37_newnote-before.out; the user could not know a note's text was replaced)."""
    with _another_note_at_the_old_name(tmp_path) as (runner, stage, forms):
        assert rmh(stage, "links", "a/Sib", runner=runner).returncode == 0
        shutil.copytree(stage, tmp_path / "copy")  # the text report of the same state
        doc = rmh(stage, "doctor", "--json", runner=runner)
        text = rmh(tmp_path / "copy", "doctor", runner=runner)
    assert doc.returncode == 0, doc.stderr
    (outcome,) = json.loads(doc.stdout)["vault"]["intents"]["recovered"]
    (kept,) = outcome["replaced"]
    assert kept.startswith(".rmh/trash/") and (stage / kept).read_bytes() in forms
    assert kept in text.stdout  # still shown: the report of a recovery made by `links`


def test_the_replaced_text_is_reported_when_the_recovery_that_folded_it_was_killed(
        tmp_path: Path) -> None:
    """The same other note, the recovery itself killed after each of its file operations M,
    then `rmh doctor`: wherever the moved note's text is no longer a note, a report names
    its trash copy (the killed run's answer, or this doctor's: FIX37, a recovery killed after
    its fold, or failed on a full disk, left the copy unreported; so did a kill between the
    intent's finish and the report's log, FIX37_full_disk_fold-branch-before-report-fix.out)."""
    work = tmp_path / "work"
    with _another_note_at_the_old_name(tmp_path) as (runner, stage, forms):
        replaced_points = 0
        for m, first, doc in _recovery_killed_at_each_op(stage, work, runner):
            said = [o for p in (first, doc) if p.returncode == 0
                    for o in json.loads(p.stdout)["vault"]["intents"]["recovered"]]
            if not any(b in forms for b in texts(work).values()):
                trash = sorted(p.relative_to(work).as_posix()
                               for p in (work / ".rmh" / "trash").rglob("*")
                               if p.is_file() and p.read_bytes() in forms)
                assert trash and any(set(trash) <= set(o.get("replaced", ())) for o in said), (
                    m, trash, said)
                replaced_points += 1
    assert replaced_points > 3


@contextlib.contextmanager
def _another_note_at_the_old_name(tmp_path: Path
                                  ) -> Iterator[tuple[Runner, Path, tuple[bytes, bytes]]]:
    """`stage`: a move killed right after its rename (`_killed_after_rename`), then another
    note (FRESH) made at the freed old name. Yields the CLI runner (its fork server open while
    the context is), the stage, and the moved note's text in the two forms a recovery may
    leave (as it was; its relative link rewritten for the new folder)."""
    template = make_template(tmp_path / "template", 2)
    moved = (template / OLD).read_bytes()
    stage = tmp_path / "stage"
    with ForkServer(CLI_PRELOAD, workdir=tmp_path / "forks", cwd=REPO) as server:
        runner = cli_runner(server, REPO)
        _killed_after_rename(template, stage, runner)
        (stage / OLD).write_bytes(FRESH)
        yield runner, stage, (moved, moved.replace(b"(./Sib.md)", b"(../a/Sib.md)"))


def _killed_after_rename(template: Path, stage: Path, runner: Runner) -> None:
    """`stage` a copy of `template` whose `rmh move` was killed at the first file operation
    that leaves the rename made and the plan pending."""
    for n in range(1, 100):
        shutil.rmtree(stage, ignore_errors=True)
        shutil.copytree(template, stage)
        assert rmh(stage, "move", OLD, NEW, fault_after=n, runner=runner).returncode == -9
        if not (stage / OLD).exists() and list((stage / ".rmh" / "intents").glob("*.json")):
            return
    raise AssertionError("no kill left the rename made and the plan pending")


Run = CompletedProcess[str]


def _recovery_killed_at_each_op(stage: Path, work: Path, runner: Runner
                                ) -> Iterator[tuple[int, Run, Run]]:
    """For M = 1, 2, ...: `work` a fresh copy of `stage`, `rmh doctor` run on it killed after
    its M-th file operation, then `rmh doctor` again (asserted to exit 0): (M, the first run,
    the second). Ends after the first M the first run outlives (it did all it had to do)."""
    for m in range(1, 100):
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(stage, work)
        first = rmh(work, "doctor", "--json", fault_after=m, runner=runner)
        doc = rmh(work, "doctor", "--json", runner=runner)
        assert doc.returncode == 0, doc.stderr
        yield m, first, doc
        if first.returncode != -9:
            return
