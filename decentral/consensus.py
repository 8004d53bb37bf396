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

from decentral._checks import check_agent_values
from decentral.graphs import GraphSequence, as_sequence, mix

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
        graphs: None (the algorithm's own sequence), or another
            :class:`~decentral.graphs.GraphSequence` of exactly its structure (N, backend,
            form, rule, table width): the run mixes over this one, so one compiled program
            serves many graphs (a sweep over graphs maps over its array leaves).
    """

    x0: Any = None
    graphs: Any = None


def _check_x0(x0, n: int | None = None):
    """``x0`` as a float numpy array, after the library's check of initial values."""
    arr = check_agent_values(x0, n)
    return arr.astype(np.result_type(arr.dtype, np.float32))


def consensus_params(x0: Any = None, *, graphs: Any = None) -> ConsensusParams:
    """Params of :func:`consensus`: fixed initial values ``x0`` or None (Gaussian per seed),
    and optionally the graphs of this run (see :class:`ConsensusParams`).

    Raises:
        ValueError: ``x0`` is not numbers, has no agent axis, or holds NaN / infinite values
            (the same check :func:`consensus`'s ``check_params`` applies to any params).

    Example:
        >>> consensus_params([1.0, 2.0]).x0
        array([1., 2.])
    """
    return ConsensusParams(None if x0 is None else _check_x0(x0), graphs)


def consensus(graphs, *, shape: tuple[int, ...] | int | None = None, dtype: Any = None,
              per_seed_graphs: bool | None = None, rule: str | None = None,
              backend: str | None = None):
    """Plain consensus ``x(t+1) = W(t) x(t)`` over a row-stochastic graph sequence.

    Args:
        graphs: the sequence ``t -> W(t)``: anything
            :func:`decentral.graphs.as_sequence` accepts (a ``GraphSequence`` of any form
            and backend, a weight matrix, or a boolean adjacency with ``rule``); its weights
            must be row-stochastic.
        shape: trailing shape of each agent's value (None: a scalar per agent); used when the
            params give no ``x0``.
        dtype: dtype of the drawn ``x(0)`` (default: JAX's default float); a given ``x0`` keeps
            its own dtype.
        per_seed_graphs: no longer needed: every step passes the seed's key to ``graphs.at``
            and the sequence decides whether it draws per seed
            (``shared_across_seeds=False``). Kept for old callers; when given it must match
            the sequence.
        rule, backend: as in :func:`decentral.graphs.as_sequence`.

    Returns:
        An :class:`~decentral.runner.Algorithm` with state :class:`ConsensusState`, params
        :class:`ConsensusParams` (checked by ``check_params`` wherever they arrive), and
        ``max_horizon = graphs.length``.

    Raises:
        ValueError: ``graphs`` is not accepted by ``as_sequence``, its weights are not
            row-stochastic, or ``per_seed_graphs`` does not match how the sequence draws.

    Example:
        >>> import decentral.graphs as g
        >>> alg = consensus(g.static(g.complete(3), rule="row"), shape=2)
        >>> alg.config["graphs"] == g.static(g.complete(3), rule="row").digest()
        True
    """
    from decentral.runner import Algorithm

    graphs = as_sequence(graphs, rule=rule, backend=backend)
    _require_row_stochastic(graphs)
    drawn_per_seed = graphs.form == "random" and not graphs.shared_across_seeds
    if per_seed_graphs is not None and bool(per_seed_graphs) != drawn_per_seed:
        raise ValueError("per_seed_graphs must be True exactly when the random sequence draws "
                         "per seed (shared_across_seeds=False); it can be left out.")
    trailing = () if shape is None else (shape,) if isinstance(shape, int) else tuple(shape)
    if any(isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in trailing):
        raise ValueError(f"shape must be positive integers; got {shape!r}.")
    n = graphs.n
    draw_dtype = jnp.dtype(dtype) if dtype is not None else jnp.zeros(()).dtype

    def check_params(params) -> None:
        if params is None:
            return
        if not isinstance(params, ConsensusParams):
            raise ValueError(f"params must be ConsensusParams (consensus_params(...)) or None; "
                             f"got {type(params).__name__}.")
        if params.x0 is not None:
            _check_x0(params.x0, n)
        if params.graphs is not None:
            graphs.require_same_structure(params.graphs)
            _require_row_stochastic(params.graphs, "params.graphs")

    def init(key, params):
        if params is None or params.x0 is None:
            return ConsensusState(jax.random.normal(key, (n, *trailing), draw_dtype))
        return ConsensusState(jnp.asarray(params.x0))

    def step(key, state, params, t, x_t):
        seq = graphs if params is None or params.graphs is None else params.graphs
        x = mix(seq.at(t, key), state.x, exact_nonfinite=False)   # one matmul on dense graphs
        return ConsensusState(x.astype(state.x.dtype)), None

    config = {"graphs": graphs.digest(), "shape": list(trailing), "dtype": str(draw_dtype),
              "per_seed_graphs": drawn_per_seed}
    return Algorithm(init=init, step=step, name="consensus", version="1",
                     max_horizon=graphs.length, config=config, check_params=check_params,
                     num_agents=n)


def _require_row_stochastic(graphs: GraphSequence, name: str = "graphs") -> None:
    """Refuse a sequence any of whose matrices is not row-stochastic: one verdict for a matrix
    whatever the form and backend that carry it (fixed forms by their stored weights, random
    ones by every graph they can draw; :func:`decentral.graphs.require_stochastic_sequence`)."""
    from decentral.graphs import require_stochastic_sequence

    require_stochastic_sequence(graphs, "row", who=f"consensus ({name})")
