"""Obfuscation properties: identity at 0, bijectivity, validity, rates, determinism, macros."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gapscope.onng.lexicon import RESERVED, identifiers, is_identifier, rename
from gapscope.onng.obfuscate import build_renaming, perturb, perturbation_probability
from gapscope.onng.problemset import load_problem_set
from gapscope.onng.render import library_file, obfuscation

PS = load_problem_set()
VOCAB = PS.vocabulary()
ALL = PS.all_identifiers()
lams = st.floats(min_value=0.05, max_value=1.0)
seeds = st.integers(min_value=0, max_value=10_000)


def test_probability_formula() -> None:
    assert perturbation_probability(0.0) == 0.0
    assert perturbation_probability(1.0) == 1.0
    assert perturbation_probability(0.5) == pytest.approx(0.5**2.5)
    with pytest.raises(ValueError):
        perturbation_probability(1.5)


@given(seeds)
def test_lambda_zero_is_identity(seed: int) -> None:
    obf = obfuscation(PS, 0.0, seed)
    assert all(k == v for k, v in obf.renaming.items())
    assert obf.apply(PS.library) == PS.library


@settings(max_examples=25, deadline=None)
@given(lams, seeds)
def test_bijective_valid_fresh(lam: float, seed: int) -> None:
    renaming = build_renaming(VOCAB, lam, seed, reserved=ALL)
    assert set(renaming) == set(VOCAB)
    values = list(renaming.values())
    assert len(set(values)) == len(values)
    for original, new in renaming.items():
        if new == original:
            continue
        assert is_identifier(new), new
        assert new not in RESERVED
        assert new not in ALL, f"{original} -> {new} collides with a corpus name"


@settings(max_examples=10, deadline=None)
@given(lams, seeds)
def test_deterministic_per_seed(lam: float, seed: int) -> None:
    assert build_renaming(VOCAB, lam, seed, ALL) == build_renaming(VOCAB, lam, seed, ALL)


def test_different_seeds_differ() -> None:
    a = build_renaming(VOCAB, 1.0, 1, ALL)
    b = build_renaming(VOCAB, 1.0, 2, ALL)
    assert sum(a[k] != b[k] for k in VOCAB) > 0.9 * len(VOCAB)


@pytest.mark.parametrize("lam", [0.25, 0.5, 0.75, 1.0])
def test_edit_rates_match_formula(lam: float) -> None:
    """Per original character: deletions 0.3P, substitutions (1 - 0.3P) P, insertions 0.4P."""
    p = perturbation_probability(lam)
    rng = random.Random(0)
    chars = subs = ins = dels = 0
    for _ in range(4000):
        name = rng.choice(VOCAB)
        edit = perturb(name, lam, rng)
        chars += len(name)
        subs, ins, dels = subs + edit.substitutions, ins + edit.insertions, dels + edit.deletions
    tol = 0.015
    assert dels / chars == pytest.approx(0.3 * p, abs=tol)
    assert subs / chars == pytest.approx((1 - 0.3 * p) * p, abs=tol)
    assert ins / chars == pytest.approx(0.4 * p, abs=tol)


def test_changed_character_rate_of_renaming() -> None:
    """Over the renamed vocabulary (after rejection of invalid draws) the length change per
    character stays near the process's 0.4P - 0.3P = 0.1P."""
    growth = chars = 0
    for seed in range(20):
        renaming = build_renaming(VOCAB, 1.0, seed, ALL)
        growth += sum(len(v) - len(k) for k, v in renaming.items())
        chars += sum(len(k) for k in renaming)
    assert growth / chars == pytest.approx(0.1, abs=0.03)


@settings(max_examples=10, deadline=None)
@given(seeds)
def test_renaming_is_token_aware(seed: int) -> None:
    obf = obfuscation(PS, 1.0, seed)
    text = obf.apply("theorem add_zero_x : add_zero = MyNat.add ∧ Iff.rfl ∧ h.symm -- add")
    assert "add_zero_x" in text  # not a vocabulary token: kept whole
    assert obf.name("add_zero") in text and f"{obf.name('MyNat')}.{obf.name('add')}" in text
    assert "Iff.rfl" in text and "h.symm" in text and text.endswith("-- add")


def test_rename_keeps_strings_and_comments() -> None:
    assert rename('"add" /- add -/ add', {"add": "q"}.get) == '"add" /- add -/ q'


@pytest.mark.parametrize("seed", [0, 1])
def test_macros_for_renamed_tactics(seed: int) -> None:
    obf = obfuscation(PS, 1.0, seed)
    text = library_file(PS, obf)
    for tactic in PS.tactics:
        assert f'macro "{obf.name(tactic)}"' in text
    body_names = set(identifiers(text.split("universe u", 1)[1]))
    assert not (body_names & {"add_comm", "MyNat", "succ", "induction", "rw"})


def test_use_macro_defined_at_lambda_zero() -> None:
    text = library_file(PS, obfuscation(PS, 0.0, 0))
    assert 'macro "use" e:term' in text
    assert 'macro "rw"' not in text
