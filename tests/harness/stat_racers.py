"""Real `rmh` processes released together onto one vault while an editor changes its notes:
the machinery of tests/harness/test_stat_splice_races.py (whose docstring says what is
attacked). `RACER` is `python -m harness ARGS` with a barrier and three seams: it imports the
CLI, says "ready" on stderr, waits for a line on its stdin ("go", written to every racer at
once; the command's own stdin follows), and logs on stderr ("race-log ...") where its stat
cache came from (`load:file` / `load:rows`) and what each `persist_stats` did; with RACE_AT
it stops itself (RACE_DO=stop) or dies (kill) the first time it reaches that seam. `race`
runs one `Plan` (the racers, the victim and how it is disturbed, the editor's changes during
the round) and asserts that every command was answered."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.harness.test_cli_notes import ROOT

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
# folders that sort around one another as strings ('-', ' ', '.' before '/') and by code point
# (the splice merges folders and names in that order: vault/storage/stat_splice.py), and
# first letters of names likewise ('N' before 'n', 'ü' after)
FOLDERS = ("e0", "e1", "e2", "e3", "e4", "e1-x", "e1 x", "e1.x", "eé", "e1/deep", "e1/deep-x")
FIRSTS = ("n", "r", "N", "ü", "n-")
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


def disk(root: Path) -> dict[str, tuple[tuple[int, int, int, int], str]]:
    """path -> ((size, mtime_ns, inode, ctime_ns), sha256) of every note file."""
    out = {}
    for p in _visible(root):
        st = p.stat()
        out[p.relative_to(root).as_posix()] = (
            (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns),
            hashlib.sha256(p.read_bytes()).hexdigest())
    return out


class Editor:
    """Outside changes to the notes under e*/ (module docstring: each state tellable apart)."""

    def __init__(self, root: Path, seed: int) -> None:
        self.root, self.rng = root, random.Random(seed)
        self.seed = seed
        self.made = 0  # tokens and mtimes handed out
        self.seen: dict[str, set[tuple[int, int, int]]] = {}  # path -> stats it ever had
        self.last = ""  # the note it changed last
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
        self.last = rel

    def create(self, folder: str, first: str = "n") -> None:
        path = self.root / folder / f"{first}{self._token()[2:]}.md"
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
            self.create(rng.choice(FOLDERS), rng.choice(FIRSTS))
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
            folder = path.parent if kind == "rename" else self.root / rng.choice(FOLDERS)
            folder.mkdir(parents=True, exist_ok=True)
            new = folder / f"{rng.choice(FIRSTS)}{self._token()[2:]}.md"
            os.rename(path, new)
            self._settle(new, st.st_mtime_ns)
        else:
            path.unlink()
            if not any(path.parent.iterdir()):
                path.parent.rmdir()  # a folder gone
        return kind


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


def rpc(rid: int, method: str, **params: Any) -> str:
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


def race(plan: Plan, editor: Editor, tag: str) -> list[Racer]:
    """Racers released together while the editor goes on, the victim disturbed as planned;
    every racer's end checked (module docstring). On a failure no racer is left running (a
    held one would stay stopped)."""
    try:
        return _race(plan, editor, tag)
    except BaseException:
        for r in plan.racers:
            if r.proc is not None and r.proc.poll() is None:
                r.proc.kill()
        raise


def _race(plan: Plan, editor: Editor, tag: str) -> list[Racer]:
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
