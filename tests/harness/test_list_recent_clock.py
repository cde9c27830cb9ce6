"""`list recent` over notes whose modification times are far from now (clock skew, files
from old archives, `touch -d`): before 1970 and past 2262, through the real CLI.

The index keeps a time as a signed 64-bit count of ns; a time past 2262-04-11 wraps. Before
VAULT10 (session 36) a note dated 2400 (ext4 stores times to 2446) was listed last, as
1861, and a page ending on a note from before 1970 gave a `next_cursor` with a negative
time that the next call refused (`bad_argument`), so the listing could not be paged past it.
Generated: times drawn over 1901-12-14 .. 2446-05-09 (every time ext4 can hold), each
compared with what the file system kept (`os.stat`), then every page size from 1 to 4
(in-process `vault.list` over a real vault), and one CLI listing paged past the edges.
"""

from __future__ import annotations

import json
import os
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness.errors import map_exception
from harness.mcp import mcp_methods
from harness.methods import Harness, method_table
from rpc import Dispatcher
from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[2]
S = 1_000_000_000
LOW, HIGH = -(1 << 31) + 86_400, 15_032_385_535 - 86_400  # ext4's range, a day inside


def rmh(root: Path, *args: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(ROOT)
    out = run_cli(["--vault", str(root), *args, "--json"], env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    doc = json.loads(out.stdout)
    assert isinstance(doc, dict)
    return doc


def _iso(ns: int) -> str:
    stamp = datetime.fromtimestamp(ns // S, tz=UTC)
    return stamp.isoformat(timespec="seconds").replace("+00:00", "Z")


def _stamp(root: Path, rng: random.Random) -> dict[str, int]:
    """Notes n00.. with times over ext4's range (a few fixed edges among them): each note's
    time as the file system kept it."""
    fixed = [-1, -86_400 * 365 * 50, 0, 7_258_118_400, 13_569_465_600, HIGH, LOW]
    times = fixed + [rng.randrange(LOW, HIGH) for _ in range(5)]
    rng.shuffle(times)
    for i, seconds in enumerate(times):
        note = root / f"n{i:02d}.md"
        note.write_text(f"# n{i}\n")
        ns = seconds * S + rng.randrange(S)
        os.utime(note, ns=(ns, ns))
    return {p.name: p.stat().st_mtime_ns for p in root.glob("n*.md")}


def _recent(h: Harness, limit: int, cursor: object) -> dict[str, Any]:
    d = Dispatcher({**method_table(h), **mcp_methods(h)}, map_exception=map_exception)
    params = {"what": "recent", "limit": limit, **({"cursor": cursor} if cursor else {})}
    frame = json.dumps({"jsonrpc": "2.0", "method": "vault.list", "params": params, "id": 1})
    out = anyio.run(d.dispatch, frame.encode())
    assert out is not None
    answer = json.loads(out)
    assert "result" in answer, answer
    result: dict[str, Any] = answer["result"]
    return result


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_recent_lists_far_times_in_order_and_pages_past_them(harness: Harness,
                                                             seed: int) -> None:
    kept = _stamp(harness.vault.root, random.Random(seed))
    for name in ("Alpha.md", "Beta.md"):
        kept[name] = (harness.vault.root / name).stat().st_mtime_ns
    harness.vault.live.sync()
    want = sorted(kept, key=lambda p: (-kept[p], p))
    items = _recent(harness, 100, None)["items"]
    assert [i["note"] for i in items] == want
    assert [i["modified"] for i in items] == [_iso(kept[p]) for p in want]
    for limit in range(1, 5):
        seen: list[str] = []
        cursor: object = None
        while True:
            page = _recent(harness, limit, cursor)
            seen += [i["note"] for i in page["items"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert seen == want, limit


def test_the_cli_lists_and_pages_far_times(tmp_path: Path) -> None:
    kept = _stamp(tmp_path, random.Random(0))
    rmh(tmp_path, "init", "--no-dense")
    want = sorted(kept, key=lambda p: (-kept[p], p))
    edge = next(i for i, p in enumerate(want) if kept[p] < 0) + 1  # a page ending before 1970
    first = rmh(tmp_path, "list", "recent", "--limit", str(edge))
    rest = rmh(tmp_path, "list", "recent", "--cursor", str(first["next_cursor"]))
    pages = [first["items"], rest["items"]]
    assert all(isinstance(p, list) for p in pages)
    assert [i["note"] for p in pages for i in p] == want  # type: ignore[attr-defined]
