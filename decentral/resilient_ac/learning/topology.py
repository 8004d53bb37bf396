"""The communication graph of the grid-world learners as in-node tables: the experiment graph,
K5, and :func:`resolve_graph`, which turns any graph argument into the table the batch
learners gather with (Figura, Lin, Liu, Gupta, arXiv:2111.06776)."""

from __future__ import annotations

import numpy as np

from decentral.datasets.figura2021 import (
    EXPERIMENT_IN_NODES,
)

__all__ = ["PAPER_IN_NODES", "K5_IN_NODES", "resolve_graph"]

PAPER_IN_NODES = EXPERIMENT_IN_NODES
"""The experiment graph (own index first): 2-robust only, not 3-robust
(:data:`decentral.datasets.figura2021.EXPERIMENT_IN_NODES`, re-exported here)."""

K5_IN_NODES = np.asarray([[(i + j) % 5 for j in range(5)] for i in range(5)], np.int32)
"""The complete graph on 5 agents (3-robust), own index first."""

# ------------------------------------------------------------------------------------------
# graph
# ------------------------------------------------------------------------------------------


def _in_node_tables(patterns: np.ndarray, what: str) -> np.ndarray:
    """Boolean patterns ``[P, A, A]`` (``adj[i, j]``: i hears j) -> in-node tables
    ``[P, A, K]``: own index first, then the in-neighbours in cyclic order ``i + 1, i + 2, ...
(mod A)`` (the layout of the paper's table). The batch
    learners gather a fixed number ``K`` of messages per receiver, so every agent at every step
    must have the same in-degree."""
    P, A, _ = patterns.shape
    patterns = patterns | np.eye(A, dtype=bool)[None]
    degrees = patterns.sum(-1)
    if np.any(degrees != degrees.flat[0]):
        raise ValueError(f"{what}: the batch (MLP) learners need every agent to hear the same "
                         f"number of agents at every step (in-degrees with self-loops: "
                         f"{sorted(set(degrees.ravel().tolist()))}); pass an in_nodes table "
                         "or a graph with equal in-degrees (e.g. circulant, complete).")
    out = np.empty((P, A, int(degrees.flat[0])), np.int32)
    for p in range(P):
        for i in range(A):
            others = sorted((j for j in np.flatnonzero(patterns[p, i]) if j != i),
                            key=lambda j, i=i: (j - i) % A)
            out[p, i] = [i, *others]
    return out


def _check_in_nodes(arr, num_agents: int, name: str = "in_nodes") -> np.ndarray:
    """An in-node stack ``[P, A, K]`` after checking it: integers (not bools, not floats),
    ``A = num_agents`` rows, indices in ``0..A-1`` (never clamped), each row starting with the
    agent's own index. The one check of :func:`resolve_graph` and the learner's
    ``check_params`` (``params.in_nodes``)."""
    arr = np.asarray(arr)
    if arr.ndim != 3 or arr.shape[1] != num_agents or arr.shape[0] < 1 or arr.shape[2] < 1 \
            or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must be an integer table [A = {num_agents}, K] (or a stack "
                         f"[P, A, K]) listing each agent's own index first; got shape "
                         f"{arr.shape}, dtype {arr.dtype}.")
    if arr.min() < 0 or arr.max() >= num_agents:
        raise ValueError(f"{name} holds indices outside 0..{num_agents - 1} (they would be "
                         "clamped by the gather).")
    if np.any(arr[:, :, 0] != np.arange(num_agents)):
        raise ValueError(f"{name}[i][0] must be i (each agent hears itself first).")
    return arr


def resolve_graph(graphs, num_agents: int = 5) -> np.ndarray:
    """The in-node stack int32 ``[P, A, K]`` of the batch learners' graphs, used periodically
    (``in_nodes[u % P]`` at update ``u``).

    ``graphs`` is anything :func:`decentral.graphs.as_sequence` accepts, read for who hears
    whom only (weights ignored; an adjacency without a rule is read with ``rule="row"``): a
    :class:`~decentral.graphs.GraphSequence` with a period (static, periodic, one-peer: its
    edge patterns over one period), a float weight matrix ``[A, A]``, a boolean adjacency
    ``[A, A]`` with self-loops (``adj[i, j]``: i hears j); or, as documented shortcuts, the
    names ``"paper"`` / ``"k5"`` (5 agents) and an integer in-node table ``[A, K]`` / stack
    ``[P, A, K]`` (own index first). Graphs become tables with the own index first, then the
    in-neighbours in cyclic order ``i + 1, i + 2, ... (mod A)``.

    Raises:
        ValueError: an unknown name, a table of the wrong shape, indices outside the agents,
            a row that does not start with the agent's own index, a graph ``as_sequence``
            refuses (an adjacency without self-loops among them: see
            :func:`decentral.graphs.add_self_loops`), a graph whose agents do not all have the
            same in-degree, a random or explicit (finite) sequence, another number of agents.

    Example:
        >>> import decentral.graphs as g
        >>> resolve_graph(g.complete(3), 3)[0].tolist()
        [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    """
    from decentral.graphs import GraphSequence, as_sequence

    if isinstance(graphs, str):
        if graphs not in ("paper", "k5"):
            raise ValueError(f"unknown graph {graphs!r}; use 'paper' (the experiment graph, "
                             "2-robust), 'k5' (complete, 3-robust), an in_nodes table or any "
                             "graph decentral.graphs.as_sequence accepts.")
        if num_agents != 5:
            raise ValueError(f"graph {graphs!r} has 5 agents; this run has {num_agents}.")
        table = PAPER_IN_NODES if graphs == "paper" else K5_IN_NODES
        return table[None].copy()
    if isinstance(graphs, GraphSequence):
        seq = graphs
    else:
        arr = np.asarray(graphs)
        if arr.dtype == np.bool_ or (arr.ndim == 2 and arr.shape[0] == arr.shape[1]
                                     and np.issubdtype(arr.dtype, np.floating)):
            if arr.shape != (num_agents, num_agents):
                kind = "an adjacency must be bool" if arr.dtype == np.bool_ else \
                    "a weight matrix must be"
                raise ValueError(f"{kind} [{num_agents}, {num_agents}]; got shape "
                                 f"{arr.shape}.")
            seq = as_sequence(arr, default_rule="row")
        else:
            return _check_in_nodes(arr[None] if arr.ndim == 2 else arr, num_agents
                                   ).astype(np.int32)
    if seq.n != num_agents:
        raise ValueError(f"the graph sequence has {seq.n} agents; this run has {num_agents}.")
    if seq.period is None:
        raise ValueError(f"a {seq.form!r} graph sequence has no period; the batch "
                         "learners take static, periodic or one-peer sequences (or an "
                         "in_nodes stack).")
    pats = seq.weights_host(seq.period) != 0
    return _in_node_tables(pats, "graph sequence")


def _num_agents_of(graphs) -> int:
    """The number of agents of a ``graphs`` argument (5 for the named graphs)."""
    from decentral.graphs import GraphSequence

    if isinstance(graphs, str):
        return 5
    if isinstance(graphs, GraphSequence):
        return graphs.n
    shape = np.shape(graphs)
    if len(shape) < 2:
        raise ValueError(f"graphs must be 'paper', 'k5', an in_nodes table [A, K] / stack "
                         f"[P, A, K] or a graph decentral.graphs.as_sequence accepts; got "
                         f"shape {shape}.")
    return int(shape[-2])
