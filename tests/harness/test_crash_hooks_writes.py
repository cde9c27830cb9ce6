"""The prompt hook's journal append and the LLM entity cache's writes (`rmh ingest` with
`[extract] entities = "llm"`), each killed after every one of its file operations
(RMH_FAULT_AFTER_OPS, as tests/harness/test_crash_writers.py sweeps the other writers), then
opened again by `rmh doctor`: the files hold their bytes of before or of an uninterrupted
run (the cache: rows of the uninterrupted run, none torn), no intent is left, doctor lists no
leftover; the ingest run again ends byte for byte as the uninterrupted one (FIX37: FIX36
counted these operations, no sweep killed at them; the prompt hook's append counted none).

And the journal's append itself: a line a killed hook or a full disk cut (no newline) no
longer swallows the next hook's line (before, the two were one bad line, both dropped)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.hooks_used import journal_shown, session_journal, take_shown
from tests.forks import CLI_PRELOAD, ForkServer, cli_env
from tests.harness.llm_stub_endpoint import ChatEndpoint, Reply

ROOT = Path(__file__).resolve().parents[2]
CACHE = ".rmh/entities-llm.sqlite"
JOURNAL = ".rmh/hooks/hook-claude-code-s1.jsonl"  # harness/hooks_used.py session_journal
TURNS = [("Alice", "I started a pottery class with Carla."),
         ("Bob", "Carla sold the blue vase at the market."),
         ("Alice", "The kiln at the studio fires on Tuesdays.")]


def test_a_cut_line_in_the_journal_never_swallows_the_next_one(tmp_path: Path) -> None:
    (tmp_path / ".rmh").mkdir()  # a vault's: the journals live only in a `.rmh` (STORE13)
    journal_shown(tmp_path, "s1", "first prompt", ["a.md"])
    path = session_journal(tmp_path, "s1")
    path.write_bytes(path.read_bytes() + b'{"prompt": "cut by a kill", "no')  # no newline
    journal_shown(tmp_path, "s1", "after the cut", ["b.md"])
    assert take_shown(tmp_path, "s1") == [("first prompt", ["a.md"]),
                                          ("after the cut", ["b.md"])]  # main: the first only


def _rmh(server: ForkServer, work: Path, args: list[str], stdin: str = "",
         fault_after: int | None = None) -> subprocess.CompletedProcess[str]:
    return server.run(["--vault", str(work / "v"), *args], module="harness",
                      env=cli_env(work, fault_after=fault_after), cwd=work, stdin=stdin)


def _doctor_clean(server: ForkServer, work: Path, n: int) -> None:
    doctor = _rmh(server, work, ["doctor", "--json"])
    assert doctor.returncode == 0, (n, doctor.stderr)
    found = json.loads(doctor.stdout)["vault"]
    assert (found["intents"]["pending"], found["leftovers"]) == ([], []), (n, found)


def _rows(path: Path) -> set[tuple[object, ...]]:
    if not path.exists():
        return set()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {(t, *row) for t in tables for row in db.execute(f'SELECT * FROM "{t}"')}


def _notes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.md"))
            if ".rmh" not in p.relative_to(root).parts}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkServer]:
    with ForkServer(CLI_PRELOAD + "vault.nlp_status(load=True)\n",
                    workdir=tmp_path_factory.mktemp("forks"), cwd=ROOT) as s:
        yield s


@pytest.mark.slow
def test_the_prompt_hook_killed_after_any_operation_leaves_its_journal_old_or_new(
        server: ForkServer, tmp_path: Path) -> None:
    template = tmp_path / "template"
    (template / "v").mkdir(parents=True)
    (template / "v" / "kiln.md").write_text("# Kiln\nThe kiln fires at 1200 C on Tuesdays.\n")
    assert _rmh(server, template, ["init", "--no-dense"]).returncode == 0
    (template / "v" / "rmh.toml").write_text("[hooks]\ndaemon = false\n")
    start = json.dumps({"session_id": "s1", "transcript_path": "", "cwd": str(template),
                        "hook_event_name": "SessionStart"})
    assert _rmh(server, template, ["hook", "session-start"], start).returncode == 0
    prompt = json.dumps({"session_id": "s1", "transcript_path": "", "cwd": str(template),
                         "hook_event_name": "UserPromptSubmit",
                         "prompt": "When does the kiln fire?"})
    ref = tmp_path / "ref"
    shutil.copytree(template, ref)
    assert _rmh(server, ref, ["hook", "prompt"], prompt).returncode == 0
    after = (ref / "v" / JOURNAL).read_bytes()
    assert b"kiln.md" in after
    points = 0
    for n in range(1, 50):
        work = tmp_path / "work"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(template, work)
        killed = _rmh(server, work, ["hook", "prompt"], prompt, fault_after=n)
        if killed.returncode != -9:
            assert killed.returncode == 0, killed.stderr
            break
        points += 1
        assert (work / "v" / JOURNAL).read_bytes() == after, n  # its one operation: the append
        _doctor_clean(server, work, n)
    assert points >= 1  # main: 0 (the append counted no operation: no kill landed)


@pytest.mark.slow
def test_the_llm_entity_cache_killed_after_any_operation_keeps_old_or_new_rows(
        server: ForkServer, tmp_path: Path) -> None:
    answers = {TURNS[0][1]: '["pottery class", "Carla"]', TURNS[1][1]: '["Carla", "blue vase"]',
               TURNS[2][1]: '["kiln", "studio"]'}
    conv = tmp_path / "c.json"
    conv.write_text(json.dumps({"format": "rmh-conversation/1", "id": "c1", "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00",
         "turns": [{"speaker": s, "text": t} for s, t in TURNS]}]}))
    with ChatEndpoint(lambda n, body: Reply(text=answers.get(
            body["messages"][-1]["content"], "[]"))) as ep:
        template = tmp_path / "template"
        (template / "v").mkdir(parents=True)
        assert _rmh(server, template, ["init", "--no-dense"]).returncode == 0
        (template / "v" / "rmh.toml").write_text(
            f'[llm]\nbase_url = "{ep.url}"\nmodel = "stub-entities"\nmax_retries = 0\n'
            'timeout_s = 30.0\n[extract]\nentities = "llm"\n')
        ref = tmp_path / "ref"
        shutil.copytree(template, ref)
        assert _rmh(server, ref, ["ingest", str(conv)]).returncode == 0
        rows, notes = _rows(ref / "v" / CACHE), _notes(ref / "v")
        assert len(rows) >= 3
        points, cache_kills = 0, 0
        for n in range(1, 300):
            work = tmp_path / "work"
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(template, work)
            killed = _rmh(server, work, ["ingest", str(conv)], fault_after=n)
            if killed.returncode != -9:
                assert killed.returncode == 0, killed.stderr
                break
            points += 1
            _doctor_clean(server, work, n)
            now = _rows(work / "v" / CACHE)
            assert now <= rows, n  # no torn row, none of another run
            cache_kills += bool(now) and not _notes(work / "v")  # killed after the cache
            assert _notes(work / "v") in ({}, notes), n  # the conversation whole or absent
            again = _rmh(server, work, ["ingest", str(conv)])
            assert again.returncode == 0, (n, again.stderr)
            assert _notes(work / "v") == notes and _rows(work / "v" / CACHE) == rows, n
        else:
            raise AssertionError("never finished")
    assert points > 3 and cache_kills > 0, (points, cache_kills)


APPEND = """
import sys
from pathlib import Path
from harness.hooks_used import journal_shown
journal_shown(Path(sys.argv[1]), "s1", "appended meanwhile", ["b.md"])
"""


def test_a_prompt_appended_while_forget_rewrites_the_journal_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`rmh forget` rewrites a session journal whole (read, filter, replace); a prompt hook
    (another process) appending between the read and the replace lost its line to the
    replace. Both now hold the journal folder's lock: the append waits, then lands in the
    rewritten file. The hook is started right before the replace; on main it appends at once
    (seen in the file) and the replace drops it."""
    import vault
    from harness import hooks_forget

    (tmp_path / ".rmh").mkdir()  # a vault's: the journals live only in a `.rmh` (STORE13)
    journal_shown(tmp_path, "s1", "about Quillon", ["a.md"])
    journal_shown(tmp_path, "s1", "about the kiln", ["k.md"])
    path = session_journal(tmp_path, "s1")
    real = vault.replace_whole

    def replace(target: Path, parts: tuple[bytes, ...], **kw: object) -> bool:
        hook = subprocess.Popen([sys.executable, "-c", APPEND, str(tmp_path)], cwd=ROOT)
        for _ in range(40):  # main: the line lands now; here: the hook waits on the lock
            if b"appended meanwhile" in path.read_bytes():
                break
            time.sleep(0.05)
        hooks.append(hook)
        return real(target, parts, **kw)  # type: ignore[arg-type]

    hooks: list[subprocess.Popen[bytes]] = []
    monkeypatch.setattr(vault, "replace_whole", replace)
    hooks_forget.forget(tmp_path, ["Quillon"])
    assert hooks and hooks[0].wait(timeout=60) == 0
    assert take_shown(tmp_path, "s1") == [("about the kiln", ["k.md"]),
                                          ("appended meanwhile", ["b.md"])]
