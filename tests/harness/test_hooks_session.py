"""A scripted client session: the hooks called as Claude Code calls them (new processes, JSON
on stdin, a transcript file the test writes) capture a session, and a later session's prompt
hook injects the relevant part of it. Errors never fail the client."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from harness.hooks_index import by_path
from tests.forks import run_cli
from tests.harness.test_server_e2e import CHILD_ENV, REPO
from tests.vault.conversation.transcript_fixtures import CI_TASK, claude_lines

pytestmark = pytest.mark.slow
SESSION = "sess-ci-1"


def rmh(vault: Path, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    return run_cli(["--vault", str(vault), *argv], env=env, cwd=REPO, stdin=stdin)


def hook(vault: Path, event: str, payload: dict[str, Any],
         client: str = "claude-code") -> subprocess.CompletedProcess[str]:
    out = rmh(vault, "hook", event, "--client", client, stdin=json.dumps(payload))
    assert out.returncode == 0, out.stderr
    return out


def context_of(out: subprocess.CompletedProcess[str], event: str) -> str:
    doc = json.loads(out.stdout)
    assert doc["hookSpecificOutput"]["hookEventName"] == event
    return str(doc["hookSpecificOutput"]["additionalContext"])


def two_notes(root: Path) -> Path:
    """A new folder `root` holding a build note (the nightly job at 02:00) and a garden note."""
    root.mkdir()
    (root / "Build notes.md").write_text(
        "The CI runners are rebuilt every Monday; the nightly job runs at 02:00.\n", "utf-8")
    (root / "Garden.md").write_text("Tomatoes need sun and water every day.\n", "utf-8")
    return root


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = two_notes(tmp_path / "vault")
    # the FTS5 path, deterministically (the warm daemon: test_hooks_daemon.py)
    (root / "rmh.toml").write_text("[hooks]\ndaemon = false\n", "utf-8")
    assert rmh(root, "init", "--no-dense").returncode == 0
    return root


def test_a_session_is_captured_and_recalled_in_the_next(vault: Path, tmp_path: Path) -> None:
    transcript = tmp_path / f"{SESSION}.jsonl"
    base = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(tmp_path)}
    start = hook(vault, "session-start", {**base, "hook_event_name": "SessionStart"})
    assert start.stdout == "" or "rmh-memory" in start.stdout
    lines = claude_lines([*CI_TASK, ("assistant", "I noted it in [[Build notes]].", ())],
                         SESSION)
    transcript.write_text("\n".join(lines[:6]) + "\n", encoding="utf-8")
    hook(vault, "pre-compact", {**base, "hook_event_name": "PreCompact", "trigger": "auto"})
    transcript.write_text("\n".join(lines) + "\n{torn line\n", encoding="utf-8")
    end = hook(vault, "session-end", {**base, "hook_event_name": "SessionEnd"})
    assert "1 line skipped" in end.stderr and end.stdout == ""
    notes = {p.relative_to(vault).as_posix() for p in vault.rglob("*.md")}
    assert any(p.startswith(f"conversations/{SESSION}/{SESSION}/") for p in notes)
    before = {p: p.stat().st_mtime_ns for p in vault.rglob("*.md")}
    again = hook(vault, "session-end", {**base, "hook_event_name": "SessionEnd"})
    assert " 0 notes written" in again.stderr  # idempotent: nothing rewritten
    assert before == {p: p.stat().st_mtime_ns for p in vault.rglob("*.md")}
    # the cited note was logged as read in the hooks' learning session, which ended
    learned = json.loads(rmh(vault, "learning", "Build notes", "--json", "--no-dense").stdout)
    assert any(e.get("session") == f"hook-claude-code-{SESSION}"
               for e in learned["events"]), learned["events"]

    # a later session: its prompt hook injects the part of the first that is relevant
    later = {"session_id": "sess-2", "transcript_path": str(tmp_path / "s2.jsonl"),
             "cwd": str(tmp_path)}
    hook(vault, "session-start", {**later, "hook_event_name": "SessionStart"})
    out = hook(vault, "prompt", {**later, "hook_event_name": "UserPromptSubmit",
                                 "prompt": "The nightly build fails on the CI server again. "
                                           "What made the build pass last time?"})
    text = context_of(out, "UserPromptSubmit")
    assert text.startswith("<rmh-memory>") and text.rstrip().endswith("</rmh-memory>")
    assert "Pinning the compiler to version 12 worked" in text, text
    assert f"conversations/{SESSION}/{SESSION}/" in text  # each line names its note
    assert len(text.split()) <= 120 + 20  # the budget, plus the fence's own words
    assert "Tomatoes" not in text
    # nothing relevant: nothing injected
    none = hook(vault, "prompt", {**later, "hook_event_name": "UserPromptSubmit",
                                  "prompt": "Translate 'good morning' into Portuguese."})
    assert none.stdout == ""


def test_errors_never_fail_the_client(vault: Path, tmp_path: Path) -> None:
    bad = rmh(vault, "hook", "prompt", stdin="{not json")
    assert bad.returncode == 0 and bad.stdout == "" and "rmh hook prompt" in bad.stderr
    gem = rmh(vault, "hook", "prompt", "--client", "gemini", stdin="[1]")
    assert gem.returncode == 0 and gem.stdout.strip() == "{}"
    missing = hook(vault, "session-end", {"session_id": "x", "transcript_path":
                                          str(tmp_path / "nope.jsonl")})
    assert "rmh hook session-end" in missing.stderr and missing.stdout == ""
    novault = rmh(tmp_path / "not-a-vault", "hook", "session-start",
                  stdin=json.dumps({"session_id": "x"}))
    assert novault.returncode == 0 and novault.stdout == "" and novault.stderr


def test_install_and_uninstall_change_only_rmhs_entries(vault: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    theirs: dict[str, Any] = {"model": "x", "hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "echo mine"}]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}]}}
    settings.write_text(json.dumps(theirs), encoding="utf-8")
    for _ in range(2):  # installing twice leaves one set
        out = rmh(vault, "hooks", "install", "claude-code", "--project", str(project), "--json")
        assert out.returncode == 0, out.stderr
    assert (vault / ".rmh" / "hooks.sqlite").is_file()  # built at install: a fast first start
    doc = json.loads(settings.read_text(encoding="utf-8"))
    assert doc["model"] == "x" and doc["hooks"]["PostToolUse"] == theirs["hooks"]["PostToolUse"]
    for event in ("SessionStart", "UserPromptSubmit", "SessionEnd", "PreCompact"):
        ours = [h["command"] for g in doc["hooks"][event] for h in g["hooks"]
                if "hook" in h["command"] and "--vault" in h["command"]]
        assert len(ours) == 1 and str(vault.absolute()) in ours[0]
        assert ours[0].split()[0].startswith("/")  # absolute program path
    assert rmh(vault, "hooks", "uninstall", "claude-code", "--project",
               str(project)).returncode == 0
    assert json.loads(settings.read_text(encoding="utf-8")) == theirs
    # a file rmh created is removed again; another client's file is its own
    assert rmh(vault, "hooks", "install", "codex", "--project", str(project)).returncode == 0
    codex = json.loads((project / ".codex" / "hooks.json").read_text(encoding="utf-8"))
    assert set(codex["hooks"]) == {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact"}
    assert rmh(vault, "hooks", "uninstall", "codex", "--project", str(project)).returncode == 0
    assert not (project / ".codex").exists()  # the folder install made goes with it
    assert (project / ".claude").is_dir()  # a folder that still holds the user's file stays
    broken = project / ".gemini" / "settings.json"
    broken.parent.mkdir()
    broken.write_text("[1, 2]", encoding="utf-8")
    out = rmh(vault, "hooks", "install", "gemini", "--project", str(project))
    assert out.returncode == 1 and broken.read_text(encoding="utf-8") == "[1, 2]"


def test_engine_mode_recalls_through_the_full_search(vault: Path, tmp_path: Path) -> None:
    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_text("\n".join(claude_lines(CI_TASK, SESSION)) + "\n", encoding="utf-8")
    hook(vault, "session-end", {"session_id": SESSION, "transcript_path": str(transcript)})
    (vault / "rmh.toml").write_text("[hooks]\nengine = true\n", encoding="utf-8")
    out = hook(vault, "prompt", {"session_id": "sess-2", "prompt": "The nightly build fails "
                                 "on the CI server again. What made the build pass last time?"})
    text = context_of(out, "UserPromptSubmit")
    assert "Pinning the compiler to version 12" in text and "episodes/" in text, text


def test_a_session_ends_even_when_its_transcript_is_empty_or_unreadable(
        vault: Path, tmp_path: Path) -> None:
    def sessions() -> dict[str, int]:
        doc = json.loads(rmh(vault, "status", "--no-dense", "--json").stdout)
        return dict(doc["learning"]["sessions"])

    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")  # a client session where nothing was said yet
    torn = tmp_path / "torn.jsonl"
    torn.write_text("not a transcript at all\n", encoding="utf-8")
    for n, (sid, transcript) in enumerate((("s-empty", empty), ("s-torn", torn)), 1):
        base = {"session_id": sid, "transcript_path": str(transcript), "cwd": str(tmp_path)}
        hook(vault, "session-start", {**base, "hook_event_name": "SessionStart"})
        shown = hook(vault, "prompt", {
            **base, "hook_event_name": "UserPromptSubmit",
            "prompt": "Which day are the CI runners rebuilt, and when is the nightly job?"})
        assert "Build notes.md" in context_of(shown, "UserPromptSubmit")
        end = hook(vault, "session-end", {**base, "hook_event_name": "SessionEnd"})
        assert end.stdout == ""
        if transcript == empty:
            assert "0 turns, 0 notes written" in end.stderr, end.stderr
        else:  # said on stderr, nothing ingested, and the learning session still ends
            assert "rmh hook session-end: ConversationFormatError" in end.stderr, end.stderr
        assert sessions()["ended"] == n and sessions()["open"] == 0
    assert not (vault / "conversations").exists()


def _refreshing(vault: Path) -> bool:
    """Whether a background refresh of `vault` (a `pre-compact` hook process) still runs."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"pre-compact" in argv and str(vault).encode() in argv:
            return True
    return False


def test_notes_edited_between_sessions_are_recalled_in_the_next(
        vault: Path, tmp_path: Path) -> None:
    """`[hooks] daemon = false`: an edit outside rmh after a session's end is in the hooks'
    index soon after the next session starts (a background refresh), a rename included."""
    hook(vault, "session-start", {"session_id": "s1", "cwd": str(tmp_path)})  # builds it
    hook(vault, "session-end", {"session_id": "s1"})
    (vault / "Kiln.md").write_text("The pottery kiln fires every Friday at dawn.\n", "utf-8")
    (vault / "Garden.md").rename(vault / "Allotment.md")  # the same text, a new name
    hook(vault, "session-start", {"session_id": "s2", "cwd": str(tmp_path)})
    deadline = time.monotonic() + 120
    while _refreshing(vault) or by_path(vault, "Kiln.md") is None:
        assert time.monotonic() < deadline, "the hooks' index was not refreshed"
        time.sleep(0.1)
    kiln = hook(vault, "prompt", {"session_id": "s2", "prompt": "When does the kiln fire?"})
    assert "Kiln.md" in context_of(kiln, "UserPromptSubmit")
    sun = hook(vault, "prompt", {"session_id": "s2", "prompt": "What do tomatoes need?"})
    text = context_of(sun, "UserPromptSubmit")
    assert "Allotment.md" in text and "Garden.md" not in text, text


@pytest.mark.parametrize("engine", [False, True], ids=["fts", "engine"])
def test_a_prompt_asking_only_for_a_day_recalls_that_days_session(
        vault: Path, tmp_path: Path, engine: bool) -> None:
    """"What did we work on on 4 March 2025?" shares no topic word with the session of that
    day; the day itself connects its turns, on the hooks' index and through the engine. A day
    with nothing in memory injects nothing, and a topic absent from memory is still absent
    on that day."""
    transcript = tmp_path / f"{SESSION}.jsonl"  # the fixture's turns are dated 4 March 2025
    transcript.write_text("\n".join(claude_lines(CI_TASK, SESSION)) + "\n", encoding="utf-8")
    hook(vault, "session-end", {"session_id": SESSION, "transcript_path": str(transcript)})
    if engine:
        (vault / "rmh.toml").write_text("[hooks]\nengine = true\n", encoding="utf-8")
    later = {"session_id": "sess-2", "hook_event_name": "UserPromptSubmit"}
    for prompt in ("What did we work on on 4 March 2025?", "What happened on 2025-03-04?"):
        text = context_of(hook(vault, "prompt", {**later, "prompt": prompt}), "UserPromptSubmit")
        assert "nightly build" in text and f"conversations/{SESSION}/" in text, (prompt, text)
        assert "Tomatoes" not in text
    for prompt in ("What did we work on on 4 March 2020?",
                   "What is the melting point of tungsten on 4 March 2025?"):
        assert hook(vault, "prompt", {**later, "prompt": prompt}).stdout == "", prompt
