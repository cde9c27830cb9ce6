"""A search process never loads the erasure's steps (issue 33 item 5: a cold start pays for
what its search uses): `vault/erasure.py` imports `erasure_steps` and `storage.forgotten` where
an erasure runs or a pending one is read, not at every open. A real `rmh init` and search
process (the real MiniLM); a pending erasure still loads them (the open finishes it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STEPS = ("vault.erasure_steps", "vault.storage.forgotten")


def loaded(vault: Path, env: dict[str, str], *args: str) -> list[str]:
    """The STEPS modules one `rmh ARGS` process imported."""
    code = ("import sys\nfrom harness.cli import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit:\n    pass\n"
            f"print(sorted(m for m in {STEPS!r} if m in sys.modules), file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code, "--vault", str(vault), *args],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("["), r.stderr
    return [m.strip("' ") for m in last.strip("[]").split(",") if m.strip()]


def test_a_search_process_loads_no_erasure_steps(tmp_path: Path) -> None:
    for i in range(12):
        (tmp_path / f"N{i:02}.md").write_text(f"Note {i} about billing. [[N{(i + 1) % 12:02}]]\n",
                                              encoding="utf-8")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    init = subprocess.run([sys.executable, "-m", "harness", "--vault", str(tmp_path), "init"],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert init.returncode == 0, init.stderr
    assert loaded(tmp_path, env, "search", "billing", "--json") == []
    # an erasure itself still has them (and the search after it does not)
    assert loaded(tmp_path, env, "forget", "N03.md", "--json") == list(STEPS)
    assert loaded(tmp_path, env, "search", "billing", "--json") == []
