"""`.rmh` swapped for a symlink at the worst moment of a harness writer (STORE13, session 38).

Session 37 held the store's `.rmh` by a descriptor, but the harness's own state files were
still joined by name: `root/.rmh/NAME` checked, then opened. Another process that renamed
`.rmh` away and put a symlink to an outside folder in its place between the check and the open
(`STORE13_swap_cli.py.txt`, `STORE13_ledger_loop.py.txt`: real processes, a flipper as fast as
it can) had rmh make `learned.sqlite` there (the learning ledger), append the hooks' journal
line there, and open the hooks daemon's log there; and the write lock, finding the name empty
for the moment, made a new `.rmh` in the vault (the vault's state reset to an empty folder of
the running user's, which the owner cannot remove when that user is root). Each case swaps
`.rmh` inside the real function that runs in that window (the moment of the swap stood in for
by running it there), then checks the outside folder is untouched and nothing was made in the
vault."""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import compose, hooks_used
from harness.compose import open_ledger
from vault import PathRefused, Vault
from vault import writable as vault_writable


def _snapshot(folder: Path) -> dict[str, tuple[int, str]]:
    return {str(p.relative_to(folder)): (p.lstat().st_mode, hashlib.sha256(
        p.read_bytes()).hexdigest() if p.is_file() else "") for p in sorted(folder.rglob("*"))}


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    root, outside = tmp_path / "v", tmp_path / "outside"
    outside.mkdir()
    (outside / "planted.txt").write_text("another folder's file\n")
    Vault.init(root).close()
    open_ledger(root).close()
    yield root, outside


def _swapper(root: Path, outside: Path) -> Callable[[], None]:
    def swap() -> None:
        os.rename(root / ".rmh", root / ".rmh-away")
        os.symlink(outside, root / ".rmh")
    return swap


def _wrap(real: Callable[..., Any], before: Callable[[], None]) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        before()
        return real(*args, **kwargs)
    return wrapped


def test_the_ledger_is_never_made_in_a_folder_swapped_in_after_the_check(
        vault: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    root, outside = vault
    before = _snapshot(outside)
    # `writable` runs between the state folder's check and the ledger's connect
    monkeypatch.setattr(compose, "writable", _wrap(vault_writable, _swapper(root, outside)))
    with contextlib.suppress(PathRefused):
        open_ledger(root).close()
    assert _snapshot(outside) == before  # main: learned.sqlite made there


def test_a_hook_journal_line_never_lands_in_a_folder_swapped_in_after_the_path(
        vault: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    root, outside = vault
    before = _snapshot(outside)
    # the folder's lock is taken after the journal's path was found
    monkeypatch.setattr(hooks_used, "_locked", _wrap(hooks_used._locked, _swapper(root, outside)))
    hooks_used.journal_shown(root, "s1", "what about kiwi", ["n1.md"])
    assert _snapshot(outside) == before  # main: hooks/s1.jsonl made there
    os.unlink(root / ".rmh")
    os.rename(root / ".rmh-away", root / ".rmh")
    assert hooks_used.take_shown(root, "s1") == [("what about kiwi", ["n1.md"])]


def test_the_hooks_daemon_log_is_never_opened_in_a_folder_swapped_in(
        vault: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from harness import hooks_client
    from harness.commands import hooks as hooks_cmd

    root, outside = vault
    before = _snapshot(outside)
    seen: list[str] = []

    def own_file(path: Path, mode: str) -> Any:  # the real one, `.rmh` swapped just before
        _swapper(root, outside)()
        handle = real_own_file(path, mode)
        seen.append(os.readlink(f"/proc/self/fd/{handle.fileno()}"))
        return handle

    real_own_file = hooks_client.own_file
    monkeypatch.setattr(hooks_client, "own_file", own_file)
    monkeypatch.setattr("subprocess.Popen", _NoChild)  # the child is not the point here
    hooks_cmd._refresh_later(root, "claude-code", "s1")
    assert _snapshot(outside) == before  # main: hooks-daemon.log made there
    assert seen and seen[0].endswith(os.path.join(".rmh-away", "hooks-daemon.log"))


class _NoChild:
    stdin = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass


def test_the_write_lock_never_makes_a_new_state_folder_while_the_held_one_is_renamed_away(
        vault: tuple[Path, Path]) -> None:
    root, _ = vault
    v = Vault.open(root, watch=False)
    try:
        lock = v.store.lock
        real_open = lock._open

        def renamed_then_open() -> int:  # the store's check passed; `.rmh` renamed away now
            if (root / ".rmh").exists():
                os.rename(root / ".rmh", root / ".rmh-away")
            return real_open()

        lock._open = renamed_then_open  # type: ignore[method-assign]
        with contextlib.suppress(PathRefused):
            v.write("new.md", "# New\nkiwi\n")
        assert not (root / ".rmh").exists()  # main: a new, empty `.rmh` made beside
    finally:
        v.close()
