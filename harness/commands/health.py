"""`rmh doctor`: one health report across the vault, the sandbox tiers and learning."""

from __future__ import annotations

from typing import Any

from harness.compose import load_reranker, open_vault
from harness.config import Config, ConfigError, load
from sandbox import (
    SandboxConfig,
    SandboxError,
    choose_tier,
    identity_limits,
    probe,
    tier_limits,
)
from vault import ModelUnavailable, Vault, corpus_chunks, dense_health_line, nlp_status

from .learn import learning_health
from .report_text import entry_line, section_lines

READ_ONLY_NOTE = ("read only: searches and reads answer from the index as it is; learning is "
                  "off and writes are refused (its .rmh folder or files are not writable by "
                  "this user, or its file system is mounted read-only)")


def doctor_report(v: Vault, *, settle_leftovers: bool = False) -> dict[str, Any]:
    """Everything `rmh doctor` reports, JSON-safe: vault, sandbox tiers, learning."""
    report: dict[str, Any] = {"vault": v.doctor(settle_leftovers=settle_leftovers),
                              "read_only": v.read_only}
    tiers = probe()
    report["sandbox"] = {**tiers.to_json(), **sandbox_choice(v)}
    if v.ledger is not None:
        report["learning"] = learning_health(v, v.ledger)
    report["extraction"] = nlp_status()  # spaCy parse or the rules (conversation ingest)
    report["fusion"] = {"calibration": v.calibration()}  # vault/retrieval/calibration.py
    return report


def pending_embeddings(v: Vault) -> tuple[int, int] | None:
    """Dense units the embedding cache lacks (what the next `rmh index` embeds) and the
    notes' dense units in all; None when the engine has no encoder (`--no-dense`)."""
    from harness.ray_jobs import missing_units

    setup = v.embedding_setup()
    if setup is None:
        return None
    encoder, cache, max_tokens, max_note_units = setup
    texts, _, _ = corpus_chunks(v.corpus(), encoder.count_tokens, max_tokens, max_note_units)
    return len(missing_units(texts, encoder.fingerprint, cache)), len(texts)


PREPARE_PENDING = 256  # units status embeds to prepare an IVF (MiniLM: ~10 ms each here)


def dense_report(v: Vault) -> dict[str, Any] | None:
    """The dense index's distance from a fresh build (vault/retrieval/dense_health.py), with
    `pending`, the units to embed; an IVF over the retraining bound is prepared as a search
    would (embedding what is pending) when at most PREPARE_PENDING units are, else left
    "not checked" (`rmh index` embeds them and trains it). None: `--no-dense`."""
    counted = pending_embeddings(v)
    if counted is None:
        return None
    pending, chunks = counted
    return {**v.dense_health(chunks, build=pending <= PREPARE_PENDING), "pending": pending}


def dense_health(cfg: Config, notes: int) -> dict[str, Any]:
    """The dense index's distance from a fresh build (browse.dense_report: rows changed since
    the IVF's training, their share, the level, `rmh index`) where it can be an IVF over the
    retraining bound: `notes` x [search] max_note_units (their most units) over
    `dense_approx_above` and `dense_retrain_max_rows`; otherwise it is never stale (exact,
    or trained at every change) and the embedder is not loaded. An embedder that cannot
    load is reported, not a refusal."""
    s = cfg.search
    most = notes * s.max_note_units if s.max_note_units else None  # None: no bound
    if not s.dense_approx_above or (most is not None and most <= max(
            s.dense_approx_above, s.dense_retrain_max_rows)):
        return {"layout": "exact or trained at every change", "level": "ok",
                "untrained_rows": 0, "rows_at_most": most}
    try:
        with open_vault(cfg, rerank=False, learning=False) as v:
            return dense_report(v) or {}
    except ModelUnavailable as exc:
        return {"layout": "not checked", "level": "ok", "untrained_rows": 0,
                "reason": f"embedder unavailable: {exc.reason}"}


def rerank_health(cfg: Config) -> dict[str, Any]:
    """The configured reranker ([rerank] model_dir): "none", "loads", or why it cannot (what
    every other command that opens the vault refuses with: compose.load_reranker)."""
    if not cfg.rerank.model_dir:
        return {"model_dir": "", "state": "none"}
    try:
        load_reranker(cfg)
    except ModelUnavailable as exc:
        return {"model_dir": cfg.rerank.model_dir, "state": f"unavailable: {exc.reason}"}
    return {"model_dir": cfg.rerank.model_dir, "state": "loads"}


def sandbox_choice(v: Vault) -> dict[str, Any]:
    """The tier `rmh serve`/`rmh exec` would run with this vault's configuration, who the
    worker runs as, and what remains open on every available tier for the current user (the
    tier's own limits plus those of the worker's identity). "auto" never picks the
    seccomp-only tier; it is listed when it works, for `--tier seccomp`."""
    worker_user = "auto"
    try:
        cfg = load(vault=v.root)
        section = cfg.sandbox
        worker_user = section.worker_user
        config = SandboxConfig(tier=section.tier, unsafe_no_sandbox=section.unsafe_no_sandbox,
                               secret_configured=bool(cfg.llm.api_key),
                               worker_user=worker_user, max_tasks=section.max_tasks)
        tier: str | None = choose_tier(config, warn=False)
        refused = ""
    except (ConfigError, SandboxError, ValueError) as exc:
        tier, refused = None, str(exc)
    try:
        identity = list(identity_limits(worker_user))
        available = probe(worker_user).available
    except ValueError:  # a worker_user naming no one (refused above): no tier can run
        identity, available = [], ()
    return {"runs": tier, "refused": refused, "worker_identity": identity,
            "does_not_guarantee": [*tier_limits(tier), *identity] if tier else [],
            "tier_limits": {t: [*tier_limits(t), *identity] for t in available}}


def print_doctor(report: dict[str, Any]) -> None:
    """Human form of the doctor report."""
    vault = report["vault"]
    counts = vault["counts"]
    if report.get("read_only"):
        print(f"warning: this vault is {READ_ONLY_NOTE}")
    print(f"notes {counts['notes']}, links {counts['links']}, skipped {counts['skipped']}, "
          f"embeddings {counts['embeddings']} (index generation {vault['generation']})")
    for key, label in (
        ("dangling_links", "dangling note links"),
        ("missing_attachments", "missing attachments"),
        ("parse_errors", "parse errors"),
        ("orphans", "orphans"),
        ("skipped", "skipped files"),
        ("sync_errors", "sync errors"),
    ):
        items = vault[key]
        print(f"{label}: {len(items)}")
        for item in items[:20]:
            print(f"  {entry_line(item)}")
        if len(items) > 20:
            print(f"  ... {len(items) - 20} more")
    for warning in report.get("learning", {}).get("warnings", []):
        print(f"WARNING (learning): {warning}")
    dense = report.get("dense", {})
    if dense.get("level") == "warning":  # vault/retrieval/dense_health.py
        print(f"WARNING (dense): {dense_health_line(dense)}")
    if str(report.get("rerank", {}).get("state", "")).startswith("unavailable"):
        print(f"WARNING (rerank): model {report['rerank']['state']}; every other command "
              "that opens the vault refuses until [rerank] model_dir is fixed or removed")
    intents = vault.get("intents", {})
    for key in ("pending", "recovered"):  # multi-file operations (vault/storage/intents.py)
        items = intents.get(key, [])
        print(f"intents {key}: {len(items)}")
        for item in items[:20]:
            print(f"  {item}")
    for key, items in sorted(vault.get("settled", {}).items()):  # --settle-leftovers
        for item in items:
            print(f"settled ({key}): {item}")
    left = vault.get("leftovers", [])  # hidden files rmh left beside notes
    print(f"leftovers: {len(left)}")
    for item in left[:20]:
        how = "a copy of" if item["same"] else "differs from"
        print(f"  {item['path']} ({item['kind']}: {how} {item['note']})")
    for section in sorted(k for k in report if k != "vault"):
        for line in section_lines(section, report[section], ""):
            print(line)
