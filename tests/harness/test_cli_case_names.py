"""Exact names win (issue 27 item 5): with `Case.md` and `case.md` both present (a
case-sensitive file system), each exact path addresses its own file through every command
and `rmh serve`; a name matching both only case-insensitively is `ambiguous_note` listing
them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import rmh
from tests.harness.test_server_e2e import Server

pytestmark = pytest.mark.slow


def case_vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Case.md").write_text("upper words\n", encoding="utf-8")
    (root / "case.md").write_text("lower words [[Other]]\n", encoding="utf-8")
    (root / "Other.md").write_text("other\n", encoding="utf-8")
    if len({p.name for p in root.iterdir()}) != 3:
        pytest.skip("case-insensitive file system: Case.md and case.md are one file")
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    return root


def test_exact_paths_through_the_cli(tmp_path: Path) -> None:
    root = case_vault(tmp_path)
    v = ("--vault", str(root))
    assert rmh(*v, "read", "Case.md").stdout == "upper words\n"
    assert rmh(*v, "read", "case.md").stdout == "lower words [[Other]]\n"
    assert rmh(*v, "read", "Case").stdout == "upper words\n"  # `.md` optional, still exact
    r = rmh(*v, "read", "CASE", "--json")
    assert r.returncode == 1
    err = json.loads(r.stdout)["error"]
    assert err["kind"] == "ambiguous_note" and err["candidates"] == ["Case.md", "case.md"]
    assert rmh(*v, "edit", "Case.md", "append", "--text", "more\n").returncode == 0
    assert (root / "Case.md").read_text() == "upper words\nmore\n"
    assert (root / "case.md").read_text() == "lower words [[Other]]\n"
    r = rmh(*v, "write", "case.md", "--overwrite", stdin="lower replaced [[Other]]\n")
    assert r.returncode == 0, r.stderr
    assert (root / "Case.md").read_text() == "upper words\nmore\n"
    links = json.loads(rmh(*v, "links", "case.md", "--json").stdout)["links"]
    assert [ln["resolved"] for ln in links] == ["Other.md"]
    assert json.loads(rmh(*v, "links", "Case.md", "--json").stdout)["links"] == []
    r = rmh(*v, "move", "case.md", "moved.md")
    assert r.returncode == 0, r.stderr
    assert (root / "moved.md").read_text() == "lower replaced [[Other]]\n"
    assert (root / "Case.md").read_text() == "upper words\nmore\n"
    assert rmh(*v, "delete", "Case.md").returncode == 0
    assert not (root / "Case.md").exists() and (root / "moved.md").exists()


def test_exact_paths_through_serve(tmp_path: Path) -> None:
    root = case_vault(tmp_path)
    server = Server(root, tmp_path)
    try:
        read = server.call("vault.read", {"note": "Case.md"}, rid=1)["result"]
        assert read["note"] == "Case.md" and read["text"] == "upper words\n"
        assert server.call("vault.read", {"note": "case"}, rid=2)["result"]["note"] == "case.md"
        err = server.call("vault.read", {"note": "CASE.md"}, rid=3)["error"]
        assert err["data"]["kind"] == "ambiguous_note"
        assert err["data"]["candidates"] == ["Case.md", "case.md"]
        out = server.call("vault.edit", {"note": "Case.md", "kind": "append",
                                         "text": "more\n"}, rid=4)
        assert out["result"]["note"] == "Case.md", out
        assert (root / "case.md").read_text() == "lower words [[Other]]\n"
        out = server.call("vault.write", {"note": "case.md", "content": "new lower\n",
                                          "overwrite": True}, rid=5)
        assert out["result"]["note"] == "case.md", out
        assert (root / "Case.md").read_text() == "upper words\nmore\n"
        links = server.call("vault.links", {"note": "Case.md"}, rid=6)["result"]
        assert links == [] or links.get("links", links) == [], links
        out = server.call("vault.move", {"note": "Case.md", "new": "Upper.md"}, rid=7)
        assert out["result"]["note"] == "Upper.md", out
        assert (root / "case.md").read_text() == "new lower\n"
        out = server.call("vault.delete", {"note": "case.md"}, rid=8)
        assert "result" in out, out
        assert not (root / "case.md").exists() and (root / "Upper.md").exists()
    finally:
        server.stdin.close()
        assert server.proc.wait(timeout=60) == 0
