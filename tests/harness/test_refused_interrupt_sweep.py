"""An all-or-none change interrupted at every step (a Ctrl-C, not a kill) is whole (REV40).

`rmh fact supersede` writes the old fact ("superseded_by") and its successor as one
journalled, whole operation (`Vault.journalled(whole=True)`). A kill leaves the journal to the
next open and a refusal takes the change back (test_refused_kill_sweep.py), but a
KeyboardInterrupt (or SystemExit) raised between the two writes ended the journal with the
old note written: the old fact "superseded by" a note never written, its link dangling (main:
interrupted after its 6th-8th, 10th-12th and 14th file operation). Now an interrupt is taken
back as a refusal is. The interrupt is raised from outside rmh's code: a `sys.addaudithook`
hook raises KeyboardInterrupt at the N-th rename/replace/unlink/link of the process, N = 1, 2,
..., until the command finishes uninterrupted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.harness.test_cli_notes import ROOT, rmh
from tests.harness.test_refused_kill_sweep import ARGS, NEW, _killed_at, _vault
from tests.harness.test_refused_midway import OLD, doctor, files

MAX_OPS = 200
RUNNER = """
import os, sys
at, seen = int(os.environ["RMH_TEST_INTERRUPT_AT"]), [0]
def hook(event, args):
    if event in ("os.rename", "os.replace", "os.remove", "os.link") and seen[0] < at:
        seen[0] += 1
        if seen[0] == at:
            raise KeyboardInterrupt
sys.addaudithook(hook)
from harness.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _interrupted_at(root: Path, n: int) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update(PYTHONPATH=str(ROOT), PYTHONHASHSEED="0", RMH_TEST_INTERRUPT_AT=str(n))
    return subprocess.run([sys.executable, "-c", RUNNER, "--vault", str(root), *ARGS],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False)


def test_a_supersede_interrupted_at_every_step_is_whole(tmp_path: Path) -> None:
    done = _vault(tmp_path, "done", blocked=False)
    before = files(done)
    assert rmh("--vault", str(done), *ARGS).returncode == 0
    after = files(done)
    assert NEW in after and after[OLD] != before[OLD]
    bad: list[tuple[int, list[str]]] = []
    for n in range(1, MAX_OPS):
        root = _vault(tmp_path, f"v{n}", blocked=False)
        r = _interrupted_at(root, n)
        assert "Traceback" not in r.stderr, r.stderr
        found = doctor(root)
        now = files(root)
        if now not in (before, after):  # main: the old note superseded, no successor
            bad.append((n, sorted(p for p in set(now) | set(after) if now.get(p) != after.get(p))))
        assert not found["intents"]["pending"], (n, found)  # type: ignore[index]
        if now == before:
            assert not found["dangling_links"], (n, found)
        if "interrupted" not in r.stderr:
            assert r.returncode == 0, r.stderr  # uninterrupted: the sweep's end
            break
    else:
        raise AssertionError(f"still interrupted after {MAX_OPS} operations")
    assert n > 5 and not bad, bad


# the writes ops an rmh before session 40 replays, knowing no `whole`, `refused` or `undo`:
# it would write a refused supersede's old note again and its successor once it can
OLD_OPS = ("writes", "trash-writes")


def test_a_whole_change_left_by_a_kill_is_never_replayed_by_an_older_rmh(
        tmp_path: Path) -> None:
    """Killed at every step, a refused supersede leaves its journal in a form an older rmh
    reports unreadable (kept pending) rather than finishes; this rmh then takes it back."""
    seen = 0
    for n in range(1, MAX_OPS):
        root = _vault(tmp_path, f"k{n}", blocked=True)
        before = files(root)
        code = _killed_at(root, n)
        for intent in sorted((root / ".rmh" / "intents").glob("*.json")):
            doc = json.loads(intent.read_text("utf-8"))
            if any(w["path"] == NEW for w in doc.get("writes", [])):
                seen += 1
                assert doc["op"] not in OLD_OPS, (n, doc["op"])  # main: "writes"
        found = doctor(root)
        assert files(root) == before and not found["intents"]["pending"], (n, found)  # type: ignore[index]
        if code != -9:
            break
    assert seen > 5
