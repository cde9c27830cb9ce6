"""A [sandbox] value of rmh.toml the sandbox refuses stops `rmh exec` as the configuration error
it is (kind `config_error`, as README gives a bad rmh.toml), naming the setting: it was kind
`command_failed`, as if the cell's command had failed (NEWUSER3, session 31). Since session 32
(CONFIG2) every command refuses it when it reads the configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import make_vault, rmh

pytestmark = pytest.mark.slow

BAD = {'[sandbox]\ntier = "nope"\n': ", not 'nope'",
       '[sandbox]\ntier = "BWRAP"\n': ", not 'BWRAP'",
       '[sandbox]\ntier = ""\n': ", not ''"}


@pytest.mark.parametrize("text", sorted(BAD))
def test_exec_names_a_refused_sandbox_setting_as_config_error(tmp_path: Path, text: str
                                                              ) -> None:
    root = make_vault(tmp_path)
    (root / "rmh.toml").write_text(text, encoding="utf-8")
    r = rmh("--vault", str(root), "exec", "--json", "-c", "1")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    error = json.loads(r.stdout)["error"]
    assert error["kind"] == "config_error", error
    # refused when the configuration is read (harness/config_schema.py), for every command
    assert error["message"].startswith("rmh.toml: [sandbox].tier must be one of auto, "), error
    assert error["message"].endswith(BAD[text]), error
