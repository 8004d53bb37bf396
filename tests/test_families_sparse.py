"""Every family on a scipy CSR graph gives the numbers of the same graph passed densely.

Issue 26, item 2. Each case builds one small graph twice, as a dense boolean array and with
``sparse=True`` (or ``scipy.sparse.csr_array`` of the dense draw, for Erdos-Renyi, whose sparse
draw is another graph), and runs the family through :func:`decentral.runner.run` three times in
float64, 2 seeds, a few tens of steps:

* ``dense``: the dense input on the dense backend (how the family's own tests build it);
* ``dense_sparse``: the dense input with ``backend="sparse"``;
* ``csr``: the CSR input with the default backend (sparse for a sparse input).

The CSR run must equal the dense-input sparse-backend run (same tables, hence the same program)
and the dense-backend run to a relative 1e-12; integer records (sampled states, pulls) exactly.
A last test plants another graph on the CSR side and checks that the comparison fails.
"""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest
import scipy.sparse as sp

import decentral.graphs as g
from decentral.runner import run

pytestmark = [pytest.mark.usefixtures("x64_module"), pytest.mark.xdist_group("families_sparse")]

SEEDS = [0, 1]
STEPS = 40
RTOL = 1e-12


# ---- graphs -----------------------------------------------------------------------------------

def _er_strong(sparse: bool):
    dense = g.erdos_renyi(10, 0.3, kind="strong", seed=3)
    return sp.csr_array(dense) if sparse else dense


GRAPHS = {
    "exponential9": lambda s: g.exponential(9, sparse=s),
    "er_strong10": _er_strong,
    "exponential8": lambda s: g.exponential(8, sparse=s),
    "ring8_undirected": lambda s: g.ring(8, directed=False, sparse=s),
    "complete7": lambda s: g.complete(7, sparse=s),
    # i hears i - 1, ..., i - 4: every agent has 4 in-neighbours, robust enough for H = 1
    "circulant9": lambda s: g.circulant(9, [1, 2, 3, 4], sparse=s),
}


# ---- families: (graph, backend) -> (algorithm, params, record_fn) ----------------------------

def _sa_problem(n: int):
    from decentral.consensus_sa import random_mrp, td0_problem

    return td0_problem(*random_mrp(0, num_states=3, num_features=2, num_agents=n), 0.8)


def _consensus_sa(variant: str):
    def build(graph, backend):
        from decentral.consensus_sa import consensus_sa, sa_params
        from decentral.schedules import harmonic

        alg = consensus_sa(_sa_problem(graph.shape[0]), graph, rule="row", variant=variant,
                           backend=backend)
        return alg, sa_params(harmonic(0.5, 5.0)), None
    return build


def _push_sum_sa(graph, backend):
    from decentral.consensus_sa import sa_params
    from decentral.push_sum import push_sum_sa
    from decentral.schedules import harmonic

    alg = push_sum_sa(_sa_problem(graph.shape[0]), graph, rule="column", backend=backend)
    return alg, sa_params(harmonic(0.5, 5.0)), None


def _dec_ucb(theorem: int):
    def build(graph, backend):
        from decentral.bandits import bandit_algorithm, bernoulli, dec_ucb

        pol = dec_ucb(graph, theorem=theorem, backend=backend)
        alg = bandit_algorithm(pol, bernoulli([0.7, 0.5, 0.2]))
        # the policy statistics, the pulls and the regret; not the PRNG keys
        return alg, pol.params, lambda s: (s.policy, s.pulls, s.realized_regret)
    return build


def _wmsr(graph, backend):
    from decentral.resilient_ac import constant, resilient_consensus, resilient_consensus_params

    n = graph.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # the graph meets the W-MSR hypotheses for H = 1
        alg = resilient_consensus(graph, 1, [n - 1], constant(5.0), check_robustness=True,
                                  backend=backend)
    x0 = np.linspace(-1.0, 2.0, 2 * n).reshape(n, 2)
    return alg, resilient_consensus_params(x0), None


def _rpbcac(graph, backend):
    from decentral.resilient_ac.linear import feature_extreme, linear_params, random_mdp, rpbcac

    n = graph.shape[0]
    mdp = random_mdp(0, num_states=3, num_actions_per_agent=2, num_agents=n, feature_dim=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        alg = rpbcac(graph, H=1, byzantine=[n - 1], attacker=feature_extreme(), backend=backend)
    return alg, linear_params(mdp), None


# (family, graph name, weight rule the family gives the graph)
CASES = {
    "consensus_sa.combine_then_adapt.exponential9": (_consensus_sa("combine_then_adapt"),
                                                     "exponential9", "row"),
    "consensus_sa.adapt_then_combine.er_strong10": (_consensus_sa("adapt_then_combine"),
                                                    "er_strong10", "row"),
    "push_sum_sa.exponential9": (_push_sum_sa, "exponential9", "column"),
    "push_sum_sa.er_strong10": (_push_sum_sa, "er_strong10", "column"),
    "dec_ucb.theorem1.exponential8": (_dec_ucb(1), "exponential8", "row"),
    "dec_ucb.theorem2.ring8_undirected": (_dec_ucb(2), "ring8_undirected", "metropolis"),
    "resilient_consensus.complete7": (_wmsr, "complete7", "row"),
    "resilient_consensus.circulant9": (_wmsr, "circulant9", "row"),
    "rpbcac.complete7": (_rpbcac, "complete7", "row"),
}


# ---- comparisons ------------------------------------------------------------------------------

def _leaves(records) -> list[np.ndarray]:
    out = []
    for leaf in jax.tree_util.tree_leaves(records):
        if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            continue
        out.append(np.asarray(leaf))
    return out


def _assert_same_records(got, want, label: str) -> float:
    """Integer leaves exactly, floating leaves to a relative RTOL (absolute RTOL * the leaf's
    scale, its largest magnitude but at least 1, near 0); returns the largest difference seen
    relative to its leaf's scale."""
    a, b = _leaves(got), _leaves(want)
    assert len(a) == len(b) and len(a) > 0, label
    worst = 0.0
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        assert x.shape == y.shape and x.dtype == y.dtype, (label, i, x.shape, y.shape)
        if not np.issubdtype(y.dtype, np.floating):
            np.testing.assert_array_equal(x, y, err_msg=f"{label}: leaf {i}")
            continue
        assert y.dtype == np.float64, (label, i, y.dtype)
        assert np.all(np.isfinite(y)), (label, i)
        scale = max(float(np.max(np.abs(y))), 1.0)
        np.testing.assert_allclose(x, y, rtol=RTOL, atol=RTOL * scale,
                                   err_msg=f"{label}: leaf {i}")
        worst = max(worst, float(np.max(np.abs(x - y))) / scale)
    return worst


def _run(build, graph, backend):
    alg, params, record_fn = build(graph, backend)
    res = run(alg, params, seeds=SEEDS, num_steps=STEPS, record_fn=record_fn, progress=False)
    return alg, res.records


def _three_runs(case: str) -> dict:
    build, graph_name, _ = CASES[case]
    dense, csr = GRAPHS[graph_name](False), GRAPHS[graph_name](True)
    assert isinstance(csr, sp.csr_array) and isinstance(dense, np.ndarray)
    np.testing.assert_array_equal(csr.toarray(), dense)         # one graph, two kinds
    return {"dense": _run(build, dense, None),
            "dense_sparse": _run(build, dense, "sparse"),
            "csr": _run(build, csr, None)}


def _graphs_digest(alg) -> str:
    return alg.config["graphs"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_csr_input_gives_the_dense_inputs_numbers(case):
    runs = _three_runs(case)
    _, graph_name, rule = CASES[case]
    (alg_d, rec_d), (alg_ds, rec_ds), (alg_c, rec_c) = (runs["dense"], runs["dense_sparse"],
                                                         runs["csr"])
    dense = GRAPHS[graph_name](False)
    # the CSR input went to the sparse backend, and the dense input did not
    assert _graphs_digest(alg_d) == g.static(dense, rule=rule).digest()
    if rule != "metropolis":      # sparse Metropolis diagonals may differ from dense by an ulp
        want = g.static(dense, rule=rule, backend="sparse").digest()
        assert _graphs_digest(alg_c) == _graphs_digest(alg_ds) == want
    else:
        seq = g.static(GRAPHS[graph_name](True), rule=rule)
        assert seq.backend == "sparse" and _graphs_digest(alg_c) == seq.digest()
    _assert_same_records(rec_c, rec_ds, f"{case}: csr vs dense input, sparse backend")
    _assert_same_records(rec_c, rec_d, f"{case}: csr vs dense input, dense backend")
    # the runs did something: the records move over the steps
    first = _leaves(rec_d)
    assert any(not np.array_equal(x[:, 0], x[:, -1]) for x in first), case


def test_a_planted_other_graph_fails_the_comparison():
    build, _, _ = CASES["consensus_sa.combine_then_adapt.exponential9"]
    dense = g.exponential(9)
    transposed = sp.csr_array(dense.T.copy())        # i hears i + 2^k: another graph
    _, want = _run(build, dense, None)
    _, got = _run(build, transposed, None)
    with pytest.raises(AssertionError):
        _assert_same_records(got, want, "planted")
