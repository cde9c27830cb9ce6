"""A vault whose `.rmh` is not its own state folder: every command refuses alike, naming the
folder, why and what to do, and nothing of what stands there is read, written or removed
(HOUSE41).

Two ways a `.rmh` stops being the vault's own, each attacked through real `rmh` processes:
- a symlink to a folder outside the vault (another vault's `.rmh`, any folder): every command
  used to print only `rmh: path refused: '.rmh' (symlink leaves the vault)`, no folder named
  and no cure; now the same line for every command, with the absolute folder and the fix, and
  the same fields under --json;
- a real folder of the user's at `.rmh` (generated names and bytes, some shaped like rmh's own
  temporaries): it used to be taken silently as the vault's state, rmh's index and derived
  files made among the user's files; now every command refuses it (the hook answers nothing,
  exit 0, and says why on stderr) and not a byte in it changes; `rmh init` refuses it too.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from tests.forks import cli_env, run_cli

COMMANDS = (["search", "kiwi"], ["status"], ["list"], ["read", "Kiwi"], ["doctor"],
            ["index"], ["context", "kiwi"], ["links", "Kiwi"], ["backlinks", "Kiwi"],
            ["learning"], ["write", "New.md"], ["delete", "Kiwi"], ["move", "Kiwi", "K2"],
            ["forget", "Kiwi"], ["why", "Kiwi"], ["replay"], ["lifecycle"], ["restore", "x"],
            ["archive", "Kiwi"])


def _vaults(work: Path) -> tuple[Path, Path]:
    env = cli_env(work)
    for name, word in (("a", "kiwi"), ("b", "mango")):
        assert run_cli(["init", str(work / name)], env=env, cwd=work).returncode == 0
        (work / name / f"{word.title()}.md").write_text(f"# {word}\n{word} notes\n")
        assert run_cli(["--vault", str(work / name), "search", word], env=env,
                       cwd=work).returncode == 0
    return work / "a", work / "b"


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else b"/")
            for p in sorted(folder.rglob("*"))}


def _refusals(work: Path, vault: Path, reason: str, fix: str) -> None:
    """Every command on `vault` exits 1 with one and the same stderr line naming the folder,
    `reason` and `fix`; under --json the error's fields say the same."""
    env = cli_env(work)
    folder = str(vault / ".rmh")
    lines = set()
    for args in COMMANDS:
        got = run_cli(["--vault", str(vault), *args], env=env, cwd=work, stdin="text\n")
        assert got.returncode == 1, (args, got.stdout, got.stderr)
        assert got.stderr.count("\n") == 1, (args, got.stderr)
        lines.add(got.stderr)
    (line,) = lines  # the same words from every command
    assert f"path refused: {folder!r} ({reason}" in line, line
    assert f"To fix: {fix}" in line, line
    got = run_cli(["--vault", str(vault), "status", "--json"], env=env, cwd=work)
    error = json.loads(got.stdout)["error"]
    assert error["kind"] == "path_refused" and error["path"] == ".rmh", error
    assert error["folder"] == folder and error["fix"].startswith(fix), error
    hook = run_cli(["--vault", str(vault), "hook", "prompt"], env=env, cwd=work,
                   stdin=json.dumps({"prompt": "mango kiwi", "session_id": "s"}))
    assert hook.returncode == 0 and hook.stdout.strip() in ("", "{}"), hook.stdout
    assert "the vault's .rmh is refused" in hook.stderr and fix in hook.stderr, hook.stderr


def test_a_symlinked_state_folder_is_refused_alike_by_every_command(tmp_path: Path) -> None:
    a, b = _vaults(tmp_path)
    os.rename(a / ".rmh", tmp_path / "a-own-state")
    os.symlink(b / ".rmh", a / ".rmh")
    before = _snapshot(b / ".rmh")
    _refusals(tmp_path, a, "symlink leaves the vault",
              "remove the symlink and put the vault's own .rmh folder back in its place")
    after = _snapshot(b / ".rmh")
    assert {k: v for k, v in after.items() if k != "write.lock"} == {
        k: v for k, v in before.items() if k != "write.lock"}
    os.unlink(a / ".rmh")  # the fix as said: the vault's own back, and it serves again
    os.rename(tmp_path / "a-own-state", a / ".rmh")
    got = run_cli(["--vault", str(a), "search", "kiwi"], env=cli_env(tmp_path), cwd=tmp_path)
    assert got.returncode == 0 and "Kiwi" in got.stdout, got.stderr


def _foreign(rng: random.Random, folder: Path) -> None:
    """A user's folder: generated names (some shaped like rmh's temporaries and derived
    files, none of its anchors) and bytes, a subfolder, a hidden file."""
    names = ["photo.jpg", "todo.txt", ".hidden", "rows.npy", ".index.sqlite.9.tmp",
             "index.bin", "x.rmh-tmp-1-1", "notes.md", "data.json", "edges.npz"]
    folder.mkdir()
    for name in rng.sample(names, rng.randint(1, len(names))):
        (folder / name).write_bytes(rng.randbytes(rng.randint(0, 64)))
    if rng.random() < 0.5:
        (folder / "sub").mkdir()
        (folder / "sub" / "inner.txt").write_text("inner\n")


@pytest.mark.parametrize("seed", range(3))
def test_a_users_folder_at_rmh_is_refused_and_left_as_it_is(tmp_path: Path, seed: int) -> None:
    a, _ = _vaults(tmp_path)
    os.rename(a / ".rmh", tmp_path / "a-own-state")
    _foreign(random.Random(seed), a / ".rmh")
    before = _snapshot(a / ".rmh")
    _refusals(tmp_path, a, "holds ",
              "move that folder out of the vault (rmh changed nothing in it), then run `rmh "
              f"init {a}`")
    init = run_cli(["init", str(a)], env=cli_env(tmp_path), cwd=tmp_path)
    assert init.returncode == 1 and "not a vault's state folder" in init.stderr, init.stderr
    assert _snapshot(a / ".rmh") == before


def test_an_empty_rmh_is_a_new_state_folder(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    (root / "Note.md").write_text("# Note\nkiwi\n")
    got = run_cli(["--vault", str(root), "search", "kiwi"], env=cli_env(tmp_path), cwd=tmp_path)
    assert got.returncode == 0 and "Note" in got.stdout, got.stderr
