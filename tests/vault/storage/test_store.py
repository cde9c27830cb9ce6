"""vault.storage.store: contained paths, scan, read, atomic write, trash, move (real files)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vault.errors import (
    EditConflict,
    NotAVault,
    NoteExists,
    NoteNotFound,
    NotText,
    PathRefused,
    QuotaExceeded,
)
from vault.storage.folders import RACY
from vault.storage.store import MAX_NOTE_BYTES, TRASH_DIR, FileStat, Skipped, Store

REPO = Path(__file__).resolve().parents[3]


def tree(top: Path) -> dict[str, str]:
    """Every entry under `top` (symlinks not followed): kind + content hash or link target."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(top).as_posix()
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = "file:" + hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture()
def env(tmp_path: Path) -> tuple[Store, Path, Path]:
    """A vault with a note and a folder, and a sibling 'outside' folder holding a secret."""
    vault = tmp_path / "vault"
    outside = tmp_path / "outside"
    (vault / "sub").mkdir(parents=True)
    (vault / ".rmh").mkdir()  # every vault has one: the store's write lock lives there
    (vault / "a.md").write_text("alpha\n", encoding="utf-8")
    (vault / "sub" / "b.md").write_text("bravo\n", encoding="utf-8")
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.md").write_text("secret\n", encoding="utf-8")
    (outside / "dir" / "x.md").write_text("outside x\n", encoding="utf-8")
    return Store(vault), vault, outside


BAD_PATHS = [
    ("", "empty"),
    ("/", "absolute"),
    ("./", "empty"),
    ("/etc/passwd.md", "absolute"),
    ("\\windows\\x.md", "backslash"),
    ("C:notes.md", "drive"),
    ("c:/x.md", "drive"),
    ("../outside/secret.md", "'..'"),
    ("sub/../../outside/secret.md", "'..'"),
    ("..", "'..'"),
    ("sub/..", "'..'"),
    ("a\\..\\..\\x.md", "backslash"),
    ("a\x00b.md", "control"),
    ("a\nb.md", "control"),
    ("a\x1fb.md", "control"),
    ("a\x7fb.md", "control"),
    ("a\x85b.md", "control"),
    ("a\x9fb.md", "control"),
    ("a\u2215..\u2215x.md", "look-alike"),
    ("a\u2044x.md", "look-alike"),
    ("a\uff0fx.md", "look-alike"),
    ("a\u29f8x.md", "look-alike"),
    ("\u2024\u2024/x.md", "look-alike"),
    ("\u2025/x.md", "look-alike"),
    ("\uff0e\uff0e/x.md", "look-alike"),
    ("\ufe52\ufe52/x.md", "look-alike"),
    ("a\uff3cx.md", "look-alike"),
    ("\u2026x.md", "NFKC"),  # ellipsis at the start reads as a hidden "..." name
    ("a\u202eb.md", "bidi"),
    ("a\ufeffb.md", "bidi"),
    ("x" * 256 + ".md", "255"),
    ("/".join(["d" * 200] * 6) + "/n.md", "1024"),
    ("\ud800.md", "unicode"),
    (".hidden.md", "hidden"),
    (".rmh/index.md", "hidden"),
    (".obsidian/x.md", "hidden"),
    ("sub/.git/x.md", "hidden"),
]


@pytest.mark.parametrize(("path", "why"), BAD_PATHS, ids=[ascii(p)[:40] for p, _ in BAD_PATHS])
def test_path_attacks_refused_and_nothing_written(
    env: tuple[Store, Path, Path], path: str, why: str
) -> None:
    store, vault, _ = env
    top = vault.parent
    before = tree(top)
    with pytest.raises(PathRefused) as info:
        store.check(path)
    assert why.lower() in info.value.reason.lower()
    for op in (
        lambda: store.write_text(path, "pwned"),
        lambda: store.write_text(path, "pwned", create_only=True),
        lambda: store.read_text(path),
        lambda: store.stat(path),
        lambda: store.trash(path),
        lambda: store.move("a.md", path),
        lambda: store.move(path, "moved.md"),
    ):
        with pytest.raises(PathRefused):
            op()
    assert tree(top) == before


def test_check_normalises() -> None:
    store = Store(Path("/"))
    assert store.check("./a//b/./c.md") == "a/b/c.md"
    assert store.check("a/b/") == "a/b"
    assert store.check("Wait... what.md") == "Wait... what.md"  # dots inside a name are fine
    assert store.check("Thoughts\u2026.md") == "Thoughts\u2026.md"
    assert store.check("caf\u00e9/\u65e5\u672c.md") == "caf\u00e9/\u65e5\u672c.md"
    with pytest.raises(PathRefused, match=r"not a \.md"):
        store.check("a.txt", write=True)
    assert store.check("A.MD", write=True) == "A.MD"


def test_not_a_vault(tmp_path: Path) -> None:
    with pytest.raises(NotAVault):
        Store(tmp_path / "missing")
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotAVault):
        Store(tmp_path / "f")


def test_symlinks_leaving_the_vault(env: tuple[Store, Path, Path]) -> None:
    store, vault, outside = env
    (vault / "evil.md").symlink_to(outside / "secret.md")
    (vault / "evildir").symlink_to(outside / "dir")
    (vault / "dangling.md").symlink_to(outside / "nothing.md")
    (vault / "rel.md").symlink_to("../outside/secret.md")
    before = tree(vault.parent)
    for path in ("evil.md", "evildir/x.md", "rel.md", "dangling.md"):
        with pytest.raises(PathRefused, match="leaves the vault"):
            store.read_text(path)
        with pytest.raises(PathRefused, match="leaves the vault"):
            store.write_text(path, "pwned")
        with pytest.raises(PathRefused):
            store.trash(path)
        with pytest.raises(PathRefused):
            store.move(path, "taken.md")
    for path in ("evildir/new.md", "evildir/deep/er/new.md"):  # parent is an escaping link
        with pytest.raises(PathRefused, match="leaves the vault"):
            store.write_text(path, "pwned")
        with pytest.raises(PathRefused):
            store.move("a.md", path)
    assert tree(vault.parent) == before
    scan = store.scan()
    assert [f.path for f in scan.files] == ["a.md", "sub/b.md"]
    assert Skipped("evil.md", "symlink outside vault") in scan.skipped
    assert Skipped("evildir", "symlink outside vault") in scan.skipped
    assert Skipped("rel.md", "symlink outside vault") in scan.skipped
    assert Skipped("dangling.md", "symlink outside vault") in scan.skipped


def test_symlinks_inside_the_vault_and_loops(env: tuple[Store, Path, Path]) -> None:
    store, vault, _ = env
    (vault / "alias.md").symlink_to("a.md")
    (vault / "subalias").symlink_to("sub")
    (vault / "sub" / "up").symlink_to("..")  # a loop back to the root
    (vault / "loop.md").symlink_to("loop.md")  # a self loop
    (vault / "p.md").symlink_to("q.md")
    (vault / "q.md").symlink_to("p.md")
    (vault / "gone.md").symlink_to("nowhere.md")
    assert store.read_text("alias.md") == "alpha\n"  # in-vault links may be read through
    assert store.read_text("subalias/b.md") == "bravo\n"
    with pytest.raises(PathRefused, match="loop"):
        store.read_text("loop.md")
    with pytest.raises(PathRefused, match="loop"):
        store.read_text("p.md")
    scan = store.scan()
    assert [f.path for f in scan.files] == ["a.md", "sub/b.md"]  # each note once, no loop
    reasons = {s.path: s.reason for s in scan.skipped}
    assert reasons == {
        "alias.md": "symlink inside vault (not followed)",
        "subalias": "symlink inside vault (not followed)",
        "sub/up": "symlink inside vault (not followed)",
        "loop.md": "symlink loop",
        "p.md": "symlink loop",
        "q.md": "symlink loop",
        "gone.md": "broken symlink",
    }


def test_no_write_through_a_symlink_inside_the_vault(env: tuple[Store, Path, Path]) -> None:
    """The scan does not follow an in-vault link, so no write goes through one: `alias.md`
    -> `a.md` overwritten would change `a.md`, a note nobody asked to change, and a note
    written under `subalias/` would be indexed at a path the scan never sees."""
    store, vault, _ = env
    (vault / "alias.md").symlink_to("a.md")
    (vault / "subalias").symlink_to("sub")
    before = tree(vault)
    for path in ("alias.md", "subalias/b.md", "subalias/new.md", "subalias/deep/new.md"):
        with pytest.raises(PathRefused, match="symlink inside the vault"):
            store.write_text(path, "changed\n")
        with pytest.raises(PathRefused, match="symlink inside the vault"):
            store.move("sub/b.md", path)
    assert tree(vault) == before
    assert store.read_text("alias.md") == "alpha\n"  # reads may still go through


def test_scan_skips_hidden_folders_and_reports_oddities(env: tuple[Store, Path, Path]) -> None:
    store, vault, _ = env
    for folder in (".obsidian", ".git", ".trash", ".rmh", ".custom", "sub/.hidden"):
        (vault / folder).mkdir(parents=True, exist_ok=True)
        (vault / folder / "n.md").write_text("hidden")
    (vault / ".dotnote.md").write_text("hidden")
    (vault / "UPPER.MD").write_text("upper")
    (vault / "Mixed.Md").write_text("mixed")
    (vault / "notes.txt").write_text("not a note")
    (vault / "folder.md").mkdir()
    (vault / "folder.md" / "inner.md").write_text("inner")
    os.mkfifo(vault / "fifo.md")
    (vault / "bin.md").write_bytes(b"\x00\x01binary")
    (vault / "latin1.md").write_bytes("caf\u00e9".encode("latin-1"))
    (vault / "big.md").write_bytes(b"x" * (MAX_NOTE_BYTES + 1))
    (vault / "tab\there.md").write_text("refused name")
    os.mkdir(os.fsencode(vault) + b"/bad\xffname")
    (vault / os.fsdecode(b"bad\xffname") / "n.md").write_text("undecodable folder name")
    scan = store.scan()
    paths = [f.path for f in scan.files]
    assert paths == sorted(paths)
    assert paths == [
        "Mixed.Md", "UPPER.MD", "a.md", "bin.md", "folder.md/inner.md", "latin1.md", "sub/b.md",
    ]
    reasons = {s.path: s.reason for s in scan.skipped}
    assert reasons["fifo.md"] == "not a regular file"
    assert reasons["big.md"] == f"larger than {MAX_NOTE_BYTES} bytes"
    assert reasons["tab\\x09here.md"] == "refused name: control character U+0009"
    assert reasons["bad\\xffname/n.md"] == "refused name: not valid unicode"  # printable
    a = store.stat("a.md")
    assert a is not None and a in scan.files and a.size == 6
    # content problems are reported at read time, one file at a time, never fatal
    with pytest.raises(NotText, match="binary"):
        store.read_text("bin.md")
    with pytest.raises(NotText, match="not utf-8"):
        store.read_text("latin1.md")
    with pytest.raises(QuotaExceeded):
        store.read_bytes("big.md")
    with pytest.raises(NotText, match="regular"):
        store.read_bytes("fifo.md")  # opened non-blocking: never hangs
    with pytest.raises(NotText, match="regular"):
        store.read_bytes("folder.md")
    assert store.read_bytes("latin1.md") == "caf\u00e9".encode("latin-1")


def test_scan_reports_unreadable_folder(env: tuple[Store, Path, Path]) -> None:
    _, vault, _ = env
    locked = vault / "locked"
    locked.mkdir()
    (locked / "n.md").write_text("n")
    locked.chmod(0)
    try:
        code = (  # a bare `vault` package: vault.storage.store alone, without numpy/scipy start-up
            "import sys, types; pkg = types.ModuleType('vault'); pkg.__path__ = [sys.argv[2]];"
            "sys.modules['vault'] = pkg; from vault.storage.store import Store;"
            "s = Store(sys.argv[1]).scan();"
            "print([f.path for f in s.files]); print([(k.path, k.reason) for k in s.skipped])"
        )
        cmd = [sys.executable, "-c", code, str(vault), str(REPO / "vault")]
        if os.geteuid() == 0:  # root ignores permissions unless its capabilities are dropped
            setpriv = shutil.which("setpriv")
            assert setpriv, "root needs util-linux setpriv to test unreadable folders"
            cmd = [setpriv, "--bounding-set", "-all", "--inh-caps", "-all", *cmd]
        out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=60)
    finally:
        locked.chmod(0o755)
    assert out.returncode == 0, out.stderr
    files, skipped = out.stdout.splitlines()
    assert files == "['a.md', 'sub/b.md']"
    assert skipped == "[('locked', 'unreadable folder (EACCES)')]"


def test_read_write_round_trip_and_bom(env: tuple[Store, Path, Path]) -> None:
    store, vault, _ = env
    text = "\ufeff---\ntitle: x\n---\r\nline one\r\ncaf\u00e9 \U0001f600\n"
    fs = store.write_text("new/deep/Note.md", text)
    raw = (vault / "new" / "deep" / "Note.md").read_bytes()
    assert raw == text.encode("utf-8") and raw.startswith(b"\xef\xbb\xbf")
    assert store.read_text("new/deep/Note.md") == text
    now = store.stat("./new//deep/Note.md")
    assert now is not None and fs == now._replace(ctime_ns=RACY)  # the rename set the ctime
    assert fs == FileStat("new/deep/Note.md", len(raw), fs.mtime_ns, fs.inode, RACY)
    store.write_text("new/deep/Note.md", store.read_text("new/deep/Note.md"))
    assert (vault / "new" / "deep" / "Note.md").read_bytes() == raw
    assert store.stat("missing.md") is None
    assert store.stat("sub") is None
    with pytest.raises(NoteNotFound):
        store.read_text("missing.md")
    with pytest.raises(NoteNotFound):
        store.read_text("a.md/child.md")
    assert not [p for p in tree(vault) if "rmh-tmp" in p]


def test_write_keeps_mode_and_refuses_bad_content(env: tuple[Store, Path, Path]) -> None:
    store, vault, _ = env
    (vault / "a.md").chmod(0o600)
    store.write_text("a.md", "changed")
    assert (vault / "a.md").stat().st_mode & 0o777 == 0o600
    before = tree(vault)
    with pytest.raises(QuotaExceeded):
        store.write_text("a.md", "x" * (MAX_NOTE_BYTES + 1))
    with pytest.raises(NotText):
        store.write_text("a.md", "lone \udc80 surrogate")
    (vault / "dir.md").mkdir()
    with pytest.raises(PathRefused, match="is a folder"):
        store.write_text("dir.md", "x")
    with pytest.raises(PathRefused, match="parent folder is a file"):
        store.write_text("a.md/child.md", "x")
    assert {k: v for k, v in tree(vault).items() if k != "dir.md"} == before


def test_create_only(env: tuple[Store, Path, Path]) -> None:
    store, vault, _ = env
    with pytest.raises(NoteExists):
        store.write_text("a.md", "other", create_only=True)
    assert (vault / "a.md").read_text() == "alpha\n"
    fs = store.write_text("fresh.md", "fresh", create_only=True)
    assert (vault / "fresh.md").read_text() == "fresh" and fs.size == 5
    assert sorted(p.name for p in vault.iterdir()) == [".rmh", "a.md", "fresh.md", "sub"]


def test_trash_never_overwrites(env: tuple[Store, Path, Path]) -> None:
    store, vault, _ = env
    names = []
    for i in range(3):
        store.write_text("sub/b.md", f"version {i}")
        names.append(store.trash("sub/b.md"))
        assert not (vault / "sub" / "b.md").exists()
    assert names == ["sub/b.md", "sub/b (1).md", "sub/b (2).md"]
    trash = vault / TRASH_DIR
    assert [(trash / n).read_text() for n in names] == ["version 0", "version 1", "version 2"]
    with pytest.raises(NoteNotFound):
        store.trash("sub/b.md")
    with pytest.raises(PathRefused, match="folder"):
        store.trash("sub")
    assert [f.path for f in store.scan().files] == ["a.md"]  # the trash is not scanned


@pytest.mark.parametrize("stem", ["x" * 252, "é" * 126])
def test_a_note_named_at_the_cap_is_trashed_again(env: tuple[Store, Path, Path],
                                                   stem: str) -> None:
    """A note name of 255 bytes had one trash copy, then ENAMETOOLONG (" (1)" added to it):
    it could not be deleted again. A further copy's name is cut, at a character, to fit."""
    store, vault, _ = env
    names = []
    for i in range(3):
        store.write_text(f"sub/{stem}.md", f"version {i}")
        names.append(store.trash(f"sub/{stem}.md"))
    assert all(len(os.path.basename(n).encode()) <= 255 for n in names), names
    assert names[1].endswith(" (1).md") and names[2].endswith(" (2).md")
    trash = vault / TRASH_DIR
    assert [(trash / n).read_text() for n in names] == ["version 0", "version 1", "version 2"]


def test_trash_refuses_an_escaping_state_folder(env: tuple[Store, Path, Path]) -> None:
    store, vault, outside = env
    shutil.rmtree(vault / ".rmh")
    (vault / ".rmh").symlink_to(outside)
    before = tree(vault.parent)
    with pytest.raises(PathRefused, match="leaves the vault"):
        store.trash("sub/b.md")
    assert tree(vault.parent) == before


def test_move(env: tuple[Store, Path, Path]) -> None:
    store, vault, _ = env
    ino = (vault / "a.md").stat().st_ino
    store.move("a.md", "x/y/A2.md")
    assert not (vault / "a.md").exists()
    assert (vault / "x" / "y" / "A2.md").read_text() == "alpha\n"
    assert (vault / "x" / "y" / "A2.md").stat().st_ino == ino  # same file: rename, not copy
    before = tree(vault)
    with pytest.raises(NoteExists):
        store.move("x/y/A2.md", "sub/b.md")
    with pytest.raises(NoteNotFound):
        store.move("nope.md", "z.md")
    with pytest.raises(PathRefused, match=r"not a \.md"):
        store.move("x/y/A2.md", "z.txt")
    with pytest.raises(PathRefused, match="folder"):
        store.move("sub", "z.md")
    assert tree(vault) == before
    store.move("x/y/A2.md", "x/y/A2.md")  # same path: no-op
    assert tree(vault) == before


def test_clean_stale_temps(env: tuple[Store, Path, Path]) -> None:
    store, vault, _ = env
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = [f".a.md.rmh-tmp-{dead.pid}-0", f"sub/.b.md.rmh-tmp-{dead.pid}-7"]
    for rel in stale:
        (vault / rel).write_text("partial")
    live = f".a.md.rmh-tmp-{os.getppid()}-3"  # a live writer's temp is left alone
    keep = [".a.md.rmh-tmp-x-1", "a.md.rmh-tmp-1-1", live, ".rmh/.x.rmh-tmp-1-1"]
    for rel in keep:
        (vault / rel).write_text("keep")
    assert store.clean_stale_temps() == sorted(stale)
    for rel in stale:
        assert not (vault / rel).exists()
    for rel in keep:
        assert (vault / rel).exists()
    assert store.clean_stale_temps() == []


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_notes_are_not_executable_and_honour_the_umask(
    env: tuple[Store, Path, Path], umask: int, mode: int
) -> None:
    store, vault, _ = env
    old = os.umask(umask)
    try:
        store.write_text("fresh/new.md", "text")
        store.write_text("fresh/made.md", "x", create_only=True)
    finally:
        os.umask(old)
    for name in ("new.md", "made.md"):
        assert os.stat(vault / "fresh" / name).st_mode & 0o7777 == mode


def test_a_guarded_write_sees_an_edit_whose_mtime_was_set_back(
        env: tuple[Store, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor's same-size save with the mtime restored, landing between the hash check and
    the rename: only the ctime moved, and the recheck reads the bytes again."""
    store, vault, _ = env
    path = vault / "a.md"
    expected = hashlib.sha256(path.read_bytes()).hexdigest()

    def editor_saves() -> None:  # the first file operation: the temporary written
        monkeypatch.setattr(store, "count_op", lambda: None)
        st = path.stat()
        with open(path, "r+b") as fh:
            fh.write(b"omega\n")  # "alpha\n": same size
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

    monkeypatch.setattr(store, "count_op", editor_saves)
    with pytest.raises(EditConflict):
        store.write_text("a.md", "gamma\n", expected_hash=expected)
    assert path.read_bytes() == b"omega\n"
