"""The exact McNemar test at its smallest discordant counts, where an off-by-one in the
"nothing discordant" shortcut would still give p = 1 but lose the counts a reader sees."""

from __future__ import annotations

import pytest

from gapscope.stats.paired import mcnemar_exact


@pytest.mark.parametrize(
    ("a", "b", "counts", "p_value"),
    [
        ([True, True], [False, True], (1, 0), 1.0),  # one discordant pair: 2 * 1/2
        ([False, True, True], [True, True, True], (0, 1), 1.0),
        ([True, True, True], [False, False, False], (3, 0), 2 / 8),  # 2 * C(3,0) / 2^3
    ],
)
def test_mcnemar_exact_keeps_the_discordant_counts(
    a: list[bool], b: list[bool], counts: tuple[int, int], p_value: float
) -> None:
    result = mcnemar_exact(a, b)
    assert (result.n, result.b, result.c) == (len(a), *counts)
    assert result.p_value == pytest.approx(p_value)
