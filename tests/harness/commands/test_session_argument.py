"""`--session ID` and `rmh end-session ID` take the id under session.start's rule: an id
whose argv bytes are not UTF-8 (Python hands them over as lone surrogates) reached the
learning log, whose insert raised a raw UnicodeEncodeError traceback (exit 1)
(docs/measurements/session27/learnadv_hostile_ids.py.txt)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from vault import LEDGER_FILE

from ..test_server_e2e import make_vault

REPO = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.slow

BAD = [b"\xff", b"a\xed\xa0\x80", b"\xc3("]
COMMANDS = [[b"search", b"auth rewrite", b"--no-dense", b"--session"],
            [b"read", b"Project Atlas", b"--session"], [b"end-session"]]


@pytest.mark.parametrize("session", BAD)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0].decode())
def test_a_session_id_that_is_not_utf8_is_a_usage_error(tmp_path: Path, session: bytes,
                                                         command: list[bytes]) -> None:
    vault = make_vault(tmp_path / "vault")
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run([sys.executable.encode(), b"-m", b"harness", b"--vault",
                          os.fsencode(vault), *command, session],
                         capture_output=True, cwd=REPO, env=env, timeout=120)
    err = out.stderr.decode("utf-8", "replace")
    assert out.returncode == 2, err
    assert "session" in err and "not UTF-8" in err and "Traceback" not in err
    ledger = vault / ".rmh" / LEDGER_FILE
    if ledger.exists():
        db = sqlite3.connect(ledger)
        try:
            assert db.execute("SELECT count(*) FROM events").fetchone()[0] == 0
        finally:
            db.close()
