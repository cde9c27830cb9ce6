"""A point in time or an event before the learning log's base (its oldest events folded by
retention, vault/learning/compact.py) is a bad argument on every surface, never the
damaged-file error: JSON-RPC -32602 naming `as_of`, the CLI's `as_of:` / `until:` with exit 1
and no "move it aside" advice (which would throw away everything learned), and the message
gives the first kept event's exact time, which, passed back, is answered."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.harness.test_cli_learn import rmh
from tests.harness.test_server_e2e import Server, make_vault

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("log_bytes", [3_000, 6_000])
def test_before_the_base_is_a_bad_argument(tmp_path: Path, log_bytes: int) -> None:
    vault = make_vault(tmp_path / "vault")
    (vault / "rmh.toml").write_text(f"[learning]\nlog_bytes = {log_bytes}\n", "utf-8")
    server = Server(vault, tmp_path)
    server.call("session.start", {}, rid=0)
    for k in range(60):  # well past log_bytes: the oldest events are folded
        assert server.call("vault.search", {"query": f"hiking auth {k}", "k": 20},
                           rid=k + 1)["result"]["hits"]
    err = server.call("vault.search", {"query": "hiking", "as_of": 1000.0}, rid=99)["error"]
    assert err["code"] == -32602 and err["data"]["param"] == "as_of", err
    reason = err["data"]["reason"]
    assert "before the learning log's base" in reason and "damaged" not in reason
    server.call("session.end", rid=100)
    assert server.finish() == 0
    first = float(re.search(r"\(time ([0-9.e+]+)\)", reason).group(1))  # type: ignore[union-attr]
    for args, param in ((["search", "hiking", "--no-dense", "--as-of", "1000", "--json"], "as_of"),
                        (["replay", "--until", "1"], "until")):
        out = rmh(vault, *args)
        assert out.returncode == 1, out
        assert f"rmh: {param}: before the learning log's base" in out.stderr, out.stderr
        assert "move it aside" not in out.stderr and "to fix" not in out.stderr
        if "--json" in args:
            assert json.loads(out.stdout)["error"]["kind"] == "bad_argument"
    again = rmh(vault, "search", "hiking", "--no-dense", "--as-of", repr(first), "--no-learn")
    assert again.returncode == 0, again.stderr  # the exact time printed is the base's own
