"""Hooks attacked from outside: an install that fails leaves the client's settings as they
were, and parallel client sessions never share a journal of what the prompt hook showed."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.hooks_index import journal_shown, take_shown
from tests.harness.test_hooks_session import rmh

# pairs of distinct client session ids whose old journal names were one file
CLASHING = [("hook-claude-code-a/b", "hook-claude-code-a:b"),
            ("hook-codex-" + "x" * 130 + "1", "hook-codex-" + "x" * 130 + "2"),
            ("hook-gemini-s 1", "hook-gemini-s-1")]


@pytest.mark.parametrize(("one", "two"), CLASHING)
def test_parallel_sessions_keep_their_own_journal(tmp_path: Path, one: str, two: str) -> None:
    journal_shown(tmp_path, one, "first prompt", ["a.md"])
    journal_shown(tmp_path, two, "second prompt", ["b.md"])
    assert take_shown(tmp_path, one) == [("first prompt", ["a.md"])]
    assert take_shown(tmp_path, two) == [("second prompt", ["b.md"])]


@pytest.mark.slow
@pytest.mark.parametrize("before", [None, '{"model": "x"}\n'])
def test_install_into_a_folder_that_is_no_vault_leaves_the_settings(
        tmp_path: Path, before: str | None) -> None:
    folder = tmp_path / "notes"  # a folder, but no `rmh init`: every hook would fail
    folder.mkdir()
    (folder / "a.md").write_text("alpha\n", "utf-8")
    project = tmp_path / "proj"
    settings = project / ".claude" / "settings.json"
    if before is not None:
        settings.parent.mkdir(parents=True)
        settings.write_text(before, "utf-8")
    out = rmh(folder, "hooks", "install", "claude-code", "--project", str(project))
    assert out.returncode == 1 and "not a vault" in out.stderr
    if before is None:
        assert not settings.exists()
    else:
        assert settings.read_text("utf-8") == before
        assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]
