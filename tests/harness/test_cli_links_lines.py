"""`rmh links`: a link written in the frontmatter and the body, or twice, is one line with how
many times; an embed, a heading and a block show as written (VAULT11, session 37; NEWUSER7
saw `Bobby -> Bobby.md` listed once per occurrence, and `[[Bobby#^id]]` printed as
`[[Bobby]]`). `--json` still lists every occurrence, frontmatter first, as `vault.links`."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import rmh


@pytest.mark.parametrize("seed", [1, 2])
def test_links_prints_each_link_once_with_its_count(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "v"
    root.mkdir()
    (root / "Bobby.md").write_text("# Intro\nBobby ^b1\n", encoding="utf-8")
    forms = ["[[Bobby]]", "[[Bobby|B]]", "![[Bobby#^b1]]", "[[Bobby#Intro]]", "[[Gone]]"]
    body = [rng.choice(forms) for _ in range(9)]
    fm = rng.randrange(1, 4)
    (root / "Kickoff.md").write_text(
        "---\nattendees: [" + ", ".join(['"[[Bobby]]"'] * fm) + "]\n---\n"
        + " and ".join(body) + "\n", encoding="utf-8")
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    shown = {"[[Bobby]]": "Bobby -> Bobby.md", "[[Bobby|B]]": "Bobby -> Bobby.md",
             "![[Bobby#^b1]]": "!Bobby#^b1 -> Bobby.md",
             "[[Bobby#Intro]]": "Bobby#Intro -> Bobby.md", "[[Gone]]": "Gone -> (dangling)"}
    want: dict[str, int] = {"Bobby -> Bobby.md": fm}
    for form in body:
        want[shown[form]] = want.get(shown[form], 0) + 1
    lines = [text if n == 1 else f"{text} ({n} times)" for text, n in want.items()]
    r = rmh("--vault", str(root), "links", "Kickoff")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == lines
    doc = json.loads(rmh("--vault", str(root), "links", "Kickoff", "--json").stdout)
    assert len(doc["links"]) == fm + len(body)
