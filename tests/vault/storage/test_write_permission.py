"""A change the file system refuses (EACCES, EPERM: a folder's mode, an immutable file) is
`permission_denied` naming the note by its vault path with action "write", whichever step was
refused (the temporary, a folder made for it, the rename, the hard link, the unlink); never a
raw OSError, "cannot read", a temporary's name or a host path. The refusal comes through a
seam on os (root writes any folder whatever its mode): each case refuses one call kind, for
each operation that changes notes."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault import PermissionDenied, Vault, storage_error

CALLS = ("open", "mkdir", "replace", "link", "rename", "unlink")
OPS: dict[str, tuple[str, Callable[[Vault], object]]] = {
    "write new": ("sub/New.md", lambda v: v.write("sub/New", "new\n")),
    "overwrite": ("A.md", lambda v: v.write("A", "changed\n", overwrite=True)),
    "edit": ("A.md", lambda v: v.edit("A", _append())),
    "delete": ("A.md", lambda v: v.delete("A")),
    "move": ("A.md", lambda v: v.move("A", "elsewhere/Z")),  # or B.md: its link's rewrite
}


def _append() -> Any:
    from vault import Edit
    return Edit("append", "more\n")


def refuse(monkeypatch: pytest.MonkeyPatch, call: str, code: int) -> None:
    """Make os.CALL refuse every change inside the vault's folders (the store works through
    folder descriptors: dir_fd, src_dir_fd; rmh's own `.rmh/` files are written by path)."""
    real = getattr(os, call)

    def refusing(*args: Any, **kwargs: Any) -> Any:
        anchored = any(kwargs.get(k) is not None for k in ("dir_fd", "src_dir_fd"))
        creating = call != "open" or (len(args) > 1 and args[1] & os.O_CREAT)
        if anchored and creating:
            raise PermissionError(code, os.strerror(code), args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(os, call, refusing)


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("code", [errno.EACCES, errno.EPERM])
def test_a_refused_change_names_the_note_and_says_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str, call: str, code: int) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "A.md").write_text("alpha\n", encoding="utf-8")
    (root / "B.md").write_text("links to [[A]]\n", encoding="utf-8")
    note, run = OPS[op]
    with Vault.init(root) as v, monkeypatch.context() as m:
        refuse(m, call, code)
        try:
            run(v)
        except PermissionDenied as exc:
            named = exc.data()["path"]
            assert named == note or (op == "move" and named == "B.md"), (op, call)
            assert exc.data() == {"path": named, "action": "write"}, (op, call)
            assert str(exc) == f"permission denied: cannot write {named!r}"
        else:
            return  # this operation makes no such call (or falls back, as link does)
    with Vault.open(root):  # a move half made is finished (or undone) by the next open
        pass
    assert not list(root.rglob("*rmh-tmp*"))
    if op == "move":
        assert (root / "A.md").exists() != (root / "elsewhere" / "Z.md").exists()
    if op == "delete":
        assert (root / "A.md").exists()  # its unlink refused: the note stays (a trash copy)


@pytest.mark.parametrize(("name", "shown", "action"), [
    (".Fresh.md.rmh-tmp-19283-0", "Fresh.md", "write"),
    (".rmh/.stat-columns.bin.4242.tmp", "stat-columns.bin", "write"),
    ("notes/a.md", "a.md", "read"),
])
def test_the_boundary_names_a_temporary_by_its_file(tmp_path: Path, name: str, shown: str,
                                                     action: str) -> None:
    """A refusal naming a file under the vault (an absolute path, as the OS gives it)."""
    full = str(tmp_path / "v" / name)
    typed = storage_error(PermissionError(errno.EACCES, "Permission denied", full))
    assert isinstance(typed, PermissionDenied)
    assert typed.data() == {"path": shown, "action": action}
