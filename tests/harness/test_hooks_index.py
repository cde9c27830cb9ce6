"""The hooks' own files in `.rmh/` (harness/hooks_index.py), through real hook processes: the
FTS5 index is derived from the notes, so a damaged one is made again by the next refresh (a
session end) instead of failing every hook for good; and a FIFO in place of the index or of
the used-lately list never holds the client (a hook must return at once)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.forks import run_cli

from .test_cli_damaged_state import other_apps_database
from .test_hooks_session import hook, vault  # noqa: F401 (a fixture)
from .test_server_e2e import CHILD_ENV, REPO

pytestmark = pytest.mark.slow


def quick_hook(root: Path, event: str, payload: dict[str, Any]) -> str:
    """The hook's output; it must end in seconds with exit 0 and no traceback."""
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    out = run_cli(["--vault", str(root), "hook", event, "--client", "claude-code"],
                  env=env, cwd=REPO, stdin=json.dumps(payload), timeout=60)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    return out.stdout


PROMPT = {"session_id": "s1", "prompt": "when does the nightly job run"}


def test_a_damaged_hooks_index_is_made_again_by_the_next_refresh(
        vault: Path, tmp_path: Path) -> None:  # noqa: F811 (the fixture)
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("", encoding="utf-8")
    quick_hook(vault, "session-start", {"session_id": "s1", "cwd": str(tmp_path)})
    assert "02:00" in quick_hook(vault, "prompt", PROMPT)
    index = vault / ".rmh" / "hooks.sqlite"
    index.write_bytes(b"damaged, not a database " * 200)
    assert quick_hook(vault, "prompt", PROMPT) == ""  # one line on stderr, nothing injected
    hook(vault, "session-end", {"session_id": "s1", "transcript_path": str(transcript)})
    assert "02:00" in quick_hook(vault, "prompt", PROMPT)


@pytest.mark.parametrize("where", ["hooks.sqlite", "hooks/used.json"])
def test_a_fifo_among_the_hooks_files_never_holds_a_hook(
        vault: Path, tmp_path: Path, where: str) -> None:  # noqa: F811 (the fixture)
    quick_hook(vault, "session-start", {"session_id": "s1", "cwd": str(tmp_path)})
    path = vault / ".rmh" / where
    for extra in path.parent.glob(f"{path.name}*"):
        extra.unlink()
    path.parent.mkdir(exist_ok=True)
    os.mkfifo(path)
    quick_hook(vault, "session-start", {"session_id": "s2", "cwd": str(tmp_path)})
    quick_hook(vault, "prompt", PROMPT)


def test_a_hooks_index_linked_to_another_database_is_replaced_not_written(
        vault: Path, tmp_path: Path) -> None:  # noqa: F811 (the fixture)
    """`.rmh/hooks.sqlite` a symlink to another program's SQLite database: the refresh wrote
    its tables (and rows of the notes) into that file. The link is replaced by the index."""
    other = tmp_path / "elsewhere.sqlite"
    before = other_apps_database(other)
    index = vault / ".rmh" / "hooks.sqlite"
    for extra in index.parent.glob("hooks.sqlite*"):
        extra.unlink()
    index.symlink_to(other)
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("", encoding="utf-8")
    quick_hook(vault, "session-start", {"session_id": "s1", "cwd": str(tmp_path)})
    quick_hook(vault, "prompt", PROMPT)
    hook(vault, "session-end", {"session_id": "s1", "transcript_path": str(transcript)})
    assert other.read_bytes() == before
    assert not index.is_symlink() and "02:00" in quick_hook(vault, "prompt", PROMPT)
