"""A search hit's snippet (and `context`, which quotes it) shows a note as Obsidian's reading
view does: comments (`%% %%`, `<!-- -->`) left out, code and math as written: `[[x]]` in code
is no link to strip and a `# line` of a fenced block no heading to drop. Before (session 42,
REVIEW42) a snippet read "Owner: Alice. %% comment Hidden %% <!-- HtmlHidden -->" and a code
line `x = "[[y]]"` as `x = "y"`, its `# comment` line gone."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.forks import run_cli
from vault.retrieval.snippets import readable, snippet

ROOT = Path(__file__).resolve().parents[2]

NOTE = """# Billing

Billing service runs nightly. Owner: [[Alice]]. %% private [[Hidden]] zzsecret %%
<!-- draft zzdraft [[HtmlHidden]] -->

```python
# retry the qqcode job
x = "[[NotALink]]"
```
"""


def rmh(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RMH_VAULT", "RMH_CONFIG", "RMH_MODEL", "OPENAI_BASE_URL")}
    env["PYTHONPATH"] = str(ROOT)
    return run_cli(["--vault", str(root), *args], env=env, cwd=ROOT, timeout=180)


def test_search_and_context_show_no_comment_and_code_as_written(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Billing.md").write_text(NOTE, "utf-8")
    (root / "Alice.md").write_text("Alice owns [[Billing]].\n", "utf-8")
    assert rmh(root, "init", "--no-dense").returncode == 0
    for query in ("billing owner nightly", "zzsecret zzdraft", "qqcode retry job"):
        r = rmh(root, "search", query, "--no-dense", "--json")
        assert r.returncode == 0, r.stderr
        hit = next(h for h in json.loads(r.stdout)["hits"] if h["note"] == "Billing.md")
        for hidden in ("zzsecret", "zzdraft", "Hidden", "%%", "<!--"):
            assert hidden not in hit["snippet"], (query, hit["snippet"])
        if query.startswith("qqcode"):
            assert '# retry the qqcode job x = "[[NotALink]]"' in hit["snippet"], hit["snippet"]
    c = rmh(root, "context", "billing owner nightly", "--budget", "60", "--no-dense", "--json")
    assert c.returncode == 0, c.stderr
    text = json.loads(c.stdout)["text"]
    assert "Owner: Alice." in text and "zzsecret" not in text and "%%" not in text, text


WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta"])
PROSE = st.lists(WORDS, min_size=1, max_size=4).map(lambda w: " ".join(w) + ".")
COMMENT = st.sampled_from(["%% zzsecret [[Gone]] %%", "<!-- zzsecret [[Gone]] -->",
                           "%% zzsecret\nzzsecret %%"])
FENCE = st.sampled_from(["```\n# qqcode [[Kept]]\n```", "~~~js\n# qqcode [[Kept]]\n~~~"])
INLINE = st.just("`[[Kept]]`")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(PROSE, COMMENT, FENCE, INLINE), min_size=1, max_size=8),
       st.sampled_from(["\n", "\r\n", "\n\n"]))
def test_comments_never_shown_code_shown_as_written(pieces: list[str], sep: str) -> None:
    body = sep.join(p if sep == "\n" or "\n" not in p else p.replace("\n", sep)
                    for p in pieces)
    shown = " ".join(readable(body))
    assert "zzsecret" not in shown and "Gone" not in shown, (body, shown)
    assert shown.count("[[Kept]]") == "".join(pieces).count("[[Kept]]"), (body, shown)
    fenced = sum(p.count("# qqcode") for p in pieces if p[:3] in ("```", "~~~"))
    assert shown.count("# qqcode [[Kept]]") == fenced, (body, shown)
    for query in ("zzsecret", "qqcode kept", "alpha"):
        assert "zzsecret" not in snippet(body, query)
