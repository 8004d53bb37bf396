"""Old home of the bandit paper's graphs, which moved to :mod:`decentral.datasets.zhu2021`;
these names are re-exported from there and keep working for one version."""

from decentral.datasets.zhu2021 import (
    PAPER_GRAPH_ORDERS,
    paper_graph,
    paper_graph_kind,
    paper_graph_names,
    paper_graph_order,
)

__all__ = ["paper_graph", "paper_graph_names", "paper_graph_kind", "paper_graph_order",
           "PAPER_GRAPH_ORDERS"]
