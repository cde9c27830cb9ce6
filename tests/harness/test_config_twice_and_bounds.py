"""rmh.toml (API7): a key or table given twice is refused in one line naming `[section].key`
and both lines (tomllib said "Cannot overwrite a value (at end of document)"); the counts a
user reads as small (LLM calls at once, an answer's tokens, a prompt's characters, notes
reranked, words a hook injects) have upper bounds, refused in one line naming the key, the
range and the value (each loaded up to 2^53 before)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.config import ConfigError, load

REPO = Path(__file__).resolve().parents[2]

TWICE = [
    ("[search]\nk = 5\nk = 7\n", "[search].k is set twice (lines 2 and 3: 5, then 7)"),
    ("[search]\nk = 5\n\"k\" = 7\n", "[search].k is set twice (lines 2 and 3"),
    ("[llm]\nmodel = \"a\"\ntimeout_s = 3.0\nmodel = \"b\"\n",
     "[llm].model is set twice (lines 2 and 4: 'a', then 'b')"),
    ("[search]\nweights.bm25 = 1\nweights.bm25 = 2\n", "[search].weights.bm25 is set twice"),
    ("[search]\nweights = {bm25 = 1, bm25 = 2}\n", "[search].weights.bm25 is set twice (line 2)"),
    ("search.k = 5\n[search]\nk = 7\n", "[search].k is set twice (lines 1 and 3"),
    ("[search]\nweights = { bm25 = 1 }\n[search.weights]\nbm25 = 2\n",
     "[search].weights.bm25 is set twice (lines 2 and 4"),
    ("[hooks]\nk = 3\n[search]\nk = 4\n[hooks]\nk = 5\n",
     "[hooks] is declared twice (lines 1 and 5)"),
    ("[llm]\nmodel = \"\"\"a\nmodel = 1\n\"\"\"\nmodel = \"b\"\n",  # not the string's line
     "[llm].model is set twice (lines 2 and 5: a value over several lines, then 'b')"),
]


@pytest.mark.parametrize(("text", "said"), TWICE)
def test_a_key_set_twice_is_one_line_naming_it(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "rmh.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as got:
        load(vault=tmp_path, env={}, config_file=path)
    message = str(got.value)
    assert message.startswith(f"rmh.toml: {said}") and "\n" not in message, message


# (section, key, the highest value allowed, what the refusal says is allowed)
BOUNDS = [
    ("llm", "in_flight", 256, "between 1 and 256"),
    ("llm", "max_tokens", 1_000_000, "between 1 and 1000000"),
    ("llm", "slice_max_chars", 100_000_000, "between 1 and 100000000"),
    ("rerank", "top_n", 1000, "between 1 and 1000"),
    ("hooks", "prompt_words", 100_000, "between 0 and 100000"),
    ("hooks", "start_words", 100_000, "between 0 and 100000"),
]


@pytest.mark.parametrize(("section", "key", "high", "allowed"), BOUNDS)
def test_a_count_past_what_it_can_mean_is_refused_naming_key_range_and_value(
        tmp_path: Path, section: str, key: str, high: int, allowed: str) -> None:
    path = tmp_path / "rmh.toml"
    for value in (high + 1, 2**53):
        path.write_text(f"[{section}]\n{key} = {value}\n", encoding="utf-8")
        with pytest.raises(ConfigError) as got:
            load(vault=tmp_path, env={}, config_file=path)
        assert str(got.value) == f"rmh.toml: [{section}].{key} must be {allowed}, not {value}"
    path.write_text(f"[{section}]\n{key} = {high}\n", encoding="utf-8")
    assert getattr(getattr(load(vault=tmp_path, env={}, config_file=path), section), key) == high


def test_rmh_status_says_which_key_is_twice(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    (vault / ".rmh").mkdir(parents=True)
    (vault / "rmh.toml").write_text("[search]\nk = 5\nrrf_k = 60\nk = 7\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env["PYTHONPATH"] = str(REPO)
    for json_flag in ([], ["--json"]):
        done = subprocess.run([sys.executable, "-m", "harness", "--vault", str(vault),
                               "status", *json_flag], capture_output=True, text=True, env=env,
                              cwd=REPO, timeout=120, check=False)
        assert done.returncode == 1
        said = "rmh.toml: [search].k is set twice (lines 2 and 4: 5, then 7); set it once"
        if json_flag:
            assert json.loads(done.stdout)["error"]["message"] == said, done.stdout
        else:
            assert done.stderr.strip() == f"rmh: {said}", done.stderr
