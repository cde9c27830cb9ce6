"""A note moved onto another file system (a mount point inside the vault, or `.rmh/` mounted
apart, as a bind mount or a container volume makes them).

rmh moves a note by link or rename, never by copy, so such a move cannot be made. Before,
`os.rename`'s EXDEV came up raw (`[Errno 18] Invalid cross-device link: 'A.md' -> 'A.md'`)
and, for `move`, after the intent was journalled: `Vault.move` closes the journal only for a
typed refusal, so every such move left an intent pending that no open could finish. Now it is
`path_refused` (the reason says why), the vault is as it was, no intent is left, and the next
move on one file system works."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.forks import run_cli
from vault import PathRefused, Vault


def files(root: Path) -> dict[str, str]:
    """The vault's notes (not `.rmh/`) -> sha256 of their bytes."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*.md")) if ".rmh" not in p.relative_to(root).parts}


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[Callable[[Path], None]]:
    """`mount(folder)`: a small tmpfs there (root only; elsewhere the test skips), unmounted
    after the test, deepest first."""
    made: list[Path] = []

    def mount(folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()[:120] or 'not root'})")
        made.append(folder)

    yield mount
    for folder in reversed(made):
        subprocess.run(["umount", "-l", str(folder)], check=False)


# (folders mounted apart, the move (old, new) or ("delete", note))
CASES: tuple[tuple[tuple[str, ...], tuple[str, str]], ...] = (
    (("m",), ("A", "m/A")),
    (("m",), ("m/B", "B2")),
    (("m", "n"), ("m/B", "n/B")),
    (("m",), ("m/B", "m/deep/er/B")),  # same file system: works (control)
    (("m",), ("delete", "m/B")),
    ((".rmh/trash",), ("delete", "A")),
)


@pytest.mark.parametrize(("mounted", "op"), CASES, ids=[f"{m}-{o}" for m, o in CASES])
def test_a_move_onto_another_file_system_is_refused_and_leaves_nothing_pending(
        tmp_path: Path, mounts: Callable[[Path], None], mounted: tuple[str, ...],
        op: tuple[str, str]) -> None:
    root = tmp_path / "v"
    root.mkdir()
    Vault.init(root).close()  # `.rmh/` made first, so a mount can go inside it
    for folder in mounted:
        mounts(root / folder)
    notes = {"A.md": "# A\nalpha\n", "R.md": "R [[A]] [[B]]\n", "m/B.md": "B [[A]]\n",
             "n/C.md": "C [[B]]\n"}
    for name, text in notes.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    before = files(root)
    same = op[0] != "delete" and op[1].startswith("m/") and op[0].startswith("m/")
    with Vault.open(root, watch=False) as v:
        if same:
            assert v.move(*op).note == f"{op[1]}.md"
        else:
            with pytest.raises(PathRefused) as refused:
                v.move(*op) if op[0] != "delete" else v.delete(op[1])
            assert "another file system" in refused.value.reason
            assert files(root) == before
        assert sorted((root / ".rmh" / "intents").glob("*")) == []
        v.move("R", "R2")  # nothing pending blocks the next write
    with Vault.open(root, watch=False) as v:
        assert "R2.md" in v.backlinks("A")


def _killed_move(root: Path, old: str, new: str) -> bool:
    """`rmh move OLD NEW` SIGKILLed at each file operation in turn until one leaves its intent
    journalled and the note not yet renamed; False when no point does."""
    repo = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(repo)
    for n in range(1, 12):
        env["RMH_FAULT_AFTER_OPS"] = str(n)
        done = run_cli(["--vault", str(root), "move", old, new], env=env, cwd=repo)
        pending = sorted((root / ".rmh" / "intents").glob("*.json"))
        if done.returncode == -9 and pending and (root / f"{old}.md").exists():
            return True
        assert done.returncode == -9 and not pending, done.stderr  # killed before the intent
    return False


@pytest.mark.parametrize("new", ["m/A", "m/deep/A"])
def test_a_killed_move_whose_folder_became_a_mount_point_is_rolled_back(
        tmp_path: Path, mounts: Callable[[Path], None], new: str) -> None:
    """A move killed after its plan was journalled, then a file system mounted where it was
    going (a disk mounted at boot on that folder): the next open cannot rename, ever. Before,
    the intent stayed pending for good (`failed: [Errno 18] ...`, tried at every open and
    every lock); now it is rolled back, the note and its referrers as they were."""
    root = tmp_path / "v"
    root.mkdir()
    notes = {"A.md": "# A\nalpha\n", "R.md": "R [[A]]\n", "S.md": "S [[A|a]] [l](A.md)\n"}
    for name, text in notes.items():
        (root / name).write_text(text, encoding="utf-8")
    Vault.init(root).close()
    assert _killed_move(root, "A", new)
    mounts(root / "m")
    with Vault.open(root, watch=False) as v:
        assert files(root) == {n: hashlib.sha256(t.encode()).hexdigest()
                               for n, t in notes.items()}
        assert sorted((root / ".rmh" / "intents").glob("*.json")) == []
        assert [o["state"] for o in v.store.recovered] == ["rolled back"]
        assert sorted(v.backlinks("A")) == ["R.md", "S.md"]
