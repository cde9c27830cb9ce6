"""A file-size limit (`ulimit -f`, RLIMIT_FSIZE; a file system's largest file) reached while
rmh writes is a full disk for that file: `disk_full`, one line, never a traceback, nothing
lost, and the next write once the limit is lifted succeeds.

Past the limit write(2) fails with EFBIG (Python ignores SIGXFSZ), which SQLite reports only
as SQLITE_IOERR_WRITE, "disk I/O error": before VAULT9 (session 35) every command whose index
commit crossed the limit died with that traceback (the note it wrote already in place), and a
note past the limit was `[Errno 27] File too large` (`os_error`). The limits, note sizes and
texts are drawn from the seed; the CLI runs for real, under the limit, in a subprocess."""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import ROOT, rmh

pytestmark = pytest.mark.slow


def limited(limit: int, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`rmh ARGS` with RLIMIT_FSIZE at `limit` bytes for it alone."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update(PYTHONPATH=str(ROOT), PYTHONHASHSEED="0")
    return subprocess.run([sys.executable, "-m", "harness", *args], input=stdin, text=True,
                          capture_output=True, env=env, cwd=ROOT, timeout=120, preexec_fn=cap)


def words(rng: random.Random, n: int) -> str:
    return " ".join("".join(rng.choice("aeioulmnrst") for _ in range(rng.randint(3, 9)))
                    for _ in range(n))


def notes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".rmh" not in p.relative_to(root).parts}


def one_line_full(r: subprocess.CompletedProcess[str]) -> bool:
    last = r.stderr.splitlines()[-1] if r.stderr else ""
    return (r.returncode == 1 and "Traceback" not in r.stderr and last.startswith("rmh: disk full")
            and json.loads(r.stdout)["error"]["kind"] == "disk_full")


@pytest.mark.parametrize("seed", range(3))
def test_a_file_size_limit_is_a_full_disk_that_loses_nothing(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "v"
    root.mkdir()
    for i in range(rng.randint(3, 6)):
        (root / f"N{i}.md").write_text(f"# N{i}\n{words(rng, 40)} [[N0]]\n", encoding="utf-8")
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    v = ("--vault", str(root))
    limit = rng.choice((16, 24, 40)) * 1024  # below index.sqlite's size: every commit crosses it
    before = notes(root)
    # A note larger than the limit cannot land: disk_full, no file, no temporary left.
    big = words(rng, limit // 4) + "\n"
    r = limited(limit, *v, "write", "Big", "--json", stdin=big)
    assert one_line_full(r), (r.returncode, r.stderr[-2000:])
    assert json.loads(r.stdout)["error"]["what"] == "Big.md", r.stdout  # the note, by name
    assert notes(root) == before
    # A note that fits under the limit lands; its index rows (text, chunks, terms: more than
    # the note in SQLite's WAL) cross it: written with a warning, or refused whole.
    mid = f"mid {words(rng, limit // 10)}\n"
    r = limited(limit, *v, "write", "Mid", "--json", stdin=mid)
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    if r.returncode == 0:
        assert "disk full" in r.stderr, r.stderr  # the warning: landed, not indexed yet
        before["Mid.md"] = mid.encode()
    else:
        assert one_line_full(r), (r.returncode, r.stderr[-2000:])
    assert notes(root) == before
    r = limited(limit, *v, "edit", "N1", "append", "--text", "\nmore", "--json")
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    if r.returncode == 0:
        before["N1.md"] += b"\nmore"
    else:
        assert one_line_full(r), (r.returncode, r.stderr[-2000:])
    assert notes(root) == before
    for command in (("read", "N2"), ("search", "N2", "--no-dense"), ("doctor",)):
        r = limited(limit, *v, *command)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (command, r.stderr[-2000:])
    assert notes(root) == before
    # The limit lifted: the write that had no room succeeds, and the index holds it.
    r = rmh(*v, "write", "Big", "--overwrite", stdin=big)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert (root / "Big.md").read_text(encoding="utf-8") == big
    found = json.loads(rmh(*v, "search", big.split()[0], "--no-dense", "--json", "-k", "100")
                       .stdout)["hits"]
    assert "Big.md" in [h["note"] for h in found]
    r = rmh(*v, "doctor", "--json")
    assert r.returncode == 0, r.stderr
    assert not [p for p in root.iterdir() if ".rmh-tmp-" in p.name]
