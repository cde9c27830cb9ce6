"""bench/bench_learning_agents.py: the search parameters it ranks with, from its flags and an
rmh.toml read as `rmh serve` reads it (`--config`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from bench.bench_learning_agents import main, search_params
from bench.external_vault import load as load_external
from vault import ASKED_FLOOR, ASKED_WALK, SearchParams


def flags(config: Path | None = None, **given: float | int | None) -> argparse.Namespace:
    values: dict[str, object] = {"warmth": 0.0, "cooccurrence": 0.0, "couse": 0.0,
                                 "spread": 0.0, "passed": 0.0, "scope": None, "asked": 0.0,
                                 "asked_floor": ASKED_FLOOR, "asked_walk": int(ASKED_WALK),
                                 "dense_weight": None, "config": config}
    values.update(given)
    return argparse.Namespace(**values)


def test_no_flags_and_no_config_rank_with_the_defaults() -> None:
    assert search_params(flags()) == SearchParams()


def test_an_empty_search_section_is_the_default_too(tmp_path: Path) -> None:
    (tmp_path / "rmh.toml").write_text("[search]\n", encoding="utf-8")
    assert search_params(flags(tmp_path / "rmh.toml")) == SearchParams()


def test_the_config_sets_the_prior_scale_and_weights_and_flags_add_to_them(
        tmp_path: Path) -> None:
    (tmp_path / "rmh.toml").write_text(
        "[search]\nprior_scale = 0.4\nscope = 7\ncooccurrence = 0.3\n"
        "[search.weights]\nwarmth = 0.2\n", encoding="utf-8")
    got = search_params(flags(tmp_path / "rmh.toml"))
    assert (got.prior_scale, got.scope, got.beta) == (0.4, 7, 0.3)
    assert dict(got.weights) == {"warmth": 0.2}
    both = search_params(flags(tmp_path / "rmh.toml", warmth=0.1, passed=1.0, scope=0,
                               cooccurrence=0.5))
    assert (both.prior_scale, both.scope, both.beta) == (0.4, 0, 0.5)
    assert dict(both.weights) == {"warmth": 0.1, "passed": 1.0}


def tiny_vault(tmp_path: Path) -> tuple[Path, Path]:
    """Four notes and their questions: the related question's held-out wording names only
    what its gold note holds under another name, the unrelated one is asked as written."""
    vault = tmp_path / "vault"
    (vault / "Plugins").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "app.md").write_text("settings, not a note\n", encoding="utf-8")
    notes = {
        "Plugins/Daily notes.md": "Daily notes opens a journal page named after today's date.",
        "Plugins/Templates.md": "Templates insert a snippet of text into the current note.",
        "Plugins/Graph view.md": "Graph view shows the links between your notes as a map.",
        "Zoo.md": "Zebras and giraffes live in the zoo; the zookeeper feeds them at noon.",
    }
    for path, body in notes.items():
        (vault / path).write_text(f"{body}\n", encoding="utf-8")
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps({
        "related": [
            {"id": "r0", "question": "How do I open a daily journal page for today?",
             "paraphrase": "zebra giraffe zookeeper", "gold": ["Plugins/Daily notes.md"]},
            {"id": "r1", "question": "How do I insert a template snippet?",
             "paraphrase": "How can I insert a reusable snippet?",
             "gold": ["Plugins/Templates.md"]}],
        "unrelated": [{"id": "u0", "question": "How do I see the graph view map of links?",
                       "gold": ["Plugins/Graph view.md"]}]}), encoding="utf-8")
    return vault, questions


def test_an_external_vault_trains_on_its_questions_and_asks_their_paraphrases(
        tmp_path: Path) -> None:
    vault, questions = tiny_vault(tmp_path)
    out = tmp_path / "run.json"
    assert main(["--vault", str(vault), "--questions", str(questions), "--agents", "cites",
                 "--repeats", "1", "--per-session", "2", "--per-question",
                 "--json", str(out)]) == 0
    run = json.loads(out.read_text(encoding="utf-8"))["agents"][0]
    # both training questions searched, their gold notes read and cited in answer notes
    assert run["counts"]["searches"] == 2 and run["counts"]["writes"] == 2
    assert (run["related"]["n"], run["unrelated"]["n"]) == (2, 1)
    # r0's held-out wording shares no word with its gold note: it is what was asked; r1's
    # gold is second, just below the agent's own answer note (it holds the training question
    # and links the gold): a lift not wholly about the new wording ("reusable") does not pass
    # a note the learning-free ranking put above it (learning v24)
    assert run["related"]["on"][0] < 1.0 and run["related"]["on"][1] == 0.5
    assert run["unrelated"]["on"] == [1.0]
    assert run["replay_matches"] is True
    pages = tmp_path / "pages.json"  # among the vault's own pages (answer notes left out)
    assert main(["--vault", str(vault), "--questions", str(questions), "--agents", "cites",
                 "--repeats", "1", "--per-session", "2", "--per-question", "--pages",
                 "--json", str(pages)]) == 0
    among = json.loads(pages.read_text(encoding="utf-8"))["agents"][0]
    assert among["related"]["on"][0] < 1.0 and among["related"]["on"][1] == 1.0
    # the source vault is untouched: no answer notes, no ledger
    assert not (vault / "answers").exists() and not (vault / ".rmh").exists()


def test_an_external_vault_refuses_questions_it_cannot_answer(tmp_path: Path) -> None:
    vault, questions = tiny_vault(tmp_path)
    data = json.loads(questions.read_text(encoding="utf-8"))
    data["unrelated"][0]["gold"] = ["Plugins/Templates.md"]  # a trained note
    shared = tmp_path / "shared.json"
    shared.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="share gold notes"):
        load_external(vault, shared, tmp_path / "a")
    data["unrelated"][0]["gold"] = ["Plugins/Canvas.md"]  # not in the vault
    shared.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="not in the vault"):
        load_external(vault, shared, tmp_path / "b")
    got = load_external(vault, questions, tmp_path / "c")
    assert sorted(got.where.values()) == ["Plugins/Daily notes.md", "Plugins/Graph view.md",
                                          "Plugins/Templates.md"]
    assert not (tmp_path / "c" / ".obsidian").exists()
    assert got.reword("How do I insert a template snippet?") == (
        "How can I insert a reusable snippet?")
    with pytest.raises(SystemExit):
        main(["--vault", str(vault)])  # --questions missing


def test_ask_twice_has_the_agent_ask_each_rewording_then_evaluates_again(tmp_path: Path) -> None:
    vault, questions = tiny_vault(tmp_path)
    runs = {}
    for pages in (False, True):
        out = tmp_path / f"run{pages}.json"
        assert main(["--vault", str(vault), "--questions", str(questions), "--agents", "cites",
                     "--repeats", "1", "--per-session", "2", "--per-question", "--ask-twice",
                     *(["--pages"] if pages else []), "--json", str(out)]) == 0
        runs[pages] = json.loads(out.read_text(encoding="utf-8"))["agents"][0]
    run = runs[False]
    # the two rewordings asked once more, in one session; r1's gold found, read and cited
    assert run["counts"]["searches"] == 2 and run["counts_second"]["searches"] == 2
    assert run["counts_second"]["writes"] >= 1
    assert (run["related_second"]["n"], run["unrelated_second"]["n"]) == (2, 1)
    assert set(run["related_second_vs_first"]["mrr_lift"]) == {"mean", "lo", "hi"}
    # learning-free, r1's answer note (the rewording word for word) ranks above its gold page
    # (r0's gold is never found: 0); ranked among the vault's own pages (`--pages`) it is first
    assert run["related_second"]["mrr_off"] == 0.25
    assert runs[True]["related_second"]["mrr_off"] == 0.5
    # the gold page's use for the rewording lifts it back above the answer note
    assert run["related_second"]["on"] == [0.0, 1.0]
    assert run["replay_matches"] is True and runs[True]["replay_matches"] is True
