"""`rmh doctor`: one health report across the vault, the sandbox tiers and learning."""

from __future__ import annotations

from typing import Any

from harness.config import ConfigError, load
from sandbox import (
    SandboxConfig,
    SandboxError,
    choose_tier,
    identity_limits,
    probe,
    tier_limits,
)
from vault import Vault, nlp_status

from .learn import learning_health

READ_ONLY_NOTE = ("read only: searches and reads answer from the index as it is; learning is "
                  "off and writes are refused (its .rmh folder or files are not writable by "
                  "this user, or its file system is mounted read-only)")


def doctor_report(v: Vault) -> dict[str, Any]:
    """Everything `rmh doctor` reports, JSON-safe: vault, sandbox tiers, learning."""
    report: dict[str, Any] = {"vault": v.doctor(), "read_only": v.read_only}
    tiers = probe()
    report["sandbox"] = {**tiers.to_json(), **sandbox_choice(v)}
    if v.ledger is not None:
        report["learning"] = learning_health(v, v.ledger)
    report["extraction"] = nlp_status()  # spaCy parse or the rules (conversation ingest)
    report["fusion"] = {"calibration": v.calibration()}  # vault/retrieval/calibration.py
    return report


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
    identity = list(identity_limits(worker_user))
    return {"runs": tier, "refused": refused, "worker_identity": identity,
            "does_not_guarantee": [*tier_limits(tier), *identity] if tier else [],
            "tier_limits": {t: [*tier_limits(t), *identity]
                            for t in probe(worker_user).available}}


def _line(item: Any) -> str:
    """One entry of a doctor list as a line: its fields' values joined by ": " (a dict), else
    as it is (paths are printable already: vault/storage/paths.py)."""
    if isinstance(item, dict):
        return ": ".join(str(v) for v in item.values())
    return str(item)


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
            print(f"  {_line(item)}")
        if len(items) > 20:
            print(f"  ... {len(items) - 20} more")
    for warning in report.get("learning", {}).get("warnings", []):
        print(f"WARNING (learning): {warning}")
    intents = vault.get("intents", {})
    for key in ("pending", "recovered"):  # multi-file operations (vault/storage/intents.py)
        items = intents.get(key, [])
        print(f"intents {key}: {len(items)}")
        for item in items[:20]:
            print(f"  {item}")
    for section in sorted(k for k in report if k != "vault"):
        for line in _section_lines(section, report[section], ""):
            print(line)


def _scalar(value: Any) -> str:
    """A leaf of the report in words: None or "" as "-", an empty list or table as "none"."""
    if value is None or value == "":
        return "-"
    if value in ([], {}):
        return "none"
    return str(value)


def _section_lines(key: str, value: Any, pad: str) -> list[str]:
    """A report entry as indented lines: a table's keys sorted, one under another; a list one
    "- item" a line (a list of numbers on one line); never a Python repr of a dict or list."""
    if isinstance(value, dict) and value:
        lines = [f"{pad}{key}:"]
        for sub in sorted(value, key=str):
            lines += _section_lines(str(sub), value[sub], pad + "  ")
        return lines
    if isinstance(value, list) and value:
        if all(isinstance(v, (int, float)) for v in value):
            return [f"{pad}{key}: {', '.join(str(v) for v in value)}"]
        lines = [f"{pad}{key}:"]
        for item in value:
            body = _section_lines("", item, pad + "    ")
            lines += ([f"{pad}  - {_line(item)}"] if len(body) == 1 or not isinstance(item, dict)
                      else [f"{pad}  -", *body[1:]])
        return lines
    return [f"{pad}{key}: {_scalar(value)}"]
