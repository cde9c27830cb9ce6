"""rlm_call, rlm_batch, ask and rlm_usage inside the real sandboxed REPL (bwrap/seccomp tier)."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness.config import LlmSection, load
from harness.llm import Broker
from harness.methods import Harness, Repl
from harness.rlm_tools import RlmTools
from harness.tools import build_functions, vault_functions
from harness.vault_ops import VaultCalls, VaultThread
from sandbox import HostFunction, Sandbox, SandboxConfig
from vault import Vault

from .llm_stub_endpoint import ChatEndpoint, Reply

KEY = "sk-test-REPL-SECRET-77d2e1"
NOTES = {
    "people/Alice.md": "---\ndate: 2024-03-01\n---\nAlice moved to Berlin in March 2021.\n",
    "people/Bob.md": "Bob is Alice's brother. Bob plays the cello.\n",
}


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[tuple[Vault, VaultCalls]]:
    v = Vault.init(tmp_path / "vault")
    for path, text in NOTES.items():
        v.write(path, text)
    thread = VaultThread()
    yield v, VaultCalls(v, thread, lambda: None)
    thread.call(v.close)
    thread.close()


@contextmanager
def rlm_repl(ops: VaultCalls, section: LlmSection) -> Iterator[tuple[RlmTools, Sandbox]]:
    """A broker from `section`, its RlmTools and a sandbox with the vault and LLM functions."""
    with Broker.from_config(section) as broker:
        rlm = RlmTools(broker)
        # lint off: it is a courtesy, not a boundary, and these cells poke at os on purpose
        functions = build_functions(vault_functions(ops), rlm.functions(ops))
        sb = Sandbox(SandboxConfig(lint=False), functions)
        try:
            yield rlm, sb
        finally:
            sb.close()


def run(sb: Sandbox, code: str) -> Any:
    """Exec a cell; its last expression's value (the REPL returns its repr)."""
    result = sb.exec(code)
    assert result.ok, result.error
    assert result.value is not None
    return ast.literal_eval(result.value)


def test_rlm_functions_offline(vault: tuple[Vault, VaultCalls]) -> None:
    _, ops = vault
    with rlm_repl(ops, LlmSection()) as (rlm, sb):
        rlm.begin_exec()
        value = run(sb, """
hits = search("Alice Berlin", k=2)
out = {
  "text": rlm_call("Alice moved to Berlin in March 2021. Bob plays cello.", "When did Alice move?"),
  "note": rlm_call("Bob", "What does Bob play?"),
  "hits": rlm_call(hits, "Where did Alice move?", max_words=4),
  "batch": rlm_batch([["Bob plays the cello.", "What does Bob play?"],
                      {"slice": "people/Alice.md", "question": "Where did Alice move?"}]),
  "usage": rlm_usage()["exec"],
}
out
""")
    assert value["text"] == "[extractive] Alice moved to Berlin in March 2021."
    assert value["note"] == "[extractive] Bob plays the cello."
    assert value["hits"] == "[extractive] Alice moved to Berlin …"
    assert value["batch"] == ["[extractive] Bob plays the cello.",
                              "[extractive] Alice moved to Berlin in March 2021."]
    assert value["usage"]["calls"] == 5 and value["usage"]["provider"] == "extractive"


def test_errors_reach_the_repl_as_typed_exceptions(vault: tuple[Vault, VaultCalls]) -> None:
    _, ops = vault
    with rlm_repl(ops, LlmSection(slice_max_chars=500)) as (rlm, sb):
        rlm.begin_exec()
        value = run(sb, """
caught = []
for i in range(16):
    try:
        rlm_call("Alice moved to Berlin.", f"Where did Alice move? ({i})")
    except Exception as exc:
        caught.append([type(exc).__name__, str(exc)])
for bad in (lambda: rlm_call("x" * 501, "q"), lambda: rlm_call(42, "q"),
            lambda: rlm_call({"note": "Nobody"}, "q"), lambda: rlm_batch("nope")):
    try:
        bad()
    except Exception as exc:
        caught.append([type(exc).__name__, str(exc)])
caught
""")
        rlm.begin_exec()  # the next exec gets a fresh budget
        again = run(sb, 'rlm_call("Alice moved to Berlin.", "Where did Alice move? (16)")')
    names = [name for name, _ in value]
    assert names == ["RlmBudgetExceeded", "RlmSliceTooLarge", "TypeError", "NoteNotFound",
                     "TypeError"]
    assert "15 sub-calls per exec" in value[0][1]
    assert again.startswith("[extractive]")


def test_key_never_reaches_the_worker(
    vault: tuple[Vault, VaultCalls], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _, ops = vault
    with ChatEndpoint() as ep:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)  # in the supervisor's own environment too
        monkeypatch.setenv("OPENAI_BASE_URL", ep.url)
        monkeypatch.setenv("RMH_MODEL", "stub-model")
        section = load(vault=tmp_path / "vault").llm
        assert section.api_key == KEY
        with rlm_repl(ops, section) as (rlm, sb):
            rlm.begin_exec()
            result = sb.exec("""
import os, sys, gc
marker = "s" + "k-"  # the key's prefix, spelled so the cell's own text does not contain it
strings = set()
for obj in gc.get_objects():  # every container the worker's heap tracks
    if isinstance(obj, dict):
        obj = list(obj.values())
    for item in obj if isinstance(obj, (list, tuple, set, frozenset)) else ():
        if isinstance(item, str):
            strings.add(item)
for fn in list(globals().values()):
    strings.add(str(getattr(fn, "__doc__", "")))
proc = []
for path in ("/proc/self/environ", "/proc/1/environ", "/proc/self/cmdline"):
    try:
        proc.append(open(path, "rb").read().decode("latin-1"))
    except OSError as exc:
        proc.append(type(exc).__name__)
out = {
    "env": dict(os.environ), "argv": sys.argv, "proc": proc,
    "suspects": sorted(s for s in strings if marker in s and s is not marker),
    "answer": rlm_call("Alice moved to Berlin.", "Where did Alice move?"),
    "usage": rlm_usage(),
}
print(repr(out))
out
""")
        assert result.ok, result.error
        value = ast.literal_eval(result.value or "")
        assert value["answer"] == "answer to Where did Alice move?"  # the call went through
        assert value["env"] == {} and value["suspects"] == []
        assert KEY not in (result.value or "") + result.stdout + result.stderr
        assert ep.headers[0]["authorization"] == f"Bearer {KEY}"  # only the trusted side sent it


@pytest.mark.parametrize("where", ["alone", "in prose", "twice", "split by newline"])
def test_an_endpoint_quoting_the_key_does_not_hand_it_to_the_worker(
    vault: tuple[Vault, VaultCalls], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    where: str,
) -> None:
    """A proxy or echo server that quotes the request's Authorization header in its answer:
    main passed the answer on as it was, so rlm_call, rlm_batch and ask put the key in the
    REPL (its errors were already scrubbed)."""
    _, ops = vault
    text = {"alone": KEY, "in prose": f"your header was: Bearer {KEY}, thanks",
            "twice": f"{KEY}{KEY}", "split by newline": f"{KEY[:9]}\n{KEY[9:]} and {KEY}"}[where]
    with ChatEndpoint(lambda n, body: Reply(text=text)) as ep:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", ep.url)
        monkeypatch.setenv("RMH_MODEL", "stub-model")
        section = load(vault=tmp_path / "vault").llm
        with rlm_repl(ops, section) as (rlm, sb):
            rlm.begin_exec()
            result = sb.exec("(rlm_call('Alice moved to Berlin.', 'Where?'), "
                             "rlm_batch([('Bob plays the cello.', 'What?')]), "
                             "ask('Where did Alice move?', budget=2)['answer'])")
        assert result.ok, result.error
        seen = (result.value or "") + result.stdout + result.stderr
        assert KEY not in seen, seen
        assert "***" in seen  # the answer itself still arrives
        assert ep.headers[0]["authorization"] == f"Bearer {KEY}"


def test_each_server_exec_gets_its_own_budget(vault: tuple[Vault, VaultCalls]) -> None:
    v, _ = vault
    cfg = load(vault=v.root)
    broker = Broker.from_config(LlmSection(calls_per_exec=3))
    rlm = RlmTools(broker)

    def factory(functions: Mapping[str, HostFunction]) -> Repl:
        return Sandbox(SandboxConfig(lint=False), functions)

    cell = """
got = []
for i in range(4):
    try:
        got.append(rlm_call("Bob plays the cello.", f"What does Bob play {i}?")[:12])
    except Exception as exc:
        got.append(type(exc).__name__)
got
"""

    async def main() -> list[Any]:
        h = Harness(cfg, v, repl_factory=factory, extra_functions=(rlm.functions,))
        try:
            return [await h.exec(cell), await h.exec(cell.replace("{i}", "{i}!"))]
        finally:
            await h.shutdown()

    try:
        first, second = anyio.run(main)
    finally:
        broker.close()
    expected = ["[extractive]"] * 3 + ["RlmBudgetExceeded"]
    assert ast.literal_eval(first["value"]) == expected
    assert ast.literal_eval(second["value"]) == expected
    assert broker.totals()["execs"] == 2


def test_a_budget_belongs_to_its_own_tools() -> None:
    with Broker.from_config(LlmSection()) as one, Broker.from_config(LlmSection()) as two:
        a, b = RlmTools(one), RlmTools(two)
        mine = a.begin_exec()
        assert a.budget() is mine
        assert b.budget() is not mine and b.budget() is b.budget()  # not another connection's


def test_ask_in_the_repl(vault: tuple[Vault, VaultCalls]) -> None:
    _, ops = vault
    with rlm_repl(ops, LlmSection()) as (_, sb):
        value = run(sb, 'ask("Which instrument, the cello or piano, does Bob play?", k=1)')
    assert value["notes"][0] == "people/Bob.md"
    assert value["answer"] == "[extractive] Bob plays the cello."
    first_pass = [t for t in value["trace"] if t["pass"] == 1]  # question + feedback round
    assert value["resolved"] is False and "piano" in first_pass[-1]["missing_terms"]
    assert value["stop"] in {"no new notes", "no sub-questions left"}
    assert value["trace"][0]["query"] == "Which instrument, the cello or piano, does Bob play?"
