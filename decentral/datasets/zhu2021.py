"""The six-agent graphs of the experiments of Zhu, Mulle, Smith, Liu, "Decentralized
Multi-Armed Bandit Can Outperform Classic Upper Confidence Bound", arXiv:2111.10933 v1 (2021).

Provenance. The authors ship them as networkx multiline adjlist files with their code
(``csasmith/vip-mab``, ``code/NIPS2021CodeSubmission/*.adjlist``); the files here are written
in the same format from the same edge lists: a line ``j d`` is followed by the ``d`` successors
of ``j``, i.e. the agents that **receive from** ``j``, self-loop included. Under this library's
orientation that is ``adj[i, j] = True`` for every listed ``i`` (``i`` receives from ``j``).
The graphs, by name (with their kind):

* ``strongly`` (``"strong"``): 0→{1,4}, 1→{0,2,3,4}, 2→{0,3,4,5}, 3→{1,2,4,5}, 4→{0,2,3},
  5→{1,4};
* ``undirected`` (``"undirected"``): 0–1, 0–4, 1–3, 1–5, 2–3, 3–5, 4–5;
* ``weakly`` (``"weak"``): 0→{1,3,4}, 1→{0,2,3,4}, 2→{1,3,4}, 3→∅ (a sink), 4→{0,1,5},
  5→{0,2,3};
* ``undirected_two_neighbors`` (``"undirected"``): the 6-cycle 0–1–2–3–4–5–0 and the chord 0–2;
* ``undirected_path`` (``"undirected"``): 0–1–2–3–4–5;
* ``weakly_path`` (``"weak"``): the directed path 0→1→2→3→4→5.

Here ``j→{…}`` lists the agents that receive from ``j``; self-loops are implied.

The kind is the graph type the authors' simulator is run with (``strong``, ``weak`` or
``undirected``); it picks their weight rule: flocking weights and the Theorem-1 width for
``strong`` and ``weak`` graphs, Metropolis weights and the Theorem-2 width for ``undirected``
ones. The undirected files list every neighbour of every agent, so they read as the same
symmetric graph whether parsed as directed or undirected.

**Agent order.** ``order="label"`` (the default) indexes agents by their integer labels, like
:func:`decentral.graphs.read_adjlist`, so that agent ``i`` is the node labelled ``i`` in the edge
lists above and in every result of this library. ``order="first_appearance"`` indexes them in the
order in which the nodes first appear in the file, which is what the authors' loader does
(``networkx.read_multiline_adjlist`` then ``networkx.adjacency_matrix`` in node order): use it
only to line results up with the authors' legends, or where an index-dependent rule (the
first version's code takes the max-consensus value of the highest-*index* in-neighbour) must
match theirs. The files keep the authors' node order, so ``strongly`` reads as 0, 1, 4, 2, 3, 5
and ``undirected`` as 0, 1, 4, 3, 5, 2 in that mode.

Example:
    >>> adj = paper_graph("strongly")
    >>> adj.sum(axis=1).tolist()                # |N_i| = in-degree + 1
    [4, 4, 4, 4, 6, 3]
    >>> bool(adj[1, 0]), bool(adj[0, 1])        # 1 receives from 0, and 0 from 1
    (True, True)
    >>> paper_graph_order("strongly")
    (0, 1, 4, 2, 3, 5)
"""

from __future__ import annotations

from importlib import resources

import networkx as nx
import numpy as np

from decentral.graphs import read_adjlist

__all__ = ["paper_graph", "paper_graph_names", "paper_graph_kind", "paper_graph_order",
           "PAPER_GRAPH_ORDERS"]

#: The accepted ``order=`` values of :func:`paper_graph`.
PAPER_GRAPH_ORDERS = ("label", "first_appearance")

_KINDS = {
    "strongly": "strong",
    "undirected": "undirected",
    "weakly": "weak",
    "undirected_two_neighbors": "undirected",
    "undirected_path": "undirected",
    "weakly_path": "weak",
}


def paper_graph_names() -> tuple[str, ...]:
    """Names of the bundled graphs, in the order of the module's table.

    Example:
        >>> paper_graph_names()[:3]
        ('strongly', 'undirected', 'weakly')
    """
    return tuple(_KINDS)


def _check_name(name) -> str:
    if not isinstance(name, str) or name not in _KINDS:
        raise ValueError(f"unknown paper graph {name!r}; the bundled graphs are "
                         f"{', '.join(_KINDS)}.")
    return name


def paper_graph_kind(name: str) -> str:
    """``"strong"``, ``"weak"`` or ``"undirected"``: the graph type the authors run ``name``
    with (flocking weights for the first two, Metropolis for the last).

    Example:
        >>> paper_graph_kind("weakly_path"), paper_graph_kind("undirected_path")
        ('weak', 'undirected')
    """
    return _KINDS[_check_name(name)]


def _read(name: str, reader):
    source = resources.files("decentral.datasets").joinpath("data", "zhu2021", f"{name}.adjlist")
    with resources.as_file(source) as path:
        return reader(path)


def paper_graph_order(name: str) -> tuple[int, ...]:
    """The node labels in the order they first appear in the file (the authors' agent order):
    agent ``k`` of ``paper_graph(name, order="first_appearance")`` is the node labelled
    ``paper_graph_order(name)[k]``.

    Example:
        >>> paper_graph_order("undirected")
        (0, 1, 4, 3, 5, 2)
    """
    create_using = nx.Graph if paper_graph_kind(name) == "undirected" else nx.DiGraph
    graph = _read(name, lambda p: nx.read_multiline_adjlist(p, create_using=create_using,
                                                            nodetype=int))
    return tuple(int(u) for u in graph.nodes)


def paper_graph(name: str, *, order: str = "label") -> np.ndarray:
    """Boolean adjacency ``[6, 6]`` of a bundled graph, self-loops included; ``adj[i, j]`` is
    True iff agent ``i`` receives from agent ``j``.

    Args:
        name: one of :func:`paper_graph_names`.
        order: ``"label"`` (default: agent ``i`` is the node labelled ``i``) or
            ``"first_appearance"`` (the authors' loader's order; see the module docstring).

    Raises:
        ValueError: an unknown name or order.

    Example:
        >>> paper_graph("weakly")[3].nonzero()[0].tolist()       # the sink 3 hears 0, 1, 2, 5
        [0, 1, 2, 3, 5]
        >>> paper_graph("weakly")[:, 3].nonzero()[0].tolist()    # ... and nobody hears 3
        [3]
    """
    _check_name(name)
    if order not in PAPER_GRAPH_ORDERS:
        raise ValueError(f"order must be one of {PAPER_GRAPH_ORDERS}; got {order!r}.")
    directed = paper_graph_kind(name) != "undirected"
    adj = _read(name, lambda p: read_adjlist(p, directed=directed))
    if order == "label":
        return adj
    perm = list(paper_graph_order(name))
    return adj[np.ix_(perm, perm)]
