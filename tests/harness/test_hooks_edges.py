"""Hooks attacked from outside (docs/measurements/session28/NOTES-HOOKS.md): an install
that fails leaves the client's settings as they were; parallel client sessions never share a
journal and keep every used note; a FIFO transcript never holds the client; a prompt with a
lone surrogate still gets its memory; a huge prompt costs bounded CPU; a note holding a blob
injects a bounded text."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from harness.hooks_index import journal_shown, remember_used, take_shown, used_lately
from tests.forks import run_cli
from tests.harness.test_hooks_session import context_of, hook, rmh, two_notes
from tests.harness.test_server_e2e import CHILD_ENV, REPO

EVENT = {"claude-code": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = two_notes(tmp_path / "vault")
    (root / "rmh.toml").write_text("[hooks]\ndaemon = false\n", "utf-8")
    assert rmh(root, "init", "--no-dense").returncode == 0
    hook(root, "session-start", {"session_id": "s0", "cwd": str(tmp_path)})  # the index
    return root

# pairs of distinct client session ids whose old journal names were one file
CLASHING = [("hook-claude-code-a/b", "hook-claude-code-a:b"),
            ("hook-codex-" + "x" * 130 + "1", "hook-codex-" + "x" * 130 + "2"),
            ("hook-gemini-s 1", "hook-gemini-s-1")]


@pytest.mark.parametrize(("one", "two"), CLASHING)
def test_parallel_sessions_keep_their_own_journal(tmp_path: Path, one: str, two: str) -> None:
    (tmp_path / ".rmh").mkdir()  # a vault's: the journals live only in a `.rmh` (STORE13)
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


@pytest.mark.slow
@pytest.mark.parametrize("event", ["session-end", "pre-compact"])
def test_a_transcript_path_naming_a_fifo_never_holds_the_client(
        vault: Path, tmp_path: Path, event: str) -> None:
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)  # opened for reading, it waited for a writer forever
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    payload = json.dumps({"session_id": "s1", "transcript_path": str(fifo)})
    out = run_cli(["--vault", str(vault), "hook", event], env=env, cwd=REPO, stdin=payload,
                  timeout=120)  # the client's own timeout for these hooks
    assert out.returncode == 0 and out.stdout == ""
    assert "not a regular file" in out.stderr


@pytest.mark.slow
@pytest.mark.parametrize("client", sorted(EVENT))
@pytest.mark.parametrize("prompt", ["when does the nightly job \ud800 run",
                                    "\udcff\udcfe nightly job CI runners"])
def test_a_prompt_holding_a_lone_surrogate_still_gets_its_memory(
        vault: Path, client: str, prompt: str) -> None:
    out = hook(vault, "prompt", {"session_id": "s2", "prompt": prompt}, client=client)
    assert "Build notes" in context_of(out, EVENT[client]), out.stderr
    again = hook(vault, "prompt", {"session_id": "s2", "prompt": "nightly job"}, client=client)
    assert "Build notes" in context_of(again, EVENT[client])  # the journal still reads


@pytest.mark.slow
@pytest.mark.parametrize("where", ["head", "tail"])
def test_a_huge_prompt_costs_bounded_cpu(vault: Path, where: str) -> None:
    rng = random.Random(7)  # a pasted log (distinct words, 7 Mi characters), an ask at one end
    filler = " ".join("".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(7))
                      for _ in range(7 << 17))
    ask = "when does the nightly job of the CI runners run?"
    prompt = f"{ask}\n{filler}" if where == "head" else f"{filler}\n{ask}"
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [sys.executable, "-m", "harness", "--vault", str(vault), "hook", "prompt"],
        input=json.dumps({"session_id": "s3", "prompt": prompt}), capture_output=True,
        text=True, env=env, cwd=REPO, timeout=300, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout == "" or context_of(out, EVENT["claude-code"])
    assert cpu < 5.0, cpu  # all of it read: ~25 s, past the client's 10 s timeout


def _remember(root: str, tag: str, start: object) -> None:
    start.wait()  # type: ignore[attr-defined]  # a multiprocessing Barrier
    for i in range(24):
        remember_used(Path(root), [f"{tag}-{i}.md"])


def test_parallel_session_ends_keep_every_used_note(tmp_path: Path) -> None:
    (tmp_path / ".rmh").mkdir()
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(2)
    procs = [ctx.Process(target=_remember, args=(str(tmp_path), tag, start))
             for tag in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert sorted(used_lately(tmp_path)) == sorted(f"{t}-{i}.md" for t in "ab"
                                                   for i in range(24))


@pytest.mark.slow
@pytest.mark.parametrize(("event", "payload"), [
    ("prompt", {"prompt": "what is the deploy pipeline key for the staging servers?"}),
    ("session-start", {"cwd": "deploy-pipeline"})])  # a cwd outside the vault
def test_a_note_holding_a_blob_injects_bounded_text(
        tmp_path: Path, event: str, payload: dict[str, str]) -> None:
    root = tmp_path / "vault"  # a base64 blob is one word: the word caps did not bound it
    root.mkdir()
    blob = "".join(random.Random(3).choice("ABCDEFGHabcdefgh0123456789+/") for _ in range(200_000))
    (root / "Deploy key.md").write_text(
        f"The deploy pipeline key for staging servers is {blob} and rotates monthly.\n", "utf-8")
    (root / "rmh.toml").write_text("[hooks]\ndaemon = false\n", "utf-8")
    assert rmh(root, "init", "--no-dense").returncode == 0
    hook(root, "session-start", {"session_id": "s0"})  # the index
    text = context_of(hook(root, event, {"session_id": "s1", **payload}),
                      {"prompt": "UserPromptSubmit", "session-start": "SessionStart"}[event])
    assert "Deploy key.md" in text and blob[:200] + "…" in text
    assert len(text) < 2_000
