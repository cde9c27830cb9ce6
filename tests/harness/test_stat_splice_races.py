"""Real `rmh` processes racing to sync the same outside edit over a mapped stat file (issue 33
item 5: vault/storage/stat_splice.py, stat_cache.py `settle`, index.py `persist_stats`).

The process that syncs an outside edit over `.rmh/stat-columns.bin` splices its own commits into
the mapped columns and saves the new key's file, unless another connection committed since it
loaded them (`PRAGMA data_version`). Here 2-4 real CLI processes (`search`, `read`, `status`,
`write`, `edit`, and an `rmh serve` asked to search, write and search again over the round)
are released at one instant (each imports the CLI, then waits on a barrier)
onto a vault an editor has just changed, so two or more of them sync the same change over the
same mapped file; meanwhile the editor keeps changing notes (rewrites, appends, same-size
rewrites, new inodes with the old mtime restored, touches, renames, moves to new folders,
creations, deletions), and one racer is, by the seed, left alone, paused (SIGSTOP for a while,
SIGCONT), killed (SIGKILL at a random instant), made to kill itself after N file operations
(`RMH_FAULT_AFTER_OPS`, the store's seam), or made to stop or die at a seam of the stat file
(tests/harness/stat_racers.py `RACER`: right after its stat cache is loaded, before
`persist_stats`, between the new file's temporary and its rename), the others running to
their end before it goes on. The held cases are also run one by one
(`test_one_change_two_processes_one_held_at_each_seam`), the other process started with the
held one or only once it is held. Once everything has stopped:

- no command went unanswered: every racer exited 0, except the one killed (-9), a `read` of
  a note the editor had just renamed or deleted (exit 1, "note not found"), and an `edit`
  (an append) computed from bytes another racer's append changed before its write (exit 1,
  edit_conflict: vault/writes.py `edit` is always guarded by the bytes it read);
- no row a new process would trust is stale: an index row whose (size, mtime, inode) is the
  file's has the file's content hash (else the next sync skips the file);
- a stat file under the index's current key (the one a new process maps) agrees with the index
  and is byte for byte the file a read of every row saves (tests/vault/storage/
  test_stat_splice.py's comparison);
- a new `rmh search` process then indexes exactly the disk (path -> content hash), leaves the
  file current and byte-equal to a full read, and (last round) answers as a fresh copy of the
  vault, `.rmh/` removed and initialised again, answers.

Editor states are made tellable apart by their stat, as any stat-based sync needs: every
state the editor leaves has an mtime from a counter far from now (stat_racers.BASE_NS), and
a state that restores an old mtime (a new inode, or a rename) is bumped by 1 ns when its
(size, mtime, inode) was already that path's at some time (inode numbers are reused). A
same-size rewrite in place with the old mtime restored is undetectable by design
(vault/storage/sync.py: a file whose (size, mtime, inode) match is not read) and not made.

Runtime: 2 seeds x 3 rounds and 6 held cases, ~30 s of CPU (wall: what the machine's load
allows). `RMH_LONG_RACES=1` runs `RMH_RACE_SEEDS` (default 40) seeds from `RMH_RACE_SEED0`
x 4 rounds; `RMH_RACE_NOTES` (default 24) sets the editor's notes at the start, 50 a folder
(docs/measurements/session16/NOTES-R7.md)."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.harness.stat_racers import SEAMS, Editor, Plan, Racer, disk, race, rpc
from tests.harness.test_cli_notes import rmh
from vault.storage import stat_store
from vault.storage.row_codec import STAT_COLS
from vault.storage.schema import stat_key, stat_sample
from vault.storage.stat_cache import StatCache

pytestmark = pytest.mark.slow

LONG = os.environ.get("RMH_LONG_RACES") == "1"
SEED0 = int(os.environ.get("RMH_RACE_SEED0", "0"))
SEEDS = range(SEED0, SEED0 + int(os.environ.get("RMH_RACE_SEEDS", "40"))) if LONG else range(2)
ROUNDS = 4 if LONG else 3
NOTES = int(os.environ.get("RMH_RACE_NOTES", "24"))  # the editor's notes at the start


def _vault(tmp: Path, seed: int) -> tuple[Path, Editor]:
    root = tmp / "v"
    editor = Editor(root, seed)
    folders = max(4, NOTES // 50)
    for k in range(NOTES):
        editor.create(f"e{k % folders}" + ("/deep" if k % 7 == 0 else ""))
    (root / "w").mkdir()
    (root / "w" / "base.md").write_text("# base\nzqall written by rmh below\n")
    r = rmh("--vault", str(root), "init", "--no-dense")
    assert r.returncode == 0, r.stderr
    assert (root / ".rmh" / stat_store.FILE).is_file()
    return root, editor


def _racers(root: Path, rng: random.Random, editor: Editor, tag: str) -> list[Racer]:
    v = ["--vault", str(root)]
    out = []
    for i in range(rng.randint(2, 4)):
        kind = rng.choice(["search", "search", "read", "status", "write", "edit", "serve"])
        if kind == "serve":  # one process across the others' commits (its cache reloaded)
            r = Racer([*v, "serve", "--no-dense"],
                      stdin=rpc(1, "vault.search", query="zqall", learn=False))
            r.later = [(rng.uniform(0, 0.5), rpc(2, "vault.write", note=f"w/{tag}p{i}",
                                                   content=f"zqall {tag} served {i}\n")),
                       (rng.uniform(0, 0.5), rpc(3, "vault.search", query="zqall",
                                                   learn=False))]
        elif kind == "search":
            r = Racer([*v, "search", "zqall", "--json", "--no-dense", "--no-learn"])
        elif kind == "read":
            notes = editor.notes()
            r = Racer([*v, "read", rng.choice(notes).relative_to(root).as_posix()])
        elif kind == "status":
            r = Racer([*v, "status", "--no-dense"])
        elif kind == "write":
            r = Racer([*v, "write", f"w/{tag}p{i}"], stdin=f"zqall {tag} racer {i}\n")
        else:
            r = Racer([*v, "edit", "w/base", "append", "--text", f"zqall {tag} {i}\n"])
        r.delay = rng.choice([0.0, 0.0, rng.uniform(0, 0.05), rng.uniform(0, 0.4)])
        out.append(r)
    return out


def _plan(root: Path, rng: random.Random, editor: Editor, tag: str) -> Plan:
    racers = _racers(root, rng, editor, tag)
    plan = Plan(racers, racers[rng.randrange(len(racers))],
                rng.choice(["none", "stop", "kill", "fault", "seam stop", "seam stop",
                            "seam kill"]),
                edits=rng.randint(0, 4), pause=rng.uniform(0, 0.3))
    if plan.how.startswith("seam"):
        plan.seam = rng.choice(SEAMS)
    if plan.how == "fault":
        plan.victim.fault = rng.randint(1, 8)
    plan.at = rng.uniform(0, 0.6)
    plan.hold = rng.uniform(0.05, 1.0) if plan.how == "stop" else rng.uniform(0, 0.2)
    return plan


def _index(root: Path) -> tuple[str | None, list[tuple[Any, ...]], Any]:
    """The stat key, the stat rows and the sample the file check uses, in one read."""
    conn = sqlite3.connect(root / ".rmh" / "index.sqlite", isolation_level=None)
    try:
        conn.execute("BEGIN")
        key = stat_key(conn)
        rows = conn.execute(f"SELECT {STAT_COLS} FROM notes").fetchall()
        samples: dict[tuple[int, ...], Any] = {}

        def sample(ids: Any) -> Any:
            return samples.setdefault(tuple(ids), stat_sample(conn, ids))

        got = stat_store.load(root / ".rmh", key) if key is not None else None
        agrees = got is not None and stat_store.agrees(got, sample)
        conn.execute("COMMIT")
        return key, rows, (got, agrees)
    finally:
        conn.close()


def _full_read_bytes(key: str, rows: list[tuple[Any, ...]]) -> bytes:
    """The stat file a process that read every row (at `key`) saves (index.py persist_stats:
    settle, columns, save)."""
    cache = StatCache(0, rows, key=key)
    assert cache.settle()
    cols = cache.columns()
    assert cols is not None
    with tempfile.TemporaryDirectory() as d:
        assert stat_store.save(d, key, cols)
        return (Path(d) / stat_store.FILE).read_bytes()


def _check_quiet(root: Path, what: str) -> bool:
    """Nothing runs: no stale row a new process would trust, and the file it would map (if
    any) is a full read's; True when there is one."""
    files = disk(root)
    key, rows, (got, agrees) = _index(root)
    for _, path, size, mtime, inode, digest, ctime in rows:
        if path in files and files[path][0] == (size, mtime, inode, ctime):
            assert files[path][1] == digest, f"{what}: stale row {path} would be trusted"
    if got is None:
        return False
    assert key is not None and agrees, f"{what}: a file under the current key disagrees"
    data = (root / ".rmh" / stat_store.FILE).read_bytes()
    assert data == _full_read_bytes(key, rows), f"{what}: the mapped file is not a full read's"
    return True


def _search(root: Path) -> dict[str, tuple[Any, ...]]:
    """note -> (title, snippet, raw score of each lexical signal) of every note (all hold
    "zqall"). Ranks and fused scores are left out: equal raw scores are ordered by note id,
    and ids differ between a vault and a fresh copy of it (renames keep theirs)."""
    r = rmh("--vault", str(root), "search", "zqall", "-k", "100", "--json", "--no-dense",
            "--no-learn", "--explain")
    assert r.returncode == 0, r.stderr
    out = {}
    for h in json.loads(r.stdout)["hits"]:
        signals = h["receipt"]["signals"]
        out[h["note"]] = (h["title"], h["snippet"],
                          *(round(signals[s]["raw"], 12) for s in sorted(signals)))
    return out


def _check_new_process(root: Path, what: str, fresh: Path | None, last: str = "") -> None:
    hits = _search(root)
    files = disk(root)
    _, rows, _ = _index(root)
    assert {r[1]: r[5] for r in rows} == {p: h for p, (_, h) in files.items()}, what
    assert _check_quiet(root, what + " (after a new process)"), what  # it left a current file
    assert len(hits) == min(len(files), 100), what
    if fresh is not None:  # the same vault, indexed from nothing
        shutil.copytree(root, fresh, ignore=shutil.ignore_patterns(".rmh"))
        assert rmh("--vault", str(fresh), "init", "--no-dense").returncode == 0
        again = _search(fresh)
        if len(files) <= 100:
            assert again == hits, what
        else:  # past 100 notes, which of the equal scores make the cut follows the ids
            assert {n: again[n] for n in again if n in hits} == \
                {n: hits[n] for n in again if n in hits}, what
        for note in sorted({last, max(files, key=lambda p: files[p][0][1])} & set(files)):
            got = _read(root, note)  # the editor's last note, the note rmh wrote last
            assert got == _read(fresh, note), what
            assert got["text"].encode() == (root / note).read_bytes(), what


def _read(root: Path, note: str) -> dict[str, Any]:
    r = rmh("--vault", str(root), "read", note, "--json")
    assert r.returncode == 0, r.stderr
    out: dict[str, Any] = json.loads(r.stdout)
    del out["id"]  # the vault's own
    return out


@dataclass
class Tally:
    rounds: int = 0
    racers: int = 0
    trusted: int = 0  # rounds whose racers left a file a new process maps
    both_spliced: int = 0  # rounds where 2+ racers synced a change over the mapped file
    events: dict[str, int] = field(default_factory=dict)  # signals, seams, loads, saves

    def add(self, racers: list[Racer]) -> None:
        self.rounds += 1
        self.racers += len(racers)
        over_file = 0
        for r in racers:
            for e in [f"cmd:{r.args[2]}", *r.signals, *r.log]:
                self.events[e] = self.events.get(e, 0) + 1
            over_file += any(e.startswith("persist:file:patched") for e in r.log)
        self.both_spliced += over_file >= 2


def _trial(tmp: Path, seed: int, rounds: int, tally: Tally) -> None:
    root, editor = _vault(tmp, seed)
    rng = random.Random(1000 + seed)
    for n in range(rounds):
        tag = f"s{seed}r{n}"
        for _ in range(rng.randint(1, 4)):  # the change the racers all find
            editor.step()
        tally.add(race(_plan(root, rng, editor, tag), editor, tag))
        tally.trusted += _check_quiet(root, tag)
        _check_new_process(root, tag, tmp / f"fresh{n}" if n == rounds - 1 else None,
                           editor.last)


@pytest.mark.parametrize("seed", SEEDS)
def test_racing_processes_leave_no_stale_row_and_a_full_reads_file(tmp_path: Path,
                                                                    seed: int) -> None:
    tally = Tally()
    _trial(tmp_path, seed, ROUNDS, tally)
    assert tally.rounds == ROUNDS
    print(f"seed {seed}: {tally}")


@pytest.mark.parametrize(("seam", "change", "other", "after"), [
    *((seam, "same size, new inode", "search", False) for seam in SEAMS),
    ("loaded", "touch", "search", False),
    ("persist", "same size, new inode", "edit", True),
    ("loaded", "same size, new inode", "edit", True)])
def test_one_change_two_processes_one_held_at_each_seam(tmp_path: Path, seam: str, change: str,
                                                       other: str, after: bool) -> None:
    """Two processes released together onto one outside change (a new content, or a stat-only
    touch that bumps no generation) over a current stat file: a search, held, and a search or
    an `rmh edit` (which syncs the change at its open, then commits its own write). The held
    one stops itself right after its stat cache is loaded, before its save, or between its
    temporary and its rename, and is let go once the other has ended; the other starts with
    it, or (`after`) once it is held, so that the edit's commit lands between the held one's
    load or commit and its save (what `persist_stats`'s data_version check refuses). Again
    (another change) until it reached its seam: a process whose save is refused never
    reaches the rename."""
    root, editor = _vault(tmp_path, 7)
    v = ["--vault", str(root)]
    for attempt in range(6):
        assert _check_quiet(root, "before"), attempt  # the file a new process maps
        assert editor.step(change) == change
        a = Racer([*v, "search", "zqall", "--json", "--no-dense", "--no-learn"])
        b = Racer([*v, "search", "zqall", "--json", "--no-dense", "--no-learn"]
                  if other == "search" else
                  [*v, "edit", "w/base", "append", "--text", f"zqall {attempt}\n"])
        race(Plan([a, b], a, "seam stop", seam, after=after), editor, change)
        assert "EDIT-CONFLICT" not in b.signals  # the only edit
        assert a.log[0] == "load:file" or b.log[0] == "load:file", (a.log, b.log)
        print(f"{seam} {change} {other} {after}: held {a.signals} {a.log}, other {b.log}")
        _check_quiet(root, change)
        _check_new_process(root, change, None)
        if f"HELD@{seam}" in a.signals:
            break
    assert f"HELD@{seam}" in a.signals, (a.log, b.log)
