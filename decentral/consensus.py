"""Plain linear consensus ``x(t+1) = W(t) x(t)``: the simplest algorithm, and the template.

Every family of the library is built the way this module is, so read it first when you write
one:

* the **factory** (:func:`consensus`) takes the static structure — the graph sequence, the
  shape of each agent's value, the dtype — and returns a :class:`~decentral.runner.Algorithm`
  whose ``config`` describes everything the functions close over (so a checkpoint of one graph
  can never be resumed with another) and whose ``max_horizon`` is the sequence's length;
* everything a user sweeps lives in **params** (:class:`ConsensusParams`, built by
  :func:`consensus_params`): here the initial values, so ``run(..., sweep=True)`` runs several
  initial conditions in one compile;
* ``init(key, params)`` and ``step(key, state, params, t, x_t)`` are pure; the state is a
  NamedTuple with a leading agent axis; ``Info`` is None (nothing to report per step).

The update, for a row-stochastic ``W(t)`` (``W[i, j] > 0`` iff agent i receives from agent j)::

    x_i(t+1) = sum_j W_ij(t) x_j(t)

With a static, strongly connected W the values reach ``1 pi^T x(0)`` (``pi`` the left Perron
vector); with a time-varying B-connected sequence they reach ``1 pi_0^T x(0)``, ``pi_0`` the
first vector of the absolute probability sequence (Kolmogorov; see e.g. Touri, *Product of
Random Stochastic Matrices and Distributed Averaging*, 2012).

Example:
    >>> import decentral.graphs as g
    >>> from decentral.consensus import consensus, consensus_params
    >>> from decentral.runner import run
    >>> alg = consensus(g.static(g.ring(4), rule="row"))
    >>> res = run(alg, consensus_params(x0=[0.0, 1.0, 2.0, 3.0]), seeds=[0], num_steps=200)
    >>> [round(float(v), 6) for v in res.final_state.x[0]]
    [1.5, 1.5, 1.5, 1.5]
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from decentral.graphs import GraphSequence, mix

__all__ = ["ConsensusState", "ConsensusParams", "consensus", "consensus_params"]


class ConsensusState(NamedTuple):
    """State of plain consensus.

    Attributes:
        x: ``[N]`` or ``[N, *shape]`` the agents' values.
    """

    x: jax.Array


class ConsensusParams(NamedTuple):
    """What users sweep in plain consensus.

    Attributes:
        x0: the initial values ``[N]`` / ``[N, *shape]``, or None to draw ``x(0) ~ N(0, I)``
            from each seed's init key.
    """

    x0: Any = None


def consensus_params(x0: Any = None) -> ConsensusParams:
    """Params of :func:`consensus`: fixed initial values ``x0`` or None (Gaussian per seed).

    Raises:
        ValueError: ``x0`` holds NaN or infinite values.

    Example:
        >>> consensus_params([1.0, 2.0]).x0
        array([1., 2.])
    """
    if x0 is None:
        return ConsensusParams(None)
    arr = np.asarray(x0)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"x0 must be numbers; got dtype {arr.dtype}.")
    if arr.ndim == 0:
        raise ValueError("x0 needs a leading agent axis [N, ...]; got a scalar.")
    if not np.all(np.isfinite(arr)):
        raise ValueError("x0 has NaN or infinite entries; initial values must be finite.")
    return ConsensusParams(arr.astype(np.result_type(arr.dtype, np.float32)))


def consensus(graphs: GraphSequence, *, shape: tuple[int, ...] | int | None = None,
              dtype: Any = None, per_seed_graphs: bool = False):
    """Plain consensus ``x(t+1) = W(t) x(t)`` over a row-stochastic graph sequence.

    Args:
        graphs: the sequence ``t -> W(t)`` (any form and backend of :mod:`decentral.graphs`);
            its weights must be row-stochastic.
        shape: trailing shape of each agent's value (None: a scalar per agent); used when the
            params give no ``x0``.
        dtype: dtype of the drawn ``x(0)`` (default: JAX's default float); a given ``x0`` keeps
            its own dtype.
        per_seed_graphs: pass each seed's step key to ``graphs.at`` (random sequences built with
            ``shared_across_seeds=False``: every seed draws its own graphs).

    Returns:
        An :class:`~decentral.runner.Algorithm` with state :class:`ConsensusState`, params
        :class:`ConsensusParams`, and ``max_horizon = graphs.length``.

    Raises:
        ValueError: ``graphs`` is not a GraphSequence, its weights are not row-stochastic, or
            ``per_seed_graphs`` does not match how the sequence draws.

    Example:
        >>> import decentral.graphs as g
        >>> alg = consensus(g.static(g.complete(3), rule="row"), shape=2)
        >>> alg.config["graphs"] == g.static(g.complete(3), rule="row").digest()
        True
    """
    from decentral.runner import Algorithm

    if not isinstance(graphs, GraphSequence):
        raise ValueError(f"graphs must be a decentral.graphs.GraphSequence (static, periodic, "
                         f"explicit, random_edge_drops, ...); got {type(graphs).__name__}.")
    _require_row_stochastic(graphs)
    if per_seed_graphs == bool(getattr(graphs, "shared_across_seeds", True)) and \
            graphs.form == "random":
        raise ValueError("per_seed_graphs must be True exactly when the random sequence draws "
                         "per seed (shared_across_seeds=False).")
    trailing = () if shape is None else (shape,) if isinstance(shape, int) else tuple(shape)
    if any(not isinstance(s, int) or s < 1 for s in trailing):
        raise ValueError(f"shape must be positive integers; got {shape!r}.")
    n = graphs.n
    draw_dtype = jnp.dtype(dtype) if dtype is not None else jnp.zeros(()).dtype

    def init(key, params):
        if params is None or params.x0 is None:
            return ConsensusState(jax.random.normal(key, (n, *trailing), draw_dtype))
        x0 = jnp.asarray(params.x0)
        if x0.shape[0] != n:
            raise ValueError(f"x0 has {x0.shape[0]} agents; the graphs have {n}.")
        return ConsensusState(x0)

    def step(key, state, params, t, x_t):
        graph = graphs.at(t, key) if per_seed_graphs else graphs.at(t)
        x = mix(graph, state.x, exact_nonfinite=False)     # one plain matmul on dense graphs
        return ConsensusState(x.astype(state.x.dtype)), None

    config = {"graphs": graphs.digest(), "shape": list(trailing), "dtype": str(draw_dtype),
              "per_seed_graphs": bool(per_seed_graphs)}
    return Algorithm(init=init, step=step, name="consensus", version="1",
                     max_horizon=graphs.length, config=config)


def _require_row_stochastic(graphs: GraphSequence) -> None:
    """Refuse a deterministic sequence whose weights are not row-stochastic (checked on the
    host over its stored graphs; random sequences are built from a row rule or refused)."""
    from decentral.graphs import is_row_stochastic

    if graphs.form == "random":
        if graphs.rule not in ("row", "metropolis"):
            raise ValueError(f"consensus needs row-stochastic weights; this random sequence "
                             f"re-weights by rule={graphs.rule!r}. Use rule='row' or "
                             "'metropolis'.")
        return
    steps = graphs.length if graphs.length is not None else graphs.period
    stack = graphs.weights_host(steps)
    bad = [k for k, w in enumerate(stack) if not is_row_stochastic(w)]
    if bad:
        raise ValueError(f"consensus needs row-stochastic weights W(t) (rows sum to 1); the "
                         f"graphs at steps {bad[:5]} are not. Build them with rule='row' (or "
                         "'metropolis').")
