"""Time-varying directed graphs: builders, weight rules, sequences, checks, robustness.

Orientation (project-wide): ``adj[i, j]`` True / ``W[i, j] > 0`` iff agent i *receives from*
agent j (edge j -> i); every agent has a self-loop.

Example:
    >>> import decentral.graphs as g
    >>> adj = g.erdos_renyi(8, 0.4, kind="strong", seed=1)
    >>> W = g.row_stochastic(adj)
    >>> g.is_strongly_connected(adj)
    True
    >>> pi = g.perron_vector(W)          # πᵀ W = πᵀ, Σ π = 1
    >>> bool(abs(pi.sum() - 1) < 1e-12), bool(((pi @ W - pi) ** 2).sum() < 1e-24)
    (True, True)
    >>> g.r_robustness(adj)
    2
"""

from .builders import (
    DENSE_LIMIT,
    add_self_loops,
    circulant,
    complete,
    exponential,
    from_edges,
    from_networkx,
    grid2d,
    path,
    read_adjlist,
    ring,
    star,
    to_networkx,
)
from .checks import (
    DIAMETER_EXACT_WORK,
    WindowReport,
    connectivity_window,
    connectivity_window_report,
    diameter,
    diameter_bounds,
    is_strongly_connected,
    min_positive_weight,
    require_stochastic_sequence,
    sequence_stochasticity_failure,
    window_unions,
)
from .constructors import (
    as_sequence,
    explicit,
    one_peer_exponential,
    periodic,
    random_edge_drops,
    static,
)
from .perron import (
    APSResult,
    absolute_probability_sequence,
    closed_classes,
    perron_vector,
    right_perron_vector,
)
from .random_graphs import erdos_renyi, random_geometric, random_regular
from .robustness import is_r_robust, is_rs_robust, r_robustness, robustness_witness
from .sequences import GraphSequence
from .tables import (
    NeighborTable,
    adjacency_to_table,
    as_table,
    dense_to_table,
    gather,
    masked_max,
    mix,
    replace_sender_messages,
    table_rule_weights,
    table_to_dense,
    take_rows,
)
from .weights import (
    column_stochastic,
    is_column_stochastic,
    is_doubly_stochastic,
    is_row_stochastic,
    metropolis,
    prescribed_pi_weights,
    require_stochastic,
    row_stochastic,
    stochasticity_violations,
)

__all__ = [
    "DENSE_LIMIT", "DIAMETER_EXACT_WORK", "APSResult", "GraphSequence", "NeighborTable",
    "WindowReport",
    "absolute_probability_sequence", "add_self_loops", "adjacency_to_table", "as_sequence",
    "as_table",
    "circulant", "closed_classes",
    "column_stochastic", "complete", "connectivity_window", "connectivity_window_report",
    "dense_to_table", "diameter", "diameter_bounds", "erdos_renyi", "explicit", "exponential",
    "from_edges",
    "from_networkx", "gather", "grid2d", "is_column_stochastic", "is_doubly_stochastic",
    "is_r_robust", "is_row_stochastic", "is_rs_robust", "is_strongly_connected", "masked_max",
    "metropolis", "min_positive_weight", "mix", "one_peer_exponential", "path", "periodic",
    "perron_vector", "prescribed_pi_weights", "r_robustness", "random_edge_drops",
    "random_geometric", "random_regular", "right_perron_vector",
    "read_adjlist", "replace_sender_messages", "require_stochastic",
    "require_stochastic_sequence", "ring", "robustness_witness", "row_stochastic",
    "sequence_stochasticity_failure", "star", "static", "stochasticity_violations",
    "table_rule_weights", "table_to_dense", "take_rows", "to_networkx", "window_unions",
]
