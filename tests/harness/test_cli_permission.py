"""An unreadable note says "permission denied" (issue 27 item 7), as a typed error
(`permission_denied`, -32017), never "note not found": in process through a seam (os.open
refusing the file, as the kernel does for a mode-000 file), and as the unprivileged user
`rmhtest` (root reads any file whatever its mode), through the real CLI."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness.as_user import USER, as_user, unprivileged_home
from vault import PermissionDenied, Vault


def test_an_unreadable_note_is_permission_denied_in_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    v = Vault.init(tmp_path / "v")
    v.write("Secret", "hidden words\n")
    v.write("Open", "open words\n")
    (v.root / "Late.md").write_text("late words\n", encoding="utf-8")
    real_open = os.open

    def refusing(path: str | bytes | os.PathLike[str], flags: int, *a: int, **k: int) -> int:
        if os.fsdecode(path).endswith(("Secret.md", "Late.md")):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real_open(path, flags, *a, **k)

    monkeypatch.setattr(os, "open", refusing)  # the store's own os.open, at the lowest layer
    for name in ("Secret", "Late"):  # indexed before, and never indexed
        with pytest.raises(PermissionDenied) as caught:
            v.read(name)
        assert caught.value.code_name == "permission_denied"
        assert caught.value.data() == {"path": f"{name}.md", "action": "read"}
    assert v.read("Open").text == "open words\n"
    assert v.search("words").hits  # the rest of the vault answers
    v.close()


def test_an_unreadable_note_as_an_unprivileged_user() -> None:
    home = unprivileged_home()
    try:
        uid = int(subprocess.check_output(["id", "-u", USER]))
        vault = home / "v"
        vault.mkdir()
        for name, text in (("Secret", "hidden words\n"), ("Open", "open words\n")):
            (vault / f"{name}.md").write_text(text, encoding="utf-8")
        for path in (vault, vault / "Secret.md", vault / "Open.md"):
            os.chown(path, uid, -1)
        assert as_user(home, "--vault", str(vault), "init", "--no-dense").returncode == 0
        (vault / "Late.md").write_text("late words\n", encoding="utf-8")
        os.chown(vault / "Late.md", uid, -1)
        os.chmod(vault / "Secret.md", 0)
        os.chmod(vault / "Late.md", 0)
        for name in ("Secret", "Late"):
            r = as_user(home, "--vault", str(vault), "read", name, "--json")
            assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
            assert "permission denied" in r.stderr and "not found" not in r.stderr
            assert json.loads(r.stdout)["error"]["kind"] == "permission_denied"
        r = as_user(home, "--vault", str(vault), "search", "words", "--no-dense", "--json")
        assert r.returncode == 0, r.stderr
        r = as_user(home, "--vault", str(vault), "doctor", "--json")
        assert r.returncode == 0, r.stderr
        errors = json.loads(r.stdout)["vault"]["sync_errors"]
        assert any("Late.md" in e for e in errors), errors
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_a_folder_the_user_may_not_search_as_an_unprivileged_user() -> None:
    """A folder of mode 000 on the way to a note (the kernel's refusal, not a seam: the
    anchored walk opens each folder, storage/anchored.py): `read` of an indexed note in it and
    of a name never indexed are `permission_denied` through the real CLI, and the rest of the
    vault answers."""
    home = unprivileged_home()
    try:
        uid = int(subprocess.check_output(["id", "-u", USER]))
        vault = home / "v"
        (vault / "sub").mkdir(parents=True)
        (vault / "sub" / "a.md").write_text("hidden words\n", encoding="utf-8")
        (vault / "Open.md").write_text("open words\n", encoding="utf-8")
        for path in (vault, vault / "sub", vault / "sub" / "a.md", vault / "Open.md"):
            os.chown(path, uid, -1)
        assert as_user(home, "--vault", str(vault), "init", "--no-dense").returncode == 0
        os.chmod(vault / "sub", 0)
        for name in ("sub/a", "sub/never"):
            r = as_user(home, "--vault", str(vault), "read", name, "--json")
            assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
            assert json.loads(r.stdout)["error"]["kind"] == "permission_denied", r.stdout
        r = as_user(home, "--vault", str(vault), "read", "Open", "--json")
        assert r.returncode == 0 and json.loads(r.stdout)["text"] == "open words\n", r.stderr
    finally:
        os.chmod(home / "v" / "sub", 0o755)
        shutil.rmtree(home, ignore_errors=True)
