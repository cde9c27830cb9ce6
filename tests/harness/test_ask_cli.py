"""`rmh ask` end to end through the real CLI entry point, offline and against an endpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main

from .llm_stub_endpoint import ChatEndpoint, Reply

KEY = "sk-test-CLI-SECRET-0b9e"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    assert main(["--vault", str(root), "init"]) == 0
    (root / "people").mkdir()
    (root / "orgs").mkdir()
    (root / "people" / "Alice.md").write_text("Alice works as an engineer at [[Acme]].\n")
    (root / "orgs" / "Acme.md").write_text("Acme is a robotics company. Dana founded it.\n")
    (root / "Tomato.md").write_text("Tomatoes need six hours of sun.\n")
    return root


def test_offline_ask_json(vault: Path, capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RMH_MODEL", "RMH_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    capsys.readouterr()
    code = main(["--vault", str(vault), "ask", "Who founded the company where Alice works?",
                 "-k", "1", "--no-dense", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["provider"]["provider"] == "extractive"
    assert doc["answer"].startswith("[extractive]") and "Dana founded it." in doc["answer"]
    assert doc["notes"] == ["people/Alice.md", "orgs/Acme.md"]
    first = doc["trace"][0]  # pass 1 searches 3 * k deep: Acme is a hit or a link of one
    assert "orgs/Acme.md" in first["hits"] + first["via_links"]


def test_ask_uses_the_configured_endpoint(vault: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with ChatEndpoint(lambda n, body: Reply(text="Dana founded Acme.")) as ep:
        monkeypatch.setenv("OPENAI_BASE_URL", ep.url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("RMH_MODEL", "stub-model")
        capsys.readouterr()
        code = main(["--vault", str(vault), "ask", "Who founded Acme?", "-k", "1", "--no-dense"])
        out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("Dana founded Acme.\n")
    assert "provider: openai stub-model" in out and "usage: 1 call," in out
    assert KEY not in out
    assert ep.bodies[0]["model"] == "stub-model"


def test_llm_failure_is_exit_code_one(vault: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    with ChatEndpoint(lambda n, body: Reply(status=400)) as ep:
        monkeypatch.setenv("OPENAI_BASE_URL", ep.url)
        monkeypatch.setenv("RMH_MODEL", "stub-model")
        code = main(["--vault", str(vault), "ask", "Who founded Acme?", "--no-dense"])
    assert code == 1
    assert "LlmUnavailable: HTTP 400" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [[""], ["  "], ["q", "-k", "-3"], ["q", "--budget", "0"],
                                  ["q", "--budget", "51"], ["q", "--budget", "x"]])
def test_bad_arguments_are_usage_errors(vault: Path, capsys: pytest.CaptureFixture[str],
                                        argv: list[str]) -> None:
    """Bounds of the ask operation (as JSON-RPC, MCP and the REPL have them): exit 2, one
    JSON document naming the argument, never a traceback."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(["--vault", str(vault), "ask", *argv, "--no-dense", "--json"])
    assert done.value.code == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["error"]["kind"] == "usage" and "argument" in doc["error"]["message"]
