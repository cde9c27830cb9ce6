"""`rmh move` killed at every file operation (issue 27 item 2), for tests and
bench/bench_crash_move.py.

A vault whose note `a/Target.md` is linked by `referrers` notes (wiki-links, an aliased one, a
markdown link) and links to its sibling by a relative markdown link that must follow it. The
real `rmh move a/Target "b/Target Moved"` runs with RMH_FAULT_AFTER_OPS=N (the store SIGKILLs
the process right after its N-th file operation); then `rmh doctor --json`, the next process to
open the vault, finishes the journalled move and reports. The state after that next open must
be one of the two whole states: the note at its old path with every note as it was, or at its
new path with every link rewritten (no dangling link, no torn note, no pending intent).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CHILD_ENV = ("PATH", "HOME", "LANG", "TMPDIR", "RMH_EMBED_CACHE", "XDG_CACHE_HOME")
OLD, NEW = "a/Target.md", "b/Target Moved.md"


# How `rmh ARGS` is run with an environment: a fresh `python -m harness` (the default), or
# (tests) a child forked from a pre-imported server, a real process all the same.
Runner = Callable[[list[str], dict[str, str]], "subprocess.CompletedProcess[str]"]


def fresh_process(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=600)


def rmh(vault: Path, *args: str, fault_after: int | None = None,
        runner: Runner = fresh_process) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    if fault_after is not None:
        env["RMH_FAULT_AFTER_OPS"] = str(fault_after)
    return runner(["--vault", str(vault), *args], env)


def make_template(root: Path, referrers: int) -> Path:
    """The vault before the move, indexed (`rmh init --no-dense`)."""
    (root / "a").mkdir(parents=True)
    (root / "r").mkdir()
    (root / "a" / "Sib.md").write_text("Sibling of the target.\n", encoding="utf-8")
    # `./Sib.md` names a/Sib.md only (a bare `Sib.md` would still find it by name from b/),
    # so the moved note's own link must follow it: the move rewrites the moved note too.
    (root / OLD).write_text("# Target\nSee [the sibling](./Sib.md) and [[Sib]].\n", "utf-8")
    for i in range(referrers):
        (root / "r" / f"Ref {i:03d}.md").write_text(
            f"Ref {i} links [[Target]], [[Target|the target]] and [md](../a/Target.md).\n"
            f"Also [[Sib]].\n", encoding="utf-8")
    done = rmh(root, "init", "--no-dense")
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return root


def texts(root: Path) -> dict[str, bytes]:
    """Every note's bytes, by vault path."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*.md")) if ".rmh" not in p.parts}


@dataclass
class KillPoint:
    n: int
    killed: bool  # False: the move ran to the end (N past its last operation)
    state: str  # "old", "new", or what is wrong
    pending: int
    dangling: int
    recovered: str  # what the next open did ("", "rolled forward", "rolled back")

    def row(self) -> str:
        return (f"| {self.n} | {'killed' if self.killed else 'finished'} | {self.recovered or '-'}"
                f" | {self.state} | {self.dangling} | {self.pending} |")


def reference(template: Path, work: Path) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """(the notes before, the notes after an uninterrupted move)."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(template, work)
    done = rmh(work, "move", OLD, NEW)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return texts(template), texts(work)


# The light mode's killed process: the facade's move alone (no CLI, config or ledger), with the
# store's fault injection passed as `rmh` passes RMH_FAULT_AFTER_OPS.
LIGHT_MOVE = """
import sys
from pathlib import Path
from vault import Vault
Vault.open(Path(sys.argv[1]), watch=False, fault_after=int(sys.argv[2])).move(sys.argv[3],
                                                                         sys.argv[4])
"""


def _light_move(work: Path, n: int) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-c", LIGHT_MOVE, str(work), str(n), OLD, NEW],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=600)


def _doctor_here(work: Path) -> dict[str, Any]:
    from vault import Vault

    with Vault.open(work, watch=False) as v:
        return v.doctor()


def kill_at(template: Path, work: Path, n: int, before: dict[str, bytes],
            after: dict[str, bytes], *, light: bool = False,
            runner: Runner = fresh_process) -> KillPoint:
    """Copy the template, kill `rmh move` after its n-th file operation, open it again
    (`rmh doctor --json`). `light`: the killed process runs `Vault.move` alone and the next
    open is `Vault.open` + `doctor` in this process (the same store and journal; a third of
    the process start-up cost, for the long benchmark)."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(template, work)
    moved = (_light_move(work, n) if light
             else rmh(work, "move", OLD, NEW, fault_after=n, runner=runner))
    killed = moved.returncode == -9
    if not killed and moved.returncode != 0:
        raise RuntimeError(f"rmh move at N={n}: {moved.returncode} {moved.stderr}")
    if light:
        vault = _doctor_here(work)
    else:
        doc = rmh(work, "doctor", "--json", runner=runner)
        if doc.returncode != 0:
            raise RuntimeError(f"rmh doctor at N={n}: {doc.stderr}")
        vault = json.loads(doc.stdout)["vault"]
    now = texts(work)
    state = "old" if now == before else "new" if now == after else "MIXED"
    if state == "MIXED":
        torn = sorted(p for p in set(now) | set(before) | set(after)
                      if now.get(p) not in (before.get(p), after.get(p)))
        mixed = sorted(p for p in now if p not in torn and now[p] != (
            after if NEW in now else before).get(p))
        state = f"MIXED torn={torn[:3]} mixed={mixed[:3]}"
    recovered = ",".join(o["state"] for o in vault["intents"]["recovered"])
    return KillPoint(n, killed, state, len(vault["intents"]["pending"]),
                     len(vault["dangling_links"]), recovered)
