"""`rmh status`, `rmh list`, `rmh init PATH` and the CLI's edges (usage errors as JSON, unknown
options, a --vault that does not exist) as a user runs them: real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_cli_notes import make_vault, rmh

pytestmark = pytest.mark.slow


def test_status_on_one_screen_and_as_json(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    assert rmh("--vault", str(root), "search", "billing", "--no-dense").returncode == 0
    doc = json.loads(rmh("--vault", str(root), "status", "--json", "--no-dense").stdout)
    assert doc["index"]["notes"] == 3 and doc["index"]["generation"] >= 1
    assert doc["embeddings_pending"] is None  # --no-dense: not counted
    assert doc["learning"]["events"]["search"] >= 1 and doc["learning"]["replay_matches"]
    assert "sandbox" in doc and doc["changes"]
    shown = rmh("--vault", str(root), "status", "--no-dense")
    assert shown.returncode == 0 and "notes       3" in shown.stdout
    dense = json.loads(rmh("--vault", str(root), "status", "--json").stdout)
    assert isinstance(dense["embeddings_pending"], int)
    (root / "Fresh.md").write_text("A brand new note about a lighthouse keeper.\n", "utf-8")
    after = json.loads(rmh("--vault", str(root), "status", "--json").stdout)
    assert after["embeddings_pending"] >= 1 and after["index"]["notes"] == 4


def test_list_pages_cover_every_item_once(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    (root / "Box").mkdir()
    for i in range(7):  # files written outside rmh: the listing syncs them (one process less each)
        (root / "Box" / f"N{i}.md").write_text(f"n{i} #box\n", encoding="utf-8")
    seen: list[str] = []
    cursor: str | None = None
    while True:
        extra = ["--cursor", cursor] if cursor else []
        page = json.loads(rmh("--vault", str(root), "list", "--folder", "Box", "--limit", "3",
                              "--json", *extra).stdout)
        seen += [item["note"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"Box/N{i}.md" for i in range(7)]
    folders = json.loads(rmh("--vault", str(root), "list", "folders", "--json").stdout)
    assert folders["items"] == [{"folder": "Box", "notes": 7}, {"folder": "Notes", "notes": 1}]
    tags = json.loads(rmh("--vault", str(root), "list", "tags", "--json").stdout)
    assert tags["items"][0] == {"tag": "box", "notes": 7}
    tagged = json.loads(rmh("--vault", str(root), "list", "--tag", "service", "--json").stdout)
    assert tagged["items"] == [{"note": "Billing.md"}]
    recent = rmh("--vault", str(root), "list", "recent", "--limit", "1")
    assert recent.returncode == 0 and "next page: --cursor recent:@" in recent.stdout  # keyset
    bad = rmh("--vault", str(root), "list", "--cursor", "tags:0", "--json")
    assert bad.returncode == 1 and "cursor" in json.loads(bad.stdout)["error"]["message"]
    assert rmh("--vault", str(root), "list", "--limit", "0").returncode == 2


def test_usage_errors_are_json_under_json(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    for args in (["search", "--json"], ["search", "x", "-k", "0", "--json"],
                 ["list", "nonsense", "--json"]):
        r = rmh("--vault", str(root), *args)
        assert r.returncode == 2, args
        error = json.loads(r.stdout)["error"]
        assert error["kind"] == "usage" and error["message"], args
        assert "usage:" in r.stderr
    plain = rmh("--vault", str(root), "search")
    assert plain.returncode == 2 and plain.stdout == ""


def test_unknown_global_option_is_named(tmp_path: Path) -> None:
    r = rmh("--bogus")
    assert r.returncode == 2 and "unknown option --bogus" in r.stderr
    assert "COMMAND is required" not in r.stderr and "required: COMMAND" not in r.stderr


def test_a_vault_that_does_not_exist_is_an_error_except_for_init(tmp_path: Path) -> None:
    typo = tmp_path / "typo"
    for args in (["search", "x"], ["status"], ["list"], ["write", "A"], ["doctor"]):
        r = rmh("--vault", str(typo), *args, "--json")
        assert r.returncode == 1, args
        assert json.loads(r.stdout)["error"]["kind"] == "not_a_vault", args
        assert not typo.exists(), args
    made = rmh("init", str(typo), "--no-dense", "--json")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["vault"] == str(typo) and (typo / ".rmh").is_dir()
    other = tmp_path / "other"
    both = rmh("--vault", str(other), "init", str(typo), "--no-dense")
    assert both.returncode == 1 and "two vaults" in both.stderr and not other.exists()


def test_status_says_which_llm_answers_rlm_call_and_ask(tmp_path: Path) -> None:
    root = tmp_path / "v"
    assert rmh("init", str(root), "--no-dense").returncode == 0
    shown = rmh("--vault", str(root), "status", "--no-dense").stdout
    assert "llm         extractive extractive-bm25: no model configured" in shown
    (root / "rmh.toml").write_text('[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m1"\n',
                                   encoding="utf-8")
    shown = rmh("--vault", str(root), "status", "--no-dense").stdout
    assert "llm         openai m1 at http://127.0.0.1:9/v1\n" in shown  # no call is made
    (root / "rmh.toml").unlink()
    env = {"RMH_MODEL": "m2", "OPENAI_BASE_URL": "",  # an empty variable overrides nothing
           "OPENAI_API_KEY": "sk-test"}  # (no key: the reason says api.openai.com needs one)
    doc = json.loads(rmh("--vault", str(root), "status", "--no-dense", "--json", env=env).stdout)
    assert doc["llm"] == {"provider": "openai", "model": "m2", "reason": "",
                          "endpoint": "https://api.openai.com/v1"}
