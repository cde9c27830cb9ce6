"""A test session that leaves anything in its temporary folder fails, and leaves nothing there
either way (tests/conftest.py, HOUSE41).

Real pytest sessions in subprocesses, with the suite's conftest as their plugin, over
generated tests that each leave (or make and remove) files and folders through `tempfile`,
through $TMPDIR in a child process, and through `tests.forks.run_python` (the shared fork
server's folder, also where a script never closes it): the session's exit status says
whether anything was left and names it; the temporary folder given to the session holds
nothing of it afterwards (pytest's own `tmp_path` root aside, which lives in
PYTEST_DEBUG_TEMPROOT).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LEAVE = {
    "mkdtemp": "tempfile.mkdtemp(prefix='leftover-{i}-')",
    "mkstemp": "os.close(tempfile.mkstemp(prefix='leftover-{i}-')[0])",
    "child": "subprocess.run([sys.executable, '-c', \"import os; open(os.path.join("
             "os.environ['TMPDIR'], 'leftover-{i}'), 'w').close()\"], check=True)",
}
CLEAN = {
    "context": "with tempfile.TemporaryDirectory() as d: open(os.path.join(d, 'x'), 'w').close()",
    "removed": "p = tempfile.mkdtemp(); shutil.rmtree(p)",
    "forks": "from tests.forks import run_python; assert run_python('print(1)').stdout == '1\\n'",
}


def _session(work: Path, lines: list[str]) -> subprocess.CompletedProcess[str]:
    """A pytest session over one generated test file running `lines`, its temporary folder
    `work/tmp` and pytest's tmp_path root `work/pytest`."""
    (work / "tmp").mkdir()
    (work / "pytest").mkdir()
    body = "\n".join(f"    {line}" for line in lines) or "    pass"
    (work / "test_generated.py").write_text(
        "import os, shutil, subprocess, sys, tempfile\n\n\ndef test_it():\n" + body + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "RMH_TESTS"))}
    env.update({"TMPDIR": str(work / "tmp"), "PYTEST_DEBUG_TEMPROOT": str(work / "pytest"),
                "PYTHONPATH": str(ROOT)})
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "tests.conftest", "--rootdir", str(work), str(work)],
                          cwd=work, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("seed", range(4))
def test_a_session_that_leaves_a_temporary_file_fails_and_leaves_nothing(
        tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    leave = rng.sample(sorted(LEAVE), rng.randint(1, len(LEAVE)))
    clean = rng.sample(sorted(CLEAN), rng.randint(0, len(CLEAN)))
    lines = [*(CLEAN[k] for k in clean), *(LEAVE[k].format(i=i) for i, k in enumerate(leave))]
    rng.shuffle(lines)
    done = _session(tmp_path, lines)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout, done.stdout
    said = done.stderr.split("left these in its temporary folder", 1)[-1]
    for i in range(len(leave)):
        assert f"leftover-{i}" in said, done.stderr
    assert os.listdir(tmp_path / "tmp") == []


@pytest.mark.parametrize("seed", range(3))
def test_a_session_that_cleans_up_passes_and_leaves_nothing(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    lines = [CLEAN[k] for k in rng.sample(sorted(CLEAN), rng.randint(1, len(CLEAN)))]
    done = _session(tmp_path, lines)
    assert done.returncode == 0, done.stdout + done.stderr
    assert os.listdir(tmp_path / "tmp") == []


def test_a_script_using_the_fork_server_leaves_no_folder(tmp_path: Path) -> None:
    """A probe or script that runs `tests.forks.run_python` and exits without
    `close_shared` (the session's end calls it; a script does not)."""
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "PYTHONPATH": str(ROOT)}
    code = ("from tests.forks import run_python\n"
            "assert run_python('print(2)').stdout == '2\\n'\n")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, timeout=300)
    assert sorted(set(os.listdir(tmp_path / "tmp")) - {".ses"}) == []


def test_a_fork_server_killed_at_a_timeout_takes_its_folder_along(tmp_path: Path) -> None:
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "PYTHONPATH": str(ROOT)}
    code = ("import os, subprocess, tempfile\n"
            "from tests import forks\n"
            "try:\n"
            "    forks.run_python('import time; time.sleep(60)', timeout=2)\n"
            "except subprocess.TimeoutExpired:\n"
            "    pass\n"
            "print(sorted(n for n in os.listdir(tempfile.gettempdir()) if n != '.ses'))\n"
            "os._exit(0)\n")  # no atexit: what the timeout itself left
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                          timeout=300, capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stdout
