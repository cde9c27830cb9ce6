"""What a new `rmh` process imports that its command does not use (issue 33 item 5: a cold
`rmh search` should cost about what a warm one does). PyYAML (~0.02 s of CPU) is imported only
when a note's frontmatter is parsed: a search of an indexed vault whose notes are unchanged
parses none, a search after an edit to a note with frontmatter does (and still reads it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# `python -m harness ARGS` in this process, then whether `yaml` was ever imported
PROBE = """
import atexit, runpy, sys
atexit.register(lambda: sys.stderr.write("\\nyaml imported: %s\\n" % ("yaml" in sys.modules)))
sys.argv = ["rmh", *sys.argv[1:]]
runpy.run_module("harness", run_name="__main__", alter_sys=True)
"""


def rmh(*args: str) -> tuple[str, bool]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=True)
    return done.stdout, done.stderr.rstrip().endswith("yaml imported: True")


def test_a_search_that_parses_no_frontmatter_imports_no_yaml(tmp_path: Path) -> None:
    (tmp_path / "Billing.md").write_text("# Billing\n\nThe billing migration is on Friday.\n")
    (tmp_path / "Cache.md").write_text("---\ntags: [cache, ops]\n---\n# Cache\n\nThe cache.\n")
    rmh("init", str(tmp_path), "--no-dense")
    out, yaml = rmh("--vault", str(tmp_path), "search", "billing migration", "--no-dense",
                    "--json")
    assert json.loads(out)["hits"][0]["note"] == "Billing.md"
    assert not yaml  # on main: imported by every process that opened a vault
    with open(tmp_path / "Cache.md", "a", encoding="utf-8") as fh:
        fh.write("The cache moved to the billing cluster.\n")
    out, yaml = rmh("--vault", str(tmp_path), "search", "cache cluster", "--no-dense", "--json")
    assert yaml  # the edited note's frontmatter was parsed again
    assert json.loads(out)["hits"][0]["note"] == "Cache.md"
    out, _ = rmh("--vault", str(tmp_path), "read", "Cache", "--json")
    assert json.loads(out)["frontmatter"] == {"tags": ["cache", "ops"]}
