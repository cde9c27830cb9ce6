"""A `.rmh/` SQLite file damaged in one page (session 29, ADVSTORE2). The files open cleanly
(the header page is whole) and fail only when the damaged page is read, at whatever statement
of whatever command reads it first: `status`, `search` and the MCP server printed a Python
traceback (`sqlite3.DatabaseError: database disk image is malformed`) for 13 of 16 pages of
`learned.sqlite` and 8 of 14 of `index.sqlite` (probe counts). Each is now the typed error
of the file (`ledger_error`, `index_unusable`) with its one-line fix, exit 1, and no note is
touched."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import rmh

pytestmark = pytest.mark.slow
PAGE = 4096
KINDS = {"learned.sqlite": "ledger_error", "index.sqlite": "index_unusable"}


def _notes(root: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.glob("*.md"))}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("damaged") / "v"
    root.mkdir()
    for i in range(8):
        (root / f"N{i}.md").write_text(f"# N{i}\nkiwi{i} [[T]] text {i}\n")
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    for query in ("kiwi1", "kiwi2"):  # learning events: the ledger's tables get pages
        assert rmh("--vault", str(root), "search", "--no-dense", query).returncode == 0
    return root


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_damaged_page_is_a_typed_error_never_a_traceback(
        made: Path, tmp_path: Path, name: str) -> None:
    pages = (made / ".rmh" / name).stat().st_size // PAGE
    assert pages >= 4
    failed = 0
    for page in range(1, pages):  # page 0 is the header: refused at open, tested elsewhere
        root = tmp_path / f"{name}-{page}"
        shutil.copytree(made, root)
        before = _notes(root)
        with open(root / ".rmh" / name, "r+b") as fh:
            fh.seek(page * PAGE)
            fh.write(b"\x5a" * PAGE)
        for command in (("status", "--no-dense"), ("search", "--no-dense", "kiwi3")):
            r = rmh("--vault", str(root), *command, "--json")
            assert "Traceback" not in r.stderr, (page, command, r.stderr[-400:])
            assert r.returncode in (0, 1), (page, command, r.stderr)
            if r.returncode == 1:
                failed += 1
                kind = json.loads(r.stdout)["error"]["kind"]
                assert kind == KINDS[name], (page, command, r.stdout)
                assert f".rmh/{name}" in r.stderr, r.stderr  # the file's fix
                assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert _notes(root) == before, page
    assert failed  # the damage was seen at all


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_server_opened_on_a_damaged_page_answers_the_files_kind(
        made: Path, tmp_path: Path, name: str) -> None:
    """`rmh serve` opening a file whose damage its first read meets: the server died with a
    traceback (the client saw "disconnected"); now every call answers the file's kind and fix
    (harness/unready.py), as for a file that fails to open."""
    root = tmp_path / "v"
    shutil.copytree(made, root)
    with open(root / ".rmh" / name, "r+b") as fh:
        fh.seek(PAGE)
        fh.write(b"\x5a" * PAGE)
    calls = [{"jsonrpc": "2.0", "id": i, "method": m, "params": p} for i, (m, p) in enumerate(
        [("vault.search", {"query": "kiwi3"}),
         ("vault.edit", {"note": "N1.md", "kind": "append", "text": "x\n"})], 1)]
    r = rmh("--vault", str(root), "serve", "--no-dense",
            stdin="".join(json.dumps(c) + "\n" for c in calls))
    assert "Traceback" not in r.stderr, r.stderr[-400:]
    answers = [json.loads(line) for line in r.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2], r.stdout
    for a in answers:
        assert a["error"]["data"]["kind"] == KINDS[name], a
        assert f".rmh/{name}" in a["error"]["message"], a
    assert "x\n" not in (root / "N1.md").read_text()
