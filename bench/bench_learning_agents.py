"""Does learning from use help every agent? A knowledge vault, four agents, held-out questions
asked in other words (issue 31; the second workload beside bench/bench_learning.py).

The vault: bench/knowledge.py's linked notes (people, organisations, places, works, and
meeting notes that name several of them), written to a real folder; the real Vault facade,
search engine (default SearchParams, no dense model) and learned.sqlite ledger, sessions
started and ended through the ledger as `rmh serve` does (in process: no RPC layer, so many
sessions fit in minutes).

Questions (written before any learning constant was looked at, and not changed since): the
generator's bridge and comparison questions, shuffled with a fixed seed; the first `--train`
are the training questions. Held-out questions are all asked in other words (`paraphrase`):
*related* = every training question reworded (the same notes answer it), *unrelated* = the
other questions whose evidence shares no note with any training question, reworded too.

Agents, per training question (`--per-session` questions a session, each `--repeats` times in
different sessions): search k = 10, then
- reads:   read the evidence notes among the hits, nothing else;
- cites:   read them and write an answer note that links them;
- noisy:   read the top 3 hits, whatever they are;
- answers: read nothing; end the session with an answer text naming the evidence notes'
           facts (session.end's `answer`; vault answer_uses decides what it used).
Evaluation: each held-out question searched with `learn=False` (live learned state) and with
`as_of=0` (the learning-free ranking of the same vault): MRR@10 of the first evidence note and
recall@5 of the evidence, paired bootstrap 95 % intervals (10,000 draws) of on - off; then the
exposure/Q Pearson of the audit and whether the stored state equals its replay.

Run:  python -m bench.bench_learning_agents --json out.json
      (`--paraphrases described`: held-out wording whose new words other notes hold,
      bench/knowledge_paraphrase.py, NOTES-LRN14.md)
      (`--warmth 0.1`, `--cooccurrence 0.5`, `--scope 0` switch the learned signals on, and
      their scope to the query's top hits off: issue 31 item 6, NOTES-H.md; `--couse 0.5`,
      `--spread 0.5` the query-dependent association channels, NOTES-F3.md; `--config
      X.toml` ranks with X's [search] section, e.g. `prior_scale`, as bench_learning's does)
      (`--vault DIR --questions FILE`: a real vault and its own questions instead of the
      generated ones, bench/external_vault.py; e.g. the Obsidian help vault with
      bench/data/obsidian_help_questions.json, NOTES-LRN17.md)
      (`--ask-twice`: the agent then asks each related question once in its held-out wording,
      and all are evaluated again, `*_second`; `--pages`: the gold ranked among the vault's own
      notes, the agents' answer notes left out; NOTES-LRN20.md)
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_learning import write_vault
from bench.datasets import Question
from bench.external_vault import load as load_external
from bench.knowledge import generate
from bench.knowledge_paraphrase import described
from bench.metrics import paired_bootstrap
from harness import load_config
from harness import search_params as config_search_params
from vault import ASKED_FLOOR as FLOOR
from vault import ASKED_WALK as WALK
from vault import (
    LEARNING_VERSION,
    LEDGER_FILE,
    EmbeddingCache,
    LearningParams,
    Ledger,
    MiniLmEncoder,
    SearchEngine,
    SearchParams,
    Vault,
    answer_uses,
)

AGENTS = ("reads", "cites", "noisy", "answers")
PARAPHRASES: tuple[tuple[str, str], ...] = (
    (r"In which year was the organisation that (.+) works for founded\?",
     "When was {0}'s employer established?"),
    (r"What is the population of the town where (.+) was born\?",
     "How many people live in the birthplace of {0}?"),
    (r"In which year was the author of (.+) born\?",
     "When was the writer of {0} born?"),
    (r"In which year was the publisher of (.+) founded\?",
     "When was the company that published {0} set up?"),
    (r"Who was born earlier, (.+) or (.+)\?", "Is {0} older than {1}?"),
    (r"Which was published first, (.+) or (.+)\?", "Did {0} come out before {1}?"),
    (r"Which organisation was founded earlier, (.+) or (.+)\?",
     "Was {0} set up before {1}?"),
)


def paraphrase(text: str) -> str:
    """The question in other words (fixed templates; every generated question matches one)."""
    for pattern, template in PARAPHRASES:
        m = re.fullmatch(pattern, text)
        if m:
            return template.format(*m.groups())
    raise ValueError(f"no paraphrase for {text!r}")


def rr(paths: Sequence[str], evidence: set[str]) -> float:
    return next((1.0 / (r + 1) for r, p in enumerate(paths[:10]) if p in evidence), 0.0)


def recall5(paths: Sequence[str], evidence: set[str]) -> float:
    return len(set(paths[:5]) & evidence) / len(evidence)


def answer_text(v: Vault, evidence: list[str]) -> str:
    """What an agent that knew the answer would write: the evidence notes' first sentence."""
    parts = []
    for note in evidence:
        body = v.read(note, learn=False).text.split("\n---\n")[-1].strip()
        parts.append(body.split(". ")[0])
    return "From what I found: " + "; ".join(parts) + "."


def train(v: Vault, ledger: Ledger, agent: str, work: list[tuple[int, Question]],
          where: dict[int, str], sid: str) -> dict[str, int]:
    counts = {"searches": 0, "reads": 0, "writes": 0, "answer_used": 0}
    ledger.start_session(sid, time.time(), owner={"bench": agent})
    answers: list[str] = []
    for n, q in work:
        hits = [h.note for h in v.search(q.text, k=10, session=sid).hits]
        counts["searches"] += 1
        evidence = {where[p] for p in q.evidence}
        found = [h for h in hits if h in evidence]
        if agent == "noisy":
            found = hits[:3]
        if agent == "answers":
            if found:
                answers.append(answer_text(v, found))
            continue
        for note in found:
            v.read(note, session=sid)
            counts["reads"] += 1
        if agent == "cites" and found:
            links = ", ".join(f"[[{f.removesuffix('.md')}]]" for f in found)
            v.write(f"answers/a{n}.md", f"Q: {q.text}\n\nFrom {links}.\n", session=sid)
            counts["writes"] += 1
    answered: list[int] = []
    if answers:
        events = ledger.session_events(sid)
        shown = sorted({i for ev in events for i, _, _ in ev.shown()})
        corpus = v.corpus()
        texts = {i: f"{corpus.titles[corpus.position(i)]}\n{corpus.bodies[corpus.position(i)]}"
                 for i in shown}
        answered = answer_uses(" ".join(answers), texts, ledger.params.answer_min_terms)
        counts["answer_used"] = len(answered)
    ledger.end_session(sid, time.time(), answered=answered)
    return counts


def held_out(v: Vault, text: str, wording: str = "templates",
             reword: Callable[[str], str] | None = None) -> str:
    """A question's held-out wording: `reword`'s (an external vault's questions), else
    bench/knowledge_paraphrase.py's ("described"), else the templates'."""
    return (reword(text) if reword is not None
            else described(text, v.corpus(), paraphrase) if wording == "described"
            else paraphrase(text))


def evaluate(v: Vault, questions: list[Question], where: dict[int, str],
             wording: str = "templates", reword: Callable[[str], str] | None = None,
             pages: bool = False) -> dict[str, list[float]]:
    """Each question searched in its held-out wording (`held_out`), live and learning-free;
    `pages`: ranked among the vault's own notes, the agents' answer notes left out."""
    out: dict[str, list[float]] = {"mrr_on": [], "mrr_off": [], "r5_on": [], "r5_off": []}
    k = 40 if pages else 10

    def top(hits: Sequence[Any]) -> list[str]:
        return [h.note for h in hits if not (pages and h.note.startswith("answers/"))][:10]

    for q in questions:
        evidence = {where[p] for p in q.evidence}
        text = held_out(v, q.text, wording, reword)
        live = top(v.search(text, k=k, learn=False).hits)
        # the live clock's day, as the live search's (bench_learning.py: dates a question names)
        none = top(v.search(text, k=k, as_of=0.0, now=v.today()).hits)
        out["mrr_on"].append(rr(live, evidence))
        out["mrr_off"].append(rr(none, evidence))
        out["r5_on"].append(recall5(live, evidence))
        out["r5_off"].append(recall5(none, evidence))
    return out


def summary(m: dict[str, list[float]], per_question: bool = False) -> dict[str, Any]:
    extra = {"on": m["mrr_on"], "r5": m["r5_on"]} if per_question else {}
    return {**extra, "n": len(m["mrr_on"]),
            "mrr_off": float(np.mean(m["mrr_off"])) if m["mrr_off"] else None,
            "mrr_lift": paired_bootstrap(m["mrr_on"], m["mrr_off"], draws=10_000),
            "recall5_off": float(np.mean(m["r5_off"])) if m["r5_off"] else None,
            "recall5_lift": paired_bootstrap(m["r5_on"], m["r5_off"], draws=10_000)}


def second_vs_first(second: dict[str, list[float]], first: dict[str, list[float]]
                    ) -> dict[str, Any]:
    """The learned MRR lift at the second asking minus that at the first, paired per
    question (the learning-free MRR can differ: the citing agent's answer notes are new)."""
    lift2 = [a - b for a, b in zip(second["mrr_on"], second["mrr_off"], strict=True)]
    lift1 = [a - b for a, b in zip(first["mrr_on"], first["mrr_off"], strict=True)]
    return {"mrr_lift": paired_bootstrap(lift2, lift1, draws=10_000)}


def search_params(args: argparse.Namespace) -> SearchParams:
    """The [search] section of `--config` (an rmh.toml, read as `rmh serve` reads it;
    default SearchParams without one), then the learned signals the flags switch on
    (`--warmth`, `--cooccurrence` and their `--scope`, vault/retrieval/scope.py) for the
    item 6 ablation."""
    base = SearchParams() if args.config is None else config_search_params(
        load_config(env={}, config_file=args.config))
    weights = dict(base.weights)
    if args.warmth:
        weights["warmth"] = args.warmth
    weights.update({c: getattr(args, c) for c in ("couse", "spread", "passed")
                    if getattr(args, c)})
    if args.asked:  # the query-log neighbours (vault/learning/asked.py; needs --dense)
        weights.update({"asked": args.asked, "asked_floor": args.asked_floor,
                        "asked_walk": float(args.asked_walk)})
    if args.dense_weight is not None:  # 0: the encoder loaded for `asked`, dense retrieval off
        weights["dense"] = args.dense_weight
    return replace(base, weights=weights, beta=args.cooccurrence or base.beta,
                   scope=base.scope if args.scope is None else args.scope)


def run_agent(agent: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    root = tmp / agent
    reword: Callable[[str], str] | None = None
    if args.vault is not None:  # a real vault: its own questions, all of them
        ext = load_external(args.vault, args.questions, root)
        where, training, unrelated, reword = ext.where, ext.related, ext.unrelated, ext.reword
    else:
        hay = generate(args.vault_seed)
        where = write_vault(hay, root)
        rng = random.Random(f"{args.seed}:questions")
        qs = list(hay.questions)
        rng.shuffle(qs)
        training = qs[:args.train]
        trained = set().union(*(q.evidence for q in training))
        unrelated = [q for q in qs[args.train:] if not q.evidence & trained][:args.unrelated]
    related = training
    t0 = time.time()
    counts = {"searches": 0, "reads": 0, "writes": 0, "answer_used": 0, "sessions": 0}
    # what `rmh serve --no-dense` builds with the default config
    ledger = Ledger.open(Vault.state_dir(root, create=True) / LEDGER_FILE, clock=time.time)
    params, scratch = search_params(args), str(root / ".rmh")
    encoder = MiniLmEncoder() if args.dense else None  # `--dense`: what `rmh serve` builds

    def engine(own: EmbeddingCache) -> SearchEngine:
        return SearchEngine(params, encoder=encoder, cache=own, scratch=scratch)

    with Vault.open(root, engine=engine, usage=ledger) as v:
        order = random.Random(f"{args.seed}:{agent}")
        schedule: list[Question] = []
        for _ in range(args.repeats):
            batch = training[:]
            order.shuffle(batch)
            schedule.extend(batch)
        numbered = list(enumerate(schedule))
        for start in range(0, len(numbered), args.per_session):
            got = train(v, ledger, agent, numbered[start:start + args.per_session], where,
                        f"{agent}-{start}")
            for key, value in got.items():
                counts[key] += value
            counts["sessions"] += 1
        train_s = time.time() - t0
        rel = evaluate(v, related, where, args.paraphrases, reword, args.pages)
        unr = evaluate(v, unrelated, where, args.paraphrases, reword, args.pages)
        again: dict[str, Any] = {}
        again_counts: dict[str, int] = {}
        if args.ask_twice:  # the agent asked each related question once, in its held-out
            # wording, then every held-out question evaluated again (NOTES-LRN20.md)
            asked = [(len(numbered) + i, replace(q, text=held_out(v, q.text, args.paraphrases,
                                                                   reword)))
                     for i, q in enumerate(related)]
            for start in range(0, len(asked), args.per_session):
                got = train(v, ledger, agent, asked[start:start + args.per_session], where,
                            f"{agent}-again-{start}")
                for key, value in got.items():
                    again_counts[key] = again_counts.get(key, 0) + value
            rel2 = evaluate(v, related, where, args.paraphrases, reword, args.pages)
            unr2 = evaluate(v, unrelated, where, args.paraphrases, reword, args.pages)
            again = {"counts_second": again_counts,
                     "related_second": summary(rel2, args.per_question),
                     "unrelated_second": summary(unr2, args.per_question),
                     "related_second_vs_first": second_vs_first(rel2, rel),
                     "unrelated_second_vs_first": second_vs_first(unr2, unr)}
        audit = ledger.health(v.corpus().ids, time.time())
        replay = ledger.replay() == ledger.state
    print(f"{agent}: {counts} in {train_s:.0f} s; related {len(related)}, unrelated "
          f"{len(unrelated)}", file=sys.stderr)
    return {"agent": agent, "counts": counts, "train_s": round(train_s, 1),
            "related": summary(rel, args.per_question),
            "unrelated": summary(unr, args.per_question),
            "exposure_q_pearson": audit["exposure_q_pearson"],
            "use_rate_q_pearson": audit["use_rate_q_pearson"], "q": audit["q"],
            "rewards": audit["rewards"], "replay_matches": replay, **again}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--vault-seed", type=int, default=31)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train", type=int, default=60)
    ap.add_argument("--unrelated", type=int, default=80)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--per-session", type=int, default=4)
    ap.add_argument("--warmth", type=float, default=0.0, help="warmth weight (default off)")
    ap.add_argument("--cooccurrence", type=float, default=0.0,
                    help="co-occurrence edges in PageRank, beta (default off)")
    ap.add_argument("--couse", type=float, default=0.0,
                    help="query-dependent co-use channel weight (association.py; default off)")
    ap.add_argument("--spread", type=float, default=0.0,
                    help="query-dependent spreading-activation channel weight (default off)")
    ap.add_argument("--passed", type=float, default=0.0,
                    help="weights.passed: demote notes passed over more than used (NOTES-L6)")
    ap.add_argument("--scope", type=int, default=None,
                    help="warmth and co-occurrence act near the query's top hits (0: all; "
                         "default: the config's, SearchParams().scope)")
    ap.add_argument("--per-question", action="store_true",
                    help="also store each held-out question's MRR and recall@5 (pair_runs.py)")
    ap.add_argument("--dense", action="store_true", help="MiniLM dense channel on")
    ap.add_argument("--asked", type=float, default=0.0,
                    help="weight of the query-log neighbours channel (needs --dense)")
    ap.add_argument("--asked-floor", type=float, default=FLOOR)
    ap.add_argument("--asked-walk", type=int, default=int(WALK), choices=(0, 1),
                    help="1: share each kept query's gate among all that pass (asked_channel.py)")
    ap.add_argument("--dense-weight", type=float, default=None,
                    help="weights.dense with --dense (0: the encoder serves `asked` alone)")
    ap.add_argument("--paraphrases", choices=("templates", "described"), default="templates",
                    help="held-out wording; described: + the entity's profession, genre or "
                         "town, words other notes hold (bench/knowledge_paraphrase.py)")
    ap.add_argument("--vault", type=Path, default=None,
                    help="a folder of notes to run on instead of the generated vault "
                         "(copied; needs --questions; bench/external_vault.py)")
    ap.add_argument("--questions", type=Path, default=None,
                    help="the --vault's questions (JSON, bench/external_vault.py); "
                         "--train, --unrelated, --vault-seed and --paraphrases do not apply")
    ap.add_argument("--ask-twice", action="store_true",
                    help="after the first evaluation the agent is asked each related question "
                         "in its held-out wording, then all are evaluated again (`_second`)")
    ap.add_argument("--pages", action="store_true",
                    help="rank the gold among the vault's own notes (answers/ left out)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--config", type=Path, default=None,
                    help="an rmh.toml whose [search] section ranks (e.g. prior_scale)")
    args = ap.parse_args(argv)
    if (args.vault is None) != (args.questions is None):
        ap.error("--vault and --questions go together")
    with tempfile.TemporaryDirectory() as tmp:
        runs = [run_agent(a, args, Path(tmp)) for a in args.agents.split(",")]
    report = {"learning_version": LEARNING_VERSION, "params": LearningParams().__dict__,
              "setup": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
              "agents": runs, "replay_matches": all(r["replay_matches"] for r in runs)}
    text = json.dumps(report, indent=2, sort_keys=True)
    if args.json is not None:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
