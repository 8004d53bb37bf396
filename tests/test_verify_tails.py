"""decentral.verify.top_share: the heavy-tail diagnostic of Monte-Carlo means."""

from __future__ import annotations

import numpy as np
import pytest

from decentral.verify import top_share


def test_exponential_samples_give_the_derived_share():
    # q (1 + ln(1/q)) for exponential samples (derivation in docs/concepts/claims.md)
    x = np.random.default_rng(0).exponential(size=400_000)
    assert top_share(x, 0.01) == pytest.approx(0.01 * (1 + np.log(100)), rel=0.03)


def test_pareto_tail_gives_the_derived_share_and_exceeds_the_exponential_one():
    # P(X > x) = x^-a, a = 1.5: share q^(1 - 1/a) = 0.01^(1/3) = 0.215 as n grows; the
    # sample share converges slowly (infinite variance): checked loosely and against the
    # exponential reference
    u = np.random.default_rng(1).uniform(size=1_000_000)
    x = u ** (-1 / 1.5)
    share = top_share(x, 0.01)
    assert 0.15 < share < 0.30
    assert share > 3 * 0.01 * (1 + np.log(100))


def test_counts_at_least_one_seed_and_handles_all_zero():
    assert top_share([0.0, 0.0, 4.0], fraction=0.01) == 1.0      # ceil(0.03) = 1 seed
    assert top_share([1.0, 3.0], fraction=0.5) == 0.75
    assert top_share([0.0, 0.0], fraction=0.5) == 0.0
    assert top_share(np.ones(10), fraction=1.0) == 1.0


@pytest.mark.parametrize("bad, match", [
    ([], "empty"),
    ([[1.0, 2.0]], "1-D"),
    ([1.0, -1.0], "non-negative"),
    ([1.0, np.nan], "NaN/inf"),
    (["a", "b"], "real numbers"),
])
def test_bad_samples_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        top_share(bad)


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.5, True, "0.1", None])
def test_bad_fraction_is_refused(fraction):
    with pytest.raises(ValueError, match="fraction"):
        top_share([1.0, 2.0], fraction)
