"""Tests for decentral.graphs.robustness (r- and (r, s)-robustness of digraphs)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decentral.graphs.robustness import (
    ENUMERATION_HARD_MAX_N,
    RobustnessTimeoutError,
    is_r_robust,
    is_rs_robust,
    r_robustness,
    robustness_witness,
)

SETTINGS = settings(
    deadline=None,
    derandomize=True,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)


# ----------------------------------------------------------------------------- helpers


def complete(n: int) -> np.ndarray:
    return np.ones((n, n), dtype=bool)


def circulant(n: int, offsets) -> np.ndarray:
    """Agent i receives from i + o (mod n) for every o in offsets (plus itself)."""
    a = np.eye(n, dtype=bool)
    for o in offsets:
        a[np.arange(n), (np.arange(n) + o) % n] = True
    return a


def experiment_graph() -> np.ndarray:
    """The paper's 5-agent graph: agent i hears i+1, i+2, i+3 (mod 5)."""
    return circulant(5, [1, 2, 3])


def outside(adj: np.ndarray, i: int, s) -> int:
    """|N_i \\ S| by the definition (self-loop excluded), pure Python."""
    n = adj.shape[0]
    return sum(1 for j in range(n) if j != i and adj[i, j] and j not in s)


def reachable(adj: np.ndarray, s, r: int) -> bool:
    return any(outside(adj, i, s) >= r for i in s)


def disjoint_pairs(n: int):
    """Every ordered pair of nonempty disjoint subsets, via the 3^n labelings."""
    for labels in itertools.product((0, 1, 2), repeat=n):
        s1 = frozenset(i for i in range(n) if labels[i] == 1)
        s2 = frozenset(i for i in range(n) if labels[i] == 2)
        if s1 and s2:
            yield s1, s2


def brute_r(adj: np.ndarray) -> int:
    n = adj.shape[0]
    best = math.inf
    for s1, s2 in disjoint_pairs(n):
        v = max(max(outside(adj, i, s1) for i in s1), max(outside(adj, i, s2) for i in s2))
        best = min(best, v)
    return int(best)


def brute_is_r_robust(adj: np.ndarray, r: int) -> bool:
    return all(
        reachable(adj, s1, r) or reachable(adj, s2, r) for s1, s2 in disjoint_pairs(adj.shape[0])
    )


def brute_is_rs_robust(adj: np.ndarray, r: int, s: int) -> bool:
    for s1, s2 in disjoint_pairs(adj.shape[0]):
        x1 = sum(1 for i in s1 if outside(adj, i, s1) >= r)
        x2 = sum(1 for i in s2 if outside(adj, i, s2) >= r)
        if not (x1 == len(s1) or x2 == len(s2) or x1 + x2 >= s):
            return False
    return True


def assert_valid_witness(adj: np.ndarray, r: int, witness) -> None:
    s1, s2 = witness
    n = adj.shape[0]
    assert isinstance(s1, frozenset) and isinstance(s2, frozenset)
    assert s1 and s2 and not (s1 & s2)
    assert s1 | s2 <= set(range(n))
    assert not reachable(adj, s1, r)
    assert not reachable(adj, s2, r)


@st.composite
def digraphs(draw, min_n: int = 2, max_n: int = 7):
    # size and density come from the seed so that derandomized runs spread over all sizes
    # (hypothesis' own integer draws cluster at the lower bound)
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n = int(rng.integers(min_n, max_n + 1))
    p = float(rng.choice([0.15, 0.35, 0.6, 0.8, 0.9, 0.95, 1.0]))
    a = rng.random((n, n)) < p
    np.fill_diagonal(a, True)
    return a


# ----------------------------------------------------------------------------- known values


@pytest.mark.parametrize("n", range(2, 9))
@pytest.mark.parametrize("method", ["enumerate", "milp"])
def test_complete_graph_is_exactly_half_robust(n, method):
    r = math.ceil(n / 2)
    adj = complete(n)
    assert r_robustness(adj, method=method) == r
    assert is_r_robust(adj, r, method=method)
    assert not is_r_robust(adj, r + 1, method=method)
    assert_valid_witness(adj, r + 1, robustness_witness(adj, r + 1, method=method))
    assert not is_r_robust(adj, 50, method=method)  # far above any attainable value
    assert_valid_witness(adj, 50, robustness_witness(adj, 50, method=method))


@pytest.mark.parametrize("n", range(3, 9))
def test_directed_ring_is_exactly_one_robust(n):
    ring = circulant(n, [1])
    assert r_robustness(ring) == 1
    assert is_r_robust(ring, 1)
    assert not is_r_robust(ring, 2)
    assert robustness_witness(ring, 1) is None
    assert_valid_witness(ring, 2, robustness_witness(ring, 2))
    # the reverse orientation is a ring too
    assert r_robustness(ring.T) == 1


def test_experiment_graph_is_exactly_two_robust_with_known_witness():
    adj = experiment_graph()
    assert adj.sum(axis=1).tolist() == [4] * 5  # self + 3 in-neighbours
    assert r_robustness(adj) == 2
    assert r_robustness(adj, method="milp") == 2
    assert robustness_witness(adj, 2) is None
    for method in ("enumerate", "milp"):
        assert_valid_witness(adj, 3, robustness_witness(adj, 3, method=method))
    # Figura et al.'s experiment graph is not 3-robust: S1 = {1, 3}, S2 = {2, 4}; every node
    # has exactly 2 outside in-nbrs
    s1, s2 = {1, 3}, {2, 4}
    assert [outside(adj, i, s1) for i in sorted(s1)] == [2, 2]
    assert [outside(adj, i, s2) for i in sorted(s2)] == [2, 2]
    assert not reachable(adj, s1, 3) and not reachable(adj, s2, 3)
    assert reachable(adj, s1, 2) and reachable(adj, s2, 2)
    # (2, s)-robust for every s <= 5, not (3, 1)
    for s in range(1, 6):
        assert is_rs_robust(adj, 2, s)
    assert not is_rs_robust(adj, 3, 1)


def test_cooperative_subgraph_facts():
    full = experiment_graph()
    assert is_rs_robust(full, 2, 2)  # (F+1, F+1) with F = 1
    for removed in range(5):  # circulant symmetry: any single agent
        keep = [i for i in range(5) if i != removed]
        sub = full[np.ix_(keep, keep)]
        assert r_robustness(sub) == 2
        assert not is_r_robust(sub, 3)
        assert is_rs_robust(sub, 2, 1)
        assert not is_rs_robust(sub, 2, 2)


def test_k5_facts():
    k5 = complete(5)
    assert is_r_robust(k5, 3) and not is_r_robust(k5, 4)
    adj = k5.copy()
    adj[1, 0] = adj[0, 1] = False  # remove edges 0 -> 1 and 1 -> 0
    assert r_robustness(adj) == 3
    assert r_robustness(adj, method="milp") == 3


def test_no_in_degree_three_five_node_digraph_is_three_robust():
    # no 5-node digraph whose in-degrees are all 3 (as in Figura et al.'s experiment graph)
    # is 3-robust: all 4^5 = 1024 of them
    count = 0
    for choice in itertools.product(range(4), repeat=5):
        adj = np.ones((5, 5), dtype=bool)
        for i, k in enumerate(choice):
            others = [j for j in range(5) if j != i]
            adj[i, others[k]] = False  # drop one of the 4 possible in-neighbours
        assert r_robustness(adj) <= 2
        count += 1
    assert count == 1024


def test_three_robust_five_node_digraphs_miss_at_most_three_edges():
    edges = [(i, j) for i in range(5) for j in range(5) if i != j]
    for missing in itertools.combinations(edges, 4):
        adj = complete(5)
        for i, j in missing:
            adj[i, j] = False
        assert not is_r_robust(adj, 3), missing
    # ... and some digraph missing 3 edges is 3-robust (edge removal only lowers robustness,
    # so "at most 3" is tight)
    found = False
    for missing in itertools.combinations(edges, 3):
        adj = complete(5)
        for i, j in missing:
            adj[i, j] = False
        if is_r_robust(adj, 3):
            found = True
            break
    assert found


def test_two_cliques_joined_by_one_edge_is_not_two_robust():
    # negative control: a planted bottleneck
    adj = np.zeros((8, 8), dtype=bool)
    adj[:4, :4] = True
    adj[4:, 4:] = True
    adj[4, 3] = True  # agent 4 hears agent 3: the only link between the cliques
    assert r_robustness(adj) == 1
    assert r_robustness(adj, method="milp") == 1
    assert not is_r_robust(adj, 2)
    assert not is_r_robust(adj, 2, method="milp")
    witness = robustness_witness(adj, 2)
    assert_valid_witness(adj, 2, witness)
    assert not reachable(adj, set(range(4)), 2) and not reachable(adj, set(range(4, 8)), 2)
    # without the link the graph is not even 1-robust
    adj[4, 3] = False
    assert r_robustness(adj) == 0
    assert_valid_witness(adj, 1, robustness_witness(adj, 1))


def test_one_robust_allows_a_single_in_degree_zero_root():
    # agent 1 hears agent 0, agent 0 hears nobody: a rooted out-branching, hence 1-robust,
    # although agent 0 has in-degree 0 (min in-degree >= r only holds for r >= 2)
    adj = np.array([[True, False], [True, True]])
    assert r_robustness(adj) == 1
    star = np.eye(5, dtype=bool)
    star[:, 0] = True  # everyone hears agent 0
    assert r_robustness(star) == 1
    star[1, 0] = False  # agent 1 now hears nobody either: two roots
    assert r_robustness(star) == 0


def test_single_agent_convention():
    adj = np.ones((1, 1), dtype=bool)
    assert r_robustness(adj) == 1
    assert is_r_robust(adj, 5) and robustness_witness(adj, 5) is None
    assert is_rs_robust(adj, 3, 3)


def test_milp_on_larger_graphs():
    assert r_robustness(complete(20), method="milp", time_limit=30.0) == 10
    assert r_robustness(complete(17), method="milp", time_limit=30.0) == 9
    for n, offsets in [(16, range(1, 8)), (18, [1, 2, 3, 5, 8]), (20, range(1, 10))]:
        adj = circulant(n, offsets)
        exact = r_robustness(adj, method="enumerate")
        assert r_robustness(adj, method="milp", time_limit=30.0) == exact
        assert is_r_robust(adj, exact, method="milp", time_limit=30.0)
        w = robustness_witness(adj, exact + 1, method="milp", time_limit=30.0)
        assert_valid_witness(adj, exact + 1, w)


def test_auto_switches_to_milp_for_large_graphs():
    adj = circulant(24, [1, 2, 3])
    assert r_robustness(adj) == 2  # n = 24 > ENUMERATION_HARD_MAX_N: MILP
    assert is_r_robust(adj, 2) and not is_r_robust(adj, 3)


def test_milp_time_limit_raises_with_bounds():
    with pytest.raises(RobustnessTimeoutError, match="time limit") as info:
        r_robustness(complete(20), method="milp", time_limit=1e-9)
    assert isinstance(info.value, TimeoutError)
    assert "Raise time_limit" in str(info.value)


# ----------------------------------------------------------------------------- properties


@SETTINGS
@given(digraphs(max_n=7))
def test_enumeration_matches_brute_force(adj):
    r = r_robustness(adj, method="enumerate")
    assert r == brute_r(adj)
    for rr in range(0, r + 2):
        assert is_r_robust(adj, rr, method="enumerate") == brute_is_r_robust(adj, rr)
    w = robustness_witness(adj, r + 1, method="enumerate")
    assert_valid_witness(adj, r + 1, w)
    assert robustness_witness(adj, r, method="enumerate") is None


@SETTINGS
@given(digraphs(max_n=6), st.integers(1, 3), st.integers(1, 7))
def test_rs_robustness_matches_brute_force(adj, r, s):
    assert is_rs_robust(adj, r, s) == brute_is_rs_robust(adj, r, s)
    assert is_rs_robust(adj, r, 1) == is_r_robust(adj, r)  # (r, 1) = r


@settings(deadline=None, derandomize=True, max_examples=40)
@given(digraphs(max_n=9))
def test_enumeration_matches_milp(adj):
    r = r_robustness(adj, method="enumerate")
    assert r_robustness(adj, method="milp") == r
    assert is_r_robust(adj, r, method="milp")
    assert_valid_witness(adj, r + 1, robustness_witness(adj, r + 1, method="milp"))


@SETTINGS
@given(digraphs(max_n=9))
def test_robustness_bounds(adj):
    n = adj.shape[0]
    r = r_robustness(adj)
    indeg = adj.sum(axis=1) - 1
    assert 0 <= r <= math.ceil(n / 2)
    if r >= 2:
        assert indeg.min() >= r
    if r >= 1:
        assert np.count_nonzero(indeg == 0) <= 1
    # adding edges (here: the anti-diagonal i <- n-1-i) never lowers robustness
    more = adj | np.eye(n, dtype=bool)[::-1]
    assert r_robustness(more) >= r


@SETTINGS
@given(digraphs(max_n=8), st.integers(1, 2), st.integers(0, 2**31 - 1))
def test_removing_h_in_neighbours_leaves_r_minus_h_robust(adj, h, seed):
    # r-robustness (LeBlanc et al. 2013): removing <= H in-neighbours per node of an r-robust
    # graph leaves an (r - H)-robust graph
    r = r_robustness(adj)
    rng = np.random.default_rng(seed)
    pruned = adj.copy()
    for i in range(adj.shape[0]):
        nbrs = [j for j in np.flatnonzero(adj[i]) if j != i]
        k = int(rng.integers(0, min(h, len(nbrs)) + 1))
        for j in rng.choice(nbrs, size=k, replace=False) if k else []:
            pruned[i, j] = False
    assert r_robustness(pruned) >= r - h


# ----------------------------------------------------------------------------- bad input


def test_bad_adjacency_raises():
    with pytest.raises(ValueError, match="square"):
        r_robustness(np.ones((3, 4), dtype=bool))
    with pytest.raises(ValueError, match="boolean"):
        r_robustness(np.ones((3, 3)))
    with pytest.raises(ValueError, match="self-loops"):
        is_r_robust(np.zeros((3, 3), dtype=bool), 1)
    with pytest.raises(ValueError, match="self-loops"):
        is_rs_robust(~np.eye(3, dtype=bool), 1, 1)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2", None])
def test_bad_r_raises(bad):
    with pytest.raises(ValueError, match="r must be an integer"):
        is_r_robust(complete(3), bad)
    with pytest.raises(ValueError, match="r must be an integer"):
        robustness_witness(complete(3), bad)


def test_bad_rs_raises():
    with pytest.raises(ValueError, match="r must be an integer >= 1"):
        is_rs_robust(complete(3), 0, 1)
    with pytest.raises(ValueError, match="s must be an integer >= 1"):
        is_rs_robust(complete(3), 1, 0)
    with pytest.raises(ValueError, match="s must be an integer"):
        is_rs_robust(complete(3), 1, 2.0)


def test_bad_method_and_time_limit_raise():
    with pytest.raises(ValueError, match="method must be one of"):
        r_robustness(complete(3), method="brute")
    for tl in (0, -1.0, float("nan"), "fast"):
        with pytest.raises(ValueError, match="time_limit must be a positive"):
            r_robustness(complete(3), method="milp", time_limit=tl)


def test_too_large_for_enumeration_raises():
    big = complete(ENUMERATION_HARD_MAX_N + 1)
    with pytest.raises(ValueError, match="too large for enumeration.*method='milp'"):
        r_robustness(big, method="enumerate")
    with pytest.raises(ValueError, match="too large for enumeration"):
        is_r_robust(big, 2, method="enumerate")
    with pytest.raises(ValueError, match="too large for enumeration"):
        is_rs_robust(big, 2, 2)
