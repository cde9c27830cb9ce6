"""What each key of `rmh.toml` allows: one `Rule` per key, and the check that says, in one
line naming `[section].key`, what was wrong and what is allowed (a `ConfigError`).

The table `RULES` is the schema: every field of every section (harness/config_sections.py)
has a rule here (a test holds them equal), and the tests generate their bad values from it,
so a new key is checked and probed as soon as it is declared. The type of a key is its
default's (bool, int, float, str, or a table of numbers for `[search].weights`); an int key
takes only integers, a float key integers or floats. Relations between keys of one section
(`[rerank] keep <= top_n`) are `RELATIONS`. Only light modules are imported here (every
command and hook reads the configuration).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any

from .hooks_client import MAX_WAIT_S


class ConfigError(Exception):
    """The configuration is invalid (bad TOML, unknown key, wrong type, no vault)."""

    code_name = "config_error"


MAX_K = 100  # the most hits one search returns: [search].k and every surface's `k`
SIGNALS = ("asked", "asked_floor", "asked_walk", "bm25", "conjunctive", "context", "couse",
           "dense", "graph", "learned", "named", "passed", "protect", "spread", "warmth",
           "when")  # vault.DEFAULT_WEIGHTS' keys (a test holds them equal; this module stays light)
EXTRACTORS = ("auto", "rules", "spacy", "llm")
# [sandbox] tier: sandbox.TIER_NAMES' keys and sandbox.TIERS (a test holds them equal)
TIER_CHOICES = ("auto", "bwrap", "landlock", "seccomp", "bwrap+seccomp", "landlock+seccomp",
                "rlimits-only(unsafe)")
MAX_INT = 2**53  # counts and byte sizes: exact as a float, within SQLite's and numpy's int64
MAX_S = 86_400.0  # seconds: a day is "never" (= sandbox.config.MAX_DEADLINE_S: a test)
MAX_WEIGHT = 1e6  # a weight or scale this large already decides alone; 1e300 gave inf scores
PID_MAX_LIMIT = 1 << 22  # Linux's most tasks (pids) at all: [sandbox] max_tasks' bound
MIN_LOG_BOUND = 1024  # [learning] bounds: below it not one search's event fits
# Bounds a user reading the key expects (API7: each loaded up to 2^53 before):
MAX_IN_FLIGHT = 256  # LLM calls at once: each a thread (llm_entities' pool) and a connection
MAX_TOKENS = 1_000_000  # the longest answer asked of a model; none answers more
MAX_SLICE = 100_000_000  # characters of one sub-call's prompt: past any model's context
MAX_RERANK = 1_000  # notes the cross-encoder scores per search (~10 ms each on a CPU)
MAX_WORDS = 100_000  # words a hook injects into an agent's context (a book's chapter: 10^4)
_USER = re.compile(r"auto|[A-Za-z_][A-Za-z0-9_.-]*\$?|[1-9][0-9]*:[1-9][0-9]*")


@dataclass(frozen=True)
class Rule:
    """The values one key allows: a number in [low, high] (`above`: low itself excluded;
    `off`: 0 allowed too, "0 turns it off"), or a string among `choices`, matching `pattern`,
    or any text without control characters (`text`; a path or header cannot hold them)."""

    low: float = 0
    high: float = MAX_INT
    above: bool = False
    below: bool = False  # high itself excluded
    off: bool = False
    choices: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None
    text: str = "text without control characters (but whitespace around it)"
    secret: bool = False  # a refusal never shows the value

    def allowed(self, kind: type = float) -> str:
        """What the rule allows a key of type `kind`, in words (the end of every refusal)."""
        if kind is bool:
            return "true or false"
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if kind is str:
            return self.text
        low = _num(self.low)
        span = (f"above {low} and at most {_num(self.high)}" if self.above
                else f"at least {low} and below {_num(self.high)}" if self.below
                else f"between {low} and {_num(self.high)}")
        return f"0 (off) or {span}" if self.off else span

    def check_text(self, value: str) -> bool:
        if self.choices:
            return value in self.choices
        if self.pattern is not None:
            return self.pattern.fullmatch(value) is not None
        return not any(ord(c) < 32 or ord(c) == 127 for c in value.strip())

    def check_number(self, value: float) -> bool:
        """An int is compared exactly (2**53 + 1 is past MAX_INT, though not as a float)."""
        if self.off and value == 0:
            return True
        if not (isinstance(value, int) or math.isfinite(value)):
            return False
        low_ok = value > self.low if self.above else value >= self.low
        return low_ok and (value < self.high if self.below else value <= self.high)


def _num(x: float) -> str:
    if x == MAX_INT:
        return "2^53"
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


COUNT = Rule()  # 0..MAX_INT
POSITIVE = Rule(low=1)
SECONDS = Rule(above=True, high=MAX_S)
WEIGHT = Rule(high=MAX_WEIGHT)
TEXT = Rule()
FLAG = Rule()  # true or false: the type is the rule
# any string: a key no HTTP header can carry is named at its first use (llm_provider.py)
SECRET = Rule(secret=True, pattern=re.compile(".*", re.S), text="a string")
LOG_BOUND = Rule(low=MIN_LOG_BOUND, off=True)

RULES: dict[str, dict[str, Rule]] = {
    "search": {"k": Rule(low=1, high=MAX_K), "rrf_k": COUNT, "max_note_units": COUNT,
               "cooccurrence": WEIGHT, "rrf_depth": COUNT, "push_above": COUNT,
               "dense_approx_above": COUNT, "dense_nprobe": POSITIVE, "redundancy_head": COUNT,
               "dense_retrain_max_rows": COUNT, "dense_retrain_share": Rule(high=1),
               "scope": COUNT, "prior_scale": WEIGHT, "calibrate": FLAG, "cloze": FLAG,
               "second_pass": FLAG, "weights": WEIGHT},
    "rerank": {"model_dir": TEXT, "top_n": Rule(low=1, high=MAX_RERANK),
               "keep": Rule(low=1, high=MAX_RERANK), "timeout_s": SECONDS},
    "llm": {"base_url": TEXT, "api_key": SECRET, "model": TEXT, "timeout_s": SECONDS,
            "max_retries": Rule(high=100), "calls_per_exec": COUNT,
            "in_flight": Rule(low=1, high=MAX_IN_FLIGHT),
            "slice_max_chars": Rule(low=1, high=MAX_SLICE),
            "max_tokens": Rule(low=1, high=MAX_TOKENS),
            "temperature": Rule(high=2), "retry_backoff_s": Rule(high=MAX_S)},
    "sandbox": {"deadline_s": SECONDS, "memory_mb": Rule(low=64, high=1 << 40),
                "output_cap": POSITIVE, "unsafe_no_sandbox": FLAG,
                "tier": Rule(choices=TIER_CHOICES),
                "write_bytes_per_exec": COUNT, "notes_per_exec": COUNT,
                "write_bytes_per_session": COUNT, "notes_per_session": COUNT,
                "worker_user": Rule(pattern=_USER, text='"auto", a user name, or "UID:GID" '
                                    "(numbers; never uid or gid 0)"),
                "max_tasks": Rule(low=2, high=PID_MAX_LIMIT)},
    "embed": {"shared_cache": TEXT, "graph_cache": TEXT},
    "hooks": {"prompt_words": Rule(high=MAX_WORDS), "start_words": Rule(high=MAX_WORDS),
              "min_term_share": Rule(high=1),
              "k": Rule(low=1, high=MAX_K), "engine": FLAG, "dense": FLAG, "daemon": FLAG,
              "daemon_wait_s": Rule(high=MAX_WAIT_S)},
    "extract": {"entities": Rule(choices=EXTRACTORS), "llm_max_calls": COUNT,
                "file_bytes": COUNT},
    "learning": {"session_bytes": LOG_BOUND, "log_bytes": LOG_BOUND},
}
# [search].weights: each signal's own rule (`asked_floor`: vault/learning/asked.py `gate`)
WEIGHT_RULES: dict[str, Rule] = {s: Rule(high=1, below=True) if s == "asked_floor" else WEIGHT
                                 for s in SIGNALS}


def _keep_within_top_n(section: Any) -> str | None:
    if section.keep > section.top_n:
        return (f"rmh.toml: [rerank].keep must be at most [rerank].top_n ({section.top_n}: "
                f"only the top_n reranked can be kept first), not {section.keep}")
    return None


# Per section: checks across its keys, each a refusal in words or None
RELATIONS: dict[str, tuple[Callable[[Any], str | None], ...]] = {
    "rerank": (_keep_within_top_n,),
}

_TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def type_of(default: object) -> type:
    """The TOML type a key takes, from its default (a Mapping: a table)."""
    if isinstance(default, Mapping):
        return dict
    return type(default)


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value) if isinstance(value, float) or abs(value) < 10**20 else "a huge integer"
    if isinstance(value, str):
        return repr(value[:60] + ("..." if len(value) > 60 else ""))
    if isinstance(value, list):
        return "an array"
    return "a table" if isinstance(value, dict) else type(value).__name__


def _kind(value: object) -> str:
    """A TOML value's kind, never the value (a secret's)."""
    kinds = ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (list, "an array"),
             (dict, "a table"))
    return next((word for t, word in kinds if isinstance(value, t)), "a date or time")


def refuse(where: str, rule: Rule, value: object, kind: type = float) -> ConfigError:
    """`where` = "[section].key": the one-line refusal of `value` (a secret's: not shown)."""
    shown = "what it is (not shown: a secret)" if rule.secret else _shown(value)
    return ConfigError(f"rmh.toml: {where} must be {rule.allowed(kind)}, not {shown}")


def check_value(section: str, key: str, kind: type, value: object) -> object:
    """`value` for `[section].key` of type `kind`, checked against its rule (ConfigError);
    a float key's integer comes back as a float, a table as a dict."""
    where = f"[{section}].{key}"
    if kind is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"rmh.toml: {where} must be a table of numbers "
                              "({ signal = number, ... }), not " + _shown(value))
        unknown = sorted(set(value) - set(SIGNALS))
        if unknown:  # a typo (`bm52`) meant nothing; every command reads the config
            raise ConfigError(f"rmh.toml: {where}.{unknown[0]} is no signal "
                              f"(known: {', '.join(SIGNALS)})")
        return {k: check_value(section, f"{key}.{k}", float, v) for k, v in value.items()}
    rule = WEIGHT_RULES[key.split(".", 1)[1]] if "." in key else RULES[section][key]
    if kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"rmh.toml: {where} must be true or false, not {_shown(value)}")
        return value
    if kind is str:
        if not isinstance(value, str):
            allowed = rule.allowed(str)
            raise ConfigError(f"rmh.toml: {where} has the wrong type: it must be a string"
                              + ("" if allowed == "a string" else f" ({allowed})") + ", not "
                              + (_kind(value) if rule.secret else _shown(value)))
        if not rule.check_text(value):
            raise refuse(where, rule, value, str)
        return value
    numeric = isinstance(value, int) if kind is int else isinstance(value, (int, float))
    if isinstance(value, bool) or not numeric:
        raise ConfigError(f"rmh.toml: {where} has the wrong type: it must be "
                          f"{_TYPE_WORDS[kind]} {rule.allowed()}, not {_shown(value)}")
    assert isinstance(value, (int, float))
    if not rule.check_number(value):  # an integer of any length too: tomllib takes them
        raise refuse(where, rule, value)
    return float(value) if kind is float else value


def check_section(name: str, section: Any) -> None:
    """Every key of a built section against its rule, then the section's relations: a
    section value made in code (`LlmSection(in_flight=0)`) is refused as the file's is."""
    for f in fields(section):
        default = f.default if f.default_factory is MISSING else f.default_factory()
        check_value(name, f.name, type_of(default), getattr(section, f.name))
    for relation in RELATIONS.get(name, ()):
        problem = relation(section)
        if problem is not None:
            raise ConfigError(problem)

