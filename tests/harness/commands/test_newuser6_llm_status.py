"""NEWUSER6 (session 35): what `rmh status` says of the LLM a new user configured, through the
real `rmh` command line and the JSON-RPC `status` of a real `rmh serve`.

- `[llm] model = "m"` with no `base_url` and no key (a user who forgot the local server's
  URL): status said `llm openai m at https://api.openai.com/v1` with an empty reason, and the
  first `rlm_call` failed at once with "api.openai.com needs an API key". Status now names it
  before any call, as it does for a base URL that is no http(s) URL.
- a pasted `.../v1/chat/completions` is sent to `.../v1/chat/completions` (read as `.../v1`,
  README), but status showed the pasted URL as the endpoint; it now shows `.../v1`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[3]
NO_KEY = "api.openai.com needs an API key"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RMH_VAULT", "RMH_CONFIG", "OPENAI_API_KEY", "OPENAI_BASE_URL",
                        "RMH_MODEL")}
    env.update(PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(home))
    return env


def _vault(tmp_path: Path, llm: str) -> Path:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "Kestrel.md").write_text("# Kestrel\nHovers over verges.\n", encoding="utf-8")
    (vault / "rmh.toml").write_text("[llm]\n" + llm, encoding="utf-8")
    init = run_cli(("--vault", str(vault), "init", "--no-dense"), env=_env(tmp_path), cwd=ROOT,
                   timeout=120)
    assert init.returncode == 0, init.stderr
    return vault


def _status(vault: Path, home: Path) -> tuple[str, dict[str, str]]:
    args = ("--vault", str(vault), "status", "--no-dense")
    text = run_cli(args, env=_env(home), cwd=ROOT, timeout=120)
    doc = run_cli((*args, "--json"), env=_env(home), cwd=ROOT, timeout=120)
    assert text.returncode == 0 and doc.returncode == 0, (text.stderr, doc.stderr)
    line = next(ln for ln in text.stdout.splitlines() if ln.startswith("llm"))
    return line, json.loads(doc.stdout)["llm"]


def _rpc_status(vault: Path, home: Path) -> dict[str, str]:
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "status", "params": {}})
    done = subprocess.run([sys.executable, "-m", "harness", "--vault", str(vault), "serve",
                           "--no-dense"], input=request + "\n", capture_output=True,
                          text=True, env=_env(home), cwd=ROOT, timeout=120)
    answer = json.loads(done.stdout.splitlines()[0])
    assert "result" in answer, answer
    llm: dict[str, str] = answer["result"]["llm"]
    return llm


def test_status_says_api_openai_com_needs_a_key(tmp_path: Path) -> None:
    vault = _vault(tmp_path, 'model = "m"\n')
    line, llm = _status(vault, tmp_path)
    assert NO_KEY in line, line
    assert NO_KEY in llm["reason"] and llm["endpoint"] == "https://api.openai.com/v1"
    assert NO_KEY in _rpc_status(vault, tmp_path)["reason"]
    keyed = _env(tmp_path)
    keyed["OPENAI_API_KEY"] = "sk-test"
    doc = run_cli(("--vault", str(vault), "status", "--no-dense", "--json"), env=keyed,
                  cwd=ROOT, timeout=120)
    assert json.loads(doc.stdout)["llm"]["reason"] == "", doc.stderr  # with a key: no reason


def test_status_shows_the_base_url_a_pasted_endpoint_is_read_as(tmp_path: Path) -> None:
    vault = _vault(tmp_path, 'base_url = "http://127.0.0.1:9/v1/chat/completions"\n'
                             'model = "m"\n')
    line, llm = _status(vault, tmp_path)
    assert line.endswith("at http://127.0.0.1:9/v1"), line
    assert llm == {"provider": "openai", "model": "m", "endpoint": "http://127.0.0.1:9/v1",
                   "reason": ""}
    assert _rpc_status(vault, tmp_path)["endpoint"] == "http://127.0.0.1:9/v1"
