"""README's `rmh.toml` examples are true: each loads (unknown keys are errors) with the
values it shows as the defaults, and together they name every key `harness/config.py` reads."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path
from typing import Any

from harness.config import Config, ConfigError, load
from vault.retrieval.pipeline import DEFAULT_WEIGHTS, PRIOR_SCALE

README = Path(__file__).resolve().parents[2] / "README.md"


def blocks() -> list[str]:
    return re.findall(r"```toml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def sections(cfg: Config) -> dict[str, Any]:
    return {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)
            if dataclasses.is_dataclass(getattr(cfg, f.name))}


def test_every_example_loads(tmp_path: Path) -> None:
    assert blocks()
    for i, text in enumerate(blocks()):
        root = tmp_path / str(i)
        root.mkdir()
        (root / "rmh.toml").write_text(text, encoding="utf-8")
        load(vault=str(root), env={})  # ConfigError on an unknown section or key


def test_the_configuration_block_shows_the_defaults_and_every_key() -> None:
    shown: dict[str, set[str]] = {}
    for text in blocks():
        for name, table in tomllib.loads(text).items():
            shown.setdefault(name, set()).update(table)
    defaults = sections(load(vault=None, env={}))
    config_block = tomllib.loads(blocks()[0])  # the Configuration section's: the defaults
    for name, section in defaults.items():
        keys = {f.name for f in dataclasses.fields(section)}
        assert sorted(keys - shown.get(name, set())) == [], name
        for key, value in config_block.get(name, {}).items():
            # shared_cache, graph_cache: shown as the paths their defaults resolve to;
            # weights: shown as the engine's own, which the default (an empty table) keeps
            if key not in ("shared_cache", "graph_cache", "weights"):
                assert getattr(section, key) == value, (name, key)


def test_the_retrieval_section_gives_the_engines_default_weights() -> None:
    """Retrieval's formulas name the weights of vault/retrieval/pipeline.py (the warmth factor
    said 0.1 after warmth was turned off: 0.0)."""
    text = re.sub(r"\s+", " ", README.read_text(encoding="utf-8"))
    w = DEFAULT_WEIGHTS
    fusion = re.search(r"\(weights: bm25 ([\d.]+), dense ([\d.]+), conjunctive ([\d.]+), "
                       r"graph ([\d.]+)\)", text)
    assert fusion is not None
    assert [float(x) for x in fusion.groups()] == [w["bm25"], w["dense"], w["conjunctive"],
                                                   w["graph"]]
    context = re.search(r"a link-context stage adds ([\d.]+) of", text)
    named = re.search(r"a named stage multiplies by ([\d.]+) the notes", text)
    warmth = re.search(r"`× \(1 \+ ([\d.]+)·a\(d\)\)`", text)
    prior = re.search(r"`× \(1 \+ ([\d.]+)·q·g\)`", text)
    assert context and named and warmth and prior
    assert float(context[1]) == w["context"]
    assert float(named[1]) == 1 + w["named"]
    assert float(warmth[1]) == w["warmth"]
    assert float(prior[1]) == PRIOR_SCALE


RANGE = re.compile(r"^(\w+) = (\S+)\s+#.*?(?:(\d+)\.\.(\d+)\b|>= (\d+)|\(above (\d+)\))")


def stated_ranges() -> list[tuple[str, str, str, float, float | None, bool]]:
    """(section, key, default, low, high or None, low excluded) of every README `rmh.toml`
    line whose comment states a numeric range: `1..100`, `>= 64`, `(above 0)`."""
    found = []
    for text in blocks():
        section = ""
        for line in text.splitlines():
            if (head := re.match(r"^\[(\w+)\]", line)) is not None:
                section = head[1]
            elif (m := RANGE.match(line)) is not None:
                key, default, lo, hi, at_least, above = m.groups()
                low = float(lo or at_least or above)
                found.append((section, key, default, low, float(hi) if hi else None,
                              above is not None))
    return found


def _loads(tmp_path: Path, section: str, key: str, value: str) -> bool:
    root = tmp_path / f"{section}-{key}-{value}"
    root.mkdir(exist_ok=True)  # a key README shows twice ([llm] in_flight)
    (root / "rmh.toml").write_text(f"[{section}]\n{key} = {value}\n", encoding="utf-8")
    try:
        load(vault=str(root), env={})
    except ConfigError:
        return False
    return True


def test_the_ranges_the_comments_state_are_the_ones_refused(tmp_path: Path) -> None:
    """Each range a comment states holds both ways: its ends load, a value past either is a
    `config_error` (session 32: `output_cap` said nothing and refused 0)."""
    ranges = stated_ranges()
    assert {(s, k) for s, k, *_ in ranges} >= {("search", "k"), ("sandbox", "memory_mb"),
                                               ("sandbox", "output_cap"), ("llm", "timeout_s"),
                                               ("hooks", "min_term_share")}
    for section, key, default, low, high, above in ranges:
        as_float = "." in default
        step = 0.5 if as_float else 1.0

        def shown(x: float, as_float: bool = as_float) -> str:
            return repr(x) if as_float else str(int(x))

        assert _loads(tmp_path, section, key, shown(low + step if above else low)), key
        assert not _loads(tmp_path, section, key, shown(low if above else low - step)), key
        if high is not None:
            assert _loads(tmp_path, section, key, shown(high)), key
            assert not _loads(tmp_path, section, key, shown(high + step)), key
