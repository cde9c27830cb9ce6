"""A full-disk probe's scratch file left by a killed process is removed by the next one
(STORE17, session 42).

`vault/room.py` `no_space` writes one block to `.rmh-room.PID` in a folder of the process's
SQLite files and removes it at once; a process killed between the two left it in `.rmh` for
good (NOTES-DISK41 "weak"). Now the first process that connects to a SQLite file there
removes each such file whose PID is gone, and nothing else: generated neighbours (the scratch
of a live process, other PIDs' spellings, a folder and a symlink of that name, a file one
character off) are byte-identical after `rmh search` and `rmh doctor`, run as real processes."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

from tests.harness.test_cli_notes import rmh


def dead_pids(count: int) -> list[int]:
    """PIDs of processes that ran and were reaped: gone."""
    out = []
    for _ in range(count):
        child = subprocess.Popen(["true"])
        child.wait()
        out.append(child.pid)
    return out


def snapshot(folder: Path) -> dict[str, tuple[str, bytes]]:
    out: dict[str, tuple[str, bytes]] = {}
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_symlink():
            out[entry.name] = ("link", os.readlink(entry.path).encode())
        elif entry.is_dir():
            out[entry.name] = ("dir", b"")
        else:
            out[entry.name] = ("file", Path(entry.path).read_bytes())
    return out


def scratch_like(folder: Path) -> dict[str, tuple[str, bytes]]:
    return {k: v for k, v in snapshot(folder).items() if k.startswith((".rmh-room", "rmh-room"))}


def test_a_dead_process_scratch_is_removed_and_nothing_else(tmp_path: Path) -> None:
    root = tmp_path / "v"
    v = ("--vault", str(root))
    assert rmh(*v, "init", "--no-dense").returncode == 0
    assert rmh(*v, "write", "Kiwi", stdin="kiwi [[Pear]]\n").returncode == 0
    state = root / ".rmh"
    rng = random.Random(42)
    dead = dead_pids(6)
    live = subprocess.Popen(["sleep", "60"])
    try:
        gone = []
        for pid in dead[:3]:  # what a kill inside no_space leaves: one block, a dead PID
            (state / f".rmh-room.{pid}").write_bytes(bytes(rng.randrange(1, 4096)))
            gone.append(f".rmh-room.{pid}")
        outside = tmp_path / "outside.txt"
        outside.write_bytes(b"not rmh's")
        kept = {  # generated neighbours: none is a dead process's scratch file
            f".rmh-room.{live.pid}": b"live",
            f".rmh-room.{os.getpid()}": b"the test runner: alive",
            f".rmh-room.0{dead[3]}": b"a leading zero",
            f".rmh-room.{dead[3]}.x": b"a suffix",
            f"rmh-room.{dead[3]}": b"no dot",
            f".rmh-room.{dead[3]} ": b"a space",
            f".rmh-room.-{dead[3]}": b"a sign",
            ".rmh-room.": b"no pid",
            ".rmh-room.99999999999": b"too long for a pid",
        }
        for name, data in kept.items():
            (state / name).write_bytes(data)
        (state / f".rmh-room.{dead[4]}").mkdir()  # a folder of that name: not a scratch file
        (state / f".rmh-room.{dead[4]}" / "x").write_bytes(b"inside")
        os.symlink(outside, state / f".rmh-room.{dead[5]}")  # a link: left, its target too
        sub = root / "Sub"
        sub.mkdir()
        (sub / f".rmh-room.{dead[0]}").write_bytes(b"in the vault, not a SQLite folder")
        before = scratch_like(state)
        r = rmh(*v, "search", "kiwi", "--no-dense")
        assert r.returncode == 0, r.stderr
        assert rmh(*v, "doctor", "--json").returncode == 0
        after = scratch_like(state)
        assert not [n for n in gone if n in after], after  # main: every one left
        assert after == {k: v for k, v in before.items() if k not in gone}
        assert outside.read_bytes() == b"not rmh's"
        assert (sub / f".rmh-room.{dead[0]}").read_bytes() == b"in the vault, not a SQLite folder"
    finally:
        live.kill()
        live.wait()
