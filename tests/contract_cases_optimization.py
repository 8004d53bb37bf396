"""Contract cases of the optimization family (see tests/contract_cases.py)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from contract_cases import Case

import decentral.graphs as g


def dgd_case(backend: str = "dense") -> Case:
    from decentral.optimization import dgd, optimization_params, random_quadratic
    from decentral.schedules import constant

    problem = random_quadratic(5, 2, seed=0)
    alg = dgd(problem, g.ring(5), rule="row", backend=backend)
    params = optimization_params(0.05, np.arange(10.0).reshape(5, 2), gradient_noise=0.1)
    bad = [
        (params._replace(x0=np.zeros((4, 2))), r"params\.x0 has 4 agents"),
        (params._replace(x0=np.zeros((5, 3))), r"params\.x0 must be \[N, d\]"),
        (params._replace(x0=np.full((5, 2), np.inf)), r"params\.x0 has NaN or infinite"),
        (params._replace(gradient_noise=-0.5), r"params\.gradient_noise must be finite"),
        (params._replace(step_size=0.1), r"params\.step_size must be a"),
        (params._replace(step_size=constant(0.1)._replace(alpha0=np.float32(-0.1))),
         r"params\.step_size: alpha0 must be finite and > 0"),
        (params._replace(graphs=g.static(g.complete(6), rule="row", backend=backend)),
         r"params\.graphs has another structure"),
    ]
    other = dgd(problem, g.ring(5), rule="row", backend=backend, grad_at="mixed")
    swap = g.static(g.ring(5).T.copy(), rule="row", backend=backend) \
        if backend == "sparse" else g.static(g.complete(5), rule="row")
    return Case(alg, params, bad, other,
                graph_swap=(params._replace(graphs=swap), dgd(problem, swap)))


CASES: dict[str, Callable[[], Case]] = {
    "optimization.dgd": dgd_case,
    "optimization.dgd.sparse": lambda: dgd_case("sparse"),
}


def _common_bad(params, n: int = 5, d: int = 2) -> list:
    return [
        (params._replace(x0=np.zeros((n - 1, d))), r"params\.x0 has 4 agents"),
        (params._replace(x0=np.full((n, d), np.inf)), r"params\.x0 has NaN or infinite"),
        (params._replace(gradient_noise=-0.5), r"params\.gradient_noise must be finite"),
        (params._replace(step_size=0.1), r"params\.step_size must be a"),
    ]


def one_sequence_case(name: str, kind: str, backend: str = "dense") -> Case:
    """A method over one sequence of weights ``kind`` on a ring of 5 (both directions for
    the doubly stochastic ones), swapped for the reversed ring in ``graph_swap``."""
    from decentral import optimization as opt

    factory = getattr(opt, name)
    problem = opt.random_quadratic(5, 2, smoothness=2.0, seed=0)
    rule = {"row": "row", "column": "column", "doubly": "metropolis"}[kind]
    base = g.ring(5) if kind != "doubly" else g.ring(5) | g.ring(5).T
    alt = g.ring(5).T.copy() if kind != "doubly" else g.add_self_loops(
        g.from_edges(5, [(0, 2), (2, 0), (1, 3), (3, 1), (2, 4), (4, 2), (3, 0), (0, 3),
                         (4, 1), (1, 4)]))
    seq = g.static(base, rule=rule, backend=backend)
    alg = factory(problem, seq)
    params = opt.optimization_params(0.05, np.arange(10.0).reshape(5, 2) / 10,
                                     gradient_noise=0.1)
    bad = _common_bad(params) + [
        (params._replace(graphs=g.static(g.complete(6), rule=rule, backend=backend)),
         r"params\.graphs has another structure")]
    other = factory(opt.random_quadratic(5, 2, smoothness=2.0, seed=1), seq)
    swap = g.static(alt, rule=rule, backend=backend)
    return Case(alg, params, bad, other,
                graph_swap=(params._replace(graphs=swap), factory(problem, swap)))


def push_pull_case(backend: str = "dense") -> Case:
    from decentral.optimization import optimization_params, push_pull, random_quadratic

    problem = random_quadratic(5, 2, smoothness=2.0, seed=0)
    pull = g.static(g.ring(5), rule="row", backend=backend)
    push = g.static(g.ring(5), rule="column", backend=backend)
    alg = push_pull(problem, pull, push)
    params = optimization_params(0.05, np.arange(10.0).reshape(5, 2) / 10, gradient_noise=0.1)
    bad = _common_bad(params) + [
        (params._replace(graphs=pull), r"params\.graphs of push_pull must be a tuple"),
        (params._replace(graphs=(pull, pull)), r"params\.graphs \(push_graphs\) has another"),
    ]
    rev_pull = g.static(g.ring(5).T.copy(), rule="row", backend=backend)
    rev_push = g.static(g.ring(5).T.copy(), rule="column", backend=backend)
    return Case(alg, params, bad, push_pull(problem, pull, push, variant="ab"),
                graph_swap=(params._replace(graphs=(rev_pull, rev_push)),
                            push_pull(problem, rev_pull, rev_push)))


def extra_case(backend: str = "dense") -> Case:
    from decentral.optimization import extra, optimization_params, random_quadratic

    problem = random_quadratic(5, 2, smoothness=2.0, seed=0)
    seq = g.static(g.ring(5) | g.ring(5).T, rule="metropolis", backend=backend)
    params = optimization_params(0.05, np.arange(10.0).reshape(5, 2) / 10, gradient_noise=0.1)
    bad = _common_bad(params) + [(params._replace(graphs=seq), r"params\.graphs is not accepted")]
    lazier = (3 * np.eye(5) + np.asarray(seq.weights_host64(1)[0])) / 4
    return Case(extra(problem, seq), params, bad, extra(problem, seq, w_tilde=lazier))


_ONE_SEQUENCE = {"subgradient_push": "column", "diging": "doubly", "push_diging": "column",
                 "dsgt": "doubly", "dsgd": "doubly"}

for _name, _kind in _ONE_SEQUENCE.items():
    CASES[f"optimization.{_name}"] = (lambda n=_name, k=_kind: one_sequence_case(n, k))
    CASES[f"optimization.{_name}.sparse"] = (
        lambda n=_name, k=_kind: one_sequence_case(n, k, "sparse"))
CASES["optimization.push_pull"] = push_pull_case
CASES["optimization.push_pull.sparse"] = lambda: push_pull_case("sparse")
CASES["optimization.extra"] = extra_case
CASES["optimization.extra.sparse"] = lambda: extra_case("sparse")
