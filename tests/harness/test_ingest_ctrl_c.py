"""`rmh ingest FILE` interrupted by Ctrl-C (a real SIGINT) leaves its conversation whole or
absent, as the README promises of every stop and kill. Before (REV, session 33) the
KeyboardInterrupt took nothing back and closed the writes' journal, so half a conversation
stayed for good (61 of 407 notes, 201 of 407: probe REV_ctrl_c). The signal is sent once the
write phase has begun (notes polled on disk); what stays is compared with the whole, never
timed."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

RMH = [sys.executable, "-m", "harness"]


def notes(root: Path) -> int:
    return sum(1 for p in root.rglob("*.md") if ".rmh" not in p.relative_to(root).parts)


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def vault(root: Path) -> Path:
    (root / ".rmh").mkdir(parents=True)
    (root / "rmh.toml").write_text('[extract]\nentities = "rules"\n', encoding="utf-8")
    return root


def chat_and_whole(tmp_path: Path, seed: int) -> tuple[Path, int, Path]:
    """A generated 400-line chat, how many notes its whole ingest makes, and an empty vault."""
    rng = random.Random(seed)
    chat = tmp_path / "chat.txt"
    chat.write_text("\n".join(f"{rng.choice(('Alice', 'Bob', 'Carol'))}: message {i} about "
                              f"the garden plan week {i}" for i in range(400)), encoding="utf-8")
    whole = vault(tmp_path / "whole")
    subprocess.run([*RMH, "--vault", str(whole), "ingest", str(chat)], check=True,
                   capture_output=True)
    return chat, notes(whole), vault(tmp_path / "v")


def interrupted_at(root: Path, chat: Path, at: int,
                   child: Callable[[], None]) -> subprocess.Popen[str]:
    """`rmh ingest CHAT` into `root`, sent SIGINT once `at` notes are on disk (still running).
    `child` sets SIGINT's disposition in the child: a suite started in the background by a
    non-interactive shell inherits SIGINT ignored, and Python then raises no KeyboardInterrupt."""
    proc = subprocess.Popen([*RMH, "--vault", str(root), "ingest", str(chat)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=child)
    while notes(root) < at and proc.poll() is None:
        time.sleep(0.01)
    assert proc.poll() is None, "the ingest ended before the signal"
    proc.send_signal(signal.SIGINT)
    return proc


@pytest.mark.parametrize("at", [20, 120])
def test_ctrl_c_during_an_ingest_leaves_the_conversation_whole_or_absent(
        tmp_path: Path, at: int) -> None:
    chat, total, root = chat_and_whole(tmp_path, at)
    proc = interrupted_at(root, chat, at, _sigint_default)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "interrupted" in err, err
    subprocess.run([*RMH, "--vault", str(root), "status"], check=True, capture_output=True)
    assert notes(root) in (0, total), f"{notes(root)} of {total} notes stayed"


def test_a_second_ctrl_c_during_the_take_back_leaves_it_whole_or_absent(tmp_path: Path) -> None:
    """REV (session 33): the first Ctrl-C took the conversation back, and a second one landing
    inside that take-back (a KeyboardInterrupt there) left part of it for good. Now the first
    stops the ingest between two notes, the second is only said to be heard, and what stays
    is the whole conversation or none of it. The second signal is sent once the take-back is
    seen under way (fewer notes on disk than the most seen)."""
    chat, total, root = chat_and_whole(tmp_path, 7)
    proc = interrupted_at(root, chat, 120, _sigint_default)
    most = notes(root)
    while proc.poll() is None:
        now = notes(root)
        if now < most:  # taking back
            proc.send_signal(signal.SIGINT)
            break
        most = max(most, now)
        time.sleep(0.005)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "interrupted" in err, err
    subprocess.run([*RMH, "--vault", str(root), "status"], check=True, capture_output=True)
    assert notes(root) in (0, total), f"{notes(root)} of {total} notes stayed"


def _sigint_ignored() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_an_ingest_started_with_sigint_ignored_ignores_it(tmp_path: Path) -> None:
    """REV (session 34): a script's `rmh ingest FILE &` inherits SIGINT ignored (a shell
    without job control ignores it in its background jobs, so that the Ctrl-C meant for the
    foreground leaves them running), as Python itself keeps it; the Ctrl-C handler of
    session 34 replaced that SIG_IGN, and the Ctrl-C stopped the background ingest (exit 1,
    its conversation taken back). Now an ignored SIGINT stays ignored: the ingest finishes."""
    chat, total, root = chat_and_whole(tmp_path, 11)
    proc = interrupted_at(root, chat, 20, _sigint_ignored)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "interrupted" not in err, err
    assert notes(root) == total
