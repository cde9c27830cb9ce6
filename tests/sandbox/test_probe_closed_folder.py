"""`rmh doctor` names the folder that keeps bwrap's worker user from the interpreter.

Before session 32, as root under a 0700 `/root` (a pyenv Python), the bwrap tier failed with
only bwrap's own line ("Can't find source path /proc/self/fd/13: Permission denied"), though
README says doctor tells why; `closed_folder` finds the first folder others may not search.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from sandbox.probe import closed_folder

MODES = (0o755, 0o711, 0o750, 0o700)


@pytest.mark.parametrize("modes", list(itertools.product(MODES, repeat=3)))
def test_the_first_folder_others_cannot_search_is_named(tmp_path: Path,
                                                        modes: tuple[int, ...]) -> None:
    tmp_path.chmod(0o755)  # the folders above it are pytest's (0700): `top` starts below
    folders = [tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a" / "b" / "c"]
    folders[-1].mkdir(parents=True)
    python = folders[-1] / "python3"
    python.write_text("")
    try:
        for folder, mode in zip(folders, modes, strict=True):
            folder.chmod(mode)
        closed = [str(f) for f, m in zip(folders, modes, strict=True) if not m & 0o001]
        found = closed_folder((str(python), str(folders[1])), top=str(tmp_path))
        assert found == (closed[0] if closed else None)
    finally:
        for folder in folders:
            folder.chmod(0o755)


def test_a_missing_path_stops_at_what_exists(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    (tmp_path / "shut").mkdir(mode=0o700)
    try:
        assert closed_folder((str(tmp_path / "shut" / "gone" / "python3"),),
                             top=str(tmp_path)) == str(tmp_path / "shut")
        assert closed_folder((str(tmp_path / "gone" / "python3"),), top=str(tmp_path)) is None
    finally:
        (tmp_path / "shut").chmod(0o755)
