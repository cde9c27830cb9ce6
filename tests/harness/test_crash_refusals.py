"""Refusals killed after every file operation, through the real CLI: each command below must
end refused and change nothing, and killed at any point before its refusal (by
RMH_FAULT_AFTER_OPS, the store's seam: SIGKILL right after the N-th file operation) it must
leave the vault as it was once the next process opens it: every note byte for byte, no
intent pending. The sweep ends at the first N the command survives, which must be the
refusal itself.

- `rmh move` whose rewrite of a linking note would pass MAX_NOTE_BYTES (session 22, REV #10);
- `rmh ingest` of a conversation with one turn over the cap (session 22, REV #12);
- `rmh forget` whose note the file system will not let rmh remove (vault/erasure_steps.py):
  refused as erasure_pending after every step it could make; killed anywhere, the next open
  either finds nothing erased (killed before its intent landed) or fails closed until the
  note can be removed, and then finishes the erasure whole;
- the open that finishes that pending erasure, killed after each of its own operations.

Config and `.npy` refusals (harness/config_file.py, saved_arrays.map_npy) make no file
operation: nothing to sweep."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.forks import CLI_PRELOAD, ForkServer
from tests.harness.test_crash_forget import (
    ERASED,
    ROOT,
    SECRET,
    make_template,
    notes,
    occurrences,
    rmh,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ForkServer]:
    with ForkServer(CLI_PRELOAD, workdir=tmp_path / "forks", cwd=ROOT) as forks:
        yield forks


def _chattr(flag: str, path: Path) -> bool:
    return subprocess.run(["chattr", flag, str(path)], capture_output=True,
                          check=False).returncode == 0


def _fresh(template: Path, work: Path) -> None:
    if work.exists():
        _chattr("-i", work / "vault" / ERASED[0])
        shutil.rmtree(work)
    shutil.copytree(template, work)


def _pending(work: Path, server: ForkServer) -> list[str]:
    done = rmh(work, "doctor", "--json", server=server)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["vault"]["intents"]["pending"])


def _sweep(template: Path, work: Path, server: ForkServer, args: tuple[str, ...],
           kind: str, stdin: str = "") -> int:
    """Kill `rmh ARGS` after its 1st, 2nd, ... file operation on a fresh copy of `template`;
    each time the next open leaves the notes as they were and no intent. Returns the number
    of kill points before the refusal `kind`."""
    for n in range(1, 200):
        _fresh(template, work)
        before = notes(work)
        run = rmh(work, *args, "--json", fault_after=n, stdin=stdin, server=server)
        assert _pending(work, server) == [], (n, run.stderr)
        assert notes(work) == before, n
        if run.returncode != -9:
            assert run.returncode == 1, (n, run.stderr)
            assert json.loads(run.stdout)["error"]["kind"] == kind, run.stdout
            return n - 1
    raise AssertionError("never refused")


def test_a_move_over_the_size_cap_killed_anywhere_changes_nothing(
        tmp_path: Path, server: ForkServer) -> None:
    template = tmp_path / "template"
    (template / "vault").mkdir(parents=True)
    (template / "vault" / "A.md").write_text("the target\n", encoding="utf-8")
    (template / "vault" / "X.md").write_text("[[A]]\n" * 400_000, encoding="utf-8")
    assert rmh(template, "init", "--no-dense").returncode == 0
    points = _sweep(template, tmp_path / "work", server, ("move", "A", "B" * 20),
                    "quota_exceeded")
    assert points >= 1  # the open's own operations (the catch-up record) come first


def test_an_ingest_over_the_size_cap_killed_anywhere_changes_nothing(
        tmp_path: Path, server: ForkServer) -> None:
    template = tmp_path / "template"
    (template / "vault").mkdir(parents=True)
    (template / "vault" / "keep.md").write_text("kept\n", encoding="utf-8")
    assert rmh(template, "init", "--no-dense").returncode == 0
    conv = {"format": "rmh-conversation/1", "id": "ab", "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00", "turns": [
            {"speaker": "Alice", "text": "I started a pottery class."},
            {"speaker": "Bob", "text": "x" * (8 * 1024 * 1024 + 1)},
            {"speaker": "Alice", "text": "See you."}]}]}
    (tmp_path / "conv.json").write_text(json.dumps(conv), encoding="utf-8")
    _sweep(template, tmp_path / "work", server, ("ingest", str(tmp_path / "conv.json")),
           "quota_exceeded")


def _immutable_template(tmp_path: Path) -> Path:
    template = make_template(tmp_path / "template")
    probe = template / "vault" / "probe.md"
    probe.write_text("x\n", encoding="utf-8")
    usable = _chattr("+i", probe)
    _chattr("-i", probe)
    probe.unlink()
    if not usable:
        pytest.skip("chattr +i is not available here (not root, or a file system without it)")
    return template


def _finish_and_check(work: Path, server: ForkServer, before: dict[str, bytes]) -> str:
    """Let the note go, open again: all erased (no trace in any file) or nothing."""
    _chattr("-i", work / "vault" / ERASED[0])
    assert _pending(work, server) == []
    after = notes(work)
    if after == before:
        return "none"
    assert set(before) - set(after) == {p for p in ERASED if p in before}, after
    assert all(before[p] == b for p, b in after.items())
    assert occurrences(work) == {}
    return "all"


def _each_point(template: Path, work: Path, server: ForkServer,
                step: Callable[[int], subprocess.CompletedProcess[str]]) -> list[str]:
    states = []
    for n in range(1, 200):
        _fresh(template, work)
        before = notes(work)
        assert _chattr("+i", work / "vault" / ERASED[0])
        run = step(n)
        after_kill = rmh(work, "read", "keep", "--json", server=server)
        if after_kill.returncode == 1:  # the intent landed: closed until the note can go
            assert json.loads(after_kill.stdout)["error"]["kind"] == "erasure_pending"
        assert SECRET.casefold() not in after_kill.stdout.casefold()
        states.append(_finish_and_check(work, server, before))
        if run.returncode != -9:
            assert run.returncode == 1, (n, run.stderr)
            assert json.loads(run.stdout)["error"]["kind"] == "erasure_pending", run.stdout
            return states
    raise AssertionError("never refused")


def test_a_forget_that_cannot_remove_a_note_killed_anywhere_erases_all_or_nothing(
        tmp_path: Path, server: ForkServer) -> None:
    template = _immutable_template(tmp_path)
    work = tmp_path / "work"
    states = _each_point(template, work, server, lambda n: rmh(
        work, "forget", "--subject", SECRET, "--json", fault_after=n, server=server))
    assert states[-1] == "all" and set(states) == {"none", "all"}, states
    assert len(states) > 8, states


def test_the_open_finishing_a_blocked_erasure_killed_anywhere_erases_all(
        tmp_path: Path, server: ForkServer) -> None:
    """The forget refused (its intent pending, the note immutable); the next command's open,
    which makes every step it can again, killed after each of its operations: the erasure
    still finishes whole once the note can go."""
    template = _immutable_template(tmp_path)
    blocked = tmp_path / "blocked"
    _fresh(template, blocked)
    assert _chattr("+i", blocked / "vault" / ERASED[0])
    run = rmh(blocked, "forget", "--subject", SECRET, "--json", server=server)
    assert json.loads(run.stdout)["error"]["kind"] == "erasure_pending"
    _chattr("-i", blocked / "vault" / ERASED[0])
    work = tmp_path / "work"
    states = _each_point(blocked, work, server, lambda n: rmh(
        work, "read", "keep", "--json", fault_after=n, server=server))
    assert set(states) == {"all"} and len(states) >= 2, states
