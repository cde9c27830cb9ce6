"""The NDM seed's entity step with an LLM (`[extract] entities = "llm"`, harness/llm_entities.py):
`rmh ingest` as a real process, the real openai client against a real HTTP server on loopback
that answers deterministic entity lists; answers cached so that re-ingest (server down, or
up but never asked) writes the same bytes; malformed answers reported and the turn falls back;
the in-flight cap held."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.config import ConfigError, load
from harness.llm_entities import CACHE_FILE, Cache, MalformedAnswer, forget, parse_answer
from tests.forks import CLI_PRELOAD, ForkServer
from tests.harness.llm_stub_endpoint import ChatEndpoint, Reply
from tests.harness.test_cli_damaged_state import other_apps_database
from tests.harness.test_server_e2e import CHILD_ENV, REPO

pytestmark = pytest.mark.slow

TURNS = [  # the NDM seed's four turns, and one the model answers badly
    ("Alice", "I started a pottery class last week."),
    ("Bob", "Carla is my teacher at the pottery class."),
    ("Bob", "Carla praised the vase you made."),
    ("Alice", "Last month I sold my bike."),
]
ANSWERS = {
    TURNS[0][1]: '["pottery class"]',
    TURNS[1][1]: '```json\n["Carla", "my teacher", "pottery class"]\n```',
    TURNS[2][1]: '["Carla", "the vase", "Dave"]',  # Dave is not in the turn: dropped
    TURNS[3][1]: '["my bike"]',
}
BAD = "Bob said the kiln at the studio was broken."


def conversation(path: Path, turns: list[tuple[str, str]], cid: str = "ndm") -> Path:
    doc = {"format": "rmh-conversation/1", "id": cid, "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00",
         "turns": [{"speaker": s, "text": t} for s, t in turns]}]}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def script(n: int, body: dict[str, Any]) -> Reply:
    turn = body["messages"][-1]["content"]
    assert body["messages"][0]["role"] == "system" and "JSON array" in body["messages"][0][
        "content"]
    if turn == BAD:
        return Reply(text="Sure! The entities are: the kiln, the studio.")
    return Reply(text=ANSWERS.get(turn, "[]"))


def vault(root: Path, url: str, *, in_flight: int = 5, mode: str = "llm") -> Path:
    root.mkdir()
    (root / "rmh.toml").write_text(
        f'[llm]\nbase_url = "{url}"\nmodel = "stub-entities"\nin_flight = {in_flight}\n'
        'max_retries = 0\ntimeout_s = 30.0\n'
        f'[extract]\nentities = "{mode}"\n', "utf-8")
    return root


def with_cache(src: Path, root: Path, url: str) -> Path:
    """A new vault holding only `src`'s cache of LLM answers."""
    vault(root, url)
    (root / ".rmh").mkdir()
    shutil.copy(src / ".rmh" / CACHE_FILE, root / ".rmh" / CACHE_FILE)
    return root


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    return env


@pytest.fixture(scope="module")
def forks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkServer]:
    """`rmh ingest` processes forked from one Python that imported the CLI and loaded the
    parse model once (tests/forks.py: each run is still its own process)."""
    with ForkServer(CLI_PRELOAD + "vault.nlp_status(load=True)\n",
                    workdir=tmp_path_factory.mktemp("forks"), env=child_env(),
                    cwd=REPO) as server:
        yield server


def ingest(forks: ForkServer, root: Path, file: Path) -> subprocess.CompletedProcess[str]:
    return forks.run(["--vault", str(root), "ingest", str(file), "--json"], module="harness",
                     env=child_env(), cwd=REPO, timeout=600)


def notes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))
            if ".rmh" not in p.parts}


def test_answers_are_checked() -> None:
    text = "Carla praised the vase you made."
    assert parse_answer('["Carla", "the vase"]', text) == (("Carla", "the vase"), 0)
    assert parse_answer('```json\n["the  vase", "Carla", "carla "]\n```', text) == \
        (("the vase", "Carla", "carla"), 0)
    assert parse_answer('["Dave", "Carla", "", "x" ]', text) == (("Carla",), 3)
    assert parse_answer('["[[Carla]]", "Carla\\n|x"]', "[[Carla]] Carla |x") == ((), 2)
    assert parse_answer("[]", text) == ((), 0)
    for bad in ("Carla, the vase", '{"entities": ["Carla"]}', '["Carla", 3]', "",
                json.dumps(["Carla"] * 65)):
        with pytest.raises(MalformedAnswer):
            parse_answer(bad, text)


def test_config_names_the_extractor(tmp_path: Path, forks: ForkServer) -> None:
    (tmp_path / "rmh.toml").write_text('[extract]\nentities = "neural"\n', "utf-8")
    with pytest.raises(ConfigError, match="auto, rules, spacy, llm"):
        load(vault=tmp_path, env={})
    (tmp_path / "rmh.toml").write_text('[extract]\nentities = "llm"\n', "utf-8")
    assert load(vault=tmp_path, env={}).extract.entities == "llm"
    out = ingest(forks, tmp_path, conversation(tmp_path / "c.json", TURNS))  # no [llm] model
    assert out.returncode == 1 and "needs an [llm] model" in out.stderr
    assert not (tmp_path / ".rmh" / CACHE_FILE).exists()


def test_llm_entities_are_cached_and_reingest_is_byte_identical(tmp_path: Path,
                                                                forks: ForkServer) -> None:
    conv = conversation(tmp_path / "ndm.json", [*TURNS, ("Bob", BAD)])
    with ChatEndpoint(script) as ep:
        first = vault(tmp_path / "a", ep.url)
        out = ingest(forks, first, conv)
        assert out.returncode == 0, out.stderr
        asked = ep.count
    doc = json.loads(out.stdout)
    ext = doc["extraction"]
    assert ext["extractor"] == "llm" and ext["model"] == "stub-entities"
    assert (ext["turns"], ext["asked"], ext["answered"], ext["cached"]) == (5, 5, 4, 0)
    assert ext["dropped_items"] == 1 and asked == 5
    assert [f["turn"] for f in ext["fallback"]] == ["s1:5"]
    assert "malformed answer" in ext["fallback"][0]["reason"]
    assert "automatic extraction used" in out.stderr
    entity_notes = {p for p in notes(first) if "/entities/" in p}
    names = {Path(p).stem for p in entity_notes}
    assert "pottery class" in names and "carla" in names and "dave" not in names
    assert any("vase" in n for n in names) and any("bike" in n for n in names)
    before = notes(first)

    # the endpoint is gone: a second vault with the first's cache writes the same bytes
    second = with_cache(first, tmp_path / "b", ep.url)
    out = ingest(forks, second, conv)
    assert out.returncode == 0, out.stderr
    ext = json.loads(out.stdout)["extraction"]
    assert (ext["cached"], ext["asked"], ext["answered"]) == (4, 1, 0)
    assert notes(second) == before
    # and the first vault, ingested again: nothing to write
    again = json.loads(ingest(forks, first, conv).stdout)
    assert again["written"] == 0 and again["extraction"]["cached"] == 4

    # every answer cached: no request at all, though the endpoint is up
    with ChatEndpoint(script) as ep:
        third = with_cache(second, tmp_path / "c", ep.url)
        out = ingest(forks, third, conversation(tmp_path / "four.json", TURNS))
        assert out.returncode == 0, out.stderr
        assert ep.count == 0
    assert json.loads(out.stdout)["extraction"]["cached"] == 4


def test_the_in_flight_cap_holds(tmp_path: Path, forks: ForkServer) -> None:
    turns = [("Alice", f"Turn {i} mentions the Zephyr project and kiln {i}.") for i in range(8)]
    with ChatEndpoint(lambda n, body: Reply(text='["Zephyr project"]', delay_s=0.05),
                      hold_first=2, hold_timeout_s=30.0) as ep:
        root = vault(tmp_path / "v", ep.url, in_flight=2)
        out = ingest(forks, root, conversation(tmp_path / "c.json", turns))
        assert out.returncode == 0, out.stderr
        assert ep.count == 8 and ep.max_in_flight == 2
    assert json.loads(out.stdout)["extraction"]["answered"] == 8


def test_a_cache_linked_to_another_database_is_replaced_not_written(tmp_path: Path) -> None:
    """`.rmh/entities-llm.sqlite` a symlink to another program's database: `put` created its
    table there, `forget` deleted rows there, `get` read it. The cache is derived: the link
    is dropped (put, forget) or taken for no cache (get)."""
    other = tmp_path / "elsewhere.sqlite"
    before = other_apps_database(other)
    path = tmp_path / ".rmh" / CACHE_FILE
    path.parent.mkdir()
    path.symlink_to(other)
    assert forget(tmp_path, ["Quillon"]) == 0 and not path.is_symlink()
    path.symlink_to(other)
    assert Cache(tmp_path).get(["k"]) == {}  # not read through the link either
    Cache(tmp_path).put([("k", "m", "1", ("Quillon",))])
    assert other.read_bytes() == before and not path.is_symlink()
    assert Cache(tmp_path).get(["k"]) == {"k": ("Quillon",)}
