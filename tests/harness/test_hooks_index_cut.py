"""The hooks' journal keeps a prompt's first PROMPT_CHARS characters: a prompt cut in the
middle of an erased note's line held no whole needle, so `forget` kept its journal line, with
the line's first half. Now it goes, as a line naming an erased string does
(tests/vault/test_erasure_cut_query.py: the event log's queries)."""

from __future__ import annotations

from pathlib import Path

from harness import hooks_forget, hooks_index, hooks_used
from tests.vault.test_erasure_cut_query import LINE, _cut_query


def test_a_prompt_cut_into_an_erased_line_leaves_the_hooks_journal(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    hooks_index.journal_shown(root, "s1", _cut_query(LINE), ["keep.md"])
    hooks_index.journal_shown(root, "s1", "tomatoes and basil " * 40, ["keep.md"])
    hooks_forget.forget(root, [LINE, "diary.md"])
    kept = hooks_index.take_shown(root, "s1")
    assert [p[:8] for p, _ in kept] == ["tomatoes"]


def test_forget_never_rewrites_a_file_a_journal_link_names(tmp_path: Path) -> None:
    """A symlink in the hooks' journal folder (`.rmh/hooks/`) to a file outside the vault:
    `forget` rewrote that file without the lines naming the subject (`journal_shown` appended
    to it, `remember_used` wrote its temporary through one). The link is dropped; the file it
    named keeps its bytes."""
    root = tmp_path / "v"
    (root / ".rmh" / "hooks").mkdir(parents=True)
    outside = tmp_path / "diary.txt"
    outside.write_text("Quillon came by.\nA quiet day.\n")
    for name in ("s9.jsonl", hooks_index.USED_FILE):
        (root / ".rmh" / "hooks" / name).symlink_to(outside)
    hooks_forget.forget(root, ["Quillon"])
    assert outside.read_text() == "Quillon came by.\nA quiet day.\n"
    assert sorted(p.name for p in (root / ".rmh" / "hooks").iterdir()) == []
    link = hooks_used.session_journal(root, "s1")
    link.symlink_to(outside)
    hooks_index.journal_shown(root, "s1", "a prompt", ["keep.md"])
    assert outside.read_text() == "Quillon came by.\nA quiet day.\n" and not link.is_symlink()
    (root / ".rmh" / "hooks" / "used.tmp").symlink_to(outside)
    hooks_index.remember_used(root, ["keep.md"])
    assert outside.read_text() == "Quillon came by.\nA quiet day.\n"
    assert hooks_index.used_lately(root) == ["keep.md"]


def test_forget_leaves_a_running_hooks_temporary_and_removes_a_dead_ones(tmp_path: Path) -> None:
    """`forget` removed every hidden `.tmp` in `.rmh/hooks/`, a running hook's included: the
    temporary of its `used.json` update, renamed into place a moment later, was gone, and the
    update silently lost (session 36's review). A temporary whose writer (the pid in its
    name, `replace_whole`'s `.NAME.PID.tmp`) is alive is its writer's; a dead writer's goes."""
    import subprocess
    import sys

    root = tmp_path / "v"
    folder = root / ".rmh" / "hooks"
    folder.mkdir(parents=True)
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait()  # its pid is unused now (reuse within the test is unlikely)
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live_tmp = folder / f".{hooks_index.USED_FILE}.{running.pid}.tmp"
        dead_tmp = folder / f".{hooks_index.USED_FILE}.{ended.pid}.tmp"
        live_tmp.write_text('["keep.md"]')
        dead_tmp.write_text('["keep.md"]')
        hooks_forget.forget(root, ["Quillon"])
        assert live_tmp.read_text() == '["keep.md"]'
        assert not dead_tmp.exists()
    finally:
        running.kill()
        running.wait()
