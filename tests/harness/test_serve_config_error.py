"""`rmh serve` on a vault whose rmh.toml is wrong answers every frame with the setting to
correct (PLUG5, session 31): before, its fix said "run `rmh init VAULT`", which does nothing
for a vault that is there (init refuses an existing vault or leaves rmh.toml as it is)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness.test_cli_damaged_state import FRAMES
from tests.harness.test_cli_notes import make_vault, rmh

pytestmark = pytest.mark.slow

BAD = ['[llm]\nin_flight = 0\n', '[llm]\ntimeout_s = "60"\n', '[llm]\nmodel = 5\n',
       "[rerank]\ntimeout_s = 0\n", "[search]\nk = 0\n", "[llm]\nno_such_key = 1\n",
       "llm = 5\n"]


@pytest.mark.parametrize("text", BAD)
def test_serve_names_the_setting_to_correct_not_rmh_init(tmp_path: Path, text: str) -> None:
    root = make_vault(tmp_path)
    (root / "rmh.toml").write_text(text, encoding="utf-8")
    r = rmh("--vault", str(root), "serve", "--no-dense",
            stdin="".join(json.dumps(f) + "\n" for f in FRAMES))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    got = {a["id"]: a for a in map(json.loads, r.stdout.splitlines())}
    data = got[3]["error"]["data"]
    assert data["reason"].startswith("rmh.toml: "), data
    assert "rmh init" not in data["fix"] and "rmh.toml" in data["fix"], data["fix"]
    assert "rmh init" not in got[1]["result"]["instructions"]
    assert got[2]["result"]["isError"] is True
