"""Tests for the median-split quadrant test and its CLI.

Expected p-values are derived by hand from the hypergeometric counts so the tests do not
merely re-run the implementation.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import fisher_exact
from typer.testing import CliRunner

from gapscope.app.stats import stats_app
from gapscope.stats import (
    ENUMERATION_LIMIT,
    QuadrantResult,
    exact_p_value,
    hypergeom_p_value,
    median_split,
    quadrant_test,
)

# Ten models shaped like the seed study: adj-ZSCT median 23.3, miniF2F median 67.95, and every
# high-miniF2F model is also high on adj-ZSCT (empty forbidden cell).
SEED_NAMES = [f"m{i}" for i in range(10)]
SEED_X = [0.0, 5.0, 10.0, 15.8, 20.0, 26.6, 30.0, 40.0, 60.0, 74.0]
SEED_Y = [50.0, 55.0, 60.0, 62.0, 65.9, 70.0, 72.0, 80.0, 85.0, 88.0]


def _norm(text: str) -> str:
    """Strip rich panel borders and collapse whitespace so wrapped messages can be searched."""
    return re.sub(r"\s+", " ", re.sub(r"[│╭╮╰╯─]", " ", text))


# --------------------------------------------------------------------------- core statistics


def test_seed_case_empty_forbidden_cell_gives_one_over_252() -> None:
    r = quadrant_test(SEED_X, SEED_Y, SEED_NAMES)
    assert r.x_median == pytest.approx(23.3)
    assert r.y_median == pytest.approx(67.95)
    assert (r.high_x_high_y, r.high_x_low_y, r.low_x_high_y, r.low_x_low_y) == (5, 0, 0, 5)
    assert r.forbidden == 0
    assert r.forbidden_labels == ()
    assert r.n == 10
    assert r.n_placements == math.comb(10, 5) == 252
    assert r.p_method == "enumeration"
    assert r.p_exact == 1 / 252
    assert r.p_hypergeom == pytest.approx(1 / 252, rel=1e-12)
    assert round(r.p_exact, 3) == 0.004  # the value quoted in the paper


def test_seed_case_is_invariant_to_model_order() -> None:
    order = [3, 9, 0, 7, 1, 5, 2, 8, 6, 4]
    r = quadrant_test([SEED_X[i] for i in order], [SEED_Y[i] for i in order])
    assert r.p_exact == 1 / 252
    assert r.forbidden_labels is None  # no labels given


def test_hand_computed_case_with_one_forbidden_model() -> None:
    # x median 4.5 -> low X = models a..d; y median (4+6)/2 = 5 -> high Y = d, f, g, h.
    # Forbidden = {d}. P(F <= 1) = [C(4,0)C(4,4) + C(4,1)C(4,3)] / C(8,4) = (1 + 16) / 70.
    x = [1, 2, 3, 4, 5, 6, 7, 8]
    y = [1, 2, 3, 8, 4, 6, 7, 9]
    r = quadrant_test(x, y, list("abcdefgh"))
    assert (r.x_median, r.y_median) == (4.5, 5.0)
    assert (r.high_x_high_y, r.high_x_low_y, r.low_x_high_y, r.low_x_low_y) == (3, 1, 1, 3)
    assert r.forbidden == 1
    assert r.forbidden_labels == ("d",)
    assert r.n_placements == 70
    assert Fraction(r.p_exact).limit_denominator(1000) == Fraction(17, 70)
    assert r.p_hypergeom == pytest.approx(17 / 70, rel=1e-12)


def test_forbidden_cell_full_gives_p_one() -> None:
    # Perfect anti-concordance: every high-Y model is low on X -> nothing is depleted.
    r = quadrant_test([1, 2, 3, 4], [4, 3, 2, 1])
    assert r.forbidden == 2
    assert r.p_exact == 1.0
    assert r.p_hypergeom == pytest.approx(1.0)


def test_ties_at_median_count_as_low() -> None:
    # x median is 2 and three models sit on it: they are low, so only {3, 4} are high on X.
    # y median 3.5 -> high Y = models 3, 4, 5; model 3 (x = 2, tied -> low) is forbidden.
    # P(F <= 1) with n=6, n_low_x=4, k=3: [C(4,0)C(2,3) + C(4,1)C(2,2)] / C(6,3) = 4/20.
    x = [1, 2, 2, 2, 3, 4]
    y = [1, 2, 3, 4, 5, 6]
    med, high = median_split(x)
    assert med == 2.0
    assert high == (False, False, False, False, True, True)
    r = quadrant_test(x, y, ["a", "b", "c", "d", "e", "f"])
    assert (r.high_x_high_y, r.high_x_low_y, r.low_x_high_y, r.low_x_low_y) == (2, 0, 1, 3)
    assert r.forbidden_labels == ("d",)
    assert r.n_placements == 20
    assert r.p_exact == pytest.approx(0.2, rel=1e-12)
    assert r.p_hypergeom == pytest.approx(0.2, rel=1e-12)


def test_even_n_distinct_values_split_in_half_and_odd_n_median_is_low() -> None:
    assert sum(median_split([9.0, 1.0, 5.0, 3.0, 7.0, 2.0])[1]) == 3
    med, high = median_split([5, 1, 3, 2, 4])
    assert med == 3.0
    assert high == (True, False, False, False, True)


@pytest.mark.parametrize(
    ("x", "y", "match"),
    [
        ([1.0], [1.0], "at least 2 models"),
        ([], [], "at least 2 models"),
        ([1.0, 2.0], [1.0, 2.0, 3.0], "same length"),
        ([1.0, math.nan, 3.0], [1.0, 2.0, 3.0], r"x\[1\] is NaN"),
        ([1.0, 2.0, 3.0], [1.0, 2.0, math.nan], r"y\[2\] is NaN"),
        ([1.0, math.inf, 3.0], [1.0, 2.0, 3.0], "infinite"),
        ([4.0, 4.0, 4.0, 4.0], [1.0, 2.0, 3.0, 4.0], "x: degenerate median split"),
        ([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 3.0, 3.0], "y: degenerate median split"),
    ],
)
def test_bad_input_raises_clear_value_error(x: list[float], y: list[float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        quadrant_test(x, y)


def test_label_length_mismatch_rejected() -> None:
    with pytest.raises(ValueError, match="labels"):
        quadrant_test([1, 2, 3], [1, 2, 3], ["a", "b"])


def test_result_is_frozen_and_to_dict_is_json_roundtrippable() -> None:
    r = quadrant_test(SEED_X, SEED_Y, SEED_NAMES)
    assert isinstance(r, QuadrantResult)
    with pytest.raises(AttributeError):
        r.forbidden = 3  # type: ignore[misc]
    d = json.loads(json.dumps(r.to_dict()))
    assert d["p_exact"] == 1 / 252
    assert d["n_placements"] == 252
    assert d["forbidden"] == d["low_x_high_y"] == 0
    assert d["forbidden_labels"] == []
    assert quadrant_test(SEED_X, SEED_Y).to_dict()["forbidden_labels"] is None


def test_large_n_falls_back_to_exact_combinatorial_count() -> None:
    n = ENUMERATION_LIMIT + 10
    x = list(range(n))
    y = list(range(n))  # perfectly concordant -> forbidden cell empty
    r = quadrant_test(x, y)
    assert r.p_method == "combinatorial"
    assert r.forbidden == 0
    assert r.n_placements == math.comb(n, n // 2)
    assert r.p_exact == 1 / math.comb(n, n // 2)
    assert r.p_hypergeom == pytest.approx(r.p_exact, rel=1e-9)


def test_enumeration_at_the_limit_matches_combinatorial() -> None:
    for observed in range(0, 11):
        enum = exact_p_value(20, 10, 10, observed)
        comb = exact_p_value(20, 10, 10, observed, enumeration_limit=0)
        assert enum[2] == "enumeration"
        assert comb[2] == "combinatorial"
        assert enum[0] == comb[0]
        assert enum[1] == comb[1] == 184756


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=1, max_value=14).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.integers(min_value=0, max_value=n),
            st.integers(min_value=0, max_value=n),
            st.integers(min_value=0, max_value=n),
        )
    )
)
def test_exact_enumeration_agrees_with_hypergeom_on_random_margins(
    args: tuple[int, int, int, int],
) -> None:
    n, n_low_x, n_high_y, observed = args
    p_enum, total, method = exact_p_value(n, n_low_x, n_high_y, observed)
    assert method == "enumeration"
    assert total == math.comb(n, n_high_y)
    assert p_enum == pytest.approx(hypergeom_p_value(n, n_low_x, n_high_y, observed), abs=1e-12)
    assert p_enum == exact_p_value(n, n_low_x, n_high_y, observed, enumeration_limit=0)[0]


def _median(values: list[int]) -> float:
    """Median computed independently of the module (sorted middle element(s))."""
    s = sorted(values)
    mid = len(s) // 2
    return float(s[mid]) if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=2, max_value=14).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(min_value=0, max_value=6), min_size=n, max_size=n),
            st.lists(st.integers(min_value=0, max_value=6), min_size=n, max_size=n),
        )
    )
)
def test_quadrant_test_on_random_data(data: tuple[list[int], list[int]]) -> None:
    x, y = data
    try:
        r = quadrant_test(x, y)
    except ValueError as exc:
        # Small integer ranges produce ties; the only legitimate failure is a degenerate split.
        assert "degenerate" in str(exc)
        assert max(x) <= _median(x) or max(y) <= _median(y)
        return
    # The 2x2 table, recomputed directly from the documented rule (ties -> low).
    mx, my = _median(x), _median(y)
    forbidden = sum(1 for a, b in zip(x, y, strict=True) if a <= mx and b > my)
    assert r.forbidden == r.low_x_high_y == forbidden
    assert r.high_x_high_y + r.high_x_low_y + r.low_x_high_y + r.low_x_low_y == len(x)
    # Exact enumeration == scipy hypergeometric tail == one-sided Fisher exact test.
    assert r.p_exact == pytest.approx(r.p_hypergeom, abs=1e-12)
    table = [[r.low_x_high_y, r.low_x_low_y], [r.high_x_high_y, r.high_x_low_y]]
    fisher_p = fisher_exact(table, alternative="less").pvalue
    assert r.p_exact == pytest.approx(float(fisher_p), abs=1e-9)


# --------------------------------------------------------------------------------------- CLI

runner = CliRunner()


def _write_seed_csv(path: Path) -> Path:
    lines = ["model,adj_zsct,minif2f"]
    lines += [f"{n},{x},{y}" for n, x, y in zip(SEED_NAMES, SEED_X, SEED_Y, strict=True)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_cli_json_output(tmp_path: Path) -> None:
    csv_path = _write_seed_csv(tmp_path / "models.csv")
    args = ["quadrant", str(csv_path), "--x", "adj_zsct", "--y", "minif2f"]
    result = runner.invoke(stats_app, [*args, "--label", "model", "--json"])
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    assert envelope["command"] == "stats quadrant" and envelope["status"] == "ok"
    data = envelope["details"]
    assert data["p_exact"] == 1 / 252
    assert data["p_hypergeom"] == pytest.approx(1 / 252)
    assert data["n"] == 10
    assert data["n_placements"] == 252
    assert data["forbidden"] == 0
    assert data["x_median"] == pytest.approx(23.3)
    assert data["y_median"] == pytest.approx(67.95)
    assert data["forbidden_labels"] == []


def test_cli_json_lists_forbidden_labels(tmp_path: Path) -> None:
    csv_path = tmp_path / "m.csv"
    rows = zip("abcdefgh", [1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 8, 4, 6, 7, 9], strict=True)
    csv_path.write_text("name,x,y\n" + "".join(f"{n},{a},{b}\n" for n, a, b in rows))
    result = runner.invoke(
        stats_app, ["quadrant", str(csv_path), "--x", "x", "--y", "y", "--label", "name", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)["details"]
    assert data["forbidden_labels"] == ["d"]
    assert data["p_exact"] == pytest.approx(17 / 70)


def test_cli_human_output_contains_table_and_p_value(tmp_path: Path) -> None:
    csv_path = _write_seed_csv(tmp_path / "models.csv")
    result = runner.invoke(
        stats_app, ["quadrant", str(csv_path), "--x", "adj_zsct", "--y", "minif2f"]
    )
    assert result.exit_code == 0, result.output
    out = _norm(result.stdout)
    assert f"{1 / 252:.6g}" in out
    assert "forbidden" in out
    assert "252 placements" in out


@pytest.mark.parametrize(
    ("text", "extra", "expected"),
    [
        ("model,x,y\na,1,2\nb,2,3\n", ["--x", "nope_col"], ["nope_col"]),
        ("model,x,y\na,1,2\nb,2,3\n", ["--label", "who"], ["'who'"]),
        ("model,x,y\na,1,2\nb,2,3\nc,oops,4\nd,4,5\n", [], ["row 3", "oops"]),
        ("x,y\n1,2\nnan,3\n3,4\n", [], ["row 2"]),
        ("x,y\n1,2\n1,3\n1,4\n", [], ["degenerate"]),
        ("x,y\n", [], ["no data rows"]),
    ],
    ids=["missing-column", "missing-label", "non-numeric", "nan", "flat", "empty"],
)
def test_cli_bad_csv_exits_2_and_says_what_is_wrong(
    tmp_path: Path, text: str, extra: list[str], expected: list[str]
) -> None:
    csv_path = tmp_path / "bad.csv"
    csv_path.write_text(text, encoding="utf-8")
    result = runner.invoke(stats_app, ["quadrant", str(csv_path), "--x", "x", "--y", "y", *extra])
    assert result.exit_code == 2
    out = _norm(result.output)
    for part in expected:
        assert part in out


def test_cli_bom_header_is_read_as_the_column_name(tmp_path: Path) -> None:
    """Regression (issue 10, #12): a spreadsheet's BOM made the first column '\\ufeffmodel'."""
    csv_path = _write_seed_csv(tmp_path / "models.csv")
    csv_path.write_bytes(b"\xef\xbb\xbf" + csv_path.read_bytes())
    args = ["quadrant", str(csv_path), "--x", "adj_zsct", "--y", "minif2f", "--label", "model"]
    result = runner.invoke(stats_app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["details"]["p_exact"] == 1 / 252


def test_cli_binary_file_is_bad_input_not_a_traceback(tmp_path: Path) -> None:
    """Regression (issue 10, #12): a binary CSV raised UnicodeDecodeError / csv.Error."""
    cases = (
        ("png.csv", b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "png.csv is not a UTF-8 text CSV"),
        ("nul.csv", b"x,y\n1\x00,2\n", "nul.csv holds NUL bytes"),
    )
    for name, data, message in cases:
        path = tmp_path / name
        path.write_bytes(data)
        result = runner.invoke(stats_app, ["quadrant", str(path), "--x", "x", "--y", "y"])
        assert result.exit_code == 2, result.output
        assert isinstance(result.exception, SystemExit)
        assert message in _norm(result.output)
