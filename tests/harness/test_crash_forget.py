"""`rmh forget` killed after each of its operations, through the real CLI (issue 32): the
erasure is journalled (vault/erasure.py, storage/intents.py `ForgetIntent`), so after the next
process opens the vault either nothing was erased or everything was, and then a byte search of
the vault folder, `.rmh/` and the shared embedding cache finds none of the erased strings; no
note is torn (every note file is byte for byte as before, or gone because it was erased).

The shell's own files are swept too (FIX36: they were no kill points): the hooks' journal,
rewritten whole without the lines naming the secret (it was written in place: a kill cut the
lines it keeps), and the LLM entity cache (its rows naming the secret deleted, then VACUUM):
after the next open, every line and row not naming it is still there.

The sweep's `rmh forget` and `rmh doctor` are real processes forked from a server that imported
the CLI once (tests/forks.py): the forget still dies by SIGKILL after its N-th operation."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.forks import CLI_PRELOAD, ForkServer, cli_env, run_cli

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SECRET = "Quillon-Marrow-5519"
LINES = ("The launch code for the Marrow vault sits under the third floorboard.",
         "Quillon prefers that nobody mentions the cellar to the auditors.")
ERASED = ("people/Quillon.md", "projects/Marrow plan.md")
JOURNAL = "vault/.rmh/hooks/s1.jsonl"  # the hooks' journal of one session (harness/hooks_index)
KEPT = [json.dumps({"prompt": f"kiln question {i}"}) + "\n" for i in range(40)]
CACHE = "vault/.rmh/entities-llm.sqlite"  # harness/llm_entities.py


def rmh(work: Path, *args: str, fault_after: int | None = None, stdin: str = "",
        server: ForkServer | None = None) -> subprocess.CompletedProcess[str]:
    """`rmh --vault WORK/vault ARGS`: a `python -m harness` forked by `server`, or by the
    shared server of `tests.forks.run_cli`."""
    env = cli_env(work, fault_after=fault_after)
    if server is not None:
        return server.run(["--vault", str(work / "vault"), *args], module="harness", env=env,
                          cwd=ROOT, stdin=stdin)
    return run_cli(["--vault", str(work / "vault"), *args], env=env, cwd=ROOT, stdin=stdin)


def make_template(top: Path) -> Path:
    """A vault with two notes naming the secret, one trash copy, learned events naming it
    (a search and reads through `rmh serve`), embeddings in both caches."""
    vault = top / "vault"
    (vault / "people").mkdir(parents=True)
    (vault / "projects").mkdir()
    (vault / "people" / "Quillon.md").write_text(f"# Quillon\nBadge {SECRET}.\n{LINES[0]}\n")
    (vault / "projects" / "Marrow plan.md").write_text(
        f"# Marrow plan\nOwner {SECRET}.\n{LINES[1]}\nSee [[Quillon]].\n")
    (vault / "Old draft.md").write_text(f"Draft naming {SECRET} once.\n")
    (vault / "keep.md").write_text("Groceries: apples, bread and tea for the week.\n")
    (vault / "links.md").write_text("Index: [[keep]] and [[Quillon]].\n")
    assert rmh(top, "init").returncode == 0
    assert rmh(top, "delete", "Old draft").returncode == 0
    frames = [{"jsonrpc": "2.0", "id": 1, "method": "session.start",
               "params": {"session": "s1"}},
              {"jsonrpc": "2.0", "id": 2, "method": "vault.search",
               "params": {"query": f"who owns {SECRET}", "k": 3}},
              {"jsonrpc": "2.0", "id": 3, "method": "vault.read", "params": {"note": "Quillon"}},
              {"jsonrpc": "2.0", "id": 4, "method": "session.end", "params": {}}]
    served = rmh(top, "serve", stdin="".join(json.dumps(f) + "\n" for f in frames))
    assert all("result" in json.loads(ln) for ln in served.stdout.splitlines()), served.stdout
    journal = top / JOURNAL
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_text("".join(KEPT[:20]) + json.dumps({"prompt": f"who is {SECRET}"}) + "\n"
                       + "".join(KEPT[20:]), encoding="utf-8")
    with sqlite3.connect(top / CACHE) as conn:
        conn.execute("CREATE TABLE answers(key TEXT PRIMARY KEY, model TEXT NOT NULL, "
                     "prompt TEXT NOT NULL, entities TEXT NOT NULL)")
        conn.executemany("INSERT INTO answers VALUES (?, 'm', 'p', ?)", [
            ("k1", json.dumps([SECRET])), ("k2", json.dumps(["Kiln"]))])
    conn.close()
    return top


def own_files_kept(work: Path) -> bool:
    """Every journal line and cached row not naming the secret still there."""
    journal = (work / JOURNAL).read_text(encoding="utf-8")
    with sqlite3.connect(work / CACHE) as conn:
        rows = [k for (k,) in conn.execute("SELECT key FROM answers ORDER BY key")]
    conn.close()
    return all(line in journal for line in KEPT) and "k2" in rows


def files(work: Path) -> list[Path]:
    return sorted(p for p in work.rglob("*") if p.is_file())


def occurrences(work: Path) -> dict[str, int]:
    needles = [n.casefold().encode() for n in (SECRET, *LINES)]
    found: dict[str, int] = {}
    for f in files(work):
        data = f.read_bytes().decode("utf-8", "surrogateescape").casefold().encode(
            "utf-8", "surrogateescape")
        hits = sum(data.count(n) for n in needles)
        if hits:
            found[str(f.relative_to(work))] = hits
    return found


def notes(work: Path) -> dict[str, bytes]:
    vault = work / "vault"
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in vault.rglob("*.md")
            if ".rmh" not in p.relative_to(vault).parts}


@dataclass(frozen=True)
class Point:
    n: int
    killed: bool
    state: str  # "none" (nothing erased), "all" (everything erased), or what tore
    inside_journal: bool = False  # killed between the hooks' journal's temporary and rename


def kill_at(template: Path, work: Path, n: int, server: ForkServer) -> Point:
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(template, work)
    before = notes(work)
    run = rmh(work, "forget", "--subject", SECRET, fault_after=n, server=server)
    killed = run.returncode == -9
    assert killed or run.returncode == 0, run.stderr
    aside = sorted(p.name for p in (work / JOURNAL).parent.glob(".*.tmp"))  # killed inside
    # the journal's rewrite (between its temporary and the rename)
    # the next open finishes a journalled erasure
    reopened = rmh(work, "doctor", "--json", server=server)
    assert reopened.returncode == 0, reopened.stderr
    assert json.loads(reopened.stdout)["vault"]["intents"]["pending"] == []
    assert own_files_kept(work), n  # (a temporary a kill left before the intent landed
    # holds only kept lines: the next forget removes it, and `occurrences` reads it too)
    after = notes(work)
    torn = [p for p, b in after.items() if before.get(p) != b]
    if torn:
        return Point(n, killed, f"torn: {torn}", bool(aside))
    gone = sorted(set(before) - set(after))
    if not gone and (work / "vault" / ".rmh" / "trash" / "Old draft.md").exists():
        return Point(n, killed, "none", bool(aside))
    if gone == sorted(ERASED):
        found = occurrences(work)
        return Point(n, killed, "all" if not found else f"traces: {found}", bool(aside))
    return Point(n, killed, f"partial: {gone}", bool(aside))


def test_forget_killed_after_every_operation_erases_all_or_nothing(tmp_path: Path) -> None:
    template = make_template(tmp_path / "template")
    assert occurrences(template)  # the secret is everywhere before
    points = []
    with ForkServer(CLI_PRELOAD, workdir=tmp_path / "forks", cwd=ROOT) as server:
        for n in range(1, 200):
            point = kill_at(template, tmp_path / "work", n, server)
            points.append(point)
            assert point.state in ("none", "all"), point
            if not point.killed:
                break
    assert not points[-1].killed and points[-1].state == "all"
    assert {p.state for p in points} == {"none", "all"}
    assert any(p.inside_journal for p in points), points  # main: no kill point there
    # a kill after: the intent's 3 operations, each erased note, trash, index, both caches,
    # the ledger, the derived files, vacuum, the intent's removal
    assert len(points) > 12, points
    # learning still replays to the same state after a recovered erasure
    assert rmh(tmp_path / "work", "replay", "--check").returncode == 0
