"""vault.storage.anchored: the store's changes land through folder descriptors walked from the
root without following a link, so a parent folder swapped for a symlink after the checks
fails the change (PathRefused) instead of redirecting it outside the vault: deterministically
(the swap made right after the store's check), and against a real process swapping a folder
for a symlink and back in a tight loop while the store writes, moves, trashes and erases."""

from __future__ import annotations

import ctypes
import errno
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.vault.storage.test_store import tree
from vault.errors import NoteNotFound, PathRefused
from vault.storage import anchored
from vault.storage.anchored import fsync_fds, open_dir, parts_of, prune_below, remove_below
from vault.storage.store import FileStat, Store

# Swaps VAULT/sub (a folder) and VAULT/.swap (a symlink to OUTSIDE) atomically with
# renameat2(RENAME_EXCHANGE), so "sub" is always one or the other, until STOP exists; then
# leaves the real folder at "sub".
SWAPPER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
sub, link, stop = (p.encode() for p in sys.argv[1:4])
swaps = 0
print("ready", flush=True)
while not os.path.exists(stop):
    if libc.renameat2(-100, sub, -100, link, 2) != 0:
        sys.exit(f"renameat2: errno {ctypes.get_errno()}")
    swaps += 1
if os.path.islink(sub):
    libc.renameat2(-100, sub, -100, link, 2)
    swaps += 1
print(swaps, flush=True)
"""


@pytest.fixture()
def env(tmp_path: Path) -> tuple[Store, Path, Path]:
    """A vault with `sub/` holding bait notes, and an `outside` folder holding the same
    names (what a redirected erase, trash or overwrite would hit)."""
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    for folder in (vault / "sub", vault / ".rmh", outside / "deep"):
        folder.mkdir(parents=True)
    for i in range(40):
        (vault / "sub" / f"bait{i}.md").write_text(f"inside {i}\n", encoding="utf-8")
        (outside / f"bait{i}.md").write_text(f"outside {i}\n", encoding="utf-8")
    (vault / "a.md").write_text("alpha\n", encoding="utf-8")
    return Store(vault), vault, outside


def test_open_dir_walks_without_following_links(env: tuple[Store, Path, Path]) -> None:
    _, vault, outside = env
    root = str(vault)
    (vault / "out").symlink_to(outside)
    (vault / "in").symlink_to("sub")
    with pytest.raises(PathRefused, match="symlink leaves the vault"):
        open_dir(root, ["out"], "out/x.md", create=True)
    with pytest.raises(PathRefused, match="symlink inside the vault"):
        open_dir(root, ["in", "new"], "in/new/x.md", create=True)
    with pytest.raises(PathRefused, match="a parent folder is a file"):
        open_dir(root, ["a.md", "x"], "a.md/x/y.md", create=True)
    with pytest.raises(NotADirectoryError):
        open_dir(root, ["a.md"], "a.md/y.md")
    with pytest.raises(FileNotFoundError):
        open_dir(root, ["nope"], "nope/y.md")
    fd = open_dir(root, ["sub", "x", "y"], "sub/x/y/z.md", create=True)
    try:
        assert os.path.samestat(os.fstat(fd), os.stat(vault / "sub" / "x" / "y"))
        fsync_fds(fd, fd)
    finally:
        os.close(fd)
    assert not (outside / "new").exists() and not (vault / "sub" / "new").exists()
    assert parts_of(root, root) == [] and parts_of(root, f"{root}/a/b") == ["a", "b"]
    with pytest.raises(ValueError):
        parts_of(root, str(outside))


def _swap_after_resolve(monkeypatch: pytest.MonkeyPatch, folder: Path, aside: Path,
                        outside: Path, when: Callable[[str], bool]) -> list[bool]:
    """Make `Store.resolve` swap `folder` (moved to `aside`) for a symlink to `outside` right
    after its first check of a path `when` accepts: the moment the old code trusted. The
    returned list holds True once the swap happened."""
    real_resolve = Store.resolve
    swapped: list[bool] = []

    def resolve_then_swap(self: Store, path: str, *, write: bool = False,
                          canvas: bool = False) -> Path:
        got = real_resolve(self, path, write=write, canvas=canvas)
        if when(path) and not swapped:
            os.rename(folder, aside)
            os.symlink(outside, folder)
            swapped.append(True)
        return got

    monkeypatch.setattr(Store, "resolve", resolve_then_swap)
    return swapped


OPS: dict[str, Callable[[Store], object]] = {
    "write": lambda s: s.write_text("sub/bait1.md", "changed\n"),
    "write new folder": lambda s: s.write_text("sub/deep/new.md", "new\n"),
    "create": lambda s: s.write_text("sub/fresh.md", "new\n", create_only=True),
    "guarded write": lambda s: s.write_text(
        "sub/bait2.md", "changed\n",
        expected_hash="0bcd6d41a5b1ebbb3b2a87c7b8c2a2e4df0b5a3b2a3f0f0d9bb0bd1b1a4d0c6e"),
    "move in": lambda s: s.move("a.md", "sub/bait3x.md"),
    "move out": lambda s: s.move("sub/bait4.md", "moved.md"),
    "trash": lambda s: s.trash("sub/bait5.md"),
    "erase": lambda s: s.erase("sub/bait6.md"),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_a_parent_swapped_for_a_symlink_after_the_check_fails_the_change(
        env: tuple[Store, Path, Path], op: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The swap is made right after the store's own check of the path (`resolve`), the
    moment the old code trusted: the change is refused and nothing outside changes."""
    store, vault, outside = env
    before_out = tree(outside)
    swapped = _swap_after_resolve(monkeypatch, vault / "sub", vault / "aside", outside,
                                  when=lambda path: path.startswith("sub/"))
    with pytest.raises(PathRefused, match="symlink"):
        OPS[op](store)
    assert swapped
    assert tree(outside) == before_out
    assert not any(".rmh-tmp-" in name for name in os.listdir(vault / "aside"))


@pytest.mark.parametrize("op", sorted(OPS))
def test_the_vault_root_swapped_for_a_symlink_after_the_check_fails_the_change(
        env: tuple[Store, Path, Path], op: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The root itself is the first folder walked: swapped for a symlink (or a file) after
    the checks, the change is PathRefused like any parent, not an untyped OSError."""
    store, vault, outside = env
    before_out = tree(outside)
    swapped = _swap_after_resolve(monkeypatch, vault, vault.parent / "aside", outside,
                                  when=lambda path: True)
    with pytest.raises(PathRefused, match="symlink"):
        OPS[op](store)
    assert swapped
    assert tree(outside) == before_out
    os.unlink(vault)
    vault.write_bytes(b"")  # a file where the root was: refused as well
    with pytest.raises(PathRefused):
        open_dir(str(vault), ["sub"], "sub/a.md", create=True)


def _exchange_supported(tmp_path: Path) -> bool:
    (tmp_path / "x").mkdir(parents=True)
    (tmp_path / "y").symlink_to("x")
    libc = ctypes.CDLL(None, use_errno=True)
    ok = int(libc.renameat2(-100, str(tmp_path / "x").encode(), -100,
                            str(tmp_path / "y").encode(), 2)) == 0
    if not ok and ctypes.get_errno() not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        raise OSError(ctypes.get_errno(), "renameat2")
    return ok


ROUNDS = 600


def test_a_process_swapping_a_parent_for_a_symlink_never_gets_a_change_out(
        env: tuple[Store, Path, Path], tmp_path: Path) -> None:
    """A real process swaps `sub` for a symlink to `outside` and back as fast as it can;
    meanwhile the store writes, creates, moves, trashes and erases under `sub/`. Every
    change either lands inside the vault or fails with PathRefused (NoteNotFound: a source
    seen through the link), nothing outside ever changes, and the race was run both ways
    (some changes refused, some made)."""
    if not hasattr(ctypes.CDLL(None), "renameat2") or not _exchange_supported(
            tmp_path / "probe"):
        pytest.skip("no renameat2(RENAME_EXCHANGE) here")
    store, vault, outside = env
    (vault / ".swap").symlink_to(outside)
    before_out = tree(outside)
    stop = tmp_path / "stop"
    proc = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(vault / "sub"), str(vault / ".swap"), str(stop)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rng = random.Random(21)
    made: dict[str, str] = {}
    outcomes = {"made": 0, "refused": 0}
    untyped: list[str] = []
    escaped: list[str] = []
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        for i in range(ROUNDS):
            kind = rng.choice(["write", "new folder", "create", "move", "trash", "erase"])
            try:
                if kind == "write":
                    store.write_text(f"sub/w{i % 7}.md", f"w {i}\n")
                    made[f"sub/w{i % 7}.md"] = f"w {i}\n"
                elif kind == "new folder":
                    store.write_text(f"sub/d{i % 5}/n{i}.md", f"n {i}\n")
                    made[f"sub/d{i % 5}/n{i}.md"] = f"n {i}\n"
                elif kind == "create":
                    store.write_text(f"sub/c{i}.md", f"c {i}\n", create_only=True)
                    made[f"sub/c{i}.md"] = f"c {i}\n"
                elif kind == "move":
                    store.move(f"sub/bait{i % 40}.md", f"sub/moved{i}.md")
                elif kind == "trash":
                    store.trash(f"sub/bait{i % 40}.md")
                else:
                    store.erase(f"sub/bait{i % 40}.md")
                outcomes["made"] += 1
            except PathRefused as exc:
                assert "symlink" in exc.reason, exc
                outcomes["refused"] += 1
            except NoteNotFound:
                outcomes["refused" if kind != "erase" else "made"] += 1
            except OSError as exc:  # neither made nor refused as the store promises
                untyped.append(f"{i} {kind}: {exc!r}")
            if not escaped and tree(outside) != before_out:
                escaped.append(f"{i} {kind}: {sorted(set(tree(outside)) ^ set(before_out))}")
    finally:
        stop.touch()
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert int(out.split()[-1]) > ROUNDS  # the swapper ran throughout
    assert not escaped and tree(outside) == before_out, escaped
    assert not untyped, untyped[:5]
    assert outcomes["made"] > ROUNDS // 10 and outcomes["refused"] > ROUNDS // 10, outcomes
    for rel, text in made.items():  # every change made landed inside, where it was asked
        assert (vault / rel).read_text(encoding="utf-8") == text, rel
    assert not [n for n in tree(vault) if ".rmh-tmp-" in n]


def test_remove_below_and_prune_below_follow_no_link(env: tuple[Store, Path, Path]) -> None:
    """The removals erasure and the stale-temp cleanup make: a folder on the way that is a
    symlink (here to `outside`, which holds the same name) removes nothing; a real one is
    pruned up to the kept components and no further."""
    _, vault, outside = env
    root = os.path.realpath(vault)
    (vault / "t" / "deep").mkdir(parents=True)
    (vault / "t" / "deep" / "x.md").write_text("in\n", encoding="utf-8")
    (outside / "deep" / "x.md").write_text("out\n", encoding="utf-8")
    os.symlink(outside, vault / "ln")
    assert not remove_below(root, "ln/deep/x.md")
    assert not remove_below(root, "ln/bait1.md")
    assert not remove_below(root, "t/deep")  # a folder is no file to remove
    assert not remove_below(root, "t/missing/x.md")
    prune_below(root, "ln/deep", 0)
    assert (outside / "deep" / "x.md").read_text(encoding="utf-8") == "out\n"
    assert (outside / "bait1.md").exists() and (vault / "ln").is_symlink()
    assert remove_below(root, "t/deep/x.md") and not (vault / "t" / "deep" / "x.md").exists()
    prune_below(root, "t/deep", 1)
    assert (vault / "t").is_dir() and not (vault / "t" / "deep").exists()


def test_erasure_and_temp_cleanup_follow_no_swapped_trash_folder(tmp_path: Path) -> None:
    """`forget` removes trash copies, and the sync's cleanup stale temps, through folder
    descriptors: a trash folder swapped for a symlink to a folder outside the vault that holds
    the same names after the plan was made loses nothing outside."""
    from vault import Vault

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "diary.md").write_text("outside diary zanzibar\n", encoding="utf-8")
    stale = ".diary.md.rmh-tmp-999999-0"
    (outside / stale).write_text("outside temp\n", encoding="utf-8")
    v = Vault.init(tmp_path / "v")
    v.write("sub/diary.md", "the zanzibar diary line long enough to be a needle\n")
    v.write("keep.md", "an unrelated note\n")
    v.delete("sub/diary.md")
    trash = v.root / ".rmh" / "trash" / "sub"
    assert (trash / "diary.md").exists()
    plan = v.forget_plan(subject="zanzibar")
    assert list(plan.trash) == ["sub/diary.md"]
    (trash / "diary.md").unlink()
    trash.rmdir()
    os.symlink(outside, trash)
    v.forget(plan)
    assert (outside / "diary.md").read_text(encoding="utf-8") == "outside diary zanzibar\n"
    os.symlink(outside, v.root / "linked")
    assert v.store.clean_stale_temps([f"linked/{stale}"]) == []
    assert (outside / stale).exists()
    v.close()


READS: dict[str, Callable[[Store], object]] = {
    "read_bytes": lambda s: s.read_bytes("sub/bait3.md"),
    "read_text": lambda s: s.read_text("sub/bait3.md"),
    "stat": lambda s: s.stat("sub/bait3.md"),
}


@pytest.mark.parametrize("op", sorted(READS))
def test_a_parent_swapped_for_a_symlink_after_the_check_never_redirects_the_read(
        env: tuple[Store, Path, Path], op: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The swap is made right after the store's last look at the path: its `resolve` (the
    old code then opened the path again) or the walk of its folder (`open_dir`, the new
    code then opens the name in the folder it holds). The read returns the note's own bytes
    (stat: its own inode) or PathRefused; the old code returned `outside/bait3.md`'s."""
    store, vault, outside = env
    inode = (vault / "sub" / "bait3.md").stat().st_ino
    swapped: list[bool] = []

    def swap() -> None:
        if not swapped:
            os.rename(vault / "sub", vault / "aside")
            os.symlink(outside, vault / "sub")
            swapped.append(True)

    def after(real: Callable[..., object]) -> Callable[..., object]:
        def wrapper(*args: object, **kwargs: object) -> object:
            got = real(*args, **kwargs)
            swap()
            return got
        return wrapper

    monkeypatch.setattr(Store, "resolve", after(Store.resolve))
    monkeypatch.setattr(anchored, "open_dir", after(anchored.open_dir))
    try:
        got = READS[op](store)
    except PathRefused as exc:
        assert "symlink" in exc.reason
        got = None
    assert swapped
    if isinstance(got, FileStat):
        assert got.inode == inode
    elif got is not None:
        assert got in (b"inside 3\n", "inside 3\n")


def test_a_process_swapping_a_parent_for_a_symlink_never_gets_a_read_out(
        env: tuple[Store, Path, Path], tmp_path: Path) -> None:
    """A real process swaps `sub` for a symlink to `outside` and back as fast as it can while
    the store reads, reads text and stats `sub/` notes: each read returns the note's own
    bytes (stat: the note's own inode) or a typed error (PathRefused, NoteNotFound), never
    anything of `outside`, and both outcomes occur."""
    if not hasattr(ctypes.CDLL(None), "renameat2") or not _exchange_supported(
            tmp_path / "probe"):
        pytest.skip("no renameat2(RENAME_EXCHANGE) here")
    store, vault, outside = env
    (vault / ".swap").symlink_to(outside)
    inodes = {f"sub/bait{i}.md": (vault / "sub" / f"bait{i}.md").stat().st_ino
              for i in range(40)}
    stop = tmp_path / "stop"
    proc = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(vault / "sub"), str(vault / ".swap"), str(stop)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rng = random.Random(22)
    outcomes = {"read": 0, "refused": 0}
    wrong: list[str] = []
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        for i in range(ROUNDS * 10):
            n = rng.randrange(40)
            path, kind = f"sub/bait{n}.md", rng.choice(sorted(READS))
            try:
                if kind == "stat":
                    got = store.stat(path)
                    ok = got is None or got.inode == inodes[path]
                else:
                    data = store.read_bytes(path) if kind == "read_bytes" else (
                        store.read_text(path).encode())
                    ok = data == f"inside {n}\n".encode()
                outcomes["read"] += 1
                if not ok:
                    wrong.append(f"{i} {kind} {path}: {got if kind == 'stat' else data!r}")
            except (PathRefused, NoteNotFound):
                outcomes["refused"] += 1
            except OSError as exc:  # untyped: neither the note nor the store's refusal
                wrong.append(f"{i} {kind} {path}: {exc!r}")
    finally:
        stop.touch()
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert int(out.split()[-1]) > ROUNDS
    assert not wrong, wrong[:5]
    assert outcomes["read"] > ROUNDS // 10 and outcomes["refused"] > ROUNDS // 10, outcomes
