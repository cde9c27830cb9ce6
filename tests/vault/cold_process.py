"""Real `rmh` processes on a small vault of linked notes, and which modules one imported: the
cold-start tests (a process loads what its command uses, no more) of `test_erasure_lazy.py`
and `test_int_arrays.py` share them."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def linked_vault(folder: Path, n: int) -> dict[str, str]:
    """`n` notes about billing in `folder`, each linking the next (a ring), indexed by a real
    `rmh init` (the real MiniLM); the environment the processes run with."""
    for i in range(n):
        (folder / f"N{i:02}.md").write_text(f"Note {i} about billing. [[N{(i + 1) % n:02}]]\n",
                                            encoding="utf-8")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(folder / "home")}
    init = subprocess.run([sys.executable, "-m", "harness", "--vault", str(folder), "init"],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert init.returncode == 0, init.stderr
    return env


def imported(vault: Path, env: dict[str, str], modules: Sequence[str], *args: str
             ) -> tuple[list[str], str]:
    """Which of `modules` one `rmh ARGS` process imported (in the order given), and its
    stdout."""
    code = ("import sys\nfrom harness.cli import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit:\n    pass\n"
            f"print([m for m in {list(modules)!r} if m in sys.modules], file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code, "--vault", str(vault), *args],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("["), r.stderr
    return [m.strip("' ") for m in last.strip("[]").split(",") if m.strip()], r.stdout
