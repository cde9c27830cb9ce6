"""An LLM endpoint from the environment that is no URL (`OPENAI_BASE_URL=http://[::1`, a
typo a shell or another tool left): `status`, `ask` and `rmh serve`'s status say so instead
of a ValueError traceback (-32603 from the server); a key in a URL is still never shown."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from harness.llm_endpoint import shown_endpoint

ROOT = Path(__file__).resolve().parents[2]
NOT_URLS = ("http://[::1", "http://[KEY-123", "https://h]x/v1", "http://u:KEY@[::1/v1?k=KEY")


def test_an_endpoint_that_is_no_url_is_shown_as_such_without_its_text() -> None:
    for url in NOT_URLS:
        shown = shown_endpoint(url)
        assert shown.startswith("(not a URL: ") and "KEY" not in shown, (url, shown)
    assert shown_endpoint("https://u:KEY@h/v1?key=KEY") == "https://u:***@h/v1?***"


def test_status_and_ask_answer_with_such_an_endpoint(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update(PYTHONPATH=str(ROOT), OPENAI_BASE_URL="http://[::1", RMH_MODEL="some-model")

    def rmh(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "harness", *argv], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120, check=False,
                              stdin=subprocess.DEVNULL)

    root = tmp_path / "v"
    assert rmh("init", str(root), "--no-dense").returncode == 0
    r = rmh("--vault", str(root), "status")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "(not a URL: Invalid IPv6 URL)" in r.stdout
    r = rmh("--vault", str(root), "ask", "what broke", "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
