"""A move's rewrite of a referrer that another program holds open for writing at the moment of
the try is made again once the program lets go (vault/storage/intents.py `_rewrite`).

The guarded swap refuses a file open for writing (an editor mid-save: storage/leases.py), and
the try is "left". The retry went on only when the file's bytes had changed meanwhile, so a
writer that had opened the file (an appender: `open(f, "a")`) and not yet written when rmh
tried left the link dangling for good after that one try (session 42, FLAKE42: the CI-load
failures of tests/harness/test_move_appending_editor.py, 2 of 19 runs). The writer here is a
real descriptor opened for appending around the first tries, closed (after writing or not)
before the next; the order is forced by wrapping the one try, so no timing decides it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault.notes.hashing import content_hash
from vault.storage import intent_merge, intents
from vault.storage.intents import Journal, MoveIntent, Rewrite, apply_move
from vault.storage.store import Store

OLD_REF = "see [[T]]\n"
NEW_REF = "see [[U]]\n"


def held_during(tries: int, line: bytes, path: Path) -> Callable[..., Any]:
    """`rewrite_once` with `path` open for appending during its first `tries` calls; `line`
    appended (b"": nothing) right before each is closed."""
    real, calls = intent_merge.rewrite_once, [0]

    def wrapped(*args: Any) -> Any:
        calls[0] += 1
        if calls[0] > tries:
            return real(*args)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            return real(*args)
        finally:
            if line:
                os.write(fd, line)
            os.close(fd)

    return wrapped


@pytest.mark.parametrize("tries", [1, 3])
@pytest.mark.parametrize("line", [b"", b"appended meanwhile\n"])
@pytest.mark.parametrize("recovery", [False, True])
def test_a_referrer_held_open_for_writing_is_rewritten_once_let_go(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tries: int, line: bytes,
        recovery: bool) -> None:
    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    (root / "T.md").write_text("target\n", encoding="utf-8")
    (root / "r.md").write_text(OLD_REF, encoding="utf-8")
    store = Store(root)
    intent = MoveIntent("T.md", "U.md", content_hash("target\n"),
                        (Rewrite("r.md", OLD_REF, NEW_REF),))
    monkeypatch.setattr(intents, "rewrite_once", held_during(tries, line, root / "r.md"))
    if recovery:  # the next open's roll forward of a recorded plan takes the same path
        Journal(store).record(intent)
        (outcome,) = Journal(store).recover()
    else:
        outcome = apply_move(store, intent)
    assert outcome.left == [] and outcome.written == ["r.md"], outcome
    assert (root / "r.md").read_bytes() == NEW_REF.encode() + line * tries  # none lost
    assert not (root / "T.md").exists()
