"""Contract cases of consensus SA, push-sum and push-sum SA (see tests/contract_cases.py)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from contract_cases import Case

import decentral.graphs as g


def _problem():
    from decentral.consensus_sa import random_mrp, td0_problem

    return td0_problem(*random_mrp(0, num_states=3, num_features=2, num_agents=4), 0.8)


def _sa_bad(params, n_states: int = 3):
    from decentral.schedules import constant

    return [
        (params._replace(theta0=np.zeros((3, 2))), r"theta0 must have shape \[N, d\]"),
        (params._replace(theta0=np.full((4, 2), np.inf)), r"params\.theta0 must be finite"),
        (params._replace(initial_distribution=np.full(n_states, 0.5)),
         r"params\.initial_distribution must be a probability vector"),
        (params._replace(initial_distribution=np.ones(2) / 2),
         r"initial_distribution must have shape \[S\]"),
        (params._replace(step_size=0.1), r"params\.step_size must be a"),
        (params._replace(step_size=constant(0.1)._replace(alpha0=np.float32(-0.1))),
         r"params\.step_size: alpha0 must be finite and > 0"),
    ]


def consensus_sa_case(variant: str = "combine_then_adapt", backend: str = "dense") -> Case:
    from decentral.consensus_sa import consensus_sa, sa_params
    from decentral.schedules import harmonic

    prob = _problem()
    alg = consensus_sa(prob, g.ring(4), rule="row", variant=variant, backend=backend)
    params = sa_params(harmonic(0.5, 5.0))
    bad = _sa_bad(params) + [
        (params._replace(graphs=g.static(g.ring(4), rule="column", backend=backend)),
         r"params\.graphs.*rule"),
        (params._replace(graphs=g.static(g.ring(5), rule="row", backend=backend)),
         r"params\.graphs.*n is 5"),
    ]
    other = consensus_sa(prob, g.complete(4), rule="row", variant=variant, backend=backend)
    swap = g.static(g.ring(4).T.copy(), rule="row", backend=backend)
    return Case(alg, params, bad, other,
                graph_swap=(params._replace(graphs=swap),
                            consensus_sa(prob, swap, variant=variant)))


def consensus_sa_random_case() -> Case:
    from decentral.consensus_sa import consensus_sa, sa_params
    from decentral.schedules import constant

    prob = _problem()
    drops = g.random_edge_drops(g.complete(4), 0.4, shared_across_seeds=False)
    alg = consensus_sa(prob, drops)
    params = sa_params(constant(0.05))
    other = consensus_sa(prob, g.random_edge_drops(g.complete(4), 0.6,
                                                   shared_across_seeds=False))
    swap = g.random_edge_drops(g.complete(4), 0.6, shared_across_seeds=False)
    return Case(alg, params, _sa_bad(params), other,
                graph_swap=(params._replace(graphs=swap), consensus_sa(prob, swap)))


def push_sum_case(backend: str = "dense") -> Case:
    from decentral.push_sum import push_sum, push_sum_params

    alg = push_sum(g.ring(5), rule="column", backend=backend)
    params = push_sum_params(np.arange(5.0))
    bad = [
        (params._replace(x0=np.zeros(4)), r"params\.x0 has 4 agents"),
        (params._replace(x0=np.array([0.0, 1.0, np.inf, 0.0, 0.0])),
         r"params\.x0 has NaN or infinite"),
        (params._replace(graphs=g.static(g.ring(5, directed=False), rule="row",
                                         backend=backend)), r"params\.graphs"),
    ]
    other = push_sum(g.complete(5), rule="column", backend=backend)
    swap = g.static(g.ring(5).T.copy(), rule="column", backend=backend)
    return Case(alg, params, bad, other,
                graph_swap=(params._replace(graphs=swap), push_sum(swap)))


def push_sum_sa_case() -> Case:
    from decentral.consensus_sa import sa_params
    from decentral.push_sum import push_sum_sa
    from decentral.schedules import harmonic

    prob = _problem()
    alg = push_sum_sa(prob, g.ring(4), rule="column")
    params = sa_params(harmonic(0.5, 5.0))
    bad = _sa_bad(params) + [(params._replace(graphs=g.static(g.ring(4), rule="row")),
                              r"params\.graphs.*rule")]
    other = push_sum_sa(prob, g.complete(4), rule="column")
    swap = g.static(g.ring(4).T.copy(), rule="column")
    return Case(alg, params, bad, other,
                graph_swap=(params._replace(graphs=swap), push_sum_sa(prob, swap)))


def push_sum_sa_random_case() -> Case:
    from decentral.consensus_sa import sa_params
    from decentral.push_sum import push_sum_sa
    from decentral.schedules import constant

    prob = _problem()
    drops = g.random_edge_drops(g.complete(4), 0.3, rule="metropolis",
                                shared_across_seeds=False)
    params = sa_params(constant(0.05))
    other = push_sum_sa(prob, g.random_edge_drops(g.complete(4), 0.5, rule="metropolis",
                                                  shared_across_seeds=False))
    return Case(push_sum_sa(prob, drops), params, _sa_bad(params), other)


CASES: dict[str, Callable[[], Case]] = {
    "consensus_sa": consensus_sa_case,
    "consensus_sa.adapt_then_combine.sparse":
        lambda: consensus_sa_case("adapt_then_combine", "sparse"),
    "consensus_sa.random_per_seed": consensus_sa_random_case,
    "push_sum": push_sum_case,
    "push_sum.sparse": lambda: push_sum_case("sparse"),
    "push_sum_sa": push_sum_sa_case,
    "push_sum_sa.random_per_seed": push_sum_sa_random_case,
}
