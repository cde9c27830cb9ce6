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
(RACER: right after its stat cache is loaded, before `persist_stats`, between the new file's
temporary and its rename), the others running to their end before it goes on. The held cases
are also run one by one (`test_one_change_two_processes_one_held_at_each_seam`), with the
other process started with it or only once it is held. Once everything has stopped:

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
state the editor leaves has an mtime from a counter far from now (BASE_NS), and a state that
restores an old mtime (a new inode, or a rename) is bumped by 1 ns when its (size, mtime,
inode) was already that path's at some time (inode numbers are reused). A same-size rewrite in
place with the old mtime restored is undetectable by design (vault/storage/sync.py: a file
whose (size, mtime, inode) match is not read) and not made.

Runtime: 2 seeds x 3 rounds and 6 held cases, ~30 s of CPU (wall: what the machine's load
allows). `RMH_LONG_RACES=1` runs `RMH_RACE_SEEDS` (default 40) seeds from `RMH_RACE_SEED0`
x 4 rounds (docs/measurements/session16/NOTES-R7.md)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.harness.test_cli_notes import ROOT, rmh
from vault.storage import stat_store
from vault.storage.row_codec import STAT_COLS
from vault.storage.schema import stat_key, stat_sample
from vault.storage.stat_cache import StatCache

pytestmark = pytest.mark.slow

LONG = os.environ.get("RMH_LONG_RACES") == "1"
SEED0 = int(os.environ.get("RMH_RACE_SEED0", "0"))
SEEDS = range(SEED0, SEED0 + int(os.environ.get("RMH_RACE_SEEDS", "40"))) if LONG else range(2)
ROUNDS = 4 if LONG else 3
BASE_NS = 1_500_000_000 * 10**9  # the editor's mtimes: far from any mtime a write gets now
WAIT_S = 180  # a racer still running after this went unanswered

RACER = """
import atexit, os, signal, sys, time
import vault, harness.cli, harness.entry
from vault.storage import index, stat_store
harness.cli.build_parser()
at, do = os.environ.get("RACE_AT"), os.environ.get("RACE_DO")
halted, seen = [], []
atexit.register(lambda: sys.stderr.write("race-log " + " ".join(seen) + "\\n"))


def halt(here):  # the seam: this process stops (or dies) here, once
    if here == at and not halted:
        halted.append(1)
        os.kill(os.getpid(), signal.SIGSTOP if do == "stop" else signal.SIGKILL)


load, persist, save = index.Index._load_stats, index.Index.persist_stats, stat_store.save


def _load(self, version):  # the stat cache just mapped from the file (or read from the rows)
    cache = load(self, version)
    cache.race_origin = "file" if cache.from_file else "rows"
    seen.append("load:" + cache.race_origin)
    halt("loaded")
    return cache


def _persist(self, count_op=None):  # after the sync's own commits, before the file's save
    c = self._stats
    halt("persist")
    done = persist(self, count_op)
    if c is not None:
        seen.append(f"persist:{c.race_origin}:{'patched' if c.patched else 'read'}:{done}")
    return done


def _save(folder, key, c, count_op=None):
    def op():
        if count_op is not None:
            count_op()
        halt("rename")  # the new file written to its temporary, not yet renamed
    return save(folder, key, c, op)


index.Index._load_stats, index.Index.persist_stats, stat_store.save = _load, _persist, _save
sys.stderr.write("ready\\n")
sys.stderr.flush()
while os.read(0, 1) not in (b"\\n", b""):  # the barrier (unbuffered: the command's stdin follows)
    pass
time.sleep(float(os.environ["RACE_DELAY"]))
sys.exit(harness.entry.main(sys.argv[1:]))
"""
SEAMS = ("loaded", "persist", "rename")
KINDS = ("append", "same size", "same size, new inode", "touch", "new inode", "rename", "move",
         "create", "delete")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RMH_VAULT", "RMH_CONFIG", "RMH_FAULT_AFTER_OPS")}
    env.update(PYTHONHASHSEED="0", PYTHONPATH=str(ROOT), **extra)
    return env


def _visible(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.md")
                  if not any(part.startswith(".") for part in p.relative_to(root).parts))


def _disk(root: Path) -> dict[str, tuple[tuple[int, int, int], str]]:
    """path -> ((size, mtime_ns, inode), sha256) of every note file."""
    out = {}
    for p in _visible(root):
        st = p.stat()
        out[p.relative_to(root).as_posix()] = (
            (st.st_size, st.st_mtime_ns, st.st_ino), hashlib.sha256(p.read_bytes()).hexdigest())
    return out


class Editor:
    """Outside changes to the notes under e*/ (module docstring: each state tellable apart)."""

    def __init__(self, root: Path, seed: int) -> None:
        self.root, self.rng = root, random.Random(seed)
        self.seed = seed
        self.made = 0  # tokens and mtimes handed out
        self.seen: dict[str, set[tuple[int, int, int]]] = {}  # path -> stats it ever had
        self.lock = threading.Lock()

    def _token(self) -> str:
        self.made += 1
        return f"zq{self.seed:03d}t{self.made:06d}"  # fixed width: same-size rewrites

    def _fresh_ns(self) -> int:
        self.made += 1
        return BASE_NS + self.made * 1_001

    def _settle(self, path: Path, mtime_ns: int | None = None) -> None:
        """Give `path` a fresh mtime, or `mtime_ns` unless that repeats a stat it had."""
        rel = path.relative_to(self.root).as_posix()
        seen = self.seen.setdefault(rel, set())
        st = path.stat()
        ns = self._fresh_ns() if mtime_ns is None else mtime_ns
        while (st.st_size, ns, st.st_ino) in seen:
            ns += 1
        os.utime(path, ns=(ns, ns))
        seen.add((st.st_size, ns, st.st_ino))

    def create(self, folder: str) -> None:
        path = self.root / folder / f"n{self._token()[2:]}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {path.stem}\n{self._token()} zqall [[{folder}]]\n")
        self._settle(path)

    def notes(self) -> list[Path]:
        return [p for p in _visible(self.root) if p.relative_to(self.root).parts[0][:1] == "e"]

    def step(self, kind: str | None = None) -> str:
        """One change, of `kind` or chosen by the seed; its kind."""
        with self.lock:
            return self._step(kind or self.rng.choice(KINDS))

    def _step(self, kind: str) -> str:
        rng, notes = self.rng, self.notes()
        if len(notes) < 8:
            kind = "create"
        if kind == "create":
            self.create(f"e{rng.randrange(6)}")
            return kind
        path = rng.choice(notes)
        st = path.stat()
        if kind == "append":
            with open(path, "a") as fh:
                fh.write(f"{self._token()} appended\n")
            self._settle(path)
        elif kind == "same size":  # in place, the mtime 1 us or more later
            data, token = path.read_text(), self._token()
            at = data.index("zq")
            with open(path, "r+") as fh:
                fh.write(data[:at] + token + data[at + len(token):])
            self._settle(path)
        elif kind in ("same size, new inode", "new inode"):  # the old mtime restored
            data = path.read_text()
            if kind == "same size, new inode":
                at, token = data.index("zq"), self._token()
                data = data[:at] + token + data[at + len(token):]
            tmp = path.with_name(".editor.tmp")
            tmp.write_text(data)
            os.replace(tmp, path)
            self._settle(path, st.st_mtime_ns)
        elif kind == "touch":
            self._settle(path)
        elif kind in ("rename", "move"):  # the mtime kept (sync matches it by content)
            folder = path.parent if kind == "rename" else self.root / f"e{rng.randrange(6)}"
            folder.mkdir(exist_ok=True)
            new = folder / f"r{self._token()[2:]}.md"
            os.rename(path, new)
            self._settle(new, st.st_mtime_ns)
        else:
            path.unlink()
            if not any(path.parent.iterdir()):
                path.parent.rmdir()  # a folder gone
        return kind


def _vault(tmp: Path, seed: int) -> tuple[Path, Editor]:
    root = tmp / "v"
    editor = Editor(root, seed)
    for k in range(24):
        editor.create(f"e{k % 4}" + ("/deep" if k % 7 == 0 else ""))
    (root / "w").mkdir()
    (root / "w" / "base.md").write_text("# base\nzqall written by rmh below\n")
    r = rmh("--vault", str(root), "init", "--no-dense")
    assert r.returncode == 0, r.stderr
    assert (root / ".rmh" / stat_store.FILE).is_file()
    return root, editor


@dataclass
class Racer:
    args: list[str]
    stdin: str = ""
    delay: float = 0.0
    fault: int | None = None
    proc: subprocess.Popen[str] | None = None
    signals: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # the racer's loads and saves (RACER)
    later: list[tuple[float, str]] = field(default_factory=list)  # serve: (pause, request)
    feeder: threading.Thread | None = None


def _rpc(rid: int, method: str, **params: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": rid}) + "\n"


def _feed(r: Racer) -> None:
    """A server's later requests, spread over the race, then the end of its input."""
    assert r.proc is not None and r.proc.stdin is not None
    try:
        for pause, line in r.later:
            time.sleep(pause)
            r.proc.stdin.write(line)
            r.proc.stdin.flush()
        r.proc.stdin.close()
    except (BrokenPipeError, ValueError):  # it was killed
        pass
    r.proc.stdin = None  # closed: communicate() flushes no more


def _racers(root: Path, rng: random.Random, editor: Editor, tag: str) -> list[Racer]:
    v = ["--vault", str(root)]
    out = []
    for i in range(rng.randint(2, 4)):
        kind = rng.choice(["search", "search", "read", "status", "write", "edit", "serve"])
        if kind == "serve":  # one process across the others' commits (its cache reloaded)
            r = Racer([*v, "serve", "--no-dense"],
                      stdin=_rpc(1, "vault.search", query="zqall", learn=False))
            r.later = [(rng.uniform(0, 0.5), _rpc(2, "vault.write", note=f"w/{tag}p{i}",
                                                   content=f"zqall {tag} served {i}\n")),
                       (rng.uniform(0, 0.5), _rpc(3, "vault.search", query="zqall",
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


@dataclass
class Plan:
    """One round's racers and how its victim is disturbed: `how` none, stop (SIGSTOP at `at`
    for `hold` s), kill (SIGKILL at `at`), fault (RMH_FAULT_AFTER_OPS), "seam stop" (it stops
    itself at `seam`, the others run to their end, `hold` s more, SIGCONT) or "seam kill"."""

    racers: list[Racer]
    victim: Racer
    how: str = "none"
    seam: str | None = None
    at: float = 0.0
    hold: float = 0.0
    edits: int = 0  # the editor's changes while the racers run
    pause: float = 0.0  # before each of them
    after: bool = False  # "seam stop": the others released only once the victim is held


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


def _race(plan: Plan, editor: Editor, tag: str) -> list[Racer]:
    """Racers released together while the editor goes on, the victim disturbed as planned;
    every racer's end checked (module docstring)."""
    racers, victim, how, seam = plan.racers, plan.victim, plan.how, plan.seam
    assert how == "seam stop" or not plan.after
    for r in racers:
        env = _env(RACE_DELAY=f"{r.delay:.4f}")
        if r.fault is not None:
            env["RMH_FAULT_AFTER_OPS"] = str(r.fault)
        if r is victim and seam is not None:
            env.update(RACE_AT=seam, RACE_DO=how.removeprefix("seam "))
        r.proc = subprocess.Popen([sys.executable, "-c", RACER, *r.args], cwd=ROOT, env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
    for r in racers:
        assert r.proc is not None and r.proc.stderr is not None
        assert r.proc.stderr.readline() == "ready\n", r.args
    first = [victim] if plan.after else racers
    _go(first)
    timers = _disturb(plan)
    changes = threading.Thread(target=_keep_editing, args=(editor, plan.edits, plan.pause))
    changes.start()
    ends: dict[int, tuple[int, str, str]] = {}
    if how == "seam stop":  # the others run while the victim is held at its seam
        assert victim.proc is not None
        held = _wait_stopped(victim.proc)
        _go([r for r in racers if r not in first])
        if held:
            victim.signals.append(f"HELD@{seam}")
            for k, r in enumerate(racers):
                if r is not victim:
                    ends[k] = _end(r, wait=20, give_up=victim.proc.pid)
            time.sleep(plan.hold)
            victim.proc.send_signal(signal.SIGCONT)
    for k, r in enumerate(racers):
        if k not in ends:
            ends[k] = _end(r)
    changes.join()
    for t in timers:
        t.join()
    for k, r in enumerate(racers):
        code, out, err = ends[k]
        what = f"{tag} {r.args[2:]} {how if r is victim else ''} {r.signals}: {err[-3000:]}"
        assert "Traceback" not in err, what
        if r.args[2] == "edit" and code == 1:  # another racer appended since it read
            assert "changed since it was read" in err, what  # (vault/writes.py `edit`)
            r.signals.append("EDIT-CONFLICT")
        elif r is victim and how in ("kill", "fault", "seam kill"):
            assert code in (0, -9), what
            if code == -9 and how != "kill":
                r.signals.append(f"KILLED@{seam}" if seam else "FAULTED")
        elif r.args[2] == "read" and code == 1:
            assert "note not found" in err, what  # the editor renamed or deleted it
        else:
            assert code == 0, what
        if code == 0 and r.args[2] == "search":
            assert json.loads(out)["hits"], what
        if code == 0 and r.args[2] == "serve":
            answers = {a["id"]: a for a in map(json.loads, out.splitlines())}
            assert sorted(answers) == [1, 2, 3], what
            assert all("result" in a for a in answers.values()), (what, answers)
        r.log = next((line.split()[1:] for line in err.splitlines()
                      if line.startswith("race-log")), [])
    return racers


def _go(racers: list[Racer]) -> None:
    """Release `racers` from their barrier: one write each, all within a millisecond or so."""
    for r in racers:
        assert r.proc is not None and r.proc.stdin is not None
        r.proc.stdin.write("go\n" + r.stdin)
        r.proc.stdin.flush()
        r.feeder = threading.Thread(target=_feed, args=(r,))
    for r in racers:
        assert r.feeder is not None
        r.feeder.start()


def _keep_editing(editor: Editor, steps: int, pause: float) -> None:
    for _ in range(steps):
        time.sleep(pause)
        editor.step()


def _stopped(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0] == "T"
    except OSError:
        return False


def _wait_stopped(proc: subprocess.Popen[str], limit: float = 60) -> bool:
    """Whether `proc` stopped itself at its seam (False: it ended without reaching it)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if _stopped(proc.pid):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.005)
    raise AssertionError("a held racer neither stopped nor ended")


def _disturb(plan: Plan) -> list[threading.Timer]:
    r = plan.victim
    proc = r.proc
    assert proc is not None

    def send(sig: signal.Signals) -> Callable[[], None]:
        def go() -> None:
            if proc.poll() is None:
                proc.send_signal(sig)
                r.signals.append(sig.name.removeprefix("SIG"))
        return go

    timers = []
    if plan.how == "stop":
        timers = [threading.Timer(plan.at, send(signal.SIGSTOP)),
                  threading.Timer(plan.at + plan.hold, send(signal.SIGCONT))]
    elif plan.how == "kill":
        timers = [threading.Timer(plan.at, send(signal.SIGKILL))]
    for t in timers:
        t.start()
    return timers


def _end(r: Racer, wait: float = WAIT_S, give_up: int | None = None) -> tuple[int, str, str]:
    """The racer's exit status and output; with `give_up` (a held racer's pid), a racer not
    done within `wait` (waiting on the held one) lets it go first."""
    assert r.proc is not None and r.feeder is not None
    r.feeder.join()
    try:
        out, err = r.proc.communicate(timeout=wait)
    except subprocess.TimeoutExpired:
        if give_up is not None:
            os.kill(give_up, signal.SIGCONT)
            r.signals.append("WAITED")
            return _end(r)
        r.proc.kill()
        out, err = r.proc.communicate()
        raise AssertionError(f"unanswered: {r.args[2:]} {r.signals}: {err[-3000:]}") from None
    return r.proc.returncode, out, err


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
    disk = _disk(root)
    key, rows, (got, agrees) = _index(root)
    for _, path, size, mtime, inode, digest in rows:
        if path in disk and disk[path][0] == (size, mtime, inode):
            assert disk[path][1] == digest, f"{what}: stale row {path} would be trusted"
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


def _check_new_process(root: Path, what: str, fresh: Path | None) -> None:
    hits = _search(root)
    disk = _disk(root)
    _, rows, _ = _index(root)
    assert {r[1]: r[5] for r in rows} == {p: h for p, (_, h) in disk.items()}, what
    assert _check_quiet(root, what + " (after a new process)"), what  # it left a current file
    assert len(hits) == len(disk), what
    if fresh is not None:  # the same vault, indexed from nothing
        shutil.copytree(root, fresh, ignore=shutil.ignore_patterns(".rmh"))
        assert rmh("--vault", str(fresh), "init", "--no-dense").returncode == 0
        assert _search(fresh) == hits, what


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
        tally.add(_race(_plan(root, rng, editor, tag), editor, tag))
        tally.trusted += _check_quiet(root, tag)
        _check_new_process(root, tag, tmp / f"fresh{n}" if n == rounds - 1 else None)


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
        _race(Plan([a, b], a, "seam stop", seam, after=after), editor, change)
        assert "EDIT-CONFLICT" not in b.signals  # the only edit
        assert a.log[0] == "load:file" or b.log[0] == "load:file", (a.log, b.log)
        print(f"{seam} {change} {other} {after}: held {a.signals} {a.log}, other {b.log}")
        _check_quiet(root, change)
        _check_new_process(root, change, None)
        if f"HELD@{seam}" in a.signals:
            break
    assert f"HELD@{seam}" in a.signals, (a.log, b.log)
