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
