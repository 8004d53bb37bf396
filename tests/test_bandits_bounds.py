"""Tests of Dec_UCB's bound calculators and the first version's graphs (decentral.bandits.bounds,
decentral.datasets.zhu2021): the reference values of d, |N_i|, pi, rho2, c and L on the
paper's graphs and on Metropolis stars, L against a brute-force scan and the authors' Lambert-W
closed form, c against an eigendecomposition, c <= 1 for symmetric W, defective and
disconnected graphs, the bound's shape (increasing in T, L-dominated at T = 1000, ln T slope),
the ln T coefficient identities, hypothesis warnings, policies as input, and bad input.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.special import lambertw

import decentral.graphs as g
from decentral.bandits import (
    BOUND_TERMS,
    bernoulli,
    bernoulli_kl_np,
    burn_in_time,
    dec_kl_ucb_log_coefficient,
    dec_ucb,
    dec_ucb1,
    dec_ucb1_log_coefficient,
    graph_constants,
    heterogeneous,
    kl_ucb_log_coefficient,
    lai_robbins_constant,
    paper_graph,
    paper_graph_kind,
    paper_graph_names,
    paper_graph_order,
    theorem_bound,
    theorem_log_coefficient,
    truncated_normal,
    ucb1,
    ucb1_log_coefficient,
)
from decentral.hypotheses import HypothesisWarning

# The means of the first version's selected-graph experiments (Figures 11-13).
MEANS = [0.10, 0.25, 0.45, 0.65, 0.75, 0.90]


def _edges(n, pairs, *, undirected=False):
    """Adjacency from (sender, receiver) pairs; both directions for undirected pairs."""
    pairs = list(pairs)
    if undirected:
        pairs += [(b, a) for a, b in pairs]
    return g.from_edges(n, pairs)


def _successors(table):
    return [(j, i) for j, receivers in table.items() for i in receivers]


STRONGLY = _edges(6, _successors({0: [1, 4], 1: [0, 2, 3, 4], 2: [0, 3, 4, 5],
                                  3: [1, 2, 4, 5], 4: [0, 2, 3], 5: [1, 4]}))
UNDIRECTED = _edges(6, [(0, 1), (0, 4), (1, 3), (1, 5), (2, 3), (3, 5), (4, 5)],
                    undirected=True)
WEAKLY = _edges(6, _successors({0: [1, 3, 4], 1: [0, 2, 3, 4], 2: [1, 3, 4], 3: [],
                                4: [0, 1, 5], 5: [0, 2, 3]}))
EXPECTED_GRAPHS = {
    "strongly": STRONGLY,
    "undirected": UNDIRECTED,
    "weakly": WEAKLY,
    "undirected_two_neighbors": _edges(6, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0),
                                           (0, 2)], undirected=True),
    "undirected_path": _edges(6, [(k, k + 1) for k in range(5)], undirected=True),
    "weakly_path": _edges(6, [(k, k + 1) for k in range(5)]),
}


def _no_hypothesis_warning(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", HypothesisWarning)
        return fn(*args, **kwargs)


# ---- the bundled graphs ---------------------------------------------------------------------

def test_paper_graphs_are_the_edge_lists():
    assert paper_graph_names() == tuple(EXPECTED_GRAPHS)
    for name, expected in EXPECTED_GRAPHS.items():
        adj = paper_graph(name)
        assert adj.dtype == bool and adj.shape == (6, 6)
        np.testing.assert_array_equal(adj, expected, err_msg=name)
        assert np.all(np.diag(adj))
    assert [paper_graph_kind(n) for n in paper_graph_names()] == [
        "strong", "undirected", "weak", "undirected", "undirected", "weak"]


def test_paper_graph_kinds_match_connectivity():
    for name in paper_graph_names():
        adj = paper_graph(name)
        kind = paper_graph_kind(name)
        assert np.array_equal(adj, adj.T) == (kind == "undirected"), name
        assert g.is_strongly_connected(adj) == (kind != "weak"), name


def test_undirected_files_read_the_same_as_directed():
    from importlib import resources

    for name in paper_graph_names():
        if paper_graph_kind(name) != "undirected":
            continue
        path = resources.files("decentral.datasets").joinpath("data", "zhu2021", f"{name}.adjlist")
        with resources.as_file(path) as p:
            np.testing.assert_array_equal(g.read_adjlist(p, directed=True), paper_graph(name))


def test_first_appearance_order():
    assert paper_graph_order("strongly") == (0, 1, 4, 2, 3, 5)
    assert paper_graph_order("undirected") == (0, 1, 4, 3, 5, 2)
    for name in paper_graph_names():
        order = list(paper_graph_order(name))
        assert sorted(order) == list(range(6))
        np.testing.assert_array_equal(paper_graph(name, order="first_appearance"),
                                      paper_graph(name)[np.ix_(order, order)])


def test_constants_follow_a_relabelling():
    order = list(paper_graph_order("strongly"))
    by_label = graph_constants(paper_graph("strongly"), rule="row")
    by_file = graph_constants(paper_graph("strongly", order="first_appearance"), rule="row")
    assert by_file.neighbourhood_sizes.tolist() == by_label.neighbourhood_sizes[order].tolist()
    np.testing.assert_allclose(by_file.perron_vector, by_label.perron_vector[order], atol=1e-12)
    assert (by_file.diameter, by_file.mixing_constant_ceil, by_file.burn_in) == \
        (by_label.diameter, by_label.mixing_constant_ceil, by_label.burn_in)
    assert by_file.mixing_rate == pytest.approx(by_label.mixing_rate, abs=1e-12)


# ---- reference values -----------------------------------------------------------------------

def test_undirected_metropolis_reference():
    k = graph_constants(g.metropolis(paper_graph("undirected")))
    assert k.neighbourhood_sizes.tolist() == [3, 4, 2, 4, 3, 4]
    assert k.diameter == 3
    assert k.rho2 == pytest.approx(0.8257, abs=1e-4)
    assert k.c_ceil == 1 and k.c <= 1
    assert k.L == 5598
    np.testing.assert_allclose(k.perron_vector, np.full(6, 1 / 6), atol=1e-12)


def test_strongly_flocking_reference():
    k = graph_constants(g.row_stochastic(paper_graph("strongly")))
    assert k.neighbourhood_sizes.tolist() == [4, 4, 4, 4, 6, 3]
    assert k.diameter == 3
    assert k.rho2 == pytest.approx(0.25, abs=1e-4)
    assert k.c == pytest.approx(2.20, abs=0.01)
    assert k.c_ceil == 3
    assert k.L == 2556
    np.testing.assert_allclose(k.perron_vector, [0.104, 0.208, 0.195, 0.221, 0.156, 0.117],
                               atol=1e-3)


def test_strongly_reversed_orientation():
    k = graph_constants(g.row_stochastic(paper_graph("strongly").T.copy()))
    assert k.rho2 == pytest.approx(1 / 3, abs=1e-4)
    assert k.L == 917


@pytest.mark.parametrize(("n", "L"), [(10, 18824), (20, 87512), (50, 640890)])
def test_metropolis_star_reference(n, L):
    k = graph_constants(g.star(n), rule="metropolis")
    assert k.rho2 == pytest.approx(1 - 1 / n, abs=1e-4)
    assert k.diameter == 2
    assert k.c_ceil == 1
    assert k.L == L


def test_policy_and_sequence_give_the_same_constants():
    W = g.row_stochastic(paper_graph("strongly"))
    expected = graph_constants(W)
    for graph in (dec_ucb(paper_graph("strongly"), theorem=1),
                  dec_ucb(paper_graph("strongly"), theorem=1, backend="sparse"),
                  g.static(W)):
        k = graph_constants(graph)
        assert (k.L, k.c_ceil, k.diameter) == (expected.L, expected.c_ceil, expected.diameter)
        assert k.c == pytest.approx(expected.c, rel=1e-12)


# ---- c and L against independent computations -----------------------------------------------

def _brute_force_L(n, c_ceil, rho, t_max):
    t = np.arange(1, t_max, dtype=np.float64)
    log_f = (math.log(72 * n * c_ceil) + np.log(t)
             + (t / (12 * n * c_ceil) - 1) * math.log(rho))
    bad = np.nonzero(log_f >= 0)[0]
    assert bad.size == 0 or bad[-1] < t.size - 1, "scan too short"
    return 0 if bad.size == 0 else int(t[bad[-1]]) + 1


@pytest.mark.parametrize(("n", "c_ceil", "rho"), [(6, 3, 0.25), (6, 1, 1 / 3), (10, 1, 0.9),
                                                  (4, 2, 0.5), (3, 1, 0.05), (2, 5, 0.7),
                                                  (1, 1, 1e-6)])
def test_burn_in_matches_a_brute_force_scan(n, c_ceil, rho):
    assert burn_in_time(n, c_ceil, rho) == _brute_force_L(n, c_ceil, rho, 400_000)


@pytest.mark.parametrize("n", [10, 20, 50])
def test_burn_in_matches_the_lambert_w_closed_form(n):
    # With ceil(c) = 1, f(t) = 1 solves to t = 12 N W_{-1}(rho ln rho / (864 N^2)) / ln rho.
    rho = 1 - 1 / n
    root = 12 * n * lambertw(rho * math.log(rho) / (864 * n ** 2), -1).real / math.log(rho)
    assert burn_in_time(n, 1, rho) == math.floor(root) + 1


def test_burn_in_conventions():
    assert burn_in_time(6, 3, 0.0) == 0
    assert burn_in_time(6, 0, 0.5) == 0
    assert burn_in_time(6, 1, 1.0) == math.inf
    with pytest.raises(ValueError, match="rho2"):
        burn_in_time(6, 1, float("nan"))


def _c_by_eigendecomposition(W, rho, floor=1e-9):
    lam, V = np.linalg.eig(W)
    Vinv = np.linalg.inv(V)
    keep = np.argsort(-np.abs(lam))[1:]                 # drop the Perron eigenvalue
    t_max = int(math.floor(math.log(floor) / math.log(rho)))
    best = np.abs(np.eye(len(W)) - np.outer(np.ones(len(W)), g.perron_vector(W))).max()
    for t in range(1, t_max + 1):
        part = (V[:, keep] * lam[keep] ** t) @ Vinv[keep]
        best = max(best, np.abs(part).max() / rho ** t)
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_c_matches_an_eigendecomposition(seed):
    adj = STRONGLY if seed == 0 else g.erdos_renyi(8, 0.3, kind="strong", seed=seed)
    W = g.row_stochastic(adj)
    k = graph_constants(W)
    assert k.c == pytest.approx(_c_by_eigendecomposition(W, k.rho2), rel=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_c_is_at_most_one_for_symmetric_weights(seed):
    adj = g.erdos_renyi(4 + seed, 0.4, kind="undirected", seed=seed)
    k = graph_constants(g.metropolis(adj))
    assert 0 < k.c <= 1 + 1e-12 and k.c_ceil == 1
    for adj in (g.path(6) | g.path(6).T, g.star(7), g.ring(5) | g.ring(5).T):
        assert graph_constants(adj, rule="metropolis").c <= 1 + 1e-12


def test_defective_eigenvalue_has_no_c():
    k = graph_constants(paper_graph("weakly_path"), rule="row")    # Jordan block at 1/2
    assert k.rho2 == pytest.approx(0.5)
    assert k.c is None and k.c_ceil is None and k.L is None
    assert "not diagonalizable" in k.note
    with pytest.raises(ValueError, match="not diagonalizable"):
        theorem_bound(paper_graph("weakly_path"), MEANS, 100, theorem=1)


def test_no_false_defect_on_random_strong_graphs():
    for seed in range(20):
        k = graph_constants(g.erdos_renyi(10, 0.25, kind="strong", seed=seed), rule="row")
        assert k.c is not None and k.note == "", seed


def test_disconnected_graph_has_infinite_L():
    two = np.zeros((6, 6), bool)
    two[:3, :3] = two[3:, 3:] = True
    k = graph_constants(two, rule="metropolis")
    assert k.rho2 == 1.0 and k.perron_vector is None and k.c is None and k.L == math.inf
    with pytest.warns(HypothesisWarning, match="not connected"):
        b = theorem_bound(two, MEANS, 100, theorem=2)
    assert np.all(np.isinf(b.bound))


def test_complete_graph_and_single_agent():
    k = graph_constants(g.complete(5), rule="row")
    assert k.rho2 == 0.0 and k.L == 0 and k.c == pytest.approx(0.8)
    one = graph_constants(np.ones((1, 1)))
    assert (one.diameter, one.rho2, one.L) == (0, 0.0, 0)


# ---- the bound --------------------------------------------------------------------------------

def _bound_by_hand(gaps, a, M, d, L, T):
    total = 0.0
    for gap in gaps:
        if gap > 0:
            inner = max(a / gap ** 2 * math.log(T), 2 * (M ** 2 + 2 * M * d + d), L)
            total += gap * (inner + 2 * math.pi ** 2 / 3 + M ** 2 + (2 * M - 1) * d)
    return total


@pytest.mark.parametrize("theorem", [1, 2])
def test_bound_matches_the_formula(theorem):
    name = "strongly" if theorem == 1 else "undirected"
    T = np.array([[1.0, 10.0, 1e3], [1e5, 1e7, 1e12]])
    b = _no_hypothesis_warning(theorem_bound, paper_graph(name), MEANS, T, theorem=theorem)
    k = b.constants
    gaps = max(MEANS) - np.asarray(MEANS)
    assert b.bound.shape == (6, 2, 3) and b.per_arm.shape == (6, 2, 3, 6)
    assert b.dominant.shape == (6, 2, 3, 6) and b.log_gap_threshold.shape == (6, 2, 3)
    for i in range(6):
        a = 16 / 3 if theorem == 1 else 12 / k.neighbourhood_sizes[i]
        for idx in np.ndindex(T.shape):
            expected = _bound_by_hand(gaps, a, 6, k.diameter, k.L, T[idx])
            assert b.bound[(i,) + idx] == pytest.approx(expected, rel=1e-12)
    one = theorem_bound(paper_graph(name), MEANS, T, theorem=theorem, agent=2)
    np.testing.assert_array_equal(one.bound, b.bound[2])
    assert one.dominant.shape == (2, 3, 6) and np.ndim(one.log_coefficient) == 0
    assert np.all(b.dominant[..., gaps == 0] == "")
    assert set(np.unique(b.dominant[..., gaps > 0])) <= set(BOUND_TERMS)


@pytest.mark.parametrize(("name", "theorem"), [("strongly", 1), ("undirected", 2),
                                               ("undirected_two_neighbors", 2),
                                               ("undirected_path", 2)])
def test_bound_increases_and_is_L_dominated_at_1000(name, theorem):
    T = np.logspace(0, 300, 301)
    b = theorem_bound(paper_graph(name), MEANS, T, theorem=theorem)
    assert np.all(np.diff(b.bound, axis=-1) >= 0)          # flat while L dominates every arm
    assert np.all(b.bound[:, -1] > b.bound[:, 0])
    at_1000 = theorem_bound(paper_graph(name), MEANS, 1000, theorem=theorem)
    assert np.all(at_1000.dominated_by("L"))
    assert not np.any(theorem_bound(paper_graph(name), MEANS, 1e100,
                                    theorem=theorem).dominated_by("L"))


def test_log_gap_thresholds_at_1e5():
    strongly = theorem_bound(paper_graph("strongly"), MEANS, 1e5, theorem=1)
    assert np.allclose(strongly.log_gap_threshold, 0.155, atol=5e-4)
    undirected = theorem_bound(paper_graph("undirected"), MEANS, 1e5, theorem=2, agent=2)
    assert undirected.log_gap_threshold == pytest.approx(0.111, abs=5e-4)   # |N_2| = 2
    # the threshold separates "log" from "L"
    gaps = undirected.gaps
    sub = gaps > 0
    np.testing.assert_array_equal(undirected.dominant[sub] == "log",
                                  gaps[sub] <= undirected.log_gap_threshold)


def test_bound_slope_is_the_log_coefficient():
    means = [0.9, 0.85, 0.8]             # gaps small enough for ln T to win by T = 1e20
    for name, theorem in (("strongly", 1), ("undirected", 2)):
        b = theorem_bound(paper_graph(name), means, [1e20, 1e30], theorem=theorem)
        assert np.all(b.dominated_by("log"))
        slope = (b.bound[:, 1] - b.bound[:, 0]) / (math.log(1e30) - math.log(1e20))
        np.testing.assert_allclose(slope, b.log_coefficient, rtol=1e-9)
        sizes = b.constants.neighbourhood_sizes
        np.testing.assert_allclose(
            b.log_coefficient,
            theorem_log_coefficient(means, theorem=theorem, neighbourhood_sizes=sizes))


# ---- ln T coefficients ------------------------------------------------------------------------

def test_log_coefficient_identities():
    gaps = max(MEANS) - np.asarray(MEANS)
    inv = np.sum(1 / gaps[gaps > 0])
    sizes = np.arange(1, 9)
    assert ucb1_log_coefficient(MEANS) == pytest.approx(8 * inv)
    thm1 = theorem_log_coefficient(MEANS, theorem=1)
    thm2 = theorem_log_coefficient(MEANS, theorem=2, neighbourhood_sizes=sizes)
    assert thm1 == pytest.approx(16 / 3 * inv)
    assert thm1 == pytest.approx(2 / 3 * ucb1_log_coefficient(MEANS))     # Cor 1: 16/3 < 8
    np.testing.assert_allclose(thm2, 12 * inv / sizes)
    np.testing.assert_array_equal(thm2 < thm1, sizes >= 3)                # Cor 2
    np.testing.assert_array_equal(thm2 < ucb1_log_coefficient(MEANS), sizes >= 2)   # Cor 3-4
    np.testing.assert_allclose(dec_ucb1_log_coefficient(MEANS, sizes, beta=0.0), thm2)
    np.testing.assert_allclose(dec_ucb1_log_coefficient(MEANS, sizes, beta=0.5), 2.25 * thm2)
    klc = kl_ucb_log_coefficient(MEANS)
    assert klc == lai_robbins_constant(MEANS)
    mu = np.asarray(MEANS)
    assert klc == pytest.approx(np.sum(gaps[gaps > 0] / bernoulli_kl_np(mu[gaps > 0], mu.max())))
    for varsigma in (0.01, 0.1, 1.0):
        dec = dec_kl_ucb_log_coefficient(MEANS, sizes, varsigma=varsigma)
        np.testing.assert_allclose(dec, 3 * (1 + varsigma) * klc / (2 * sizes))
        np.testing.assert_array_equal(dec < klc, sizes > 1.5 * (1 + varsigma))
    per_agent = dec_ucb1_log_coefficient(MEANS, [2, 4], beta=[0.0, 1.0])
    np.testing.assert_allclose(per_agent, [6 * inv, 12 * inv])


def test_log_coefficient_bad_input():
    with pytest.raises(ValueError, match="neighbourhood_sizes"):
        theorem_log_coefficient(MEANS, theorem=2)
    with pytest.raises(ValueError, match="neighbourhood_sizes"):
        dec_ucb1_log_coefficient(MEANS, 0)
    with pytest.raises(ValueError, match="beta"):
        dec_ucb1_log_coefficient(MEANS, 3, beta=-0.1)
    with pytest.raises(ValueError, match="varsigma"):
        dec_kl_ucb_log_coefficient(MEANS, 3, varsigma=float("nan"))
    with pytest.raises(ValueError, match="theorem"):
        theorem_log_coefficient(MEANS, theorem=3)


# ---- hypotheses -------------------------------------------------------------------------------

def test_theorem_1_warns_on_a_weakly_connected_graph():
    with pytest.warns(HypothesisWarning, match="Theorem 1 does not apply.*not strongly"):
        b = theorem_bound(paper_graph("weakly"), MEANS, 1000, theorem=1)
    assert any("strongly connected" in f for f in b.hypotheses_failed)
    assert b.constants.diameter == math.inf and np.all(np.isinf(b.bound))


def test_theorem_2_warns_on_a_directed_graph():
    with pytest.warns(HypothesisWarning, match="Theorem 2 does not apply.*directed"):
        b = theorem_bound(paper_graph("strongly"), MEANS, 1000, theorem=2)
    assert np.all(np.isfinite(b.bound))


def test_no_warning_when_the_hypotheses_hold():
    for name, theorem in (("strongly", 1), ("undirected", 2), ("undirected", 1)):
        b = _no_hypothesis_warning(theorem_bound, paper_graph(name), MEANS, 1000,
                                   theorem=theorem)
        assert b.hypotheses_failed == ()


def test_warns_on_weights_that_are_not_the_theorem_rule():
    with pytest.warns(HypothesisWarning, match="not the Metropolis weights"):
        theorem_bound(g.row_stochastic(paper_graph("undirected")), MEANS, 100, theorem=2)
    with pytest.warns(HypothesisWarning, match="not the flocking weights"):
        theorem_bound(g.metropolis(paper_graph("undirected")), MEANS, 100, theorem=1)


def test_policy_input():
    policy = dec_ucb(paper_graph("undirected"), theorem=2)
    from_policy = _no_hypothesis_warning(theorem_bound, policy, MEANS, [10, 1000])
    assert from_policy.theorem == 2
    np.testing.assert_array_equal(
        from_policy.bound, theorem_bound(paper_graph("undirected"), MEANS, [10, 1000],
                                         theorem=2).bound)
    with pytest.warns(HypothesisWarning, match="runs Theorem 2's width"):
        theorem_bound(policy, MEANS, 100, theorem=1)
    with pytest.warns(HypothesisWarning, match="not Dec_UCB"):
        theorem_bound(dec_ucb1(paper_graph("undirected")), MEANS, 100, theorem=2)
    with pytest.warns(HypothesisWarning, match="max-consensus"):
        theorem_bound(dec_ucb(paper_graph("strongly"), max_consensus="v1_code"), MEANS, 100)
    with pytest.raises(ValueError, match="time-varying"):
        theorem_bound(dec_ucb(g.periodic([g.ring(4), g.ring(4).T], rule="row")), MEANS, 100)
    with pytest.raises(ValueError, match="does not communicate"):
        theorem_bound(ucb1(), MEANS, 100)


def test_arms_input():
    arms = bernoulli(MEANS)
    b = _no_hypothesis_warning(theorem_bound, paper_graph("strongly"), arms, 100)
    np.testing.assert_array_equal(b.bound, theorem_bound(paper_graph("strongly"), MEANS,
                                                         100).bound)
    with pytest.warns(HypothesisWarning):                   # truncation moves the mean
        mixed = heterogeneous([bernoulli([0.02, 0.5]), truncated_normal([0.02, 0.5], 0.05)],
                              np.array([[0, 0], [1, 1], [0, 1]]))
    with pytest.warns(HypothesisWarning, match="means differ"):
        b = theorem_bound(g.complete(3), mixed, 100)
    assert not np.allclose(b.gaps[0], b.gaps[1])


# ---- bad input --------------------------------------------------------------------------------

def test_bad_input():
    W = g.row_stochastic(paper_graph("strongly"))
    bad_W = W.copy()
    bad_W[0, 0] += 0.1
    with pytest.raises(ValueError, match="row-stochastic"):
        graph_constants(bad_W)
    with pytest.raises(ValueError, match="row-stochastic"):
        theorem_bound(bad_W, MEANS, 100)
    negative = W.copy()
    negative[0, 1] -= 0.5
    negative[0, 0] += 0.5
    with pytest.raises(ValueError):
        graph_constants(negative)
    with pytest.raises(ValueError):
        graph_constants(np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match="rule"):
        graph_constants(paper_graph("strongly"))
    for means in ([0.5, 1.2], [-0.1, 0.5], [0.5, float("nan")], [0.5]):
        with pytest.raises(ValueError, match="means"):
            theorem_bound(W, means, 100)
    with pytest.raises(ValueError, match="means"):
        theorem_bound(W, np.full((5, 2), 0.5), 100)                 # 5 rows, 6 agents
    for horizon in (0.5, 0, [10, 0.9], float("nan"), []):
        with pytest.raises(ValueError, match="horizon"):
            theorem_bound(W, MEANS, horizon)
    with pytest.raises(ValueError, match="theorem"):
        theorem_bound(W, MEANS, 100, theorem=3)
    with pytest.raises(ValueError, match="agent"):
        theorem_bound(W, MEANS, 100, agent=6)
    with pytest.raises(ValueError, match="unknown paper graph"):
        paper_graph("strong")
    with pytest.raises(ValueError, match="order"):
        paper_graph("strongly", order="file")
    with pytest.raises(ValueError, match="term"):
        theorem_bound(W, MEANS, 100).dominated_by("ln")
