"""The old name of a move (and a delete) removed only while it is still the linked file, checked
where no editor can change it: the name is renamed aside, the file checked there, the aside
unlinked (storage/removal.py `_unlinked`). Before FIX37 `_relocated` checked the name and
then unlinked it by name: an editor's save by rename between the two was removed, its bytes
found nowhere (docs/measurements/session37/FIX37_relocate_window-before.out).

A kill while the name is aside leaves a hidden file the next open settles before it reads the
move's rename (`Removal.settle_relocation`, the aside's name recorded in the move's intent):
the very file at the new name, it is removed; an editor's save, it goes back to the old name
and follows the note (intent_merge.fold_old). Checked here with real processes killed after
each file operation (RMH_FAULT_AFTER_OPS), an editor saving right before the kill."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.crash_move import NEW, OLD, REPO, make_template, rmh, texts
from tests.forks import CLI_PRELOAD, ForkServer, cli_env, cli_runner
from tests.vault.editor_saves import saving_after_check
from vault import Vault
from vault.storage import removal

LINE = "The editor's line, saved under the old name.\n"

# `rmh move OLD NEW` in which the editor saves the note under its old name right after the
# process's SAVE_AT-th file operation (the store's count, wrapped); RMH_FAULT_AFTER_OPS kills it.
MOVE_SAVING = r"""
import os, sys
import vault.storage.store as store
at, note, text = int(os.environ["SAVE_AT"]), sys.argv[1], sys.argv[2]
real = store.operation_made
def made(after):
    count = real(after)
    if count == at:
        tmp = os.path.join(os.path.dirname(note), ".Target.md.swp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, note)
    return count
store.operation_made = made
from harness.entry import main
sys.argv = ["rmh", *sys.argv[3:]]
sys.exit(main())
"""


def _hidden(root: Path) -> list[str]:
    """Files a move or a recovery set aside and left (".NAME.rmh-tmp-aside-..." or "-kept-")."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob(".*.rmh-*")
                  if ".rmh" not in p.relative_to(root).parts[:-1])


@pytest.mark.parametrize("op", ["move", "delete"])
def test_a_save_between_the_check_and_the_unlink_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str) -> None:
    root = tmp_path / "v"
    (root / "a").mkdir(parents=True)
    (root / "c").mkdir()
    (root / OLD).write_text("# Target\n\nThe plan.\n", encoding="utf-8")
    (root / "c/Ref.md").write_text("See [[Target]].\n", encoding="utf-8")
    saved = "# Target\n\nThe editor's save, right after the check.\n"
    Vault.init(root).close()
    monkeypatch.setattr(removal, "_same_file", saving_after_check(root / OLD, saved,
                                                                removal._same_file))
    with Vault.open(root) as v:
        if op == "move":
            v.move("a/Target", "b/Target Moved")
        else:
            v.delete("a/Target")
    held = sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and p.read_text(encoding="utf-8", errors="replace") == saved)
    assert held == (["b/Target Moved.md"] if op == "move" else [OLD]), held  # main: []
    assert _hidden(root) == []


@pytest.mark.slow
def test_a_save_right_before_a_kill_anywhere_in_the_move_is_in_the_moved_note(
        tmp_path: Path) -> None:
    """The move killed after each file operation N, the editor saving the note under its old
    name right after operation N - 1 (the kill lands between the rename's link and its aside,
    between the aside and its check, and everywhere else); then `rmh doctor`: the editor's
    line in exactly one note, the new one when the recovery finished the move, no link
    dangling, no intent pending, nothing hidden left beside the note. (A save after the
    intent's finish stays a note of its own at the old name: README `vault.move`.)"""
    template = make_template(tmp_path / "template", 2)
    original = (template / OLD).read_text(encoding="utf-8")
    work, points, aside_kills = tmp_path / "work", 0, 0
    with ForkServer(CLI_PRELOAD, workdir=tmp_path / "forks", cwd=REPO) as server:
        runner = cli_runner(server, REPO)
        for n in range(2, 200):
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(template, work)
            env = {**cli_env(tmp_path, fault_after=n), "SAVE_AT": str(n - 1)}
            moved = server.run([str(work / OLD), original + LINE, "--vault", str(work),
                                "move", OLD, NEW], code=MOVE_SAVING, env=env, cwd=REPO)
            if moved.returncode != -9:
                assert moved.returncode == 0, moved.stderr
                break
            points += 1
            aside_kills += bool(_hidden(work))
            doc = rmh(work, "doctor", "--json", runner=runner)
            assert doc.returncode == 0, doc.stderr
            vault = json.loads(doc.stdout)["vault"]
            now = texts(work)
            holding = sorted(p for p, b in now.items() if LINE.encode() in b)
            assert vault["intents"]["pending"] == [] and vault["dangling_links"] == [], n
            assert _hidden(work) == [], (n, _hidden(work))
            assert len(holding) == 1, (n, holding)
            if vault["intents"]["recovered"] and NEW in now:  # finished by the recovery:
                assert holding == [NEW] and OLD not in now, (n, holding, sorted(now))  # followed
    assert points > 10 and aside_kills > 0, (points, aside_kills)
