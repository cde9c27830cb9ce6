"""`rmh doctor`: one health report across the vault, the sandbox tiers and learning."""

from __future__ import annotations

from typing import Any

from sandbox import probe
from vault import Ledger, Vault

from .learn import learning_health


def doctor_report(v: Vault) -> dict[str, Any]:
    """Everything `rmh doctor` reports, JSON-safe: vault, sandbox tiers, learning."""
    report: dict[str, Any] = {"vault": v.doctor()}
    tiers = probe()
    report["sandbox"] = tiers.to_json()
    if isinstance(v.usage, Ledger):
        report["learning"] = learning_health(v, v.usage)
    return report


def print_doctor(report: dict[str, Any]) -> None:
    """Human form of the doctor report."""
    vault = report["vault"]
    counts = vault["counts"]
    print(f"notes {counts['notes']}, links {counts['links']}, skipped {counts['skipped']}, "
          f"embeddings {counts['embeddings']} (index generation {vault['generation']})")
    for key, label in (
        ("dangling_links", "dangling links"),
        ("parse_errors", "parse errors"),
        ("orphans", "orphans"),
        ("skipped", "skipped files"),
        ("sync_errors", "sync errors"),
    ):
        items = vault[key]
        print(f"{label}: {len(items)}")
        for item in items[:20]:
            print(f"  {item}")
        if len(items) > 20:
            print(f"  ... {len(items) - 20} more")
    for section in sorted(k for k in report if k != "vault"):
        print(f"{section}:")
        body = report[section]
        if isinstance(body, dict):
            for key in sorted(body):
                print(f"  {key}: {body[key]}")
        else:
            print(f"  {body}")
