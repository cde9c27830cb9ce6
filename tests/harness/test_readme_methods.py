"""README's "Methods" examples are real exchanges: each request, sent in order to `rmh serve
--no-dense` on a fresh `rmh demo` vault, gets the answer README shows, up to the numbers that
vary by machine or run (scores, timings, the sandbox tier, counters of the index) and what
README elides with `…` (a string shown up to `…` must start so; a list shown up to `…` must
start with the items shown)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.commands.demo import write_demo_vault
from tests.harness.test_server_e2e import Server
from vault import nlp_status

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[2] / "README.md"
ELIDED = "…"
# values that differ by machine or run; their keys must still be there
VARYING = frozenset({"score", "value", "duration_s", "tier", "isolation_tier", "vault",
                     "generation", "embeddings", "edges", "auto_sync", "watcher",
                     "stat_loop"})
# README's exchanges are a plain install's (`pip install -e .`): entities and facts by the
# rules. With the `nlp` extra (CI installs it) the ingest example also writes a fact note, so
# from the ingest on, the counts that one more note changes are not compared
PARSED = VARYING | {"facts", "written", "written_notes", "search_hits", "notes", "links"}


def exchanges() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The (request, answer) pairs of README's Methods section, in order."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Methods"):text.index("### MCP")]
    pairs = []
    for block in re.findall(r"```json\n(.*?)```", section, re.S):
        lines = [line for line in block.splitlines() if line.strip()]
        assert len(lines) % 2 == 0, block
        pairs += [(json.loads(lines[i]), json.loads(lines[i + 1]))
                  for i in range(0, len(lines), 2)]
    return pairs


def differences(got: Any, shown: Any, path: str = "",
                varying: frozenset[str] = VARYING) -> list[str]:
    """Where `got` is not what README shows (module docstring); the values under a key in
    `varying` are not compared."""
    if shown == ELIDED:  # a whole value left out
        return []
    if isinstance(shown, str) and ELIDED in shown:
        head = shown[:shown.index(ELIDED)]
        ok = isinstance(got, str) and got.startswith(head)
        return [] if ok else [f"{path}: {got!r} does not start {head!r}"]
    if isinstance(shown, dict):
        if not isinstance(got, dict):
            return [f"{path}: {got!r} is no object"]
        out = [f"{path}: keys {sorted(got)} != {sorted(shown)}"] if set(got) != set(shown) else []
        for key in sorted(set(got) & set(shown)):
            if key not in varying:
                out += differences(got[key], shown[key], f"{path}.{key}", varying)
        return out
    if isinstance(shown, list):
        if not isinstance(got, list):
            return [f"{path}: {got!r} is no list"]
        if ELIDED in shown:
            shown = shown[:shown.index(ELIDED)]
            got = got[:len(shown)] if len(got) > len(shown) else got
        if len(got) != len(shown):
            return [f"{path}: {len(got)} items, README shows {len(shown)}"]
        return [d for i, (g, s) in enumerate(zip(got, shown, strict=True))
                for d in differences(g, s, f"{path}[{i}]", varying)]
    return [] if got == shown else [f"{path}: {got!r} != README's {shown!r}"]


def test_readme_methods_examples_are_what_serve_answers(tmp_path: Path) -> None:
    pairs = exchanges()
    assert len(pairs) >= 20, "README's Methods examples were not found"
    parsed = nlp_status()["extractor"] == "spacy"
    vault = tmp_path / "demo"
    write_demo_vault(vault)
    server = Server(vault, tmp_path)
    try:
        wrong = {}
        varying = VARYING
        for request, shown in pairs:
            if request["method"] == "vault.ingest" and parsed:
                varying = PARSED
            server.send_raw(json.dumps(request).encode() + b"\n")
            if found := differences(server.recv(), shown, varying=varying):
                wrong[f"{request['method']} (id {request['id']})"] = found
    finally:
        server.finish()
    assert not wrong, json.dumps(wrong, indent=1, ensure_ascii=False)


@pytest.mark.parametrize(("got", "shown", "wrong"), [
    ({"a": 1}, {"a": 1}, False), ({"a": 1}, {"a": 2}, True), ({"a": 1, "b": 2}, {"a": 1}, True),
    ({"score": 0.5}, {"score": 0.1}, False), ({"a": {"b": 1}}, {"a": "…"}, False),
    ("abcdef", "abc…", False), ("abx", "abc…", True),
    ([1, 2, 3], [1, "…"], False), ([2, 3], [1, "…"], True), ([1], [1, 2], True),
    ({"error": {"code": -32602}}, {"error": {"code": -32013}}, True),
])
def test_differences_sees_what_readme_would_get_wrong(got: Any, shown: Any, wrong: bool) -> None:
    assert bool(differences(got, shown)) is wrong
