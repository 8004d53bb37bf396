"""Decentralized UCB (Zhu, Mulle, Smith, Liu, arXiv 2111.10933): Dec_UCB of the first version
(Theorems 1 and 2) and Dec-UCB1 / Dec-KL-UCB of the journal version (IEEE TAC 70(7), 2025).

Each agent i keeps, per arm k, its own count ``n_{i,k}`` and sample mean ``xbar_{i,k}``, a local
estimate ``m_{i,k}`` of ``max_j n_{j,k}`` and a local estimate ``z_{i,k}`` of the network-average
sample mean. **Initialisation** (``t = 0``): every arm pulled once, ``n = m = 1``,
``z = xbar = X_{i,k}(0)``. **One iteration from t to t + 1**, in order:

1. *decide* — if some arm has ``n_{i,k}(t) <= m_{i,k}(t) - M`` (forced exploration), pull one of
   them uniformly at random (one uniform per agent picks among them); otherwise pull
   ``argmax_k z_{i,k}(t) + C_{i,k}(t)`` (lowest index on ties, as ``np.argmax`` in the authors'
   code);
2. *observe* — ``n_{i,k}(t+1)``, ``xbar_{i,k}(t+1)`` from the agent's own reward;
3. *communicate* with the time-t values of the in-neighbours ``N_i`` (self included):

   * max-consensus ``m_{i,k}(t+1) = max{n_{i,k}(t+1), m_{j,k}(t) : j in N_i}``;
   * running (dynamic-average) consensus ``z_k(t+1) = W_t z_k(t) + xbar_k(t+1) - xbar_k(t)``.

**Widths** (``L(t)`` the clock's logarithm, :func:`~decentral.bandits.log_time`: ``ln t`` with
``C(0) = 0`` in the paper's clock; ``|N_i|`` counts the agent itself):

* :func:`dec_ucb` ``theorem=1`` (directed, strongly connected, flocking weights
  ``w_ij = 1/|N_i|``): ``C = sqrt(c L(t) / n)`` with ``c = 4/3``;
* :func:`dec_ucb` ``theorem=2`` (undirected, connected, Metropolis weights):
  ``C = sqrt(c L(t) / (|N_i| n))`` with ``c = 3``;
* :func:`dec_ucb1` (journal version, undirected, Metropolis): ``C = (1 + beta) sqrt(3 L(t) /
  (|N_i| n))``, ``beta > 0`` (scalar or one per agent);
* :func:`dec_kl_ucb` (journal version): the index ``max{q in [z, 1] : n kl(z, q) <= Q_i(t)}``
  with ``z`` clipped to ``[0, 1]`` and ``Q_i(t) = 3 (1 + varsigma) (L + 3 ln L) / (2 |N_i|)``,
  clamped at 0 (index ``z``) where ``L + 3 ln L <= 0``.

**Graphs.** ``graphs`` is anything :func:`decentral.graphs.as_sequence` accepts: a
:class:`~decentral.graphs.GraphSequence` of any form and backend (time-varying, directed,
random drops drawn per seed, sparse), a weight matrix, or a boolean adjacency with self-loops
(``adj[i, j]``: i receives from j). An adjacency gets the theorem's weight rule unless
``rule=`` says otherwise (flocking ``"row"`` for Theorem 1, ``"metropolis"`` for Theorem 2,
Dec-UCB1 and Dec-KL-UCB). Weights must be row-stochastic (``W 1 = 1`` keeps the running
consensus unbiased); the theorems apply only when the graph and weights are the theorem's (see
``docs/bandits.md``). ``|N_i|`` is read from the step's graph (positive weights, self
included). A run may pass another sequence of the same structure as data
(:class:`~decentral.bandits.BanditEnvironment` ``graphs``): one compiled program serves many
graphs.

**Options "as in the authors' code"**: ``clock="plus_one"`` (their ``ln(t + 1)``),
``max_consensus="v1_code"`` (the first version's code keeps the m of the *last* in-neighbour
only: ``m_{i,k}(t+1) = max{n_{i,k}(t+1), m_{j*,k}(t)}`` with ``j*`` the highest index in
``N_i``), ``index_floor=0.1`` for Dec-KL-UCB (their Newton iteration never goes below
``z + 0.1``).

Example:
    >>> import decentral.graphs as g
    >>> from decentral.bandits import bernoulli, dec_ucb, evaluate
    >>> res = evaluate(dec_ucb(g.ring(4, directed=False), theorem=2), bernoulli([0.8, 0.5]),
    ...                horizon=100, seeds=range(2))
    >>> res.pulls.shape                                    # [S, N, M]
    (2, 4, 2)
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import decentral.graphs as g
from decentral.graphs import GraphSequence, NeighborTable

from .indices import apply_index_floor, check_index_floor, kl_ucb_index
from .policy import Policy, check_clock, log_time, observe, validate_constants

__all__ = ["DecState", "DecUCBParams", "DecUCB1Params", "DecKLUCBParams", "dec_ucb",
           "dec_ucb1", "dec_kl_ucb", "dec_graphs", "neighbourhood_sizes", "MAX_CONSENSUS"]

#: Max-consensus rules: ``"paper"`` (max over all of ``N_i``) and ``"v1_code"`` (the first
#: version's code: the last in-neighbour only).
MAX_CONSENSUS = ("paper", "v1_code")


class DecState(NamedTuple):
    """Per-agent statistics of the decentralized policies (all ``[N, M]``).

    Attributes:
        counts: int32 ``n_{i,k}(t)``, the initial pull included.
        means: ``xbar_{i,k}(t)``, the agent's own sample means.
        max_counts: int32 ``m_{i,k}(t)``, the local estimate of ``max_j n_{j,k}(t)``.
        z: ``z_{i,k}(t)``, the local estimate of the network-average sample mean.
    """

    counts: jax.Array
    means: jax.Array
    max_counts: jax.Array
    z: jax.Array


class DecUCBParams(NamedTuple):
    """Sweepable constant of :func:`dec_ucb`.

    Attributes:
        exploration_constant: ``c`` in the width: ``sqrt(c ln t / n)`` (Theorem 1, ``4/3``) or
            ``sqrt(c ln t / (|N_i| n))`` (Theorem 2, ``3``); a scalar or one value per agent
            ``[N]`` (any other shape is refused: it would broadcast per arm; sweep several
            values with ``sweep=True``).
    """

    exploration_constant: float = 4.0 / 3.0


class DecUCB1Params(NamedTuple):
    """Sweepable constants of :func:`dec_ucb1`.

    Attributes:
        beta: ``beta > 0`` in ``(1 + beta) sqrt(3 ln t / (|N_i| n))``; a scalar or one value
            per agent ``[N]`` (the journal version's small-graph experiments). Default 0.01, the
            authors' code default.
    """

    beta: float = 0.01


class DecKLUCBParams(NamedTuple):
    """Sweepable constants of :func:`dec_kl_ucb`.

    Attributes:
        varsigma: ``varsigma > 0`` in ``Q_i(t) = 3 (1 + varsigma)(ln t + 3 ln ln t) / (2 |N_i|)``;
            a scalar or one value per agent ``[N]``. Default 0.01.
    """

    varsigma: float = 0.01


def dec_graphs(graphs, theorem: int | None, *, rule: str | None = None,
               backend: str | None = None) -> GraphSequence:
    """The graph sequence a decentralized policy communicates over.

    Args:
        graphs: anything :func:`decentral.graphs.as_sequence` accepts: a
            :class:`~decentral.graphs.GraphSequence`, a row-stochastic weight matrix, or a
            boolean adjacency with self-loops (nothing else: a list of graphs is
            ``decentral.graphs.periodic(...)``; an adjacency without self-loops is refused,
            ``decentral.graphs.add_self_loops`` adds them).
        theorem: 1 (flocking weights ``1/|N_i|``, rule ``"row"``) or 2 (``"metropolis"``):
            the rule an adjacency given without ``rule`` gets; None: Metropolis (the journal
            version's rule).
        rule: the weight rule of an adjacency, overriding the theorem's (the theorems then
            do not apply).
        backend: ``"dense"`` or ``"sparse"`` (see :func:`~decentral.graphs.as_sequence`).

    Raises:
        ValueError: what ``as_sequence`` refuses; weights that are not row-stochastic (the
            running consensus needs ``W 1 = 1``), at any step or for any drawn graph.

    Example:
        >>> import decentral.graphs as g
        >>> dec_graphs(g.ring(4), 1).describe()
        "form='static', n=4, backend='dense', rule='row'"
    """
    default = "row" if theorem == 1 else "metropolis"
    seq = g.as_sequence(graphs, rule=rule, backend=backend, default_rule=default)
    _require_row_stochastic(seq)
    return seq


def _require_row_stochastic(seq: GraphSequence, name: str = "graphs") -> None:
    """Every form and backend: the same matrix gets the same verdict (random forms: every
    graph they can draw)."""
    g.require_stochastic_sequence(seq, "row", who=f"decentralized UCB ({name}: W 1 = 1 keeps "
                                                  "the running consensus unbiased)")


def _graphs_argument(graphs, graph, who: str):
    """The factory's ``graphs`` argument, or its old name ``graph=`` (a documented alias):
    exactly one of them must be given."""
    if graph is not None:
        if graphs is not None:
            raise ValueError(f"{who}: give the graphs once, as graphs= (graph= is its old "
                             "name).")
        return graph
    if graphs is None:
        raise ValueError(f"{who} needs graphs: a decentral.graphs.GraphSequence, a weight "
                         "matrix or a boolean adjacency with self-loops.")
    return graphs


def neighbourhood_sizes(graph) -> jax.Array:
    """``|N_i|`` (in-neighbours with a positive weight, the agent itself always counted) of a
    dense ``W [N, N]`` or a :class:`~decentral.graphs.NeighborTable`; float ``[N]``."""
    if isinstance(graph, NeighborTable):
        own = jnp.arange(graph.idx.shape[0])[:, None]
        others = graph.mask & (graph.idx != own) & (graph.weight > 0)
        return (others.sum(axis=1) + 1).astype(jnp.result_type(float))
    W = jnp.asarray(graph)
    off = (W > 0) & ~jnp.eye(W.shape[0], dtype=bool)
    return (off.sum(axis=1) + 1).astype(W.dtype)


def _last_neighbour_max(graph, m):
    """``m[j*]`` with ``j*`` the highest-index in-neighbour of each agent (self included): the
    first version's code's max-consensus."""
    if isinstance(graph, NeighborTable):
        own = jnp.arange(graph.idx.shape[0])[:, None]
        real = graph.mask & ((graph.weight > 0) | (graph.idx == own))
        last = jnp.max(jnp.where(real, graph.idx, -1), axis=1)
    else:
        W = jnp.asarray(graph)
        n = W.shape[0]
        real = (W > 0) | jnp.eye(n, dtype=bool)
        last = jnp.max(jnp.where(real, jnp.arange(n)[None, :], -1), axis=1)
    return m[last]


def _init(key, params, first_rewards) -> DecState:
    first = jnp.asarray(first_rewards)
    ones = jnp.ones(first.shape, jnp.int32)
    return DecState(ones, first, ones, first)


def _update(state: DecState, params, t, arms, rewards) -> DecState:
    from .policy import IndexStats

    stats = observe(IndexStats(state.counts, state.means), arms, rewards)
    return state._replace(counts=stats.counts, means=stats.means)


@functools.cache
def _communicate(max_consensus: str):
    def communicate(key, previous: DecState, local: DecState, params, t, graph) -> DecState:
        if max_consensus == "paper" and isinstance(graph, NeighborTable):
            heard = g.masked_max(graph, previous.max_counts)
        elif max_consensus == "paper":                # dense: a masked max, no gather
            heard = _dense_masked_max(jnp.asarray(graph), previous.max_counts)
        else:
            heard = _last_neighbour_max(graph, previous.max_counts)
        m1 = jnp.maximum(local.counts, heard)
        mixed = g.mix(graph, previous.z, exact_nonfinite=False)
        z1 = mixed + local.means - previous.means
        return local._replace(max_counts=m1, z=z1.astype(local.z.dtype))
    return communicate


#: Largest N for which the dense max-consensus is one fused elementwise max over the N
#: senders (no ``[N, N, M]`` temporary); above it, a masked max over that temporary.
_UNROLL_SENDERS = 64
#: Largest M for which the rank among deficient arms is an unrolled running count (XLA's
#: cumulative sum is a slower reduce-window on CPU).
_UNROLL_ARMS = 32


def _dense_masked_max(W, m):
    """``heard[i, k] = max{m[j, k] : W[i, j] > 0 or j = i}`` for counts ``m >= 0`` (int
    ``[N, M]``); exact either way (a max of integers), only the speed differs."""
    n = W.shape[0]
    hears = (W > 0) | jnp.eye(n, dtype=bool)
    if n > _UNROLL_SENDERS:
        return jnp.max(jnp.where(hears[:, :, None], m[None], 0), axis=1)
    heard = jnp.zeros_like(m)
    for j in range(n):
        heard = jnp.maximum(heard, jnp.where(hears[:, j][:, None], m[j][None, :], 0))
    return heard


def _running_count(flags, dtype):
    """``cumsum(flags, axis=-1)`` as ``dtype`` (exact; unrolled for a few arms)."""
    if flags.shape[-1] > _UNROLL_ARMS:
        return jnp.cumsum(flags, axis=-1, dtype=dtype)
    run = jnp.zeros(flags.shape[:-1], dtype)
    cols = []
    for k in range(flags.shape[-1]):
        run = run + flags[..., k].astype(dtype)
        cols.append(run)
    return jnp.stack(cols, axis=-1)


def _decide(key, state: DecState, index):
    """Forced exploration (uniform among arms with ``n <= m - M``), else argmax of ``index``."""
    num_arms = state.counts.shape[-1]
    deficient = state.counts <= state.max_counts - num_arms
    # one uniform per agent picks the r-th deficient arm, r uniform on {0, ..., c - 1}
    c = deficient.sum(axis=-1)
    u = jax.random.uniform(key, c.shape, dtype=jnp.float32)
    r = jnp.minimum(jnp.floor(u * c).astype(c.dtype), jnp.maximum(c - 1, 0))
    rank = _running_count(deficient, c.dtype) - 1
    forced = jnp.argmax(deficient & (rank == r[:, None]), axis=-1)
    greedy = jnp.argmax(index, axis=-1)
    return jnp.where(deficient.any(axis=-1), forced, greedy).astype(jnp.int32)


def _per_agent(value, n: int, dtype):
    v = jnp.asarray(value, dtype)
    return jnp.broadcast_to(v, (n,)) if v.ndim == 0 else v


@functools.cache
def _ucb_select(clock: str, by_degree: bool, inflation: bool):
    def select(key, state: DecState, params, t, graph):
        n, num_arms = state.counts.shape
        dtype = state.z.dtype
        log_t = log_time(t, clock, num_arms, dtype=dtype)
        if inflation:                                          # Dec-UCB1
            scale = (1 + _per_agent(params.beta, n, dtype)) ** 2 * 3.0
        else:
            scale = _per_agent(params.exploration_constant, n, dtype)
        if by_degree:
            scale = scale / neighbourhood_sizes(graph).astype(dtype)
        width = jnp.sqrt(scale[:, None] * log_t / state.counts.astype(dtype))
        return _decide(key, state, state.z + width)
    return select


@functools.cache
def _kl_select(clock: str, steps: int | None, floor: float | None):
    def select(key, state: DecState, params, t, graph):
        n, num_arms = state.counts.shape
        dtype = state.z.dtype
        L = log_time(t, clock, num_arms, dtype=dtype)
        loglog = jnp.where(L > 0, jnp.log(jnp.where(L > 0, L, 1)), 0)
        deg = neighbourhood_sizes(graph).astype(dtype)
        q = 3 * (1 + _per_agent(params.varsigma, n, dtype)) * (L + 3 * loglog) / (2 * deg)
        budget = jnp.maximum(q, 0)[:, None] / state.counts.astype(dtype)
        index = kl_ucb_index(state.z, budget, steps)
        index = apply_index_floor(index, state.z, floor)
        return _decide(key, state, index)
    return select


def _check_options(clock: str, max_consensus: str) -> None:
    check_clock(clock)
    if max_consensus not in MAX_CONSENSUS:
        raise ValueError(f"max_consensus must be one of {MAX_CONSENSUS}; got "
                         f"{max_consensus!r}.")


def _policy(name, select, params, validate, seq, max_consensus, config) -> Policy:
    return Policy(name=name, init=_init, select=select, update=_update, params=params,
                  validate=validate, communicate=_communicate(max_consensus), graphs=seq,
                  num_agents=seq.n, config={**config, "max_consensus": max_consensus})


def _validator(params_type, field: str, lower: tuple[float, str], n: int, policy: str):
    """``validate(params)`` of a decentralized policy: ``params_type``, its one constant
    finite, within ``lower``, and a scalar or one value per agent ``[N = n]``."""

    def validate(params):
        if not isinstance(params, params_type):
            raise ValueError(f"{policy}: params must be {params_type.__name__}({field}=...); "
                             f"got {type(params).__name__}.")
        return validate_constants(params, {field: lower}, policy, per_agent=(field,),
                                  num_agents=n)

    return validate


def dec_ucb(graphs=None, *, theorem: int = 1, clock: str = "paper",
            max_consensus: str = "paper", exploration_constant=None, rule: str | None = None,
            backend: str | None = None, graph=None) -> Policy:
    """Dec_UCB of the first version (module docstring), Theorem 1 or Theorem 2 form.

    Args:
        graphs: the sequence ``t -> W(t)``, anything :func:`decentral.graphs.as_sequence`
            accepts (:func:`dec_graphs`); an adjacency gets the theorem's weights (flocking
            ``"row"`` for Theorem 1, ``"metropolis"`` for Theorem 2) unless ``rule`` is given.
        theorem: 1 (directed, flocking weights, width ``sqrt(4 ln t / (3 n))``) or 2
            (undirected, Metropolis, width ``sqrt(3 ln t / (|N_i| n))``).
        clock: ``"paper"`` (``ln t``, default) or ``"plus_one"`` (the authors' code).
        max_consensus: ``"paper"`` (default) or ``"v1_code"`` (as in the first version's code).
        exploration_constant: default of the sweepable ``c`` (4/3 for Theorem 1, 3 for 2), a
            scalar or one value per agent ``[N]``.
        rule, backend: as in :func:`decentral.graphs.as_sequence`.
        graph: the old name of ``graphs`` (an alias; give one of the two).

    Returns:
        A :class:`~decentral.bandits.Policy` with params :class:`DecUCBParams`, whose
        ``validate`` refuses a constant that is not finite, negative, or neither a scalar nor
        ``[N]`` (naming ``params.exploration_constant``).

    Raises:
        ValueError: a theorem other than 1 or 2, bad options, an invalid constant or graph.

    Example:
        >>> import decentral.graphs as g
        >>> pol = dec_ucb(g.ring(4, directed=False), theorem=2)
        >>> pol.params, pol.graphs.rule
        (DecUCBParams(exploration_constant=3.0), 'metropolis')
    """
    if theorem not in (1, 2):
        raise ValueError(f"theorem must be 1 (directed, flocking) or 2 (undirected, "
                         f"Metropolis); got {theorem!r}.")
    _check_options(clock, max_consensus)
    seq = dec_graphs(_graphs_argument(graphs, graph, "dec_ucb"), theorem, rule=rule,
                     backend=backend)
    c = (4.0 / 3.0 if theorem == 1 else 3.0) if exploration_constant is None else \
        exploration_constant
    validate = _validator(DecUCBParams, "exploration_constant", (0.0, ">="), seq.n, "dec_ucb")
    checked = validate(DecUCBParams(c)).exploration_constant
    params = DecUCBParams(float(checked) if np.ndim(checked) == 0 else checked)
    return _policy("dec_ucb", _ucb_select(clock, theorem == 2, False), params, validate, seq,
                   max_consensus, {"policy": "dec_ucb", "theorem": theorem, "clock": clock})


def dec_ucb1(graphs=None, *, beta=0.01, clock: str = "paper", max_consensus: str = "paper",
             rule: str | None = None, backend: str | None = None, graph=None) -> Policy:
    """Dec-UCB1 of the journal version: width ``(1 + beta) sqrt(3 ln t / (|N_i| n))``,
    Metropolis weights for an adjacency.

    Args:
        graphs: see :func:`dec_graphs` (an adjacency gets Metropolis weights unless ``rule``
            is given).
        beta: default of the sweepable ``beta > 0`` (params :class:`DecUCB1Params`), a scalar
            or one value per agent ``[N]``.
        clock, max_consensus, rule, backend, graph: as :func:`dec_ucb`.

    Raises:
        ValueError: bad options, graphs, or ``beta`` (not finite, not positive, neither a
            scalar nor ``[N]``; ``validate`` refuses the same in any params).

    Example:
        >>> import decentral.graphs as g
        >>> float(dec_ucb1(g.ring(4, directed=False)).params.beta)
        0.01
    """
    _check_options(clock, max_consensus)
    seq = dec_graphs(_graphs_argument(graphs, graph, "dec_ucb1"), None, rule=rule,
                     backend=backend)
    validate = _validator(DecUCB1Params, "beta", (0.0, ">"), seq.n, "dec_ucb1")
    params = validate(DecUCB1Params(beta))
    return _policy("dec_ucb1", _ucb_select(clock, True, True), params, validate, seq,
                   max_consensus, {"policy": "dec_ucb1", "clock": clock})


def dec_kl_ucb(graphs=None, *, varsigma=0.01, clock: str = "paper",
               max_consensus: str = "paper", bisection_steps: int | None = None,
               index_floor: float | None = None, rule: str | None = None,
               backend: str | None = None, graph=None) -> Policy:
    """Dec-KL-UCB of the journal version (module docstring), Metropolis weights for an
    adjacency.

    Args:
        graphs: see :func:`dec_graphs` (an adjacency gets Metropolis weights unless ``rule``
            is given).
        varsigma: default of the sweepable ``varsigma > 0`` (params :class:`DecKLUCBParams`),
            a scalar or one value per agent ``[N]``.
        clock, max_consensus, rule, backend, graph: as :func:`dec_ucb`.
        bisection_steps: as :func:`~decentral.bandits.kl_ucb_index`.
        index_floor: None, or 0.1 as in the authors' code (the index never below ``z + 0.1``).

    Raises:
        ValueError: bad options, graphs, or ``varsigma`` (not finite, not positive, neither a
            scalar nor ``[N]``; ``validate`` refuses the same in any params).

    Example:
        >>> import decentral.graphs as g
        >>> float(dec_kl_ucb(g.ring(4, directed=False)).params.varsigma)
        0.01
    """
    from decentral._checks import check_int

    _check_options(clock, max_consensus)
    steps = None if bisection_steps is None else check_int(bisection_steps, "bisection_steps",
                                                           minimum=1, maximum=200)
    index_floor = check_index_floor(index_floor)
    seq = dec_graphs(_graphs_argument(graphs, graph, "dec_kl_ucb"), None, rule=rule,
                     backend=backend)
    validate = _validator(DecKLUCBParams, "varsigma", (0.0, ">"), seq.n, "dec_kl_ucb")
    params = validate(DecKLUCBParams(varsigma))
    return _policy("dec_kl_ucb", _kl_select(clock, steps, index_floor), params, validate, seq,
                   max_consensus, {"policy": "dec_kl_ucb", "clock": clock,
                                   "bisection_steps": steps, "index_floor": index_floor})
