"""Tests of decentral.graphs builders: orientation, self-loops, random graphs, networkx I/O.

Orientation everywhere: ``adj[i, j]`` True iff agent i receives from agent j (edge j -> i).
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from strategies import digraphs

import decentral.graphs as g


def _expected(n: int, in_neighbours: dict[int, set[int]]) -> np.ndarray:
    """Adjacency written by hand: ``in_neighbours[i]`` = who i hears (self added)."""
    a = np.eye(n, dtype=bool)
    for i, js in in_neighbours.items():
        for j in js:
            a[i, j] = True
    return a


def _digraph_of(adj: np.ndarray) -> nx.DiGraph:
    """networkx DiGraph with edge j -> i for adj[i, j], built independently of the library."""
    dg = nx.DiGraph()
    dg.add_nodes_from(range(adj.shape[0]))
    for i in range(adj.shape[0]):
        for j in range(adj.shape[0]):
            if adj[i, j] and i != j:
                dg.add_edge(j, i)
    return dg


def _plus_self_loops_from_nx(graph: nx.Graph, n: int) -> np.ndarray:
    """What 'exactly that graph plus self-loops' means, computed by hand."""
    a = np.eye(n, dtype=bool)
    for u, v in graph.edges():
        a[v, u] = True            # u -> v: v receives from u
        if not graph.is_directed():
            a[u, v] = True
    return a


def _kind(adj: np.ndarray, wanted: str | None = None) -> str:
    """'strong' / 'weak' / 'disconnected'; 'undirected' for a connected symmetric graph
    unless ``wanted`` is 'strong' (a symmetric connected digraph is also strongly connected)."""
    dg = _digraph_of(adj)
    if nx.is_strongly_connected(dg):
        if np.array_equal(adj, adj.T) and wanted != "strong":
            return "undirected"
        return "strong"
    if nx.is_weakly_connected(dg):
        return "weak"
    return "disconnected"


def _assert_adjacency(adj, n):
    assert isinstance(adj, np.ndarray)
    assert adj.dtype == np.bool_
    assert adj.shape == (n, n)
    assert np.all(np.diag(adj))


# ---- shapes, dtype, self-loops -----------------------------------------------------------

BUILDERS = [
    ("ring_directed", lambda n: g.ring(n, directed=True)),
    ("ring_undirected", lambda n: g.ring(n, directed=False)),
    ("path_directed", lambda n: g.path(n, directed=True)),
    ("path_undirected", lambda n: g.path(n, directed=False)),
    ("star", g.star),
    ("complete", g.complete),
    ("circulant", lambda n: g.circulant(n, [1, 3, -2])),
    ("exponential", g.exponential),
    ("erdos_renyi_strong", lambda n: g.erdos_renyi(n, 0.4, kind="strong", seed=n)),
    ("erdos_renyi_undirected", lambda n: g.erdos_renyi(n, 0.4, kind="undirected", seed=n)),
]


@pytest.mark.parametrize("name,builder", BUILDERS, ids=[b[0] for b in BUILDERS])
@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_builders_shape_dtype_self_loops(name, builder, n):
    adj = builder(n)
    _assert_adjacency(adj, n)


@pytest.mark.parametrize("rows,cols", [(1, 1), (1, 4), (3, 2), (3, 4)])
def test_grid2d_shape_dtype_self_loops(rows, cols):
    _assert_adjacency(g.grid2d(rows, cols), rows * cols)


def test_erdos_renyi_weak_shape_dtype():
    _assert_adjacency(g.erdos_renyi(7, 0.4, kind="weak", seed=1), 7)


# ---- orientation by hand ---------------------------------------------------------------

def test_ring_directed_orientation():
    adj = g.ring(5, directed=True)
    want = _expected(5, {0: {4}, 1: {0}, 2: {1}, 3: {2}, 4: {3}})
    np.testing.assert_array_equal(adj, want)
    assert adj[1, 0] and not adj[0, 1]          # 1 receives from 0, not the other way


def test_ring_undirected_by_hand():
    adj = g.ring(5, directed=False)
    want = _expected(5, {0: {1, 4}, 1: {0, 2}, 2: {1, 3}, 3: {2, 4}, 4: {3, 0}})
    np.testing.assert_array_equal(adj, want)
    np.testing.assert_array_equal(adj, adj.T)
    # n = 2: left and right neighbour coincide; n = 1: only the self-loop
    np.testing.assert_array_equal(g.ring(2, directed=False), np.ones((2, 2), bool))
    np.testing.assert_array_equal(g.ring(1), np.ones((1, 1), bool))


def test_path_orientation():
    adj = g.path(4, directed=True)
    want = _expected(4, {1: {0}, 2: {1}, 3: {2}})
    np.testing.assert_array_equal(adj, want)
    assert not adj[0, 1] and adj.sum(axis=1)[0] == 1      # agent 0 hears only itself
    und = g.path(4, directed=False)
    np.testing.assert_array_equal(und, want | want.T)


def test_star_by_hand():
    adj = g.star(4)
    want = _expected(4, {0: {1, 2, 3}, 1: {0}, 2: {0}, 3: {0}})
    np.testing.assert_array_equal(adj, want)


def test_complete_all_true():
    np.testing.assert_array_equal(g.complete(4), np.ones((4, 4), bool))


def test_circulant_by_hand():
    adj = g.circulant(6, [2])                          # i receives from i - 2
    want = _expected(6, {i: {(i - 2) % 6} for i in range(6)})
    np.testing.assert_array_equal(adj, want)
    # negative offsets: i receives from i + 1, i + 2, i + 3
    adj = g.circulant(5, [-1, -2, -3])
    assert sorted(np.flatnonzero(adj[0]).tolist()) == [0, 1, 2, 3]
    assert sorted(np.flatnonzero(adj[4]).tolist()) == [0, 1, 2, 4]
    # offset 0 and offset n are the self-loop only
    np.testing.assert_array_equal(g.circulant(4, [0, 4]), np.eye(4, dtype=bool))
    np.testing.assert_array_equal(g.circulant(5, [1]), g.ring(5, directed=True))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 9, 16, 17])
def test_exponential_offsets(n):
    adj = g.exponential(n)
    powers = [2**k for k in range(n) if 2**k < n]
    for i in range(n):
        want = {i} | {(i - p) % n for p in powers}
        assert set(np.flatnonzero(adj[i]).tolist()) == want


def test_exponential_by_hand():
    assert sorted(np.flatnonzero(g.exponential(8)[0]).tolist()) == [0, 4, 6, 7]
    assert sorted(np.flatnonzero(g.exponential(5)[0]).tolist()) == [0, 1, 3, 4]
    assert sorted(np.flatnonzero(g.exponential(5)[2]).tolist()) == [0, 1, 2, 3]


def test_grid2d_by_hand():
    # 2 x 3 grid, index r * 3 + c:
    #   0 1 2
    #   3 4 5
    adj = g.grid2d(2, 3)
    want = _expected(6, {0: {1, 3}, 1: {0, 2, 4}, 2: {1, 5}, 3: {0, 4}, 4: {1, 3, 5},
                         5: {2, 4}})
    np.testing.assert_array_equal(adj, want)


def test_from_edges_and_add_self_loops():
    adj = g.from_edges(3, [(0, 1), (1, 2)])          # (sender, receiver)
    np.testing.assert_array_equal(adj, _expected(3, {1: {0}, 2: {1}}))
    with pytest.raises(ValueError, match="outside"):
        g.from_edges(3, [(0, 3)])
    with pytest.raises(ValueError, match="outside"):
        g.from_edges(3, [(-1, 2)])
    # non-integer endpoints are refused with a ValueError (the old code raised IndexError)
    for bad in ([(0.5, 1)], [(0, 1.0)], [(True, 1)], [("0", 1)], [(np.float64(1), 2)]):
        with pytest.raises(ValueError, match="integer indices"):
            g.from_edges(3, bad)
    for bad in ([(0, 1, 2)], [0], [None]):
        with pytest.raises(ValueError, match="pair"):
            g.from_edges(3, bad)
    np.testing.assert_array_equal(g.from_edges(3, [(np.int64(0), np.int32(1))]),
                                  g.from_edges(3, [(0, 1)]))
    raw = np.array([[False, True], [False, False]])
    fixed = g.add_self_loops(raw)
    np.testing.assert_array_equal(fixed, np.array([[True, True], [False, True]]))
    assert not raw[0, 0]                              # input not modified


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "4"])
def test_builders_reject_bad_n(bad):
    with pytest.raises(ValueError, match="number of agents"):
        g.ring(bad)
    with pytest.raises(ValueError, match="number of agents"):
        g.complete(bad)


def test_circulant_rejects_non_integer_offset():
    with pytest.raises(ValueError, match="circulant offset must be an integer"):
        g.circulant(4, [1.5])


# ---- Erdős–Rényi -------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["strong", "weak", "undirected"])
@pytest.mark.parametrize("n,p", [(2, 0.5), (6, 0.2), (10, 0.3), (15, 0.6)])
def test_erdos_renyi_has_requested_kind(kind, n, p):
    for seed in range(3):
        adj = g.erdos_renyi(n, p, kind=kind, seed=seed)
        _assert_adjacency(adj, n)
        assert _kind(adj, kind) == kind, (n, p, seed)


@pytest.mark.parametrize("kind,n,p,directed", [
    ("strong", 8, 0.35, True),
    ("undirected", 8, 0.3, False),
    ("weak", 6, 0.3, True),
])
def test_erdos_renyi_equals_networkx_draw_when_it_has_the_kind(kind, n, p, directed):
    """With a seed whose networkx draw already has the kind, the result is that graph."""
    hits = misses = 0
    for seed in range(30):
        drawn = nx.fast_gnp_random_graph(n, p, seed=seed, directed=directed)
        want = _plus_self_loops_from_nx(drawn, n)
        adj = g.erdos_renyi(n, p, kind=kind, seed=seed)
        assert _kind(adj, kind) == kind
        if _kind(want, kind) == kind:
            hits += 1
            np.testing.assert_array_equal(adj, want)
        else:
            misses += 1
            assert not np.array_equal(adj, want)
    assert hits >= 5 and misses >= 3          # both branches were exercised


def test_erdos_renyi_is_deterministic_in_seed():
    a = g.erdos_renyi(12, 0.3, kind="strong", seed=7)
    b = g.erdos_renyi(12, 0.3, kind="strong", seed=7)
    c = g.erdos_renyi(12, 0.3, kind="strong", seed=8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_erdos_renyi_weak_n50_p05_documented_construction():
    """Rejection is hopeless here; the documented construction removes one agent's
    out-edges from a strongly connected G(50, 0.5) draw."""
    n, p, seed = 50, 0.5, 0
    # the networkx draw itself is strongly connected, so step 1 cannot return it
    first = nx.fast_gnp_random_graph(n, p, seed=seed, directed=True)
    assert nx.is_strongly_connected(first)
    adj = g.erdos_renyi(n, p, kind="weak", seed=seed)
    _assert_adjacency(adj, n)
    assert _kind(adj) == "weak"
    off = adj & ~np.eye(n, dtype=bool)
    silent = np.flatnonzero(off.sum(axis=0) == 0)      # agents nobody hears
    assert silent.size == 1
    v = int(silent[0])
    assert off[v].sum() > 0                           # v keeps its in-edges
    others = np.delete(np.delete(adj, v, axis=0), v, axis=1)
    assert nx.is_strongly_connected(_digraph_of(others))
    # everything except v's column is a G(n, p) draw: edge density ~ p
    m = (n - 1) * (n - 1)
    count = int(np.delete(off, v, axis=1).sum())
    assert abs(count - p * m) < 5 * math.sqrt(m * p * (1 - p))
    # deterministic
    np.testing.assert_array_equal(adj, g.erdos_renyi(n, p, kind="weak", seed=seed))


def test_erdos_renyi_weak_from_complete_removes_one_column():
    """p = 1: every draw is complete (strong), so the result is K_n minus one agent's
    out-edges, exactly."""
    n = 6
    adj = g.erdos_renyi(n, 1.0, kind="weak", seed=3, max_tries=5)
    cols = np.flatnonzero((adj & ~np.eye(n, dtype=bool)).sum(axis=0) == 0)
    assert cols.size == 1
    want = np.ones((n, n), bool)
    want[:, cols[0]] = False
    want[cols[0], cols[0]] = True
    np.testing.assert_array_equal(adj, want)


def test_erdos_renyi_fallbacks_at_p0():
    n = 9
    strong = g.erdos_renyi(n, 0.0, kind="strong", seed=1, max_tries=2)
    off = strong & ~np.eye(n, dtype=bool)
    assert _kind(strong, "strong") == "strong"
    # a Hamiltonian cycle: every agent hears exactly one other and is heard by one
    np.testing.assert_array_equal(off.sum(axis=1), np.ones(n))
    np.testing.assert_array_equal(off.sum(axis=0), np.ones(n))
    und = g.erdos_renyi(n, 0.0, kind="undirected", seed=1, max_tries=2)
    assert _kind(und) == "undirected"
    assert (und & ~np.eye(n, dtype=bool)).sum() == 2 * (n - 1)      # a path
    weak = g.erdos_renyi(n, 0.0, kind="weak", seed=1, max_tries=2)
    assert _kind(weak) == "weak"
    assert (weak & ~np.eye(n, dtype=bool)).sum() == n - 1            # cycle minus one edge


@pytest.mark.parametrize("kwargs,match", [
    (dict(kind="strongly"), "kind"),
    (dict(kind="directed"), "kind"),
    (dict(p=-0.1), "p"),
    (dict(p=1.5), "p"),
    (dict(p=float("nan")), "p"),
    (dict(p="0.5"), "p"),
    (dict(seed=1.5), "seed"),
    (dict(max_tries=0), "max_tries"),
    (dict(n=1, kind="weak"), "n >= 2"),
    (dict(n=0), "number of agents"),
])
def test_erdos_renyi_bad_input(kwargs, match):
    args = dict(n=5, p=0.5, kind="strong", seed=0)
    args.update(kwargs)
    n, p = args.pop("n"), args.pop("p")
    with pytest.raises(ValueError, match=match):
        g.erdos_renyi(n, p, **args)


# ---- networkx round trip -------------------------------------------------------------------



@given(digraphs())
def test_networkx_round_trip(adj):
    dg = g.to_networkx(adj)
    assert isinstance(dg, nx.DiGraph)
    assert dg.number_of_nodes() == adj.shape[0]
    assert nx.number_of_selfloops(dg) == 0
    for i, j in zip(*np.nonzero(adj), strict=True):
        if i != j:
            assert dg.has_edge(int(j), int(i))               # j -> i iff i hears j
    assert dg.number_of_edges() == int(adj.sum()) - adj.shape[0]
    np.testing.assert_array_equal(g.from_networkx(dg), adj)
    loops = g.to_networkx(adj, self_loops=True)
    assert nx.number_of_selfloops(loops) == adj.shape[0]
    np.testing.assert_array_equal(g.from_networkx(loops), adj)


def test_from_networkx_orientation_and_labels():
    dg = nx.DiGraph([(0, 1), (1, 2)])
    adj = g.from_networkx(dg)
    np.testing.assert_array_equal(adj, _expected(3, {1: {0}, 2: {1}}))
    # undirected graphs give symmetric adjacencies
    ug = nx.Graph([(0, 1), (1, 2)])
    np.testing.assert_array_equal(g.from_networkx(ug), g.path(3, directed=False))
    # integer labels inserted out of order still map label -> index
    dg = nx.DiGraph()
    dg.add_nodes_from([2, 0, 1])
    dg.add_edge(2, 0)
    np.testing.assert_array_equal(g.from_networkx(dg), _expected(3, {0: {2}}))
    # string labels: graph's node order, or an explicit order
    sg = nx.DiGraph([("a", "b")])
    np.testing.assert_array_equal(g.from_networkx(sg), _expected(2, {1: {0}}))
    np.testing.assert_array_equal(g.from_networkx(sg, nodes=["b", "a"]), _expected(2, {0: {1}}))
    with pytest.raises(ValueError, match="every node"):
        g.from_networkx(sg, nodes=["a"])
    with pytest.raises(ValueError, match="networkx graph"):
        g.from_networkx(np.eye(2, dtype=bool))


def test_to_networkx_rejects_non_square():
    with pytest.raises(ValueError, match="square"):
        g.to_networkx(np.ones((2, 3), bool))
    with pytest.raises(ValueError, match="add_self_loops"):
        g.to_networkx(np.zeros((2, 2), bool))           # the one graph rule: self-loops


# ---- adjlist files -----------------------------------------------------------------------

# The bandit paper's `strongly.adjlist`: sender -> receivers.
STRONGLY = {0: [1, 4], 1: [0, 2, 3, 4], 2: [0, 3, 4, 5], 3: [1, 2, 4, 5], 4: [0, 2, 3],
            5: [1, 4]}


def _strongly_expected() -> np.ndarray:
    a = np.eye(6, dtype=bool)
    for sender, receivers in STRONGLY.items():
        for r in receivers:
            a[r, sender] = True
    return a


def test_read_adjlist_bandit_strongly(tmp_path):
    dg = nx.DiGraph()
    dg.add_nodes_from(range(6))
    dg.add_edges_from((s, r) for s, rs in STRONGLY.items() for r in rs)
    file = tmp_path / "strongly.adjlist"
    nx.write_multiline_adjlist(dg, file)
    adj = g.read_adjlist(file, directed=True)
    _assert_adjacency(adj, 6)
    np.testing.assert_array_equal(adj, _strongly_expected())
    assert adj[1, 0] and adj[4, 0]            # 0 -> 1, 0 -> 4: 1 and 4 hear 0
    assert not adj[0, 5] and adj[5, 2]        # 5 does not send to 0; 2 sends to 5
    assert adj[2, 1] == (2 in STRONGLY[1])
    assert nx.is_strongly_connected(_digraph_of(adj))
    # undirected reading symmetrises
    und = g.read_adjlist(str(file), directed=False)
    np.testing.assert_array_equal(und, adj | adj.T)


def test_read_adjlist_handwritten_file(tmp_path):
    # multiline adjlist: "node degree" then one line per successor
    text = "# hand-written\n0 2\n1\n2\n1 1\n2\n2 0\n"
    file = tmp_path / "hand.adjlist"
    file.write_text(text)
    adj = g.read_adjlist(file)
    np.testing.assert_array_equal(adj, _expected(3, {1: {0}, 2: {0, 1}}))


def test_read_adjlist_bad_labels(tmp_path):
    file = tmp_path / "gap.adjlist"
    file.write_text("1 1\n2\n2 1\n3\n3 0\n")       # labels 1..3, no 0
    with pytest.raises(ValueError, match="0..n-1"):
        g.read_adjlist(file)
    file = tmp_path / "names.adjlist"
    file.write_text("a 1\nb\nb 0\n")
    with pytest.raises(ValueError, match="integer"):
        g.read_adjlist(file)
