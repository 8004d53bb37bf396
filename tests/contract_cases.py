"""One small case per public algorithm factory, for the contract test (tests/test_contract.py)
and its device-count child (not a test module).

A case is built by a function returning a :class:`Case`; :data:`CASES` lists them by name.
Covering a new factory is one line in its family's ``CASES`` (``contract_cases_<family>.py``,
plus its builder); this module gathers them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import numpy as np

import decentral.graphs as g


class Case(NamedTuple):
    """What the contract test needs of one factory.

    Attributes:
        algorithm: the Algorithm, built by the factory on a small problem.
        params: valid params.
        bad_params: ``[(params, regex)]``: invalid params (set by ``_replace``, as a sweep or
            a user would) and a regex the refusal must match (it names the field).
        other: the same factory built with another configuration (another graph or option):
            a checkpoint of ``algorithm`` must refuse it.
        num_steps: a run length, recorded at four evenly spaced points; 32 (points 8 apart:
            the runner's gap layout, where a whole run and its four chunks share one
            compiled program, so the chunking test compiles each case once).
        record_fn: a record function (None: the whole state).
        record_context: whether ``record_fn`` takes the record context.
        graph_swap: None, or ``(params with another sequence of the same structure in
            them, the factory built on that sequence)``: the two runs must agree (one
            compiled program serves many graphs).
        batch_invariant: False for a case whose numbers depend in the last bits on which
            seeds run together (and hence on the number of devices): a dense mix ``W @ X``
            under ``vmap`` is one matrix product over all the seeds' columns, and XLA's CPU
            kernels round a column differently by its position and the matrix's width. The
            sparse backend (ordered sums over each agent's in-neighbours) does not. The
            device-count test holds every other case to bit identity.
    """

    algorithm: Any
    params: Any
    bad_params: list
    other: Any
    num_steps: int = 32
    record_fn: Callable | None = None
    record_context: bool = False
    graph_swap: Any = None
    batch_invariant: bool = True


def consensus_case(backend: str = "dense") -> Case:
    from decentral.consensus import consensus, consensus_params

    alg = consensus(g.ring(5), rule="row", shape=2, backend=backend)
    params = consensus_params(np.arange(10.0).reshape(5, 2))
    bad = [
        (params._replace(x0=np.full((5, 2), np.inf)), r"params\.x0 has NaN or infinite"),
        (params._replace(x0=np.zeros((4, 2))), r"params\.x0 has 4 agents"),
        (params._replace(graphs=g.static(g.complete(6), rule="row", backend=backend)),
         r"params\.graphs has another structure.*n is 6"),
        (params._replace(graphs=g.static(g.ring(5), rule="column", backend=backend)),
         r"params\.graphs.*rule"),
    ]
    other = consensus(g.complete(5), rule="row", shape=2, backend=backend)
    swap = g.static(g.ring(5).T.copy(), rule="row", backend=backend) \
        if backend == "sparse" else g.static(g.complete(5), rule="row")
    return Case(alg, params, bad, other,
                graph_swap=(params._replace(graphs=swap), consensus(swap, shape=2)))


def consensus_random_case() -> Case:
    from decentral.consensus import consensus, consensus_params

    drops = g.random_edge_drops(g.ring(5, directed=False), 0.3, shared_across_seeds=False)
    alg = consensus(drops)
    params = consensus_params(np.arange(5.0))
    other = consensus(g.random_edge_drops(g.ring(5, directed=False), 0.5,
                                          shared_across_seeds=False))
    return Case(alg, params, [(params._replace(x0=np.array([1.0, np.nan, 0, 0, 0])),
                               r"params\.x0.*NaN")], other)


CASES: dict[str, Callable[[], Case]] = {
    "consensus": consensus_case,
    "consensus.sparse": lambda: consensus_case("sparse"),
    "consensus.random_per_seed": consensus_random_case,
}


def _gather() -> None:
    import importlib

    for family in ("consensus_sa", "bandits", "resilient_ac", "optimization"):
        module = importlib.import_module(f"contract_cases_{family}")
        clash = set(module.CASES) & set(CASES)
        if clash:
            raise ValueError(f"contract case names used twice: {sorted(clash)}")
        CASES.update(module.CASES)


_gather()


def record_points(case: Case) -> np.ndarray:
    """The four record points of every contract run: ``num_steps / 4`` apart."""
    return np.arange(1, 5) * (case.num_steps // 4)


def leaves_of(tree) -> list:
    """The leaves of a run's results as numpy arrays (PRNG keys as their key data), for
    comparing runs made in different processes."""
    out = []
    for x in jax.tree_util.tree_leaves(tree):
        if jax.numpy.issubdtype(getattr(x, "dtype", None), jax.dtypes.prng_key):
            x = jax.random.key_data(x)
        out.append(np.asarray(x))
    return out
