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
        ({"query_size": 79}, "query_size (79) is too large"),
        ({"domain": "images"}, "domain must be"),
    ],
)
def test_impossible_parameters_are_rejected(kwargs: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(named)):
        S2BConfig(**kwargs)  # type: ignore[arg-type]


def test_scs_domain_is_not_limited_by_the_category_registry() -> None:
    assert S2BConfig(domain="scs", n_dim=11, v_min=2, v_max=2, query_size=2).n_dim == 11


# issue 10, item 6: sizes that used to hang or end in MemoryError minutes in are refused up
# front, and the message names the parameter and the limit.
@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"coverage": 10**9}, "coverage (1000000000) allows up to"),
        ({"coverage": 1e9}, "coverage must be an integer, got 1000000000.0"),
        ({"domain": "scs", "n_dim": 10**6, "query_size": 2}, "exceeds the limit of 100,000"),
        ({"domain": "scs", "n_dim": 40, "v_min": 2, "v_max": 2}, "(2^40) exceeds the limit"),
        ({"vocab_size": 10**9}, "vocab_size (1000000000) exceeds the limit of 10000"),
        ({"n_rounds": 10**6}, "n_rounds (1000000) exceeds the limit of 16"),
        ({"v_min": 2, "v_max": 10, "n_dim": 10}, "(10^10) exceeds the limit"),
        ({"k_shot": True}, "k_shot must be an integer"),
    ],
)
def test_impossible_sizes_are_rejected_with_the_limit(
    kwargs: dict[str, object], named: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(named)):
        S2BConfig(**kwargs)  # type: ignore[arg-type]


def test_sizes_at_the_limits_still_build_an_episode() -> None:
    from gapscope.s2b.config import MAX_ROUNDS
    from gapscope.s2b.episode import build_episode

    config = S2BConfig(domain="scs", n_dim=16, v_min=2, v_max=2, n_rounds=MAX_ROUNDS, coverage=2)
    assert len(build_episode(config, 0).query_games) == config.query_size


def test_table1_presets_resolve_the_seed_zsct_values_over_4_seeds() -> None:
    # mean ZSCT over 4 seeds moves in steps of 100 / (4 * query_size); the seed's Table-1
    # values 57.9, 87.0 and 92.6 must be reachable to one decimal
    for name in ("scs-0shot", "cat-0shot", "cat-10shot"):
        games = 4 * PRESETS[name].query_size
        for value in (57.9, 87.0, 92.6):
            assert any(round(100 * c / games, 1) == value for c in range(games + 1)), (name, value)


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


def test_cli_refuses_impossible_sizes_before_running() -> None:
    from typer.testing import CliRunner

    from gapscope.app.main import app

    runner = CliRunner()
    for args, named in [
        (["-S", "coverage=1000000000"], "coverage (1000000000) allows up to"),
        (["-S", "domain=scs", "-S", "n_dim=100000"], "exceeds the limit of 100,000"),
        (["--seeds", "100000000"], "seeds must be in [1, 10000]"),
    ]:
        result = runner.invoke(app, ["run", "s2b", "--listener", "rule", *args])
        assert result.exit_code == 2, result.output
        assert named in " ".join(result.output.split())
