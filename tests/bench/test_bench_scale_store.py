"""bench.bench_scale_store runs end to end on a small vault (it had rotted: Vault.open called
its engine as a factory, and the engine lacked the facade's calls), and its edits stay
incremental. Speed is the benchmark's to report, never asserted here."""

from __future__ import annotations

from bench.bench_scale_store import run


def test_the_storage_benchmark_runs_and_every_edit_is_incremental() -> None:
    row = run(300, None, 2)
    assert row["notes"] == 300 and row["incremental"] == "6/6"
    assert row["full_index_s"] > 0 and row["search_overhead_p50_ms"] > 0
