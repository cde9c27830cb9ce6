"""Damaged files in `.rmh/`, through the real CLI: a derived file that does not read is
computed again (the same answer as before the damage), and what cannot be rebuilt is a typed
error on one line, never a traceback; no note changes."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import make_vault, rmh
from tests.vault.storage.test_saved_arrays import raise_zip_version, tear_npy_header

pytestmark = pytest.mark.slow


# what a client sends a server whose state cannot be opened: MCP's start, a tool, a method
FRAMES = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "search", "arguments": {"query": "billing"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "vault.read", "params": {"note": "Alice"}},
]


def notes_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))
            if ".rmh" not in p.parts}


def hits(root: Path) -> list[str]:
    r = rmh("--vault", str(root), "search", "who owns billing", "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    return [h["note"] for h in json.loads(r.stdout)["hits"]]


def test_derived_arrays_numpy_fails_on_oddly_are_rebuilt(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    want, notes = hits(root), notes_of(root)
    state = root / ".rmh"
    zips = sorted(state.glob("*.npz"))
    rows = sorted(state.glob("dense-rows-*.npy"))
    assert zips and rows
    for path in zips:
        raise_zip_version(path)
    for path in rows:
        tear_npy_header(path)
    assert hits(root) == want
    assert notes_of(root) == notes


def test_special_files_in_place_of_rmh_files_never_block_a_command(tmp_path: Path) -> None:
    """A FIFO (opened plainly, it waits for a writer forever) or a link to /dev/zero (never
    ends) where rmh keeps a derived file or an intent: each is ignored like a damaged file
    (the intent is reported unreadable), and the command answers as before."""
    root = make_vault(tmp_path)
    want, notes = hits(root), notes_of(root)
    state = root / ".rmh"
    derived = [p for p in sorted(state.iterdir())
               if p.is_file() and p.suffix in (".bin", ".npz", ".npy", ".json")]
    assert len(derived) >= 8, derived
    for i, path in enumerate(derived):
        path.unlink()
        if i % 2:
            path.symlink_to("/dev/zero")
        else:
            os.mkfifo(path)
    (state / "intents").mkdir()
    os.mkfifo(state / "intents" / "00000001.json")
    assert hits(root) == want
    r = rmh("--vault", str(root), "doctor", "--json")
    assert r.returncode == 0, r.stderr
    (intent,) = json.loads(r.stdout)["vault"]["intents"]["recovered"]
    assert intent["state"] == "unreadable"
    assert notes_of(root) == notes


@pytest.mark.parametrize(("name", "kind"), [("index.sqlite", "index_unusable"),
                                            ("learned.sqlite", "ledger_error")])
@pytest.mark.parametrize("odd", ["folder", "fifo"])
def test_an_sqlite_file_sqlite_cannot_open_is_a_typed_error(
        tmp_path: Path, name: str, kind: str, odd: str) -> None:
    """SQLite refuses to open a folder or a FIFO at all (not only to read it): that is the
    same typed error, on one line, as a damaged file, not a traceback."""
    root = make_vault(tmp_path)
    notes = notes_of(root)
    path = root / ".rmh" / name
    for extra in root.joinpath(".rmh").glob(f"{name}-*"):
        extra.unlink()
    path.unlink()
    if odd == "folder":
        path.mkdir()
    else:
        os.mkfifo(path)
    r = rmh("--vault", str(root), "read", "Alice", "--json")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert f"(to fix: `.rmh/{name}`" in r.stderr, r.stderr  # the line says what to do
    assert json.loads(r.stdout)["error"]["kind"] == kind
    assert notes_of(root) == notes


def _intent(op: str, **fields: object) -> str:
    return json.dumps({"version": 1, "op": op, **fields})


@pytest.mark.parametrize("body", [
    "[" * 100_000 + "]" * 100_000,  # nesting past the stack
    "[1, 2]", '"move"',  # JSON, but no object
    _intent("writes", writes=[{"path": 5, "old_hash": None, "new_text": "x"}]),
    _intent("writes", writes=[{"path": "new.md", "old_hash": None, "new_text": 5}]),
    _intent("writes", writes=[{"path": "new.md", "old_hash": None, "new_text": "\ud800"}]),
    _intent("move", old="Alice.md", new="Alicia.md", moved_hash="x",
            rewrites=[{"path": "Billing.md", "text": "a", "new_text": "\udc00"}]),
], ids=["deep", "list", "string", "path-int", "text-int", "surrogate", "move-surrogate"])
def test_an_intent_of_the_wrong_shape_is_unreadable_not_a_crash(
        tmp_path: Path, body: str) -> None:
    """An intent file (`.rmh/intents/`) that is JSON but not a plan rmh writes: every
    command still runs, the intent stays pending, reported unreadable, and no note moves."""
    root = make_vault(tmp_path)
    notes = notes_of(root)
    (root / ".rmh" / "intents").mkdir()
    (root / ".rmh" / "intents" / "00000001.json").write_text(body, encoding="utf-8",
                                                             errors="surrogatepass")
    r = rmh("--vault", str(root), "read", "Alice")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    r = rmh("--vault", str(root), "doctor", "--json")
    assert r.returncode == 0, r.stderr
    intents = json.loads(r.stdout)["vault"]["intents"]
    assert intents["pending"] == ["00000001.json"]
    assert [i["state"] for i in intents["recovered"]] == ["unreadable"]
    assert notes_of(root) == notes


@pytest.mark.parametrize(("name", "kind", "code"), [("index.sqlite", "index_unusable", -32010),
                                                    ("learned.sqlite", "ledger_error", -32012)])
def test_serve_answers_every_frame_when_its_state_cannot_be_opened(
        tmp_path: Path, name: str, kind: str, code: int) -> None:
    """`rmh serve` on a vault whose index or learning log cannot be opened used to print one
    line and exit: the client saw a server that disconnects, and no frame was answered. It
    now answers like a server with no vault (harness/unready.py), saying what to do."""
    root = make_vault(tmp_path)
    notes = notes_of(root)
    for extra in root.joinpath(".rmh").glob(f"{name}-*"):
        extra.unlink()
    (root / ".rmh" / name).write_bytes(b"not a database, only damage" * 100)
    frames = [*FRAMES, {"jsonrpc": "2.0", "id": 4, "method": "ping"}]
    r = rmh("--vault", str(root), "serve", "--no-dense",
            stdin="".join(json.dumps(f) + "\n" for f in frames))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    got = {a["id"]: a for a in map(json.loads, r.stdout.splitlines())}
    assert sorted(got) == [1, 2, 3, 4]
    assert "To fix" in got[1]["result"]["instructions"]
    assert got[2]["result"]["isError"] is True and kind in got[2]["result"]["content"][0]["text"]
    assert got[3]["error"]["code"] == code and got[3]["error"]["data"]["kind"] == kind
    assert name in got[3]["error"]["data"]["fix"]
    assert got[4]["result"] == {}
    assert notes_of(root) == notes


def other_apps_database(path: Path) -> bytes:
    """Another program's SQLite database at `path` (a table and a row); its bytes."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE places (id INTEGER, url TEXT)")
    conn.execute("INSERT INTO places VALUES (1, 'https://example.org')")
    conn.commit()
    conn.close()
    return path.read_bytes()


@pytest.mark.parametrize("name", ["index.sqlite", "learned.sqlite"])
def test_an_sqlite_file_linked_out_of_the_vault_is_refused_not_written(
        tmp_path: Path, name: str) -> None:
    """`.rmh/learned.sqlite` (or the index) a symlink to another program's database outside
    the vault (a vault copied or cloned with its links): rmh added its tables to that file.
    It is refused on one typed line, and the file outside keeps its bytes."""
    root = make_vault(tmp_path)
    notes = notes_of(root)
    other = tmp_path / "elsewhere.sqlite"
    before = other_apps_database(other)
    for path in root.joinpath(".rmh").glob(f"{name}*"):
        path.unlink()
    (root / ".rmh" / name).symlink_to(other)
    for command in (["read", "Alice", "--json"], ["write", "New", "--json"]):
        r = rmh("--vault", str(root), *command, stdin="new text\n")
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert json.loads(r.stdout)["error"]["kind"] == "path_refused", r.stdout
        assert f".rmh/{name}" in r.stderr, r.stderr
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.sqlite", "vault"]
    assert notes_of(root) == notes


def test_a_state_folder_linked_out_of_the_vault_gets_no_file(tmp_path: Path) -> None:
    """`.rmh` a symlink to an empty folder outside the vault: every command refused it, but
    only after the learning ledger was created there."""
    root = tmp_path / "vault"
    root.mkdir()
    (root / "Alice.md").write_text("Alice owns billing.\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".rmh").symlink_to(outside)
    for command in (["init"], ["search", "billing"], ["write", "New"]):
        r = rmh("--vault", str(root), *command, stdin="text\n")
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert "symlink leaves the vault" in r.stderr, r.stderr
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("name", ["index.sqlite", "learned.sqlite", ""])
def test_serve_answers_every_frame_when_its_state_is_linked_out(
        tmp_path: Path, name: str) -> None:
    """A state file (or `.rmh` itself: name "") linked out of the vault is refused: `rmh
    serve` then stays up and answers each frame with path_refused and what to do, as for a
    state file it cannot open, instead of a server that only exits ("disconnected")."""
    root = make_vault(tmp_path)
    state = root / ".rmh"
    if name:
        other = tmp_path / "elsewhere.sqlite"
        before = other_apps_database(other)
        for path in state.glob(f"{name}*"):
            path.unlink()
        (state / name).symlink_to(other)
    else:
        other = tmp_path / "elsewhere"
        state.rename(other)
        state.symlink_to(other)
    frames = FRAMES
    r = rmh("--vault", str(root), "serve", "--no-dense",
            stdin="".join(json.dumps(f) + "\n" for f in frames))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    got = {a["id"]: a for a in map(json.loads, r.stdout.splitlines())}
    assert sorted(got) == [1, 2, 3]
    assert "symlink" in got[1]["result"]["instructions"]
    assert got[2]["result"]["isError"] is True
    assert got[3]["error"]["data"]["kind"] == "path_refused"
    fix = got[3]["error"]["data"]["fix"]  # `.rmh` itself: StateRefused's own fix (HOUSE41)
    assert (f".rmh/{name}`" if name else "put the vault's own .rmh folder back") in fix, fix
    if name:
        assert other.read_bytes() == before


def test_a_symlink_at_a_temporary_s_name_is_never_written_through(tmp_path: Path) -> None:
    """rmh writes its files in `.rmh/` through a temporary named by the process id (`.NAME.
    PID.tmp`): symlinks planted at those names for the next pids (a vault folder another
    user or a sync tool can write) made the next commands truncate and write the file they
    named, outside the vault (stat-columns bytes in the victim). Temporaries are created
    new, never opened through a link."""
    root = make_vault(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    state = root / ".rmh"
    names = [p.name for p in state.iterdir() if p.is_file() and not p.name.endswith(
        ".sqlite") and p.name != "write.lock"] + ["forgotten.json", "intents/.00000001.json"]
    (state / "intents").mkdir(exist_ok=True)
    last = int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    for pid in range(last, last + 300):
        for name in names:
            folder, _, base = name.rpartition("/")
            with contextlib.suppress(FileExistsError):
                (state / folder / f".{base}.{pid}.tmp").symlink_to(victim)
    with contextlib.suppress(FileExistsError):
        (state / "intents" / ".00000001.json.tmp").symlink_to(victim)
    for command in (["write", "New"], ["edit", "Alice", "append", "--text", "more"],
                    ["move", "Billing", "Billing2"], ["forget", "--subject", "Carla"],
                    ["search", "billing"]):
        r = rmh("--vault", str(root), *command, stdin="new [[Alice]]\n")
        assert "Traceback" not in r.stderr, r.stderr
    assert victim.read_text() == "precious\n"
