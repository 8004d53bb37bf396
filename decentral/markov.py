"""Finite Markov chains: the noise that drives the stochastic-approximation (SA) theorems.

In Lin, Gupta and Liu, "Finite-Time Error Bounds for Distributed Linear Stochastic
Approximation" (the data model of Section 2, Assumptions 2 and 3), every agent observes one
common Markov chain ``X_t`` on a finite state space, and the SA update reads the tables
``A(X_t)`` and ``b^i(X_t)``. This module holds:

* the device side: :class:`MarkovChain` (a NamedTuple of arrays, so it can be passed through
  ``jit``/``vmap``), :func:`next_state` (one draw) and :func:`sample_path` (a ``lax.scan``);
* the host side (numpy/scipy, outside ``jit``): :func:`stationary_distribution`,
  :func:`expected_table` (the stationary ``A`` and ``b^i``), :func:`mixing_time` (the
  ``tau(alpha)`` of Assumption 3) and :func:`pair_chain` (the chain on pairs
  ``(s_t, s_{t+1})`` that TD(0) needs).

Convention: ``transition[x, y] = Prob(X_{t+1} = y | X_t = x)``, so rows sum to 1 and a
distribution (a row vector) evolves as ``p_{t+1} = p_t @ transition``.

Sampler (version :data:`SAMPLER_VERSION` = ``"2"``): a step draws one uniform
``u ~ U[0, 1)`` and returns the number of entries of the stored cumulative row
``C[x, k] = sum_{y <= k} transition[x, y]`` that are ``<= u`` (inverse-CDF sampling), about
twice as fast as ``jax.random.categorical`` on the logits, which version 1 used. The two
versions give different sample paths from the same key (the same distribution); anything that
fingerprints a chain (:meth:`MarkovChain.digest`) includes the version, so results and
checkpoints made with version 1 are never mistaken for version 2 ones. Same key, same path.

Nothing here changes the global JAX configuration; arrays follow the dtype JAX is set to
(float32 unless the caller enabled float64).

Example:
    >>> chain = markov_chain([[0.9, 0.1], [0.5, 0.5]])
    >>> path = sample_path(jax.random.key(0), chain, 0, 5)
    >>> path.shape, path.dtype
    ((6,), dtype('int32'))
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from scipy.sparse.csgraph import breadth_first_order, connected_components

from decentral._checks import check_index, check_indices, check_int, sum_tolerance

__all__ = [
    "SAMPLER_VERSION",
    "MarkovChain",
    "markov_chain",
    "stationary_distribution",
    "next_state",
    "sample_path",
    "expected_table",
    "mixing_time",
    "pair_chain",
    "pair_index",
    "TABLE_KINDS",
]

#: Version of the sampling rule of :func:`next_state`; bumped whenever the same key would give
#: another path. "1": ``jax.random.categorical`` on log-probabilities; "2": one uniform draw
#: against the stored cumulative rows.
SAMPLER_VERSION = "2"

_ROW_SUM_TOL = 1e-10

#: The ways :func:`mixing_time` measures the deviation of a table entry (see its docstring).
TABLE_KINDS = ("scalar", "vector", "matrix", "agents")


class MarkovChain(NamedTuple):
    """A finite Markov chain as device arrays (build it with :func:`markov_chain`).

    Attributes:
        transition: ``[S, S]`` row-stochastic matrix,
            ``transition[x, y] = Prob(next = y | now = x)``.
        cumulative: ``[S, S]`` row-wise cumulative sums of ``transition``, exactly 1 from each
            row's last positive entry on (so round-off can never select a state of probability
            0); :func:`next_state` compares one uniform draw with a row of it.
    """

    transition: jax.Array
    cumulative: jax.Array

    def digest(self) -> str:
        """``"markov/<SAMPLER_VERSION>:<sha256>"`` of the transition matrix (host values, shape
        and dtype), for the configuration of an algorithm that closes over this chain: a
        change of the matrix or of the sampler changes it.

        Example:
            >>> markov_chain([[0.9, 0.1], [0.5, 0.5]]).digest().startswith("markov/2:")
            True
        """
        p = np.ascontiguousarray(np.asarray(self.transition))
        h = hashlib.sha256(f"{p.shape}|{p.dtype.str}|".encode())
        h.update(p.tobytes())
        return f"markov/{SAMPLER_VERSION}:{h.hexdigest()}"


# ----------------------------------------------------------------------------------------------
# validation helpers (host)
# ----------------------------------------------------------------------------------------------


def _real_finite_float64(a: np.ndarray, name: str, what: str) -> np.ndarray:
    """``a`` as float64 after checking it holds real, finite ``what`` (ValueError otherwise)."""
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.number) or np.issubdtype(
        a.dtype, np.complexfloating
    ):
        raise ValueError(f"{name} must hold real {what}; got dtype {a.dtype}.")
    a = a.astype(np.float64)
    if not np.all(np.isfinite(a)):
        where = np.argwhere(~np.isfinite(a))[0].tolist()
        raise ValueError(f"{name} has a NaN or infinite entry (first at index {where}); "
                         f"{what} must be finite.")
    return a


def _as_transition(transition, *, name: str = "transition") -> np.ndarray:
    """Return ``transition`` as a float64 numpy array after checking it is row-stochastic."""
    try:
        p = np.asarray(transition)
    except jax.errors.TracerArrayConversionError as err:  # pragma: no cover - message only
        raise ValueError(
            f"{name} is a traced JAX value; this check runs on the host. Call it outside jit/vmap "
            "with a concrete array."
        ) from err
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(
            f"{name} must be a square [S, S] matrix with {name}[x, y] = Prob(next = y | now = x); "
            f"got shape {p.shape}."
        )
    if p.shape[0] == 0:
        raise ValueError(f"{name} has no states (shape {p.shape}); a chain needs S >= 1 states.")
    given = p.dtype
    p = _real_finite_float64(p, name, "probabilities")
    if np.any(p < 0):
        where = np.argwhere(p < 0)[0].tolist()
        raise ValueError(
            f"{name} has a negative entry {p[tuple(where)]!r} at index {where}; transition "
            "probabilities must be non-negative."
        )
    sums = p.sum(axis=1)
    tol = sum_tolerance(given, p.shape[0], _ROW_SUM_TOL)   # the given dtype's precision
    bad = np.flatnonzero(np.abs(sums - 1.0) > tol)
    if bad.size:
        row = int(bad[0])
        raise ValueError(
            f"{name} is not row-stochastic: row {row} sums to {float(sums[row])!r} (rows "
            f"{bad[:10].tolist()}{'...' if bad.size > 10 else ''} are off by more than "
            f"{tol:g}). Row x must be the distribution of the next state given x; "
            "normalise the rows with "
            f"`{name} / {name}.sum(axis=1, keepdims=True)` (and check that the orientation is "
            "[now, next], not its transpose)."
        )
    return p


def _closed_classes(p: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Communicating-class labels of the graph of ``p > 0`` and the list of closed classes."""
    graph = p > 0
    _, labels = connected_components(graph, directed=True, connection="strong")
    rows, cols = np.nonzero(graph)
    leaving = np.unique(labels[rows[labels[rows] != labels[cols]]])
    closed = [np.flatnonzero(labels == c) for c in np.unique(labels) if c not in set(leaving)]
    return labels, closed


def _period(p_class: np.ndarray) -> int:
    """Period of an irreducible chain: gcd of level differences along edges of a BFS tree."""
    graph = p_class > 0
    order, predecessors = breadth_first_order(graph, 0, directed=True, return_predecessors=True)
    level = np.zeros(p_class.shape[0], dtype=np.int64)
    for node in order[1:]:
        level[node] = level[predecessors[node]] + 1
    rows, cols = np.nonzero(graph)
    period = 0
    for diff in np.unique(np.abs(level[rows] + 1 - level[cols])):
        period = math.gcd(period, int(diff))
    return period


# ----------------------------------------------------------------------------------------------
# construction and stationary quantities (host)
# ----------------------------------------------------------------------------------------------


def markov_chain(transition) -> MarkovChain:
    """Build a :class:`MarkovChain` from a row-stochastic matrix, validating it on the host.

    The chain moves by ``Prob(X_{t+1} = y | X_t = x) = transition[x, y]``.

    Args:
        transition: ``[S, S]`` array; square, finite, non-negative, every row summing to 1
            within 1e-10 (or ``64 S eps`` of its dtype when that is larger: float32 rows are
            exact to about ``S eps32`` only). A traced value (inside ``jit``) cannot be checked
            and is used as is.

    Returns:
        A :class:`MarkovChain` of JAX arrays in JAX's current default float dtype. Its
        ``cumulative`` rows are computed in float64 on the host, normalised to end at exactly
        1, and set to exactly 1 from each row's last positive entry on.

    Raises:
        ValueError: if ``transition`` is not square, has NaN/inf or negative entries, or a row
            whose sum is not 1 (the message names the row and its sum).

    Example:
        >>> chain = markov_chain([[0.9, 0.1], [0.5, 0.5]])
        >>> [round(float(c), 6) for c in chain.cumulative[0]]
        [0.9, 1.0]
    """
    if isinstance(transition, jax.core.Tracer):
        p = jnp.asarray(transition)
        return MarkovChain(transition=p, cumulative=_cumulative(p, jnp))
    p = _as_transition(transition)
    return MarkovChain(transition=jnp.asarray(p), cumulative=jnp.asarray(_cumulative(p, np)))


def _cumulative(p, xp):
    """Row-wise cumulative sums of ``p`` (numpy or jax.numpy as ``xp``), normalised so each row
    ends at 1, and exactly 1 from each row's last positive entry on."""
    num_states = p.shape[-1]
    c = xp.cumsum(p, axis=-1)
    c = c / c[..., -1:]
    last_positive = num_states - 1 - xp.argmax(p[..., ::-1] > 0, axis=-1)
    tail = xp.arange(num_states) >= last_positive[..., None]
    return xp.where(tail, xp.ones_like(c), c)


def stationary_distribution(transition) -> np.ndarray:
    """Stationary distribution ``mu`` of a finite chain: ``mu @ P = mu``, ``sum(mu) = 1``.

    Works for any chain with exactly one closed communicating class (an irreducible chain, or
    one with transient states that all drain into a single closed class, like the TD pair chain
    of :func:`pair_chain`); transient states get mass 0. Periodic chains are allowed here (their
    stationary distribution is still unique), although they do not mix (see
    :func:`mixing_time`). Computed on the host in float64 by a direct linear solve on the closed
    class, with one normalisation equation replacing one balance equation.

    Args:
        transition: ``[S, S]`` row-stochastic matrix (numpy or JAX, not traced).

    Returns:
        ``mu``: float64 numpy array ``[S]``, non-negative, summing to 1.

    Raises:
        ValueError: if ``transition`` is not a valid row-stochastic matrix, or if the chain has
            more than one closed class (then every mixture of their stationary laws is
            stationary and no unique ``mu`` exists).

    Example:
        >>> mu = stationary_distribution([[0.9, 0.1], [0.5, 0.5]])
        >>> mu.round(4)
        array([0.8333, 0.1667])
        >>> bool(np.allclose(mu @ np.array([[0.9, 0.1], [0.5, 0.5]]), mu))
        True
    """
    p = _as_transition(transition)
    _, closed = _closed_classes(p)
    if len(closed) != 1:
        shown = [c[:6].tolist() for c in closed[:4]]
        raise ValueError(
            f"the chain is reducible with {len(closed)} closed classes (states {shown}"
            f"{'...' if len(closed) > 4 else ''}), so its stationary distribution is not unique: "
            "any mixture of the classes' stationary laws is stationary. Make the chain "
            "irreducible (e.g. mix in a small uniform jump: (1 - eps) * P + eps / S), or analyse "
            "each closed class as its own chain."
        )
    cls = closed[0]
    q = p[np.ix_(cls, cls)]
    k = cls.size
    system = (q - np.eye(k)).T
    system[-1, :] = 1.0
    rhs = np.zeros(k)
    rhs[-1] = 1.0
    mu_cls = np.linalg.solve(system, rhs)
    mu_cls = np.clip(mu_cls, 0.0, None)
    mu = np.zeros(p.shape[0])
    mu[cls] = mu_cls / mu_cls.sum()
    return mu


def expected_table(transition, table) -> np.ndarray:
    """Stationary expectation ``sum_x mu(x) f(x)`` of a table indexed by the chain state.

    These are the limits ``A = E_mu[A(X)]`` and ``b^i = E_mu[b^i(X)]`` of Assumption 2 of
    Lin, Gupta and Liu (``lim_t E[A(X_t)] = A``), for a chain with stationary law ``mu``.

    Args:
        transition: ``[S, S]`` row-stochastic matrix with a unique stationary distribution.
        table: array ``[S, ...]`` whose leading axis is the chain state (``A_tab [S, d, d]``,
            ``B_tab [S, N, d]``, ...).

    Returns:
        float64 numpy array of shape ``table.shape[1:]``.

    Raises:
        ValueError: if the transition matrix is invalid or its leading size differs from the
            table's.

    Example:
        >>> P = np.array([[0.9, 0.1], [0.5, 0.5]])
        >>> A_tab = np.array([[[-1.0]], [[-3.0]]])       # [S=2, d=1, d=1]
        >>> expected_table(P, A_tab).round(4)
        array([[-1.3333]])
    """
    p = _as_transition(transition)
    f = _as_table(table, p.shape[0], "table")
    mu = stationary_distribution(p)
    return np.tensordot(mu, f, axes=1)


# ----------------------------------------------------------------------------------------------
# sampling (device)
# ----------------------------------------------------------------------------------------------


def next_state(key: jax.Array, chain: MarkovChain, state) -> jax.Array:
    """Draw ``X_{t+1} ~ transition[X_t, :]``: one step of the chain (jit- and vmap-able).

    Inverse-CDF sampling (sampler version :data:`SAMPLER_VERSION`): one uniform
    ``u = jax.random.uniform(key)`` in ``[0, 1)`` and ``X_{t+1} = #{k : C[X_t, k] <= u}`` with
    ``C = chain.cumulative``, so ``Prob(X_{t+1} = y) = C[x, y] - C[x, y-1] = transition[x, y]``
    (up to the resolution of ``u``: 2**-23 in float32, 2**-52 in float64). A state of
    probability 0 is never drawn. ``vmap`` it over keys (and states) to run independent chains,
    one per Monte-Carlo seed.

    Args:
        key: a PRNG key, used once.
        chain: a :class:`MarkovChain`.
        state: integer scalar in ``[0, S)``, the current state ``X_t``.

    Returns:
        int32 scalar, the next state.

    Example:
        >>> chain = markov_chain([[0.0, 1.0], [1.0, 0.0]])
        >>> int(next_state(jax.random.key(0), chain, 0))     # the only possible move
        1
        >>> keys = jax.random.split(jax.random.key(1), 8)
        >>> jax.vmap(next_state, (0, None, 0))(keys, chain, jnp.zeros(8, jnp.int32)).tolist()
        [1, 1, 1, 1, 1, 1, 1, 1]
    """
    _check_state(state, chain, "state")
    row = chain.cumulative[state]
    u = jax.random.uniform(key, dtype=row.dtype)
    return jnp.sum(row <= u, dtype=jnp.int32)


def _check_state(state, chain: MarkovChain, name: str) -> None:
    """Refuse a concrete state that is not an integer index of the chain (a bool, a float such
    as 1.5, which ``int32`` would truncate, or an index past the end, which a JAX gather would
    clamp to the last state). Traced states (inside jit / scan) cannot be checked here."""
    if isinstance(state, jax.core.Tracer):
        return
    if np.ndim(state) == 0:
        check_index(state, name, int(np.shape(chain.cumulative)[0]),
                    hint="States are integers 0..S-1 of the chain.")
        return
    arr = np.asarray(state)
    if not np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_:
        raise ValueError(f"{name} must hold integer states in [0, "
                         f"{np.shape(chain.cumulative)[0]}); got dtype {arr.dtype}.")
    check_indices(arr, name, int(np.shape(chain.cumulative)[0]),
                  hint="States are integers 0..S-1 of the chain.")


def sample_path(
    key: jax.Array,
    chain: MarkovChain,
    initial_state,
    num_steps: int,
    *,
    start_step=0,
) -> jax.Array:
    """Sample ``X_0, X_1, ..., X_T`` (``T = num_steps``) with ``lax.scan``.

    ``X_0 = initial_state`` and, for ``i = 0, ..., T - 1``,
    ``X_{i+1} = next_state(jax.random.fold_in(key, start_step + i), chain, X_i)``. Because each
    step's key depends only on the global step index, a long path sampled in chunks
    (``start_step = 0, T, 2T, ...``, each chunk starting from the previous chunk's last state)
    is bit-identical to one sampled at once.

    To start in stationarity, draw ``X_0`` yourself, e.g.
    ``jax.random.choice(k0, S, p=jnp.asarray(stationary_distribution(P)))`` with a key ``k0``
    that is not ``key``.

    Args:
        key: PRNG key for the whole path.
        chain: a :class:`MarkovChain`.
        initial_state: integer scalar ``X_0``.
        num_steps: number of transitions ``T`` (a Python int; static under ``jit``).
        start_step: global index of the first transition (may be traced); default 0.

    Returns:
        int32 array ``[num_steps + 1]`` with ``path[0] = X_0``.

    Example:
        >>> chain = markov_chain([[0.9, 0.1], [0.5, 0.5]])
        >>> path = sample_path(jax.random.key(0), chain, 0, 1000)
        >>> path.shape, path.dtype
        ((1001,), dtype('int32'))
    """
    try:
        num_steps = check_int(num_steps, "num_steps", minimum=0)
    except ValueError as err:
        raise ValueError(f"{err} num_steps is the number of transitions, a Python int; under "
                         "jit mark it static (static_argnums).") from None
    _check_state(initial_state, chain, "initial_state")
    x0 = jnp.asarray(initial_state, dtype=jnp.int32)

    def body(state, i):
        nxt = next_state(jax.random.fold_in(key, start_step + i), chain, state)
        return nxt, nxt

    _, rest = jax.lax.scan(body, x0, jnp.arange(int(num_steps), dtype=jnp.int32))
    return jnp.concatenate([x0[None], rest])


# ----------------------------------------------------------------------------------------------
# mixing time tau(alpha) (host)
# ----------------------------------------------------------------------------------------------


def _as_table(table, num_states: int, name: str) -> np.ndarray:
    try:
        f = np.asarray(table)
    except jax.errors.TracerArrayConversionError as err:  # pragma: no cover - message only
        raise ValueError(f"{name} is a traced JAX value; pass a concrete array.") from err
    if f.ndim == 0 or f.shape[0] != num_states:
        raise ValueError(
            f"{name} must have the chain state as its leading axis, shape [S={num_states}, ...]; "
            f"got shape {f.shape}."
        )
    return _real_finite_float64(f, name, "numbers")


def _deviation_norms(dev: np.ndarray, kind: str, entry_ndim: int) -> np.ndarray:
    """Norm of every entry of ``dev [..., *entry_shape]`` -> ``[...]`` (see TABLE_KINDS)."""
    if kind == "scalar":
        return np.abs(dev)
    if kind == "vector":
        return np.linalg.norm(dev, axis=-1)
    if kind == "matrix":
        if dev.shape[-1] == 0 or dev.shape[-2] == 0:
            return np.zeros(dev.shape[:-2])
        return np.linalg.norm(dev, ord=2, axis=(-2, -1))
    # "agents": entry [N] (per-agent scalars) or [N, d] (per-agent vectors)
    per_agent = np.abs(dev) if entry_ndim == 1 else np.linalg.norm(dev, axis=-1)
    if per_agent.shape[-1] == 0:
        return np.zeros(per_agent.shape[:-1])
    return np.max(per_agent, axis=-1)


def _infer_kind(f: np.ndarray, index: int) -> str:
    if f.ndim == 1:
        return "scalar"
    if f.ndim == 2:
        return "vector"
    raise ValueError(
        f"table {index} has shape {f.shape}: a 3-D table is either matrices [S, d, d] (spectral "
        "norm) or per-agent vectors [S, N, d] (2-norm of each agent's row), and the shape alone "
        "cannot tell them apart when N == d. Say which with kinds=, e.g. "
        "mixing_time(P, [A_tab, B_tab], alpha, kinds=['matrix', 'agents'])."
    )


def mixing_time(
    transition,
    tables,
    alpha: float,
    *,
    kinds: Sequence[str] | str | None = None,
    horizon: int | None = None,
    start_states: Sequence[int] | None = None,
    max_horizon: int = 2**20,
) -> int:
    """Mixing time ``tau(alpha)`` of Assumption 3 (Lin, Gupta, Liu) for the given tables.

    With ``mu`` the stationary distribution of ``P = transition`` and ``f_bar = sum_y mu(y) f(y)``,

        tau(alpha) = min { t >= 0 : for all t' >= t, all start states x and every table f,
                           || sum_y (P^{t'}(x, y) - mu(y)) f(y) || <= alpha },

    i.e. ``|| E[f(X_{t'}) | X_0 = x] - f_bar || <= alpha`` (Assumption 3, for ``f = A`` and
    every ``f = b^i``). The deviation from one start state is **not** monotone in ``t'`` (it
    can dip below ``alpha`` and rise again), so the result is the last violating time plus one,
    never the first crossing; it is 0 if no time violates.

    Note: the worst case over *all* start states is non-increasing in ``t'``, because
    ``E_{t+1}(x) = sum_z P(x, z) E_t(z)`` (with ``E_t(x) = E[f(X_t) | X_0 = x] - f_bar``) is a
    convex combination and every norm here is convex. So with the default ``start_states``
    the last violation + 1 equals the first crossing (up to round-off); they differ when
    ``start_states`` restricts the start states. The code does not rely on monotonicity.

    Norms by table kind (``kinds``, one per table; inferred from ``ndim`` for 1-D and 2-D
    tables, required for 3-D ones because ``[S, d, d]`` and ``[S, N, d]`` look alike):

    * ``"scalar"``: table ``[S]``, absolute value;
    * ``"vector"``: table ``[S, d]``, Euclidean norm;
    * ``"matrix"``: table ``[S, d, d]`` (e.g. ``A(x)``), spectral norm;
    * ``"agents"``: table ``[S, N, d]`` (e.g. ``b^i(x)`` stacked over agents) or ``[S, N]``,
      Euclidean norm of each agent's entry, maximised over agents (A3 must hold for every i).

    How the horizon is chosen. For ``t' >= t`` the deviation obeys
    ``|| E_{t'}(x) || <= r_t * R_f`` with ``r_t = max_x sum_y |P^t(x, y) - mu(y)|``
    (non-increasing in t) and ``R_f = max_y || f(y) - f_bar ||``, because
    ``P^{t'} - 1 mu^T = (P^t - 1 mu^T) P^{t'-t}`` and each row of ``P^{t'-t} f`` is a convex
    combination of the ``f(y)``. With ``horizon=None`` the horizon ``H`` is the first power of
    two with ``r_H * max_f R_f <= alpha / 2`` (found by squaring ``P - 1 mu^T``, since
    ``(P^H - 1 mu^T)^2 = P^{2H} - 1 mu^T``), which *certifies* that no ``t' >= H`` violates;
    every ``t = 0, ..., H`` is then checked by iterating ``P^{t+1} f = P (P^t f)``. If the
    computed deviation at ``t = H`` still exceeds ``alpha``, round-off dominates and a
    ``ValueError`` is raised rather than a meaningless tau. This
    replaces a fixed "``||P^t - 1 mu^T|| < 1e-15``" horizon by a bound tied to ``alpha``. All
    in float64.

    Args:
        transition: ``[S, S]`` row-stochastic matrix with one closed class, aperiodic.
        tables: one array (or a flat list of numbers, read as one ``[S]`` table) or a sequence
            of arrays, each with the chain state as leading axis.
        alpha: the tolerance, finite and > 0.
        kinds: one kind per table (or a single string for a single table); see above.
        horizon: check only ``t <= horizon`` instead of choosing the horizon automatically; a
            ``UserWarning`` is issued if the bound above does not exclude later violations.
        start_states: restrict the start states ``x`` to these indices (default: all). Useful
            for :func:`pair_chain`, whose unreachable pairs are never a real ``X_0``.
        max_horizon: cap on the automatic horizon.

    Returns:
        ``tau(alpha)`` as a Python int.

    Raises:
        ValueError: for an invalid transition matrix or tables, ``alpha <= 0`` or not finite,
            a chain with several closed classes, a periodic chain (``P^t`` does not converge),
            a chain that does not mix within ``max_horizon`` steps, or an ``alpha`` below what
            float64 round-off can certify.

    Example:
        >>> P = np.array([[0.9, 0.1], [0.5, 0.5]])
        >>> A_tab = np.array([[[-1.0]], [[-3.0]]])
        >>> mixing_time(P, A_tab, 1e-3, kinds="matrix")   # first t with (5/3) 0.4^t <= 1e-3
        9
    """
    p = _as_transition(transition)
    num_states = p.shape[0]
    if isinstance(alpha, bool) or not isinstance(alpha, int | float | np.integer | np.floating):
        try:
            alpha = float(np.asarray(alpha))
        except (TypeError, ValueError) as err:
            raise ValueError(f"alpha must be a real number > 0; got {alpha!r}.") from err
    alpha = float(alpha)
    if not math.isfinite(alpha) or alpha <= 0:
        raise ValueError(
            f"alpha must be finite and > 0 (it is the tolerance of A3); got {alpha!r}. "
            "tau(alpha) is infinite for alpha = 0 unless the chain mixes exactly."
        )
    if (
        isinstance(tables, np.ndarray | jax.Array)
        or not isinstance(tables, Sequence)
        or (len(tables) > 0 and all(np.ndim(v) == 0 for v in tables))  # one table as a list
    ):
        tables = [tables]
    tables = list(tables)
    if not tables:
        raise ValueError("tables is empty; pass at least one table [S, ...].")
    if isinstance(kinds, str):
        kinds = [kinds]
    if kinds is not None and len(kinds) != len(tables):
        raise ValueError(f"kinds has {len(kinds)} entries but there are {len(tables)} tables.")
    fs, ks = [], []
    for i, table in enumerate(tables):
        f = _as_table(table, num_states, f"tables[{i}]")
        kind = _infer_kind(f, i) if kinds is None else kinds[i]
        if kind not in TABLE_KINDS:
            raise ValueError(f"kinds[{i}] = {kind!r} is not one of {TABLE_KINDS}.")
        need = {"scalar": (1,), "vector": (2,), "matrix": (3,), "agents": (2, 3)}[kind]
        if f.ndim not in need:
            raise ValueError(
                f"tables[{i}] has shape {f.shape}, which does not fit kind {kind!r} "
                f"(expects {' or '.join(f'{n}-D' for n in need)} with the state axis first)."
            )
        fs.append(f)
        ks.append(kind)
    if start_states is None:
        starts = np.arange(num_states)
    else:
        one = np.ndim(start_states) == 0 and not isinstance(start_states, (str, bytes))
        starts = np.unique(np.asarray(check_indices(
            [start_states] if one else start_states, "start_states", num_states,
            hint="start_states lists integer state indices."), dtype=np.int64))
        if starts.size == 0:
            raise ValueError(
                f"start_states must be a non-empty list of state indices in [0, {num_states}); "
                f"got {start_states!r}."
            )
    if horizon is not None:
        horizon = check_int(horizon, "horizon", minimum=0)

    mu = stationary_distribution(p)
    _, closed = _closed_classes(p)
    period = _period(p[np.ix_(closed[0], closed[0])])
    if period > 1:
        raise ValueError(
            f"the chain is periodic (period {period}), so P^t does not converge to 1 mu^T and "
            "tau(alpha) is not finite in general. Make it aperiodic, e.g. lazy: (P + I) / 2."
        )

    means = [np.tensordot(mu, f, axes=1) for f in fs]
    spread = 0.0
    for f, mean, kind in zip(fs, means, ks, strict=True):
        spread = max(spread, float(np.max(_deviation_norms(f - mean, kind, f.ndim - 1))))

    dev1 = p - mu[None, :]  # P - 1 mu^T; its powers are P^t - 1 mu^T for t >= 1

    def row_sum_norm(d: np.ndarray) -> float:
        return float(np.max(np.sum(np.abs(d[starts]), axis=1)))

    certified = horizon is None
    if horizon is None:
        dev0 = np.eye(num_states) - mu[None, :]
        # certify with a factor-2 margin so round-off at t = H cannot pass for a violation
        if row_sum_norm(dev0) * spread <= alpha / 2:
            horizon = 0
        else:
            horizon, dev = 1, dev1
            r = float(np.max(np.sum(np.abs(dev), axis=1)))
            while row_sum_norm(dev) * spread > alpha / 2:
                if horizon >= max_horizon:
                    raise ValueError(
                        f"the chain has not mixed to alpha = {alpha:g} within max_horizon = "
                        f"{max_horizon} steps (max_x sum_y |P^t(x,y) - mu(y)| = {r:.3g} at t = "
                        f"{horizon}). It mixes too slowly for this alpha; raise max_horizon or "
                        "alpha."
                    )
                new = dev @ dev
                r_new = float(np.max(np.sum(np.abs(new), axis=1)))
                if r < 1e-3 and r_new > 0.5 * r:
                    raise ValueError(
                        f"alpha = {alpha:g} is below what float64 round-off can certify for "
                        f"this chain: ||P^t - 1 mu^T|| stalls near {r:.3g} (exactly it would "
                        f"shrink quadratically), so deviations below about {r * spread:.3g} "
                        "cannot be resolved. Use a larger alpha."
                    )
                dev, r, horizon = new, r_new, 2 * horizon
    else:
        dev_h = np.eye(num_states) - mu[None, :] if horizon == 0 else np.linalg.matrix_power(
            dev1, horizon
        )
        if row_sum_norm(dev_h) * spread > alpha:
            warnings.warn(
                f"mixing_time: the bound r_H * R_f = {row_sum_norm(dev_h) * spread:.3g} at "
                f"horizon={horizon} exceeds alpha = {alpha:g}, so violations after the horizon "
                "are not excluded and the returned tau may be too small; use horizon=None.",
                UserWarning,
                stacklevel=2,
            )

    # iterate G_t = P^t f for every table at once, in blocks of times
    flat = np.concatenate([f.reshape(num_states, -1) for f in fs], axis=1)
    mean_flat = np.concatenate([np.ravel(m) for m in means])
    splits = np.cumsum([f[0].size for f in fs])[:-1]
    block = 64
    last_violation = -1
    g = flat
    t = 0
    while t <= horizon:
        steps = min(block, horizon + 1 - t)
        stack = np.empty((steps, *g.shape))
        for k in range(steps):
            stack[k] = g
            g = p @ g
        devs = stack[:, starts, :] - mean_flat
        worst = np.zeros(steps)
        for part, f, kind in zip(np.split(devs, splits, axis=2), fs, ks, strict=True):
            part = part.reshape(steps, starts.size, *f.shape[1:])
            norms = _deviation_norms(part, kind, f.ndim - 1)
            worst = np.maximum(worst, np.max(norms.reshape(steps, -1), axis=1))
        hits = np.flatnonzero(worst > alpha)
        if hits.size:
            last_violation = t + int(hits[-1])
        t += steps
    if certified and worst[-1] > alpha:
        raise ValueError(
            f"alpha = {alpha:g} is below what float64 round-off can resolve for these tables: "
            f"the bound gives a deviation <= {alpha / 2:g} at t = {horizon}, but the computed one "
            f"is {worst[-1]:.3g} (round-off in P^t f and mu). Use a larger alpha."
        )
    return last_violation + 1


# ----------------------------------------------------------------------------------------------
# the TD pair chain (host)
# ----------------------------------------------------------------------------------------------


def pair_index(state, next_state_, num_states: int):
    """Index of the pair ``(s, s')`` in :func:`pair_chain`: ``s * num_states + s'``.

    Works on Python ints, numpy and JAX arrays alike.

    Example:
        >>> pair_index(1, 2, 3)
        5
        >>> divmod(5, 3)           # back from the pair index to (s, s')
        (1, 2)
    """
    return state * num_states + next_state_


def pair_chain(transition) -> np.ndarray:
    """Transition matrix of the pair chain ``X_t = (s_t, s_{t+1})`` used by TD(0).

    The pair ``(s, s')`` has index ``s * S + s'`` (see :func:`pair_index`) and moves to
    ``(s', s'')`` with probability ``P(s', s'')``:

        Q[(s, s'), (u, s'')] = P(s', s'') if u == s' else 0.

    All ``S**2`` pairs are kept, so the index arithmetic stays simple; the pairs with
    ``P(s, s') = 0`` are unreachable (transient) and carry stationary mass 0. For an
    irreducible aperiodic ``P`` the pair chain has one closed class (the pairs with
    ``P(s, s') > 0``), is aperiodic, and has stationary distribution ``mu(s) P(s, s')``, so
    :func:`stationary_distribution`, :func:`expected_table` and :func:`mixing_time` apply to
    TD tables ``A(s, s')`` directly. Memory is ``S**4`` floats: fine for the
    small chains of the experiments (S <= ~40).

    Args:
        transition: ``[S, S]`` row-stochastic matrix of the state chain ``s_t``.

    Returns:
        float64 numpy array ``[S*S, S*S]``, row-stochastic.

    Example:
        >>> P = np.array([[0.9, 0.1], [0.5, 0.5]])
        >>> Q = pair_chain(P)
        >>> Q.shape
        (4, 4)
        >>> mu = stationary_distribution(P)
        >>> bool(np.allclose(stationary_distribution(Q).reshape(2, 2), mu[:, None] * P))
        True
    """
    p = _as_transition(transition)
    s = p.shape[0]
    q = np.zeros((s, s, s, s))
    mid = np.arange(s)
    q[:, mid, mid, :] = p[None, :, :]
    return q.reshape(s * s, s * s)
