"""[llm] settings that leave no sub-call possible are refused when the config is read (PLUG5,
session 31): `in_flight = 0` made every rlm_call wait for a slot that never came, to the
exec's deadline (the worker killed, its state lost); `timeout_s = 0` sent no request and said
"the exec's deadline is spent"."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import ConfigError, LlmSection, load
from harness.llm import Broker, ExecBudget

from .llm_stub_endpoint import ChatEndpoint

REFUSED = [(key, value) for key in ("in_flight", "timeout_s") for value in ("0", "-0.0")
           if not (key == "in_flight" and "." in value)]
TAKEN = [("in_flight", "1"), ("timeout_s", "0.001"), ("calls_per_exec", "0")]


@pytest.mark.parametrize(("key", "value"), REFUSED)
def test_a_setting_that_leaves_no_sub_call_is_a_config_error(
        tmp_path: Path, key: str, value: str) -> None:
    path = tmp_path / "rmh.toml"
    path.write_text(f'[llm]\nmodel = "m"\n{key} = {value}\n', encoding="utf-8")
    # "above 0" where the key has no upper bound, "between 1 and N" where it has one (API7)
    with pytest.raises(ConfigError, match=rf"\[llm\]\.{key} must be (above 0|between 1 and)"):
        load(vault=tmp_path, env={}, config_file=path)


@pytest.mark.parametrize(("key", "value"), TAKEN)
def test_the_smallest_working_settings_load(tmp_path: Path, key: str, value: str) -> None:
    path = tmp_path / "rmh.toml"
    path.write_text(f"[llm]\n{key} = {value}\n", encoding="utf-8")
    assert float(getattr(load(vault=tmp_path, env={}, config_file=path).llm, key)) == float(value)


def test_one_in_flight_answers_each_call() -> None:
    with ChatEndpoint() as endpoint, Broker.from_config(
            LlmSection(base_url=endpoint.url, model="m", in_flight=1)) as broker:
        budget: ExecBudget = broker.new_budget()
        answers = broker.batch([("s", f"q{i}") for i in range(3)], budget)
    assert answers == [f"answer to q{i}" for i in range(3)]
    assert endpoint.max_in_flight == 1
