"""A name no vault path may be, through a real `rmh serve` (JSON-RPC, MCP tools, the REPL) and
the CLI: every vault function answers path_refused (-32002), never note_not_found (-32003) as
reads did before (`vault.list`'s folder: -32602 "no notes under", until session 26 also for a
folder that is a link out of the vault), and nothing outside the vault shows."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sandbox import probe
from tests.forks import run_cli
from tests.harness.test_server_e2e import CHILD_ENV, REPO, Server, make_vault

pytestmark = pytest.mark.slow
NAMES = ("../../etc/passwd", "/etc/passwd", "people/../../outside/secret", "..\\outside",
         "Lunch\x00.md", "out/secret")
SECRET = "KIWI-7731-OUTSIDE"


def _vault(tmp_path: Path) -> Path:
    root = make_vault(tmp_path / "vault")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"{SECRET}\n", encoding="utf-8")
    os.symlink(outside, root / "out")
    return root


def _calls(name: str) -> list[tuple[str, dict[str, Any]]]:
    return [("vault.read", {"note": name}), ("vault.links", {"note": name}),
            ("vault.backlinks", {"note": name}), ("vault.neighbors", {"note": name}),
            ("vault.write", {"note": name, "content": "x"}),
            ("vault.edit", {"note": name, "kind": "append", "text": "x"}),
            ("vault.move", {"note": name, "new": "moved.md"}),
            ("vault.move", {"note": "Lunch", "new": name}),
            ("vault.delete", {"note": name})]


def test_served_functions_refuse_a_path_out_of_the_vault(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    srv = Server(root, tmp_path)
    try:
        rid = 1
        for name in NAMES:
            for method, params in _calls(name):
                rid += 1
                out = srv.call(method, params, rid)
                assert out.get("error", {}).get("code") == -32002, (method, name, out)
                assert out["error"]["data"]["kind"] == "path_refused", out
            for folder in (name, name.rpartition("/")[0] or name):  # "out": a link out
                listed = srv.call("vault.list", {"folder": folder}, rid + 100_000)
                assert listed["error"]["data"]["kind"] == "path_refused", (folder, listed)
            tool = srv.call("tools/call", {"name": "read", "arguments": {"note": name}}, rid + 1)
            assert tool["result"]["isError"] is True
            assert tool["result"]["structuredContent"]["error"]["kind"] == "path_refused", tool
            rid += 2
        assert not [ln for ln in srv.lines if SECRET.encode() in ln]
        assert srv.call("vault.read", {"note": "Lunch"}, 999)["result"]["note"] == "Lunch.md"
    finally:
        assert srv.finish() == 0, srv.stderr_path.read_text()
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == [
        "Lunch.md", "Project Atlas.md", "out", "people"]


def test_the_cli_refuses_a_path_out_of_the_vault(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    for name in ("../../etc/passwd", "/etc/passwd", "out/secret", "..\\outside"):
        for args in (("read", name), ("links", name), ("delete", name)):
            done = run_cli(["--vault", str(root), *args, "--json"], env=env, cwd=REPO,
                           timeout=120)
            assert done.returncode == 1, (args, done.stdout, done.stderr)
            assert json.loads(done.stdout)["error"]["kind"] == "path_refused", (args, done.stdout)
            assert SECRET not in done.stdout + done.stderr


CELL = """
out = []
for name in NAMES:
    for call in (lambda: read(name), lambda: links(name), lambda: backlinks(name),
                 lambda: neighbors(name), lambda: write(name, "x"),
                 lambda: edit(name, "append", "x"), lambda: list_notes(folder=name)):
        try:
            call()
            out.append("answered")
        except Exception as exc:
            out.append(type(exc).__name__)
out
"""


@pytest.mark.skipif(not probe().available, reason="no sandbox tier runs here")
def test_the_repl_refuses_a_path_out_of_the_vault(tmp_path: Path) -> None:
    srv = Server(_vault(tmp_path), tmp_path)
    try:
        out = srv.call("repl.exec", {"code": f"NAMES = {list(NAMES)!r}\n{CELL}"}, 2)["result"]
        assert out["ok"] is True, out
        assert out["value"] == repr(["PathRefused"] * 7 * len(NAMES)), out
        assert SECRET not in json.dumps(out)
    finally:
        assert srv.finish() == 0, srv.stderr_path.read_text()
