"""Push-sum consensus and push-sum SA (see the package docstring)."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from decentral._checks import check_agent_values, check_int
from decentral.consensus_sa.algorithm import (
    DIVERGENCE_FACTOR,
    SAParams,
    blowup_guard,
    check_divergence_options,
    check_graphs,
    check_params_shapes,
    check_sa_params,
    divergence_scale,
    initial_chain_state,
    sa_check_params,
)
from decentral.consensus_sa.moments import (
    DEFAULT_FLOP_BUDGET,
    Moments,
    deterministic_weights,
    host_alphas,
    initial_moments_inputs,
    mjls_moments,
    refuse_params_graphs,
)
from decentral.consensus_sa.problem import LinearSAProblem
from decentral.graphs import GraphSequence, as_sequence, mix
from decentral.markov import next_state
from decentral.schedules import step_size

__all__ = [
    "PushSumState", "PushSumParams", "push_sum", "push_sum_params", "ratio_of",
    "PushSumSAState", "push_sum_sa", "theta_of", "contraction_bound", "exact_moments",
    "push_weights_sequence",
]


class PushSumState(NamedTuple):
    """Push-sum consensus state: ``x [N, ...]`` (unnormalised values), ``y [N]`` (weights)."""

    x: jax.Array
    y: jax.Array


class PushSumParams(NamedTuple):
    """What users sweep in push-sum consensus.

    Attributes:
        x0: ``[N, ...]`` initial values (None: ``N(0, I)`` from each seed's init key).
        graphs: None (the algorithm's own sequence) or another column-stochastic
            :class:`~decentral.graphs.GraphSequence` of exactly its structure.
    """

    x0: Any = None
    graphs: Any = None


def _check_push_x0(x0, n: int | None = None) -> np.ndarray:
    arr = check_agent_values(x0, n)
    return arr.astype(np.result_type(arr.dtype, np.float32))


def push_sum_params(x0=None, *, graphs=None) -> PushSumParams:
    """Params of :func:`push_sum` (the check every run applies too).

    Example:
        >>> push_sum_params([1.0, 2.0]).x0
        array([1., 2.])
    """
    return PushSumParams(None if x0 is None else _check_push_x0(x0), graphs)


def ratio_of(state: PushSumState) -> jax.Array:
    """The de-biased estimates ``x / y`` ``[..., N, ...]`` (a record function; also works on a
    run's final state with its leading seed axes)."""
    return state.x / state.y.reshape(state.y.shape + (1,) * (state.x.ndim - state.y.ndim))


def _push_graphs(graphs, n: int | None = None, *, rule=None, backend=None) -> GraphSequence:
    graphs = as_sequence(graphs, rule=rule, backend=backend)
    check_graphs(graphs, graphs.n if n is None else n, "column")
    return graphs


def push_sum(graphs, *, shape: tuple[int, ...] | int | None = None, dtype: Any = None,
             rule: str | None = None, backend: str | None = None):
    """Push-sum (ratio) consensus as a runner ``Algorithm``.

    One step, in this order: every sender j pushes ``W^[i, j] x_j`` and ``W^[i, j] y_j`` to
    each out-neighbour i (itself included); ``x(t+1) = W^_t x(t)``, ``y(t+1) = W^_t y(t)``.
    With ``y(0) = 1``: ``sum_i y_i(t) = N`` and ``sum_i x_i(t) = sum_i x_i(0)`` for every t, and
    ``x_i / y_i`` reaches the average of ``x(0)``.

    Args:
        graphs: a column-stochastic sequence (``rule="column"``): anything
            :func:`decentral.graphs.as_sequence` accepts.
        shape: trailing shape of each agent's value for drawn ``x(0)`` (None: scalars).
        dtype: dtype of drawn ``x(0)``.
        rule, backend: as in :func:`decentral.graphs.as_sequence`.

    Example:
        >>> import decentral.graphs as g
        >>> from decentral.runner import run
        >>> alg = push_sum(g.static(g.ring(4), rule="column"))
        >>> res = run(alg, push_sum_params([0.0, 1.0, 2.0, 6.0]), seeds=[0], num_steps=300)
        >>> [round(float(v), 6) for v in ratio_of(res.final_state)[0]]
        [2.25, 2.25, 2.25, 2.25]
    """
    from decentral.runner import Algorithm

    graphs = _push_graphs(graphs, rule=rule, backend=backend)
    n = graphs.n
    trailing = () if shape is None else (shape,) if isinstance(shape, int) else tuple(shape)
    if any(isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in trailing):
        raise ValueError(f"shape must be positive integers; got {shape!r}.")
    draw_dtype = jnp.dtype(dtype) if dtype is not None else jnp.zeros(()).dtype

    def check_params(params) -> None:
        if not isinstance(params, PushSumParams):
            raise ValueError(f"params must be PushSumParams (push_sum_params(...)); got "
                             f"{type(params).__name__}.")
        if params.x0 is not None:
            _check_push_x0(params.x0, n)
        if params.graphs is not None:
            graphs.require_same_structure(params.graphs)
            check_graphs(params.graphs, n, "column", name="params.graphs")

    def init(key, params: PushSumParams) -> PushSumState:
        x = jax.random.normal(key, (n, *trailing), draw_dtype) if params.x0 is None else \
            jnp.asarray(params.x0)
        return PushSumState(x, jnp.ones((n,), x.dtype))

    def step(key, state: PushSumState, params, t, x_t):
        seq = graphs if params.graphs is None else params.graphs
        graph = seq.at(t, key)
        x = mix(graph, state.x, exact_nonfinite=False)
        y = mix(graph, state.y, exact_nonfinite=False)
        return PushSumState(x.astype(state.x.dtype), y.astype(state.y.dtype)), None

    config = {"graphs": graphs.digest(), "shape": list(trailing), "dtype": str(draw_dtype)}
    return Algorithm(init=init, step=step, name="push_sum", version="1",
                     max_horizon=graphs.length, config=config, check_params=check_params,
                     num_agents=graphs.n)


class PushSumSAState(NamedTuple):
    """Push-SA state.

    Attributes:
        theta_tilde: ``[N, d]`` the unnormalised parameters ``theta~``.
        y: ``[N]`` the push-sum weights (``y_0 = 1``).
        x: int32, the chain state ``X_t``.
    """

    theta_tilde: jax.Array
    y: jax.Array
    x: jax.Array

    @property
    def theta(self) -> jax.Array:
        """The de-biased estimates ``theta = theta~ / y``."""
        return self.theta_tilde / self.y[..., None]


def theta_of(state: PushSumSAState) -> jax.Array:
    """Record function: ``theta = theta~ / y``, ``[N, d]``."""
    return state.theta


def push_sum_sa(problem: LinearSAProblem, graphs, *,
                divergence_factor: float | None = DIVERGENCE_FACTOR, divergence_after: int = 0,
                rule: str | None = None, backend: str | None = None):
    """Push-SA (Lin, Gupta, Liu eq. (9)) as a runner ``Algorithm``; params: :class:`SAParams`
    (:func:`decentral.consensus_sa.sa_params`), ``theta_0^i = theta~_0^i`` since ``y_0 = 1``.

    One step t, in this order:

    1. observe ``X_t``;
    2. local update at every sender j: ``u^j = theta~^j + alpha_t (A(X_t) theta^j +
       b^j(X_t))`` — the drift at the ratio ``theta^j = theta~^j / y^j``, added to ``theta~^j``;
    3. push ``W^[i, j] y^j`` and ``W^[i, j] u^j`` to every out-neighbour i (itself included);
    4. receive: ``y_{t+1} = W^_t y_t``, ``theta~_{t+1} = W^_t U``;
    5. de-bias on read: ``theta_{t+1} = theta~_{t+1} / y_{t+1}``; draw ``X_{t+1}``.

    ``divergence_factor`` / ``divergence_after`` mark ``theta`` divergent as in
    :func:`decentral.consensus_sa.consensus_sa` (the push-SA limit ``theta*_unif`` is one of the
    ``theta*_pi`` the scale bounds). ``graphs`` is anything
    :func:`decentral.graphs.as_sequence` accepts (``rule``, ``backend`` as there); a random
    sequence drawn per seed takes its graph key from ``split(key)`` (the chain the other half).
    Params: :class:`~decentral.consensus_sa.SAParams`, checked wherever they arrive.

    Raises:
        ValueError: graphs that are not column-stochastic or of another agent count.
    """
    from decentral.runner import Algorithm

    if not isinstance(problem, LinearSAProblem):
        raise ValueError(f"problem must be a LinearSAProblem; got {type(problem).__name__}.")
    graphs = _push_graphs(graphs, problem.num_agents, rule=rule, backend=backend)
    A_tab, b_tab = jnp.asarray(problem.A), jnp.asarray(problem.b)
    stationary = jnp.asarray(problem.stationary)
    chain = problem.chain
    n, d = problem.num_agents, problem.dim
    check_divergence_options(divergence_factor, divergence_after)
    scale = divergence_scale(problem) if divergence_factor is not None else 1.0

    def init(key, params: SAParams) -> PushSumSAState:
        check_params_shapes(params, n, d, problem.num_states)
        theta = jnp.zeros((n, d), A_tab.dtype) if params.theta0 is None else \
            jnp.asarray(params.theta0, A_tab.dtype)
        x0 = initial_chain_state(key, stationary.astype(A_tab.dtype),
                                 params.initial_distribution)
        return PushSumSAState(theta, jnp.ones((n,), A_tab.dtype), x0)

    def step(key, state: PushSumSAState, params: SAParams, t, x_t):
        seq = graphs if params.graphs is None else params.graphs
        graph_key, chain_key = seq.split_key(key)
        graph = seq.at(t, graph_key)
        alpha = step_size(params.step_size, t).astype(state.theta_tilde.dtype)
        A_x, B_x = A_tab[state.x], b_tab[state.x]                        # 1. observe X_t
        u = state.theta_tilde + alpha * (state.theta @ A_x.T + B_x)      # 2. drift at theta
        y = mix(graph, state.y, exact_nonfinite=False)                   # 3.-4. push, receive
        theta_tilde = mix(graph, u, exact_nonfinite=False).astype(u.dtype)
        theta_tilde = blowup_guard(theta_tilde, params.theta0, t, scale, divergence_factor,
                                   divergence_after, rows=theta_tilde / y[:, None])
        return PushSumSAState(theta_tilde, y.astype(state.y.dtype),
                              next_state(chain_key, chain, state.x)), None

    config = {"problem": problem.digest(), "graphs": graphs.digest(),
              "divergence": [divergence_factor, int(divergence_after)]}
    return Algorithm(init=init, step=step, name="push_sum_sa", version="1",
                     max_horizon=graphs.length, config=config,
                     check_params=sa_check_params(graphs, problem, "column"),
                     divergence_hint="reduce params.step_size (the schedule's alpha_0)",
                     num_agents=n)


def contraction_bound(num_agents: int, window: int) -> float:
    """Theorem 5's ``eps_bar <= (1 - 1/N^{N L})^{1/L}`` (N agents, window L).

    Example:
        >>> 1 - contraction_bound(6, 2) < 1e-9       # vacuous in practice: 1 - eps_bar ~ 2e-10
        True
    """
    N = check_int(num_agents, "num_agents")
    L = check_int(window, "window")
    return float((1.0 - float(N) ** (-N * L)) ** (1.0 / L))


def push_weights_sequence(graphs: GraphSequence, num_steps: int) -> tuple[np.ndarray,
                                                                              np.ndarray]:
    """``(W^_0 .. W^_{T-1} [T, N, N], y_0 .. y_T [T + 1, N])`` on the host in float64."""
    W = deterministic_weights(graphs, num_steps)
    y = np.empty((num_steps + 1, graphs.n))
    y[0] = 1.0
    for t in range(num_steps):          # host recursion of one vector: cheap, exact order
        y[t + 1] = W[t] @ y[t]
    return W, y


def exact_moments(problem: LinearSAProblem, graphs: GraphSequence, params: SAParams,
                  num_steps: int, *, record_at=None,
                  max_flops: float = DEFAULT_FLOP_BUDGET) -> Moments:
    """Exact ``E theta_t`` and second moment of :func:`push_sum_sa` (``theta = theta~ / y``).

    The recursion on ``theta~`` is the Markov jump linear system of
    :mod:`decentral.consensus_sa.moments` with ``W1 = W^_t``, ``W2 = W^_t diag(1/y_t)``,
    ``W3 = W^_t``; the output is scaled by ``1 / y_t``. Deterministic sequences only.
    """
    T = check_int(num_steps, "num_steps")
    graphs = _push_graphs(graphs, problem.num_agents)
    check_sa_params(params, num_agents=problem.num_agents, dim=problem.dim,
                    num_states=problem.num_states)
    refuse_params_graphs(params)
    W, y = push_weights_sequence(graphs, T)
    theta0, p0 = initial_moments_inputs(problem, params)
    pair = problem.td[0].transition.shape[0] if problem.td is not None else None
    return mjls_moments(transition=problem.transition, A=problem.A, B=problem.b, W1=W,
                        W2=W / y[:-1, None, :], W3=W, alphas=host_alphas(params.step_size, T),
                        out_scale=1.0 / y, theta0=theta0, p0=p0, num_steps=T,
                        record_at=record_at, pair_states=pair, max_flops=max_flops)
