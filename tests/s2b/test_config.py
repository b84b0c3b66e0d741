"""Impossible parameters fail fast with a message naming the parameter."""

from __future__ import annotations

import re

import pytest

from gapscope.s2b.config import PRESETS, ConfigError, S2BConfig, resolve


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"v_min": 5, "v_max": 4}, "v_min (5) must not exceed v_max (4)"),
        ({"n_dim": 11, "query_size": 2}, "n_dim (11) exceeds the 10 concept classes"),
        ({"v_max": 11}, "v_max (11) exceeds the smallest category"),
        ({"k_shot": 13}, "k_shot (13) exceeds the supporting phase"),
        ({"v_min": 1}, "v_min must be >= 2"),
        ({"coverage": 0}, "coverage must be >= 1"),
        ({"vocab_size": 3}, "vocab_size (3) must be >= v_max (4)"),
        ({"query_size": 30}, "query_size (30) is too large"),
        ({"domain": "images"}, "domain must be"),
    ],
)
def test_impossible_parameters_are_rejected(kwargs: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(named)):
        S2BConfig(**kwargs)  # type: ignore[arg-type]


def test_scs_domain_is_not_limited_by_the_category_registry() -> None:
    assert S2BConfig(domain="scs", n_dim=11, query_size=2).n_dim == 11


def test_unknown_preset_and_unknown_override_are_named() -> None:
    with pytest.raises(ConfigError, match="unknown preset 'cat-5shot'"):
        resolve("cat-5shot")
    with pytest.raises(ConfigError, match=r"unknown S2B parameter.*kshot"):
        resolve("cat-10shot", kshot=3)


def test_presets_match_the_seed_table_configurations() -> None:
    assert PRESETS["scs-0shot"].domain == "scs" and PRESETS["scs-0shot"].k_shot == 0
    assert PRESETS["cat-0shot"].domain == "categorical" and PRESETS["cat-0shot"].k_shot == 0
    assert PRESETS["cat-10shot"].domain == "categorical" and PRESETS["cat-10shot"].k_shot == 10
    assert resolve("cat-10shot", k_shot=5).k_shot == 5
