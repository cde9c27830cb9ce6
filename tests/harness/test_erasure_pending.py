"""An erasure whose steps fail (vault/erasure_steps.py), through the real CLI and `rmh serve`:
a note the file system will not let rmh remove (an immutable file: EPERM even for root), and
a disk full to the last byte while the next open finishes a killed `rmh forget`.

What must hold: no command serves erased text while the erasure is pending (the vault fails
closed with `erasure_pending`, saying which step failed and what to do; `rmh doctor` says it
too), every step that could be made was made, and once the cause is gone the next command
finishes the erasure and the byte search of every file finds nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.test_crash_forget import (
    ERASED,
    LINES,
    SECRET,
    make_template,
    notes,
    occurrences,
    rmh,
)
from tests.harness.test_disk_full import fill, tmpfs

pytestmark = pytest.mark.slow
READS = (("read", "keep"), ("search", SECRET, "--no-dense"), ("links", "links"),
         ("backlinks", "keep"), ("list", "notes"), ("status", "--no-dense"), ("doctor",))


def _chattr(flag: str, path: Path) -> bool:
    done = subprocess.run(["chattr", flag, str(path)], capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture
def immutable_note(tmp_path: Path) -> Iterator[Path]:
    yield from with_immutable_note(tmp_path)


def with_immutable_note(tmp_path: Path) -> Iterator[Path]:
    """A used vault (test_crash_forget's template) whose note people/Quillon.md, one the
    erasure removes, is immutable (`chattr +i`: unlink fails with EPERM, root included)."""
    work = make_template(tmp_path / "work")
    note = work / "vault" / ERASED[0]
    if not _chattr("+i", note):
        pytest.skip("chattr +i is not available here (not root, or a file system without it)")
    try:
        yield work
    finally:
        _chattr("-i", note)


def _names_erased(text: str) -> list[str]:
    """The erased names and strings `text` shows (the subject, the notes' paths and lines)."""
    return [w for w in (SECRET, *LINES, *ERASED, "Quillon", "Marrow")
            if w.casefold() in text.casefold()]


def _refused_everywhere(work: Path) -> None:
    """Every reading command fails closed with erasure_pending naming the failed step, and
    prints nothing of the erased notes; `rmh serve` answers every frame with -32019 and
    without their names."""
    for args in READS:
        r = rmh(work, *args, "--json")
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        error = json.loads(r.stdout)["error"]
        assert error["kind"] == "erasure_pending", (args, error)
        assert error["failed"] and "rmh doctor" in error["fix"]
        assert not _names_erased(r.stdout + r.stderr), (args, r.stdout + r.stderr)
    frames = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "t", "version": "1"}}},
              {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "search", "arguments": {"query": SECRET}}},
              {"jsonrpc": "2.0", "id": 3, "method": "vault.read", "params": {"note": "Quillon"}}]
    served = rmh(work, "serve", "--no-dense", stdin="".join(json.dumps(f) + "\n" for f in frames))
    assert served.returncode == 0, served.stderr
    got = {a["id"]: a for a in map(json.loads, served.stdout.splitlines())}
    assert got[2]["result"]["isError"] is True
    assert got[3]["error"]["code"] == -32019
    for name in (SECRET, "Quillon", "Marrow"):
        assert name.casefold() not in served.stdout.casefold()


def test_a_note_rmh_may_not_remove_keeps_the_vault_closed_until_fixed(
        immutable_note: Path) -> None:
    work = immutable_note
    r = rmh(work, "forget", "--subject", SECRET, "--json")
    assert r.returncode == 1, r.stderr
    error = json.loads(r.stdout)["error"]
    assert error["kind"] == "erasure_pending"
    # the refusal as every write reports one (a note named by no erased name)
    assert {"step": "note", "error": "permission denied: cannot write '(erased)'"} in \
        error["failed"], error["failed"]
    # it names the step, the error, how many notes and the fix, never an erased note or the
    # subject (they named the note's path: an agent running `rmh` in a shell saw it)
    assert error["message"].startswith("erasure pending (00000001.json, 2 notes): note: ")
    assert error["notes"] == 2 and "chattr -i" in error["fix"]
    assert not _names_erased(r.stdout + r.stderr), r.stdout + r.stderr
    # every other step was made: the other note and the trash copy are gone
    assert set(notes(work)) == {ERASED[0], "keep.md", "links.md"}
    assert not (work / "vault" / ".rmh" / "trash" / "Old draft.md").exists()
    _refused_everywhere(work)
    doctor = rmh(work, "doctor")
    assert doctor.returncode == 1 and "note: permission denied: cannot write" in doctor.stderr
    assert not _names_erased(doctor.stdout + doctor.stderr), doctor.stderr
    _chattr("-i", work / "vault" / ERASED[0])
    fixed = rmh(work, "doctor", "--json")
    assert fixed.returncode == 0, fixed.stderr
    intents = json.loads(fixed.stdout)["vault"]["intents"]
    assert intents["pending"] == [] and intents["recovered"][0]["state"] == "rolled forward"
    assert set(notes(work)) == {"keep.md", "links.md"}
    assert occurrences(work) == {}
    assert rmh(work, "replay", "--check").returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    yield from tmpfs(tmp_path, "8m")


def _killed_forget(template: Path, work: Path, n: int) -> bool:
    """`work`: a copy of `template` whose forget was killed after its `n`-th operation;
    whether its intent is pending then."""
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(template, work)
    run = rmh(work, "forget", "--subject", SECRET, fault_after=n)
    assert run.returncode == -9, (n, run.returncode, run.stderr)
    return any((work / "vault" / ".rmh" / "intents").glob("*.json"))


def _first_pending(template: Path, scratch: Path) -> int:
    """The first kill point after which the erasure's intent is pending (the forget's open
    makes file operations of its own before it)."""
    for n in range(1, 40):
        if _killed_forget(template, scratch, n):
            shutil.rmtree(scratch)
            return n
    raise AssertionError("no kill point left an intent")


@pytest.mark.parametrize("after", [0, 3])
def test_a_full_disk_while_the_next_open_finishes_an_erasure(
        small_disk: Path, tmp_path: Path, after: int) -> None:
    """Killed right after the intent landed (before any note is removed), or `after` more
    operations (part-way), then the disk filled to the last byte. The next command's open
    makes the steps that need no new bytes (the notes, the trash, the derived files: room
    freed) and the rest if that room suffices; it answers only once nothing erased is
    readable, else fails closed with a fix that says to free space. Either way nothing erased
    is printed, and once the filler is gone the next open finishes it all."""
    template = make_template(tmp_path / "template")
    n = _first_pending(template, tmp_path / "probe") + after
    work = small_disk / "work"
    assert _killed_forget(template, work, n)
    fill(small_disk)
    r = rmh(work, "read", "keep", "--json")
    assert SECRET.casefold() not in (r.stdout + r.stderr).casefold()
    if r.returncode == 1:
        error = json.loads(r.stdout)["error"]
        assert error["kind"] == "erasure_pending" and "free space" in error["fix"], error
        _refused_everywhere(work)
    else:
        assert json.loads(r.stdout)["note"] == "keep.md", r.stdout
        search = rmh(work, "search", SECRET, "--no-dense", "--json")
        assert search.returncode == 0 and SECRET.casefold() not in search.stdout.casefold()
    assert not any(name in notes(work) for name in ERASED)  # removals need no room
    (small_disk / "filler").unlink()
    fixed = rmh(work, "doctor", "--json")
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout)["vault"]["intents"]["pending"] == []
    assert occurrences(work) == {}


def test_rmh_list_finishes_a_pending_erasure_before_it_lists(tmp_path: Path) -> None:
    """`rmh list` opened no learning log, so its open could not finish a killed forget (the
    ledger is one of the steps): it listed the erased notes' names from the index as it was,
    then refused (erasure_pending). It opens the ledger now, as every vault command does, so
    its own open finishes the erasure: nothing erased is listed, and the folder the erased
    notes lived in is gone (a bad argument, as for any folder that does not exist)."""
    template = make_template(tmp_path / "template")
    work = tmp_path / "work"
    assert _killed_forget(template, work, _first_pending(template, tmp_path / "probe"))
    r = rmh(work, "list", "notes", "--folder", "people", "--json")
    assert r.returncode == 1 and "quillon" not in r.stdout.casefold(), r.stdout
    assert json.loads(r.stdout)["error"]["kind"] == "bad_argument"
    assert occurrences(work) == {}


def test_the_prompt_hook_recalls_nothing_of_a_killed_forget(tmp_path: Path) -> None:
    """The prompt hook answers from the hooks' own index without opening the vault
    (harness/hooks_recall.py), so no open's check stands between it and a pending erasure:
    a forget killed once its intent landed, before it erased the hooks' files, left the
    erased notes recalled into the agent's prompt until some command opened the vault."""
    template = make_template(tmp_path / "template")
    (template / "vault" / "rmh.toml").write_text("[hooks]\ndaemon = false\n")
    start = rmh(template, "hook", "session-start", stdin=json.dumps({"session_id": "a"}))
    assert start.returncode == 0, start.stderr  # builds the hooks' index
    ask = json.dumps({"session_id": "a", "prompt": f"who owns {SECRET}, the launch code?"})
    assert SECRET in rmh(template, "hook", "prompt", stdin=ask).stdout  # recalled before
    n = _first_pending(template, tmp_path / "probe")
    for at in (n, n + 1):
        work = tmp_path / f"work{at}"
        assert _killed_forget(template, work, at)
        r = rmh(work, "hook", "prompt", stdin=ask)
        assert r.returncode == 0 and SECRET.casefold() not in r.stdout.casefold(), (at, r.stdout)


def test_a_forget_pending_at_rest_erases_no_note_written_after_it(tmp_path: Path) -> None:
    """Only the shared embedding cache refused its rows (immutable): the vault opens and the
    intent stays for the steps at rest. Every open made every step again, the first the
    removal of the erased paths: a note the user then wrote at one was erased for good by the
    next command, and the intent kept the erased strings on disk for as long."""
    work = make_template(tmp_path / "work")
    shared = work / "shared.sqlite"
    if not _chattr("+i", shared):
        pytest.skip("chattr +i is not available here (not root, or a file system without it)")
    new = work / "vault" / ERASED[0]
    try:
        r = rmh(work, "forget", "--subject", SECRET, "--json")
        assert r.returncode == 1, r.stderr
        assert [f["step"] for f in json.loads(r.stdout)["error"]["failed"]] == ["shared cache"]
        assert rmh(work, "read", "keep").returncode == 0  # open: nothing erased is readable
        assert rmh(work, "list", "notes").returncode == 0  # an open with no ledger too
        new.write_text("# Quillon\nLunch with the new Quillon on Friday.\n")
        r = rmh(work, "read", ERASED[0], "--json")
        assert r.returncode == 0 and "Lunch" in r.stdout, r.stdout + r.stderr
        assert not [f for f in occurrences(work) if not f.startswith("shared.sqlite")]
    finally:
        _chattr("-i", shared)
    fixed = rmh(work, "doctor", "--json")
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout)["vault"]["intents"]["pending"] == []
    assert occurrences(work) == {} and new.exists()


def test_an_open_killed_while_it_finishes_an_erasure_leaves_no_text_in_the_hooks(
        tmp_path: Path) -> None:
    """A forget killed once its intent landed, with the hooks' index as it was before (as a
    hooks daemon that held the vault, or an older rmh that cleared it last, leaves it); then
    the next command, killed after each of its file operations in turn until one runs to the
    end. The open erased the hooks' files only after it had removed the intent: a kill in
    between left the hooks' index naming the erased subject with no intent left to finish it
    (and a failure there raised past an open vault). Invariant at every point: while no
    intent is pending, no file under the work folder holds an erased string."""
    template = make_template(tmp_path / "template")
    (template / "vault" / "rmh.toml").write_text("[hooks]\ndaemon = false\n")
    assert rmh(template, "hook", "session-start",
               stdin=json.dumps({"session_id": "a"})).returncode == 0
    ask = json.dumps({"session_id": "a", "prompt": f"who owns {SECRET}, the launch code?"})
    n = _first_pending(template, tmp_path / "probe")
    killed = tmp_path / "killed"
    assert _killed_forget(template, killed, n)
    hooks = Path("vault", ".rmh", "hooks.sqlite")
    shutil.copy(template / hooks, killed / hooks)
    assert SECRET in rmh(killed, "hook", "prompt", stdin=ask).stdout  # recalled while pending
    work = tmp_path / "work"
    for m in range(1, 200):
        if work.exists():
            shutil.rmtree(work)
        shutil.copytree(killed, work)
        r = rmh(work, "read", "keep", fault_after=m)
        pending = any((work / "vault" / ".rmh" / "intents").glob("*.json"))
        if not pending:
            assert occurrences(work) == {}, (m, occurrences(work))
        if r.returncode == 0:
            assert not pending and occurrences(work) == {}
            break
        assert r.returncode == -9, (m, r.returncode, r.stderr)
    else:
        raise AssertionError("the open never finished")
