"""The prompt hook's own index (FTS5, unicode61) took a run of a script written without spaces
for one word: "東京は日本の首都です。" was one token, so a Japanese or Chinese prompt recalled
nothing that `rmh search` finds (session 42, REVIEW42). Both sides now read such a run as its
bigrams, as the search does; real hook processes on the FTS path ([hooks] daemon = false)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_hooks_session import hook, rmh

NOTES = {"東京.md": "東京は日本の首都です。請求サービスはアリスが担当しています。\n",
         "北京.md": "北京是中国的首都。机器学习小组在这里。\n",
         "Garden.md": "Tomatoes need sun and water every day.\n"}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text, "utf-8")
    (root / "rmh.toml").write_text("[hooks]\ndaemon = false\n", "utf-8")
    assert rmh(root, "init", "--no-dense").returncode == 0
    hook(root, "session-start", {"session_id": "s1", "cwd": str(tmp_path)})
    return root


def recalled(root: Path, prompt: str) -> str:
    out = hook(root, "prompt", {"session_id": "s1", "prompt": prompt}).stdout
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""


@pytest.mark.parametrize(("prompt", "note"), [
    ("請求", "東京.md"), ("請求サービス", "東京.md"), ("アリスの担当", "東京.md"),
    ("日本の首都", "東京.md"), ("机器学习", "北京.md"), ("tomatoes sun", "Garden.md")])
def test_a_spaceless_prompt_recalls_the_note_search_finds(
        vault: Path, prompt: str, note: str) -> None:
    memory = recalled(vault, prompt)
    assert f"- {note} [" in memory, (prompt, memory)
    others = [n for n in NOTES if n != note]
    assert not any(f"- {n} [" in memory for n in others), (prompt, memory)


def test_a_spaceless_prompt_about_nothing_recalls_nothing(vault: Path) -> None:
    assert recalled(vault, "天気予報") == ""
