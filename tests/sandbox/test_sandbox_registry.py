"""Every tier is one registered object (sandbox/registry.py): each name config accepts is
registered, the probe lists only registered tiers strongest first, and each tier's guard plan
holds exactly the entries that tier needs."""

from __future__ import annotations

import os

from sandbox import TIER_BWRAP, TIER_LANDLOCK, TIER_SECCOMP, TIER_UNSAFE, TIERS, probe
from sandbox.config import SandboxConfig
from sandbox.identity import worker_identity
from sandbox.registry import REGISTRY, tier, tier_limits
from sandbox.root_probe import private_root_possible

COMMON = {"rlimits", "drop_caps", "max_tasks"}


def test_every_tier_is_registered_once_in_strength_order() -> None:
    assert tuple(REGISTRY) == TIERS
    assert all(tier_limits(t) for t in TIERS)
    assert [t for t in TIERS if tier(t).auto] == [TIER_BWRAP, TIER_LANDLOCK]
    available = probe().available
    assert list(available) == [t for t in TIERS if t in available]
    assert TIER_UNSAFE not in available


def test_each_tiers_guard_plan_holds_what_it_needs() -> None:
    config = SandboxConfig()
    identity = {"identity"} if worker_identity(config.worker_user) is not None else set()
    root = {"root"} if private_root_possible() else set()
    keys = {name: set(tier(name).guard_plan(config, b"\0" * 8)) for name in TIERS}
    assert keys[TIER_BWRAP] == COMMON | {"remount_ro", "scratch_files", "seccomp"}
    assert keys[TIER_LANDLOCK] == COMMON | {"landlock", "userns", "seccomp"} | identity | root
    assert keys[TIER_SECCOMP] == COMMON | {"userns", "seccomp", "root"} | identity
    seccomp_root = tier(TIER_SECCOMP).guard_plan(config, None)["root"]
    assert seccomp_root["whole_tree"] is True  # no Landlock behind it: every mount read-only
    if root:
        assert tier(TIER_LANDLOCK).guard_plan(config, None)["root"] == {
            key: value for key, value in seccomp_root.items() if key != "whole_tree"}
    assert keys[TIER_UNSAFE] == COMMON
    assert tier(TIER_UNSAFE).guard_plan(config, None)["drop_caps"] is False
    assert tier(TIER_SECCOMP).read_only_filter and not tier(TIER_LANDLOCK).read_only_filter
    devices = tier(TIER_BWRAP).guard_plan(config, None)["remount_ro"]
    assert devices and all(os.path.exists(d) for d in devices)
