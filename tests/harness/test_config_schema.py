"""Every key of rmh.toml refuses what its rule does not allow, in one line naming
`[section].key` and what is allowed; the cases are generated from the schema itself
(harness/config_schema.py RULES and each section's defaults), so a new key is probed as soon
as it is declared. Before (session 31, NEWUSER3): `[hooks] min_term_share = 2`, `[rerank]
top_n = 0`, `keep > top_n`, `[learning] log_bytes = 10`, `[sandbox] tier = "nope"`, a
weight of 1e300, a path holding NUL and 2**63 where a count goes all loaded without a word."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest

from harness.config import _SECTIONS, ConfigError, load
from harness.config_schema import (
    MAX_S,
    RULES,
    SIGNALS,
    TIER_CHOICES,
    WEIGHT_RULES,
    Rule,
    type_of,
)
from sandbox import TIER_NAMES, TIERS
from sandbox.config import MAX_DEADLINE_S
from tests.harness.test_cli_damaged_state import FRAMES
from tests.harness.test_cli_notes import make_vault, rmh

WRONG = {bool: True, int: 7, float: 0.5, str: "x", list: [1], dict: {"a": 1}}


def toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value == math.inf else
                                                "-inf" if value == -math.inf else repr(value))
    if isinstance(value, (int, str)):
        return json.dumps(value) if isinstance(value, str) else str(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{ " + ", ".join(f"{k} = {toml(v)}" for k, v in value.items()) + " }"


def keys() -> list[tuple[str, str, type, Rule]]:
    """(section, key, its type, its rule) for every key; [search].weights as one per signal."""
    out: list[tuple[str, str, type, Rule]] = []
    for name, cls in _SECTIONS.items():
        for f in dataclasses.fields(cls):
            kind = type_of(getattr(cls(), f.name))
            if kind is dict:
                out += [(name, f"{f.name}.{s}", float, WEIGHT_RULES[s]) for s in SIGNALS]
            else:
                out.append((name, f.name, kind, RULES[name][f.name]))
    return out


def bad(kind: type, rule: Rule) -> list[object]:
    """Values the rule refuses: every other TOML type, and just past each edge of its range."""
    out = [v for t, v in WRONG.items() if t is not kind and not (kind is float and t is int)]
    if kind is str:
        if rule.choices:
            out += ["", "no-such-choice", rule.choices[0].upper() + "!"]
        elif rule.pattern is not None:
            out += [v for v in ("", "0:0", "a:b", "x\x00") if not rule.check_text(v)]
        else:
            out += ["a\x00b", "a\nb"]
    elif kind is not bool:
        below = rule.low if rule.above else rule.low - 1
        out += [v for v in (below, -1, rule.high, rule.high + 1, 10**30, 2**63)
                if not rule.check_number(v)]
        if rule.off and rule.low > 1:
            out.append(rule.low - 1)  # between 0 (off) and the least bound
        if kind is float:
            out += [math.nan, math.inf, -math.inf, rule.high * 2]
    return out


def good(kind: type, rule: Rule) -> list[object]:
    """The edges the rule allows."""
    if kind is bool:
        return [True, False]
    if kind is str:
        return list(rule.choices[:1]) or (["auto", "rmh-sandbox", "4321:4321"]
                                          if rule.pattern is not None else ["plain text"])
    top = rule.high / 2 if rule.below else rule.high
    edges = [top, rule.low + 1 if rule.above else rule.low] + ([0] if rule.off else [])
    return [float(v) if kind is float else int(v) for v in edges]


CASES = [(s, k, kind, rule, v) for s, k, kind, rule in keys() for v in bad(kind, rule)]


def text_of(section: str, key: str, value: object) -> str:
    if "." in key:
        outer, inner = key.split(".")
        return f"[{section}]\n{outer} = {{ {inner} = {toml(value)} }}\n"
    return f"[{section}]\n{key} = {toml(value)}\n"


def test_every_key_has_a_rule_and_the_copied_names_are_the_sources() -> None:
    for name, cls in _SECTIONS.items():
        assert sorted(f.name for f in dataclasses.fields(cls)) == sorted(RULES[name]), name
    assert sorted(RULES) == sorted(_SECTIONS)
    assert set(TIER_CHOICES) == set(TIER_NAMES) | set(TIERS)
    assert MAX_S == MAX_DEADLINE_S  # `[sandbox] deadline_s` and `--deadline` share the bound
    assert len(CASES) > 300  # the generator reaches every key


@pytest.mark.parametrize(("section", "key", "kind", "rule", "value"), CASES,
                         ids=[f"{c[0]}.{c[1]}={c[4]!r}"[:80] for c in CASES])
def test_a_value_its_rule_refuses_is_one_line_naming_key_and_allowed(
        tmp_path: Path, section: str, key: str, kind: type, rule: Rule, value: object) -> None:
    path = tmp_path / "rmh.toml"
    path.write_text(text_of(section, key, value), encoding="utf-8")
    with pytest.raises(ConfigError) as got:
        load(vault=tmp_path, env={}, config_file=path)
    message = str(got.value)
    assert message.startswith(f"rmh.toml: [{section}].{key} ") and "\n" not in message, message
    assert rule.allowed(kind) in message, message


@pytest.mark.parametrize(("section", "key", "kind", "rule"), keys(),
                         ids=[f"{s}.{k}" for s, k, _, _ in keys()])
def test_the_edges_its_rule_allows_load(
        tmp_path: Path, section: str, key: str, kind: type, rule: Rule) -> None:
    path = tmp_path / "rmh.toml"
    for value in good(kind, rule):
        top = int(RULES["rerank"]["top_n"].high)  # keep's edge needs a top_n as high
        extra = f"top_n = {top}\n" if (section, key) == ("rerank", "keep") else ""
        path.write_text(text_of(section, key, value) + extra, encoding="utf-8")
        got: Any = getattr(load(vault=tmp_path, env={}, config_file=path), section)
        outer, _, inner = key.partition(".")
        held = getattr(got, outer)[inner] if inner else getattr(got, outer)
        assert held == value or str(held).endswith(f"/{value}"), (key, value)  # paths: beside


def test_keep_past_top_n_is_refused_naming_both(tmp_path: Path) -> None:
    path = tmp_path / "rmh.toml"
    path.write_text("[rerank]\ntop_n = 5\nkeep = 20\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[rerank\]\.keep must be at most \[rerank\]\.top_n"):
        load(vault=tmp_path, env={}, config_file=path)
    path.write_text("[rerank]\ntop_n = 5\n", encoding="utf-8")  # keep's default follows
    assert load(vault=tmp_path, env={}, config_file=path).rerank.keep == 5


def test_an_environment_value_it_refuses_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^\$RMH_RERANK_MODEL: \[rerank\]\.model_dir must"):
        load(vault=tmp_path, env={"RMH_RERANK_MODEL": "a\x01b"})


def test_a_secret_is_never_shown(tmp_path: Path) -> None:
    path = tmp_path / "rmh.toml"
    path.write_text("[llm]\napi_key = 12345678\n", encoding="utf-8")
    with pytest.raises(ConfigError) as got:
        load(vault=tmp_path, env={}, config_file=path)
    assert "12345678" not in str(got.value) and "[llm].api_key" in str(got.value)


@pytest.mark.slow
def test_status_doctor_and_serve_say_it_for_a_bad_value_of_each_section(tmp_path: Path) -> None:
    """Through real processes: exit 1, one stderr line (`--json`: kind config_error); `rmh
    serve` answers every call with the reason (the last generated case of each section)."""
    root = make_vault(tmp_path)
    firsts: dict[str, tuple[str, object]] = {}
    for section, key, _, _, value in CASES:
        # a scalar of its range, not only a type; not a path the test's environment sets
        if not isinstance(value, (list, dict)) and section != "embed":
            firsts[section] = (key, value)
    for section, (key, value) in sorted(firsts.items()):
        (root / "rmh.toml").write_text(text_of(section, key, value), encoding="utf-8")
        where = f"rmh.toml: [{section}].{key} "
        for argv in (("status", "--json"), ("doctor", "--json")):
            r = rmh("--vault", str(root), *argv)
            assert r.returncode == 1 and r.stderr.count("\n") == 1, (argv, r.stderr)
            assert r.stderr.startswith(f"rmh: {where}"), (argv, r.stderr)
            assert json.loads(r.stdout)["error"]["kind"] == "config_error"
        r = rmh("--vault", str(root), "serve", "--no-dense",
                stdin="".join(json.dumps(f) + "\n" for f in FRAMES))
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        answer = {a["id"]: a for a in map(json.loads, r.stdout.splitlines())}[3]
        assert answer["error"]["data"]["reason"].startswith(where), answer
