"""The emergent-language measures on message sets small enough to compute by hand.

All sets are over the full 2 x 2 meaning space (0,0), (0,1), (1,0), (1,1); the expected
values are worked out in each test's comment (entropies in bits, the ratios do not care).
"""

from __future__ import annotations

import pytest

from gapscope.s2b.language import bosdis, edit_distance, hamming, posdis, topsim

MEANINGS = [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_a_positional_code_is_fully_topographic_and_position_disentangled() -> None:
    # position i carries attribute i: every message distance equals the meaning distance
    messages = [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert topsim(MEANINGS, messages) == pytest.approx(1.0)
    assert posdis(MEANINGS, messages) == pytest.approx(1.0)
    # symbol 1 occurs [2, 1, 1, 0] times: H = 1.5, I with either attribute = 0.5, gap 0;
    # a positional code that reuses its tokens at every position has no bag-of-symbols structure
    assert bosdis(MEANINGS, messages) == pytest.approx(0.0)


def test_a_bag_of_symbols_code_is_bosdis_one_and_posdis_one_third() -> None:
    # attribute 1 -> symbol 1|2, attribute 2 -> symbol 3|4; the order flips with attribute 2
    messages = [(1, 3), (4, 1), (2, 3), (4, 2)]
    # each symbol's count is one attribute's indicator: gap = H = 1 bit
    assert bosdis(MEANINGS, messages) == pytest.approx(1.0)
    # position 1 = [1, 4, 2, 4]: H = 1.5, I(a1) = 0.5, I(a2) = 1, gap (1 - 0.5) / 1.5 = 1/3;
    # position 2 = [3, 1, 3, 2] the same
    assert posdis(MEANINGS, messages) == pytest.approx(1 / 3)
    # meaning distances [1, 1, 2, 2, 1, 1], edit distances [2, 1, 2, 2, 1, 2]:
    # centred ranks [-1, -1, 2, 2, -1, -1] and [1, -2, 1, 1, -2, 1], r = 6 / 12
    assert topsim(MEANINGS, messages) == pytest.approx(0.5)


def test_an_entangled_code_is_anti_topographic() -> None:
    # position 1 carries attribute 2, position 2 the XOR of both attributes
    messages = [(1, 1), (2, 2), (1, 2), (2, 1)]
    # position 1: gap 1; position 2: the XOR informs neither attribute alone, gap 0
    assert posdis(MEANINGS, messages) == pytest.approx(0.5)
    # meaning distances [1, 1, 2, 2, 1, 1], message distances [2, 1, 1, 1, 1, 2]: r = -6 / 12
    assert topsim(MEANINGS, messages) == pytest.approx(-0.5)


def test_a_constant_language_shows_no_structure_rather_than_nan() -> None:
    messages = [(1, 1)] * 4
    assert topsim(MEANINGS, messages) == 0.0
    assert posdis(MEANINGS, messages) == 0.0
    assert bosdis(MEANINGS, messages) == 0.0
    assert topsim(MEANINGS[:2], [(1, 1), (1, 2)]) == 0.0  # one pair: no correlation


def test_edit_distance_counts_a_shift_once_where_hamming_counts_every_position() -> None:
    assert edit_distance((1, 2, 3), (2, 3, 1)) == 2
    assert hamming((1, 2, 3), (2, 3, 1)) == 3
    assert edit_distance((1, 2), (1, 2, 3)) == 1 == hamming((1, 2), (1, 2, 3))
    # a positional code with tokens shared across positions: shifts make edit < Hamming,
    # so its edit-distance topsim falls short of 1 while its Hamming topsim does not
    meanings = [(0, 1, 2), (1, 2, 0), (0, 0, 0), (2, 2, 2)]
    messages = [(1, 2, 3), (2, 3, 1), (1, 1, 1), (3, 3, 3)]
    assert topsim(meanings, messages, distance="hamming") == pytest.approx(1.0)
    assert topsim(meanings, messages) < 1.0


def test_mismatched_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="4 meanings but 3 messages"):
        topsim(MEANINGS, [(1, 1)] * 3)
    with pytest.raises(ValueError, match="one length"):
        posdis(MEANINGS, [(1, 1), (1, 2), (2,), (2, 2)])
