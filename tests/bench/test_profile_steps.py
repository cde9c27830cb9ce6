"""The prepare profiler's steps name what the code calls now. FUS39 replaced `many_codes`
with `coded` inside `signals/conjunctive.py`, and `bench/profile_prepare.py` then failed at
its start (KeyError 'many_codes', the steps before it left wrapped): a real build is traced
through every step, and each is put back."""

from __future__ import annotations

from typing import Any

from bench import profile_prepare
from vault.retrieval.signals import conjunctive
from vault.retrieval.signals.conjunctive import ConjunctiveIndex


def test_the_prepare_steps_trace_a_build_and_are_put_back() -> None:
    before = {(name, attr): vars(owner)[attr] for name, owner, attr in profile_prepare.STEPS}
    report: list[dict[str, Any]] = []
    with profile_prepare.traced_steps(report):
        ConjunctiveIndex.from_texts(["alpha beta gamma", "beta gamma delta"])
    steps = {row["step"] for row in report}
    assert {"conj", "conj.codes", "conj.distinct", "conj.postings"} <= steps, steps
    assert all(vars(owner)[attr] is before[(name, attr)]
               for name, owner, attr in profile_prepare.STEPS)
    assert conjunctive.ConjunctiveIndex.from_texts(["x y"]).n_docs == 1

