"""A refused all-or-none change, killed at every step, ends refused (STORE15, session 40).

`rmh fact supersede` writes the old fact ("superseded_by") and its successor as one journalled
operation. When the successor cannot be written (a folder at its path here) the command is
refused and the old note put back. Killed after any of its file operations
(RMH_FAULT_AFTER_OPS = 1, 2, ...: vault/storage/faults.py) the next open finished the journal:
killed after the old note's write or after its put-back, the replay wrote the old note again
("superseded by" a note never written: the successor's write is refused again, left) and
dropped the journal. Now the journal of an all-or-none change (`WritesIntent.whole`) keeps the
old note's text; its replay takes back what it made when one write cannot be made, and a
change the process refused is marked so before its take-back, so the next open only takes it
back. After every kill and the next open (`rmh doctor`): every note holds its bytes of before,
no intent is pending, no link dangles; a supersede that can be written is whole at every kill
(the old note superseded and its successor written, or neither)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.harness.test_cli_notes import rmh
from tests.harness.test_refused_midway import FACT, OLD, doctor, files

NEW = "conversations/c1/facts/kiln temperature 1250 c.md"
ARGS = ("fact", "supersede", OLD[:-3], "--value", "1250 c", "--by", "t",
        "--at", "2024-05-01T00:00:00+00:00", "--json")
MAX_OPS = 200


def _vault(tmp_path: Path, name: str, blocked: bool) -> Path:
    root = tmp_path / name
    (root / OLD).parent.mkdir(parents=True)
    (root / OLD).write_text(FACT)
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    if blocked:
        (root / NEW).mkdir()
    return root


def _killed_at(root: Path, n: int) -> int:
    r = rmh("--vault", str(root), *ARGS, env={"RMH_FAULT_AFTER_OPS": str(n)})
    assert "Traceback" not in r.stderr, r.stderr
    return r.returncode


def test_a_refused_supersede_killed_at_every_step_ends_refused(tmp_path: Path) -> None:
    bad: list[tuple[int, str]] = []
    for n in range(1, MAX_OPS):
        root = _vault(tmp_path, f"v{n}", blocked=True)
        before = files(root)
        code = _killed_at(root, n)
        found = doctor(root)
        if files(root) != before:  # main: the old note "superseded by" a never written note
            bad.append((n, "notes changed"))
        if found["intents"]["pending"] or found["dangling_links"]:  # type: ignore[index]
            bad.append((n, json.dumps([found["intents"], found["dangling_links"]])))
        if code != -9:
            assert code == 1, code  # the refusal, uninterrupted: the sweep's end
            break
    else:
        raise AssertionError(f"still killed after {MAX_OPS} operations")
    assert n > 5 and not bad, bad


def test_a_supersede_killed_at_every_step_is_whole(tmp_path: Path) -> None:
    done = _vault(tmp_path, "done", blocked=False)
    before = files(done)
    assert _killed_at(done, 10**6) == 0
    after = files(done)
    for n in range(1, MAX_OPS):
        root = _vault(tmp_path, f"v{n}", blocked=False)
        code = _killed_at(root, n)
        found = doctor(root)
        now = files(root)
        assert now in (before, after), (n, sorted(set(now.items()) ^ set(after.items())))
        assert not found["intents"]["pending"] and not found["dangling_links"], (n, found)  # type: ignore[index]
        if code != -9:
            break
    assert n > 5
