"""rmh.toml saved with a UTF-8 byte order mark (Windows Notepad writes one) is read as without it.

tomllib refuses a BOM: every command, `rmh serve` included, failed with "cannot read
.../rmh.toml: Invalid statement (at line 1, column 1)" for a file that looks right in every
editor (API8, session 34). Generated configurations (valid lines drawn per seed, LF or CRLF)
load the same with and without the mark; a real `rmh status` and `rmh serve` start on one;
a key set twice after a mark is still named with its lines.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from harness.config import ConfigError, load

from .test_server_e2e import Server, make_vault

REPO = Path(__file__).resolve().parents[2]
BOM = "\ufeff"
LINES = {
    "search": ["k = 7", "rrf_k = 50", "calibrate = false", "weights = { bm25 = 0.5 }",
               "prior_scale = 2.5"],
    "llm": ['model = "m-1"', "timeout_s = 12.5", "in_flight = 3", "temperature = 0.0"],
    "sandbox": ["deadline_s = 9.0", 'tier = "auto"', "notes_per_exec = 10"],
    "hooks": ["prompt_words = 40", "daemon = false"],
    "extract": ['entities = "rules"'],
}


def config_text(seed: int) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    for section in rng.sample(sorted(LINES), rng.randint(1, len(LINES))):
        parts.append(f"# {section} settings\n[{section}]")
        parts += rng.sample(LINES[section], rng.randint(1, len(LINES[section])))
    return "\n".join(parts) + "\n"


@pytest.mark.parametrize("seed", range(8))
def test_a_byte_order_mark_changes_nothing(tmp_path: Path, seed: int) -> None:
    text = config_text(seed)
    if seed % 2:
        text = text.replace("\n", "\r\n")
    plain, marked = tmp_path / "plain.toml", tmp_path / "marked.toml"
    plain.write_bytes(text.encode("utf-8"))
    marked.write_bytes((BOM + text).encode("utf-8"))
    assert load(vault=tmp_path, env={}, config_file=marked) == load(
        vault=tmp_path, env={}, config_file=plain)


def test_a_key_twice_after_a_mark_is_named(tmp_path: Path) -> None:
    path = tmp_path / "rmh.toml"
    path.write_bytes((BOM + "[search]\nk = 5\nk = 7\n").encode("utf-8"))
    with pytest.raises(ConfigError) as got:
        load(vault=tmp_path, env={}, config_file=path)
    assert str(got.value).startswith("rmh.toml: [search].k is set twice (lines 2 and 3: 5, then 7)")


def test_rmh_status_and_serve_start_on_a_marked_rmh_toml(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v")
    (vault / "rmh.toml").write_bytes((BOM + config_text(3)).encode("utf-8"))
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, "-m", "harness", "--vault", str(vault), "status",
                           "--json"], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "error" not in json.loads(done.stdout)
    server = Server(vault, tmp_path)
    try:
        answer = server.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                            "clientInfo": {"name": "t", "version": "0"}})
        assert answer["result"]["protocolVersion"] == "2025-06-18", answer
        assert server.finish() == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


@pytest.mark.parametrize(("data", "said"), [
    ("[search]\nk = 5\n".encode("utf-16"), "it is UTF-16 text"),
    (b"\xfe\xff" + "[search]\nk = 5\n".encode("utf-16-be"), "it is UTF-16 text"),
    (b"[search]\n# caf\xe9\nk = 5\n", "it is not UTF-8 text (byte 0xe9 at line 2, column 6)"),
])
def test_a_file_that_is_not_utf8_says_so_and_where(tmp_path: Path, data: bytes,
                                                   said: str) -> None:
    """It was Python's codec message ("'utf-8' codec can't decode byte 0xff in position 0"),
    naming no line (API8)."""
    path = tmp_path / "rmh.toml"
    path.write_bytes(data)
    with pytest.raises(ConfigError) as got:
        load(vault=tmp_path, env={}, config_file=path)
    assert f": {said}" in str(got.value) and "save it as UTF-8" in str(got.value), got.value
