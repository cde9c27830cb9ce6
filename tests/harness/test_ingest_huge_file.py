"""`rmh ingest` of a conversation file too large to hold in memory (a sparse terabyte) is one
clear line and exit 1: it was a MemoryError traceback (harness/commands/ingest.py
`transcript_text`). With the default `[extract] file_bytes` such a file is refused by size
before it is read (tests/harness/test_ingest_file_cap.py); here the bound is off (0), as a user
who needs more sets it. The child's address space is capped so the failure is the same on any
machine, whatever its memory and overcommit setting."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CAP = 8 << 30  # bytes of address space for the child: rmh starts well under it


@pytest.mark.parametrize("size", [1 << 40, 64 << 30])
def test_a_conversation_file_too_large_for_memory_is_one_line(tmp_path: Path,
                                                              size: int) -> None:
    vault, huge = tmp_path / "v", tmp_path / "huge.json"
    vault.mkdir()
    try:
        with open(huge, "wb") as fh:
            fh.truncate(size)
    except OSError as exc:
        pytest.skip(f"no sparse file of {size} bytes here: {exc}")

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "harness", "--vault", str(vault), "init"],
                         capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    assert run.returncode == 0, run.stderr
    (vault / "rmh.toml").write_text("[extract]\nfile_bytes = 0\n")
    run = subprocess.run([sys.executable, "-m", "harness", "--vault", str(vault), "ingest",
                          str(huge)], capture_output=True, text=True, env=env, cwd=ROOT,
                         preexec_fn=cap, check=False, timeout=300)
    assert run.returncode == 1, run.stderr[-800:]
    assert "Traceback" not in run.stderr, run.stderr[-800:]
    assert run.stderr.strip().splitlines() == [
        f"rmh: cannot read {huge}: too large to hold in memory ({size} bytes)"]
