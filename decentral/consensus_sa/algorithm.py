"""Consensus-type linear SA with row-stochastic mixing (Lin, Gupta, Liu, eq. (1) / (3)).

One step ``t`` (0-based; the step size of the first update is ``alpha_0``), in this order:

1. observe the shared chain state ``X_t`` (carried in the state);
2. **mix**: ``v^i = sum_j W_t[i, j] theta^j``  (``V = W_t Theta``);
3. **adapt on the mixed value** ("combine-then-adapt", the paper's eq. (1)):
   ``theta^i_{t+1} = v^i + alpha_t (A(X_t) v^i + b^i(X_t))``, i.e.
   ``Theta_{t+1} = W_t Theta_t (I + alpha_t A(X_t))^T + alpha_t B(X_t)``  (eq. (3)); the code
   evaluates the product as ``W_t (Theta_t (I + alpha_t A(X_t))^T)`` — the same matrix, the
   d x d factor applied first because ``A`` is common to all agents (faster on sparse tables;
   equal to round-off). With a dense ``W_t`` it works on the transpose,
   ``Theta_{t+1}^T = ((I + alpha_t A(X_t)) Theta_t^T) W_t^T + alpha_t B(X_t)^T`` (the same
   numbers up to the order of the sums; see :func:`consensus_sa` for why);
4. draw ``X_{t+1} ~ P(X_t, .)`` from the step's key.

``variant="adapt_then_combine"`` is Remark 1's labelled alternative (Kushner–Yin):
``Theta_{t+1} = W_t Theta_t + alpha_t (Theta_t A(X_t)^T + B(X_t))`` — the drift is taken at the
agent's own value; same limit, not covered by the paper's finite-time analysis.

Configurations of the same code: a single agent (``N = 1``, any graph on one agent) is the
single-agent linear SA of Srikant and Ying; a doubly stochastic sequence (e.g. Metropolis
weights) with ``variant="adapt_then_combine"`` is the consensus TD(0) of Doan, Maguluri and
Romberg (their stacked update ``theta <- W theta + alpha (r phi + (I ⊗ A_t) theta)``).

Example:
    >>> import decentral.graphs as g
    >>> from decentral.consensus_sa import random_mrp, td0_problem, consensus_sa, sa_params
    >>> from decentral.schedules import harmonic
    >>> from decentral.runner import run
    >>> mrp = random_mrp(0, num_states=4, num_features=2, num_agents=3)
    >>> prob = td0_problem(*mrp, 0.8)
    >>> alg = consensus_sa(prob, g.static(g.ring(3), rule="row"))
    >>> res = run(alg, sa_params(harmonic(1.0, 10.0)), seeds=range(4), num_steps=100)
    >>> res.final_state.theta.shape      # [S, N, d]
    (4, 3, 2)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from decentral._checks import sum_tolerance
from decentral.graphs import GraphSequence, as_sequence, mix
from decentral.markov import next_state
from decentral.schedules import StepSize, check_step_size_field, step_size

from .problem import LinearSAProblem

__all__ = ["SAState", "SAParams", "sa_params", "check_sa_params", "consensus_sa", "VARIANTS",
           "theta_of", "initial_chain_state", "DIVERGENCE_FACTOR", "divergence_scale",
           "check_graphs", "check_divergence_options", "blowup_guard", "check_params_shapes",
           "sa_check_params"]

VARIANTS = ("combine_then_adapt", "adapt_then_combine")

#: Default multiple of ``max(1, max_i ||theta0^i||, max_j ||theta*_{e_j}||)`` beyond which an
#: iterate counts as divergent (see :func:`consensus_sa`). Every limit ``theta*_pi`` is a convex
#: combination of the agents' local limits ``theta*_{e_j}`` (it is linear in ``pi``), so the scale
#: bounds ``||theta*_pi||`` for every mixing sequence.
DIVERGENCE_FACTOR = 1e6


class SAState(NamedTuple):
    """State of consensus SA.

    Attributes:
        theta: ``[N, d]`` the agents' parameters (row i is ``theta^i``).
        x: int32 scalar, the chain state ``X_t`` the next update reads.
    """

    theta: jax.Array
    x: jax.Array


class SAParams(NamedTuple):
    """What users sweep (build with :func:`sa_params`).

    Attributes:
        step_size: a :class:`~decentral.schedules.StepSize` (``alpha_t = alpha0 / (t + t0)**p``,
            t from 0).
        theta0: ``[N, d]`` initial parameters, or None for zeros.
        initial_distribution: ``[S]`` distribution of ``X_0``, or None for the stationary one.
        graphs: None (the algorithm's own sequence), or another
            :class:`~decentral.graphs.GraphSequence` of exactly its structure: the run mixes
            over this one (one compiled program for many graphs).
    """

    step_size: StepSize
    theta0: Any = None
    initial_distribution: Any = None
    graphs: Any = None


def check_sa_params(params, *, num_agents: int | None = None, dim: int | None = None,
                    num_states: int | None = None) -> None:
    """The one check of SA params (:func:`sa_params` and the algorithms' ``check_params``):
    a valid step-size schedule, finite numbers ``theta0 [N, d]`` and a probability vector
    ``initial_distribution [S]`` (shapes checked where the sizes are given).

    Raises:
        ValueError: naming the field (``params.step_size``, ``params.theta0``,
            ``params.initial_distribution``).
    """
    if not isinstance(params, SAParams):
        raise ValueError(f"params must be SAParams (decentral.consensus_sa.sa_params(...)); got "
                         f"{type(params).__name__}.")
    check_step_size_field(params.step_size)
    if params.theta0 is not None:
        theta0 = np.asarray(params.theta0)
        if theta0.dtype == object or theta0.dtype == bool or \
                not np.issubdtype(theta0.dtype, np.number) or not np.all(np.isfinite(theta0)):
            raise ValueError("params.theta0 must be finite numbers [N, d].")
    if params.initial_distribution is not None:
        given = np.asarray(params.initial_distribution)
        p0 = np.asarray(given, dtype=np.float64) if given.dtype != object else None
        tol = sum_tolerance(given.dtype, given.shape[-1] if given.ndim else 1, 1e-9) \
            if p0 is not None else 0.0                                    # its dtype's
        if p0 is None or p0.ndim < 1 or np.any(p0 < 0) or not np.all(np.isfinite(p0)) or \
                np.any(np.abs(p0.sum(axis=-1) - 1) > tol):
            raise ValueError("params.initial_distribution must be a probability vector [S] "
                             "(non-negative, summing to 1).")
    if num_agents is not None:
        check_params_shapes(params, num_agents, dim, num_states)


def sa_params(step_size: StepSize, theta0=None, initial_distribution=None, *,
              graphs=None) -> SAParams:
    """Params of :func:`consensus_sa` and :func:`~decentral.push_sum.push_sum_sa`.

    Args:
        step_size: a schedule from :mod:`decentral.schedules` (``constant``, ``harmonic``,
            ``polynomial``; stacked with ``stack_schedules`` to sweep).
        theta0: initial ``[N, d]`` values (default zeros).
        initial_distribution: ``[S]`` law of ``X_0`` (default: stationary).
        graphs: the graphs of this run (see :class:`SAParams`); default the algorithm's.

    Raises:
        ValueError: NaN in the step size or ``theta0``; a distribution that is not stochastic
            (:func:`check_sa_params`, the check every run applies too).

    Example:
        >>> from decentral.schedules import constant
        >>> sa_params(constant(0.1)).theta0 is None
        True
    """
    params = SAParams(step_size, theta0, initial_distribution, graphs)
    check_sa_params(params)
    return params._replace(
        theta0=None if theta0 is None else np.asarray(theta0),
        initial_distribution=None if initial_distribution is None else
        np.asarray(initial_distribution, dtype=np.float64))


def initial_chain_state(key, problem_stationary, initial_distribution):
    """``X_0`` drawn from ``initial_distribution`` (or the stationary law) with one uniform
    draw against the cumulative distribution (the sampler of :mod:`decentral.markov`)."""
    p0 = problem_stationary if initial_distribution is None else jnp.asarray(
        initial_distribution)
    c = jnp.cumsum(p0)
    u = jax.random.uniform(key, (), dtype=c.dtype) * c[-1]
    return jnp.minimum(jnp.sum(c <= u), p0.shape[0] - 1).astype(jnp.int32)


def check_params_shapes(params: SAParams, n: int, d: int, num_states: int) -> None:
    """Refuse a ``theta0`` that is not ``[N, d]`` or an initial distribution that is not
    ``[S]`` (checked on shapes, so also at trace time; no silent reshape or index clamping)."""
    if params.theta0 is not None and tuple(np.shape(params.theta0)) != (n, d):
        raise ValueError(f"theta0 must have shape [N, d] = [{n}, {d}]; got "
                         f"{list(np.shape(params.theta0))}.")
    p0 = params.initial_distribution
    if p0 is not None and tuple(np.shape(p0)) != (num_states,):
        raise ValueError(f"initial_distribution must have shape [S] = [{num_states}] (the "
                         f"chain's states); got {list(np.shape(p0))}.")


def theta_of(state) -> jax.Array:
    """Record function: the agents' parameters ``[N, d]`` (define record functions once)."""
    return state.theta


def check_graphs(graphs, n: int, kind: str, *, name: str = "graphs") -> None:
    """Refuse a sequence that is not a GraphSequence, has another agent count than the
    problem, or has a matrix that is not ``kind``-stochastic (one verdict for a matrix whatever
    its form and backend; random forms: every draw)."""
    if not isinstance(graphs, GraphSequence):
        raise ValueError(f"{name} must be a decentral.graphs.GraphSequence; got "
                         f"{type(graphs).__name__}.")
    if graphs.n != n:
        raise ValueError(f"the {name} have {graphs.n} agents but the problem's b has N = {n}.")
    from decentral.graphs import require_stochastic_sequence

    require_stochastic_sequence(graphs, kind, who=f"this algorithm ({name})")


def sa_check_params(graphs: GraphSequence, problem: LinearSAProblem, kind: str):
    """The ``check_params`` of an SA algorithm on ``graphs`` (``kind``-stochastic mixing):
    :func:`check_sa_params` with the problem's sizes, and a params sequence of the
    algorithm's structure whose matrices are ``kind``-stochastic."""
    def check_params(params) -> None:
        check_sa_params(params, num_agents=problem.num_agents, dim=problem.dim,
                        num_states=problem.num_states)
        if params.graphs is not None:
            graphs.require_same_structure(params.graphs)
            check_graphs(params.graphs, problem.num_agents, kind, name="params.graphs")
    return check_params


def divergence_scale(problem: LinearSAProblem) -> float:
    """``max(1, max_j ||theta*_{e_j}||)``: bounds the norm of every limit ``theta*_pi``.

    ``theta*_pi = -Abar^{-1} sum_j pi_j bbar^j`` is linear in ``pi``, hence a convex combination
    of the local limits ``theta*_{e_j}`` (agent ``j`` alone), and its norm is at most the largest
    of theirs. For an ``A`` that is not invertible the scale is 1.

    Example:
        >>> from decentral.consensus_sa import random_mrp, td0_problem
        >>> divergence_scale(td0_problem(*random_mrp(0, 4, 2, 3), 0.8)) >= 1.0
        True
    """
    from .problem import local_limits

    try:
        lim = np.asarray(local_limits(problem), np.float64)
    except (ValueError, np.linalg.LinAlgError):
        return 1.0
    return float(max(1.0, np.max(np.linalg.norm(lim, axis=-1))))


def check_divergence_options(factor, after) -> None:
    """Refuse a ``divergence_factor`` that is not a finite number > 1 (or None) and a
    ``divergence_after`` that is not a non-negative int."""
    if factor is not None and not (isinstance(factor, (int, float)) and np.isfinite(factor)
                                   and factor > 1):
        raise ValueError(f"divergence_factor must be a finite number > 1 or None; got "
                         f"{factor!r}.")
    if isinstance(after, bool) or not isinstance(after, (int, np.integer)) or after < 0:
        raise ValueError(f"divergence_after must be a non-negative int; got {after!r}.")


def _divergence_bound(theta0, scale: float, factor, dtype):
    """``factor * max(scale, max_i ||theta0^i||)`` in ``dtype`` (the bound of
    :func:`blowup_guard`)."""
    ref = jnp.asarray(scale, dtype)
    if theta0 is not None:
        ref = jnp.maximum(ref, jnp.max(jnp.linalg.norm(jnp.asarray(theta0, dtype), axis=-1)))
    return factor * ref


def blowup_guard(theta, theta0, t, scale: float, factor, after: int, rows=None):
    """``theta``, or NaN everywhere once ``t >= after`` and a row norm exceeds the bound.

    The bound is ``factor * max(scale, max_i ||theta0^i||)`` on the row norms of ``rows``
    (default ``theta``; push-SA passes its ratios ``theta~ / y``); marking the iterate
    non-finite lets the runner report the exact update at which it happened
    (``DivergenceError``).
    """
    if factor is None:
        return theta
    bound = _divergence_bound(theta0, scale, factor, theta.dtype)
    rows = (theta if rows is None else rows).reshape(theta.shape[0], -1)
    blown = (jnp.max(jnp.linalg.norm(rows, axis=-1)) > bound) & (t >= after)
    return jnp.where(blown, jnp.nan, theta)


def _blowup_guard_T(theta_T, theta0, t, scale: float, factor, after: int):
    """:func:`blowup_guard` of ``theta = theta_T.T`` (``[N, d]``), returned as ``theta``, from
    its transpose ``theta_T [d, N]``: the same verdict, computed the way XLA on CPU runs fast.
    The row norms of ``theta`` are the column norms of ``theta_T`` (:func:`_column_sum_squares`),
    and their maximum is compared with the bound through an integer code (2 for a NaN norm, 1
    above the bound, 0 otherwise): the largest code is 1 exactly when ``max_i ||theta^i|| >
    bound`` (a NaN norm makes that maximum NaN, never above the bound). A float maximum there
    would go to a library reduction that costs more than the rest of the check."""
    if factor is None:
        return theta_T.T
    bound = _divergence_bound(theta0, scale, factor, theta_T.dtype)
    norms = jnp.sqrt(_column_sum_squares(theta_T))
    code = jnp.where(jnp.isnan(norms), 2, (norms > bound).astype(jnp.int32))
    blown = (jnp.max(code) == 1) & (t >= after)
    return jnp.where(blown, jnp.nan, theta_T.T)


#: XLA options of the consensus-SA programs on CPU (:attr:`Algorithm.cpu_compiler_options
#: <decentral.runner.Algorithm>`): LLVM may use 512-bit vectors (AVX-512) in the fused
#: elementwise passes where the CPU has them; elsewhere the widest available vectors are used.
#: Vector width does not change per-element arithmetic.
CPU_COMPILER_OPTIONS = {"xla_cpu_prefer_vector_width": 512}

#: Largest ``d`` for which :func:`_left_product` and :func:`_column_sum_squares` sum the ``d``
#: terms themselves (an elementwise expression XLA fuses and vectorises over the agents)
#: rather than calling a matrix product or a reduction.
UNROLL_DIM = 16


def _left_product(M, X):
    """``M @ X`` for a small ``M [d, d]`` and ``X [d, N]``: for ``d <= UNROLL_DIM`` the sum
    ``sum_k M[:, k] X[k, :]`` written out (in the order k = 0, 1, ...). Vmapped over seeds, a
    ``dot`` is a batch of tiny ``d x d`` products, which XLA on CPU runs far below the
    machine's rate; the written-out sum is one fused elementwise pass."""
    d = M.shape[-1]
    if d > UNROLL_DIM:
        return M @ X
    acc = M[:, :1] * X[:1]
    for k in range(1, d):
        acc = acc + M[:, k:k + 1] * X[k:k + 1]
    return acc


def _column_sum_squares(X):
    """``sum_k X[k, :]**2`` of ``X [d, N]`` (written out in the order k = 0, 1, ... for
    ``d <= UNROLL_DIM``)."""
    if X.shape[0] > UNROLL_DIM:
        return jnp.sum(X * X, axis=0)
    acc = X[0] * X[0]
    for k in range(1, X.shape[0]):
        acc = acc + X[k] * X[k]
    return acc


def consensus_sa(problem: LinearSAProblem, graphs, *,
                 variant: str = "combine_then_adapt", per_seed_graphs: bool | None = None,
                 divergence_factor: float | None = DIVERGENCE_FACTOR,
                 divergence_after: int = 0, rule: str | None = None,
                 backend: str | None = None):
    """Consensus SA (Lin, Gupta, Liu, eq. (1)) as a runner :class:`~decentral.runner.Algorithm`.

    Args:
        problem: the tables (:class:`LinearSAProblem`, e.g. :func:`td0_problem`).
        graphs: a row-stochastic sequence ``t -> W_t``: anything
            :func:`decentral.graphs.as_sequence` accepts (any form and backend, a weight
            matrix, an adjacency with ``rule``).
        variant: ``"combine_then_adapt"`` (the paper, default) or ``"adapt_then_combine"``
            (Remark 1).
        per_seed_graphs: no longer needed (the sequence decides whether it draws per seed,
            ``shared_across_seeds=False``); when given it must match the sequence.
        divergence_factor: an iterate with some agent's ``||theta^i_{t+1}||`` above
            ``divergence_factor * max(1, max_i ||theta0^i||, max_j ||theta*_{e_j}||)``
            (:func:`divergence_scale`) at an update ``t >= divergence_after`` is divergent: the
            step marks it non-finite, so the runner raises ``DivergenceError`` naming that
            update (or warns, with ``on_divergence="warn"``). ``None`` disables the check
            (non-finite values are still reported). The default, :data:`DIVERGENCE_FACTOR`
            (1e6), leaves room for the early growth a large ``alpha_0`` may cause, which the
            theorem does not exclude; raise ``divergence_after`` to skip a known transient.
        divergence_after: first update at which the norm check applies (default 0).
        rule, backend: as in :func:`decentral.graphs.as_sequence`.

    Returns:
        An ``Algorithm`` with state :class:`SAState`, params :class:`SAParams` (checked
        wherever they arrive by :func:`check_sa_params` and the graphs' checks),
        ``max_horizon = graphs.length``, and a ``config`` naming the problem, graphs and
        variant.

    Raises:
        ValueError: a variant not in :data:`VARIANTS`, graphs that are not row-stochastic or
            whose agent count differs from the problem's.

    Speed:
        With a dense ``W_t`` the step computes the transpose of eq. (3),
        ``Theta_{t+1}^T = ((I + alpha_t A(X_t)) Theta_t^T) W_t^T + alpha_t B(X_t)^T`` — the same
        numbers up to the order of the sums — so that, vmapped over seeds, the mixing is one
        ``[seeds * d, N] x [N, N]`` product (XLA then keeps the state as ``Theta^T`` between
        steps, with no transposes), the ``d x d`` factor and the norm check are elementwise
        passes with the agents on the fast axis (:func:`_left_product`), and no small
        per-seed matrix product or library reduction is left. XLA on CPU vectorises an
        elementwise pass only along its last axis, and an ``[N, d]`` layout with ``d = 10`` runs
        it unvectorised, several times slower. The algorithm also asks XLA for 512-bit vectors
        where the CPU has them (:data:`CPU_COMPILER_OPTIONS`; per-element arithmetic is
        unchanged). A sparse table mixes as before, on ``Theta``.
    """
    from decentral.runner import Algorithm

    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}; got {variant!r}.")
    if not isinstance(problem, LinearSAProblem):
        raise ValueError(f"problem must be a LinearSAProblem (td0_problem, ...); got "
                         f"{type(problem).__name__}.")
    graphs = as_sequence(graphs, rule=rule, backend=backend)
    check_graphs(graphs, problem.num_agents, "row")
    if per_seed_graphs is not None and bool(per_seed_graphs) != graphs.draws_per_seed:
        raise ValueError("per_seed_graphs must be True exactly when the random sequence draws "
                         "per seed (shared_across_seeds=False); it can be left out.")
    A_tab = jnp.asarray(problem.A)
    b_tab = jnp.asarray(problem.b)
    bT_tab = jnp.asarray(np.swapaxes(problem.b, 1, 2)) if graphs.backend == "dense" else None
    stationary = jnp.asarray(problem.stationary)
    chain = problem.chain
    n, d = problem.num_agents, problem.dim
    combine_first = variant == "combine_then_adapt"
    check_divergence_options(divergence_factor, divergence_after)
    scale = divergence_scale(problem) if divergence_factor is not None else 1.0

    def init(key, params: SAParams) -> SAState:
        check_params_shapes(params, n, d, problem.num_states)
        theta = jnp.zeros((n, d), A_tab.dtype) if params.theta0 is None else \
            jnp.asarray(params.theta0, A_tab.dtype)
        x0 = initial_chain_state(key, stationary.astype(A_tab.dtype),
                                 params.initial_distribution)
        return SAState(theta, x0)

    def step(key, state: SAState, params: SAParams, t, x_t):
        seq = graphs if params.graphs is None else params.graphs
        graph_key, chain_key = seq.split_key(key)
        graph = seq.at(t, graph_key)
        alpha = step_size(params.step_size, t).astype(state.theta.dtype)
        A_x = A_tab[state.x]                                          # 1. observe X_t
        if seq.backend == "dense":
            # The same update on Theta^T [d, N] (see "Speed" in the docstring): the mixing is
            # Theta^T W^T, one [seeds * d, N] x [N, N] product over all seeds, and every
            # per-agent array keeps the agents (N) on its last axis.
            th_T = state.theta.T
            if combine_first:
                # 2.-3. Theta_{t+1}^T = ((I + a A(X_t)) Theta_t^T) W_t^T + a B(X_t)^T, eq. (3)
                adapted_T = th_T + alpha * _left_product(A_x, th_T)
                theta_T = adapted_T @ graph.T + alpha * bT_tab[state.x]
            else:
                # Remark 1: Theta_{t+1}^T = Theta_t^T W_t^T + a (A(X_t) Theta_t^T + B(X_t)^T)
                theta_T = th_T @ graph.T + alpha * (_left_product(A_x, th_T)
                                                    + bT_tab[state.x])
            theta_T = theta_T.astype(state.theta.dtype)
            theta = _blowup_guard_T(theta_T, params.theta0, t, scale, divergence_factor,
                                    divergence_after)
        else:
            if combine_first:
                # 2.-3. Theta_{t+1} = W_t Theta_t (I + a A(X_t))^T + a B(X_t), eq. (3): the
                # d x d factor is applied before the mixing (the same product,
                # associativity); it keeps the per-seed matrix product off the gathered
                # operand of a sparse table, which XLA on CPU runs about 5x slower.
                adapted = state.theta + alpha * (state.theta @ A_x.T)
                theta = mix(graph, adapted, exact_nonfinite=False) + alpha * b_tab[state.x]
            else:
                # Remark 1: Theta_{t+1} = W_t Theta_t + a (Theta_t A(X_t)^T + B(X_t))
                theta = mix(graph, state.theta, exact_nonfinite=False) + alpha * (
                    state.theta @ A_x.T + b_tab[state.x])
            theta = blowup_guard(theta.astype(state.theta.dtype), params.theta0, t, scale,
                                 divergence_factor, divergence_after)
        return SAState(theta, next_state(chain_key, chain, state.x)), None   # 4. X_{t+1}

    config = {"problem": problem.digest(), "graphs": graphs.digest(), "variant": variant,
              "per_seed_graphs": graphs.draws_per_seed,
              "divergence": [divergence_factor, int(divergence_after)]}
    return Algorithm(init=init, step=step, name=f"consensus_sa.{variant}", version="3",
                     max_horizon=graphs.length, config=config, num_agents=n,
                     cpu_compiler_options=CPU_COMPILER_OPTIONS,
                     check_params=sa_check_params(graphs, problem, "row"),
                     divergence_hint="reduce params.step_size (the schedule's alpha_0)")
