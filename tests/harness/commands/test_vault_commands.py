"""harness/commands/vault_commands.py: `--explain` shows every part of a hit's score, the time
prior's among them (vault/retrieval/when.py), in the order the pipeline applies them; `move`
names each referrer it left as it was, with why."""

from __future__ import annotations

import argparse

from harness.commands.vault_commands import explain_line, moved


def test_the_time_prior_is_shown_after_the_learned_prior() -> None:
    receipt = {"signals": {"bm25": {"raw": 1.5, "rank": 0}}, "fused": 0.03, "context": 0.01,
               "named": 0.0, "warmth": 0.0, "prior": 0.004, "prior_factor": 1.1,
               "when": 0.044, "when_factor": 2.0, "rerank": None}
    line = explain_line(receipt)
    assert line.endswith("prior x1.100 (+0.0040 on 0.0400)  when x2.000 (+0.0440)")
    assert "when" not in explain_line({**receipt, "when": 0.0, "when_factor": 1.0})


def test_a_move_names_the_referrers_it_left() -> None:
    doc = {"note": "b/New.md", "old": "Old.md", "rewritten": ["R1.md"],
           "not_rewritten": [{"note": "R2.md", "reason": "changed since the move read it"}]}
    shown, text = moved(argparse.Namespace(), doc)
    assert shown == doc
    assert text == ("moved Old.md -> b/New.md; rewrote links in 1 note\n"
                    "not rewritten: R2.md: changed since the move read it\n")
    _, plain = moved(argparse.Namespace(), {**doc, "not_rewritten": []})
    assert plain == "moved Old.md -> b/New.md; rewrote links in 1 note\n"
