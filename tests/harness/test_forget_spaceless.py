"""`rmh forget --subject` of a name in a script written without spaces between words (Han,
kana, Hangul with its particles, Thai): the notes naming it in running prose are erased, the
proof finds it nowhere, search finds none of them, and ingesting the conversation again
writes no turn naming it. Before, the whole-word rule named such a name nowhere (its
neighbours are letters too): the erasure removed nothing and its proof said 0 occurrences."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest

from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[2]
# (letters names are drawn from, the prose around one: before, after)
SCRIPTS = {
    "han+kana": ("山田太郎佐藤花子鈴木高橋伊藤渡辺", "昨日、", "さんは東京に住んでいる。"),
    "hangul": ("김철수이영희박민준최서연정", "어제 ", "는 서울에 살고 있다."),
    "thai": ("สมชายวิไลประเสริฐกาญจนา", "เมื่อวาน", "ไปตลาดกับแม่"),
}


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update({"PYTHONPATH": str(ROOT), "RMH_EMBED_CACHE": str(tmp / "shared.sqlite"),
                "HOME": str(tmp)})
    return env


def _rmh(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(("--vault", str(root), *args), env=env, cwd=ROOT)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_forget_erases_a_name_written_inside_unspaced_prose(tmp_path: Path,
                                                           script: str) -> None:
    letters, before, after = SCRIPTS[script]
    rng = random.Random(script)
    name = "".join(rng.sample(letters, 4))
    other = "".join(rng.sample([c for c in letters if c not in name], 3))
    root, env = tmp_path / "vault", _env(tmp_path)
    root.mkdir()
    (root / "a.md").write_text(f"# a\n{before}{name}{after}\n", encoding="utf-8")
    (root / "b.md").write_text(f"# b\n{name}{after}{name}\n", encoding="utf-8")
    (root / "keep.md").write_text(f"# keep\n{before}{other}{after}\n", encoding="utf-8")
    assert _rmh(root, env, "init").returncode == 0
    done = _rmh(root, env, "forget", "--subject", name, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["erased"]["notes"] == ["a.md", "b.md"]
    assert report["proof"]["occurrences"] == 0
    held = [p for p in root.rglob("*") if p.is_file() and name.encode() in p.read_bytes()]
    assert held == []
    assert (root / "keep.md").exists()
    assert name not in _rmh(root, env, "search", name).stdout
    conv = tmp_path / "conv.json"
    conv.write_text(json.dumps([{"role": "user", "content": f"{before}{name}{after}"},
                                {"role": "assistant", "content": f"{before}{other}{after}"}],
                               ensure_ascii=False), encoding="utf-8")
    assert _rmh(root, env, "ingest", str(conv)).returncode == 0
    held = [p for p in root.rglob("*") if p.is_file() and name.encode() in p.read_bytes()]
    assert held == []
