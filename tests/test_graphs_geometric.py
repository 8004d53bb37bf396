"""Tests of ``random_geometric``: the contract, brute-force agreement, degrees and scale."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.integrate import quad

import decentral.graphs as g
from decentral.graphs import DENSE_LIMIT, random_geometric


def _brute_force(points: np.ndarray, radius: float, torus: bool) -> np.ndarray:
    """Dense adjacency from all pairwise distances (the definition), diagonal True."""
    diff = np.abs(points[:, None, :] - points[None, :, :])
    if torus:
        diff = np.minimum(diff, 1.0 - diff)
    return np.sqrt((diff ** 2).sum(axis=-1)) <= radius


@pytest.mark.parametrize("torus", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 7, 123])
def test_dense_equals_sparse(seed, torus):
    dense = random_geometric(300, 0.08, seed=seed, torus=torus)
    sparse = random_geometric(300, 0.08, seed=seed, torus=torus, sparse=True)
    assert isinstance(dense, np.ndarray) and dense.dtype == np.bool_
    assert isinstance(sparse, sp.csr_array) and sparse.dtype == np.bool_
    assert sparse.has_canonical_format
    assert (sparse.toarray() == dense).all()
    assert not (sparse.data == 0).any()


@pytest.mark.parametrize("torus", [False, True])
@pytest.mark.parametrize("dim", [1, 2, 3])
def test_symmetric_with_self_loops(dim, torus):
    adj = random_geometric(150, 0.2, dim=dim, seed=5, torus=torus)
    assert adj.shape == (150, 150)
    assert (adj == adj.T).all()
    assert adj.diagonal().all()
    s = random_geometric(150, 0.2, dim=dim, seed=5, torus=torus, sparse=True)
    assert (s != s.T).nnz == 0
    assert s.diagonal().all()


@pytest.mark.parametrize("dim, radius", [(2, 0.1), (2, 0.25), (3, 0.2), (1, 0.01)])
@pytest.mark.parametrize("torus", [False, True])
@pytest.mark.parametrize("seed", [0, 3])
def test_edges_are_exactly_the_pairs_within_radius(dim, radius, torus, seed):
    n = 200
    points = np.random.default_rng(seed).random((n, dim))   # the documented draw
    expected = _brute_force(points, radius, torus)
    assert (random_geometric(n, radius, dim=dim, seed=seed, torus=torus) == expected).all()
    got = random_geometric(n, radius, dim=dim, seed=seed, torus=torus, sparse=True)
    assert (got.toarray() == expected).all()


def test_torus_adds_wrapping_edges():
    plain = random_geometric(200, 0.2, seed=2)
    torus = random_geometric(200, 0.2, seed=2, torus=True)
    assert (torus >= plain).all()               # the torus distance is never larger
    assert (torus & ~plain).sum() > 0           # and some pairs meet only across a face


def test_large_radius_gives_the_complete_graph():
    assert random_geometric(40, math.sqrt(3), dim=3, seed=1).all()
    assert random_geometric(40, 0.5 * math.sqrt(2), seed=1, torus=True).all()


def test_single_agent_and_no_edges():
    assert random_geometric(1, 0.5).tolist() == [[True]]
    assert random_geometric(1, 0.5, sparse=True).toarray().tolist() == [[True]]
    tiny = random_geometric(20, 1e-12, seed=0, sparse=True)
    assert tiny.nnz == 20 and tiny.diagonal().all()


def _mean_other_degree(adj) -> float:
    return (adj.nnz - adj.shape[0]) / adj.shape[0]


@pytest.mark.parametrize("seed", [0, 1])
def test_mean_degree_on_the_torus_is_n_times_ball_area(seed):
    # on the torus (radius < 1/2) every pair is within radius with probability exactly pi r^2,
    # and the pair indicators are pairwise independent: the edge count E is a sum of
    # N = n (n - 1) / 2 such indicators, Var(E) = N p (1 - p), mean other-degree = 2 E / n
    n, r = 20_000, 0.01
    p = math.pi * r * r
    expected = (n - 1) * p
    sigma = 2.0 * math.sqrt(n * (n - 1) / 2 * p * (1 - p)) / n          # about 0.025
    mean = _mean_other_degree(random_geometric(n, r, seed=seed, torus=True, sparse=True))
    assert abs(mean - expected) < 5 * sigma, (mean, expected, sigma)
    assert 5 * sigma < 0.03 * expected          # the tolerance is tight: 2 % of the mean


def test_mean_degree_on_the_torus_in_3d():
    n, r = 20_000, 0.03
    p = 4.0 / 3.0 * math.pi * r ** 3
    expected = (n - 1) * p
    sigma = 2.0 * math.sqrt(n * (n - 1) / 2 * p * (1 - p)) / n
    mean = _mean_other_degree(random_geometric(n, r, dim=3, seed=2, torus=True, sparse=True))
    assert abs(mean - expected) < 5 * sigma, (mean, expected, sigma)


def test_mean_degree_in_the_square_accounts_for_the_boundary():
    # two uniform points of the unit square are within r <= 1 with probability
    # a = pi r^2 - 8 r^3 / 3 + r^4 / 2: the boundary cuts the disc around the points near it
    n, r = 20_000, 0.05
    p = math.pi * r * r - 8.0 * r ** 3 / 3.0 + r ** 4 / 2.0
    expected = (n - 1) * p
    # off the torus the pair indicators sharing an agent are correlated through a(x), the area
    # of the disc around x inside the square: Var(E) = N p (1 - p) + n (n-1) (n-2) Var(a(X)).
    # Up to the corners (O(r^6)), a = pi r^2 - s(h1) - s(h2) with h1, h2 the independent
    # distances to the nearest vertical / horizontal side and s(h) = r^2 acos(h/r) -
    # h sqrt(r^2 - h^2) the cut-off segment (h < r, probability 2 r): E[s] = 4 r^3 / 3,
    # E[s^2] = 2 r^5 c with c = the integral of (acos t - t sqrt(1 - t^2))^2 over [0, 1]
    c = quad(lambda t: (math.acos(t) - t * math.sqrt(1.0 - t * t)) ** 2, 0.0, 1.0)[0]
    var_a = 2.0 * (2.0 * c * r ** 5 - (4.0 * r ** 3 / 3.0) ** 2)
    var_e = n * (n - 1) / 2 * p * (1 - p) + n * (n - 1) * (n - 2) * var_a
    sigma = 2.0 * math.sqrt(var_e) / n                                 # about 0.28
    mean = _mean_other_degree(random_geometric(n, r, seed=4, sparse=True))
    assert abs(mean - expected) < 5 * sigma, (mean, expected, sigma)
    assert 5 * sigma < 0.1 * expected           # 7 % of the mean (18.8): a test that can fail
    # and the boundary correction is visible: the torus value is far outside the tolerance
    assert abs((n - 1) * math.pi * r * r - expected) > 4 * 5 * sigma


def test_million_agents_sparse_builds_fast():
    n = 10**6
    r = math.sqrt(8.0 / (math.pi * (n - 1)))            # mean degree 8 (away from the boundary)
    start = time.perf_counter()
    adj = random_geometric(n, r, seed=0, sparse=True)
    elapsed = time.perf_counter() - start
    assert isinstance(adj, sp.csr_array) and adj.shape == (n, n)
    assert adj.indices.dtype == np.int32
    assert 7.8 < _mean_other_degree(adj) < 8.1
    assert elapsed < 15.0, elapsed                      # about 1 s on a 2-core machine


def test_dense_limit():
    with pytest.raises(ValueError, match="sparse=True"):
        random_geometric(DENSE_LIMIT + 1, 0.01)
    assert random_geometric(DENSE_LIMIT + 1, 0.001, sparse=True).shape[0] == DENSE_LIMIT + 1


def test_exported():
    assert g.random_geometric is random_geometric
    assert "random_geometric" in g.__all__


@pytest.mark.parametrize("kwargs, name", [
    (dict(n=0, radius=0.1), "n "),
    (dict(n=2.0, radius=0.1), "n "),
    (dict(n=True, radius=0.1), "n "),
    (dict(n="5", radius=0.1), "n "),
    (dict(n=5, radius=0.0), "radius"),
    (dict(n=5, radius=-0.1), "radius"),
    (dict(n=5, radius=math.inf), "radius"),
    (dict(n=5, radius=math.nan), "radius"),
    (dict(n=5, radius="0.1"), "radius"),
    (dict(n=5, radius=True), "radius"),
    (dict(n=5, radius=None), "radius"),
    (dict(n=5, radius=0.1, dim=0), "dim"),
    (dict(n=5, radius=0.1, dim=2.0), "dim"),
    (dict(n=5, radius=0.1, seed=-1), "seed"),
    (dict(n=5, radius=0.1, seed=1.5), "seed"),
    (dict(n=5, radius=0.1, seed=None), "seed"),
    (dict(n=5, radius=0.1, torus=1), "torus"),
    (dict(n=5, radius=0.1, sparse=1), "sparse"),
    (dict(n=5, radius=0.1, sparse="yes"), "sparse"),
])
def test_bad_arguments_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        random_geometric(**kwargs)


def test_numpy_scalars_accepted():
    a = random_geometric(np.int64(30), np.float32(0.3), dim=np.int32(2), seed=np.uint8(3))
    b = random_geometric(30, float(np.float32(0.3)), seed=3)
    assert (a == b).all()


def test_keyword_only():
    with pytest.raises(TypeError):
        random_geometric(10, 0.3, 2)            # dim must be passed by keyword
