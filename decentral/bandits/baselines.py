"""Cooperative-bandit baselines that need global information: coop-UCB2 and DDUCB.

Both assume a **static undirected** graph and use quantities of the whole network (N, the
Laplacian's maximum degree, the spectrum of the gossip matrix), unlike Dec_UCB
(:mod:`~decentral.bandits.decentralized`), which needs none. A time-varying
:class:`~decentral.graphs.GraphSequence` (periodic, explicit, random drops) or a list of graphs
is refused with a ``ValueError``: there is no single ``P`` whose spectrum they could use.

They run on the same clock and reward streams as every policy of this package
(:mod:`~decentral.bandits.policy`): the initialisation round at ``t = 0`` (every agent pulls
every arm once; the policy state is built from those rewards *without* a communication), then
for ``t = 0, ..., T - 1``: decide ``a_i(t + 1)`` from the time-t state, observe the own reward,
communicate. Ties go to the lowest arm index.

**coop-UCB2** (Landgren, Srivastava, Leonard, CDC 2016 / ECC 2016 / Automatica 2021, arXiv
1512.06888), :func:`coop_ucb2`. Each agent i keeps per arm k an estimate ``nhat_{i,k}`` of the
network-average pull count and ``shat_{i,k}`` of the network-average reward sum.

* state after the initialisation round: ``nhat_i(0) = 1``, ``shat_i(0) = X_i(0)`` (own values);
* decide: ``a_i(t+1) = argmax_k muhat + sigma sqrt((2 gamma / G(eta)) (nhat + f(t)) / (N nhat)
  * L(t) / nhat)`` with ``muhat = shat / nhat``, ``G(eta) = 1 - eta^2 / 16``,
  ``L(t)`` the clock's logarithm (``ln t``, 0 for ``t <= 1``) and ``f(t) = sqrt(L(t))``;
* observe: ``xi_i(t+1) = e_{a_i(t+1)}`` and ``r_i(t+1) = X e_{a_i(t+1)}``;
* communicate (running consensus, what is sent is the post-observation value):
  ``nhat_k(t+1) = P (nhat_k(t) + xi_k(t+1))``, ``shat_k(t+1) = P (shat_k(t) + r_k(t+1))``
  with ``P = I - (kappa / d_max) L``, ``L`` the graph Laplacian (self-loops ignored) and
  ``d_max`` its maximum degree. ``P`` is symmetric and doubly stochastic, so
  ``sum_i nhat_{i,k}(t) = sum_i n_{i,k}(t)`` and ``sum_i shat_{i,k}`` is the network's total
  reward from arm k, exactly.

**DDUCB** (Martínez-Rubio, Kanade, Rebeschini, NeurIPS 2019, arXiv 1810.04468), :func:`dducb`.
A symmetric doubly stochastic gossip matrix ``P`` (Metropolis weights for an adjacency) with
``lambda_2`` its second-largest eigenvalue magnitude. Each agent keeps three (reward-sum,
pull-count) pairs per arm: ``alpha`` (used for decisions), ``beta`` (being mixed), ``gamma``
(new own data), and, accelerated, ``delta`` (settled mixed data). Time runs in stages of C
steps, one gossip round per step:

* ``C = ceil(ln(N / eps) / ln(1 / lambda_2))`` (plain mixing, ``P^C`` over a stage) or
  ``C = ceil(ln(2N / eps) / sqrt(2 ln(1 / lambda_2)))`` (accelerated, Chebyshev), at least 1;
* initialisation: ``beta = (X_i(0), 1)``, ``alpha = beta / N``, ``gamma = delta = 0``;
* decide at step t: ``argmax_k alpha_rew / alpha_cnt + sigma sqrt(2 eta ln s(t) /
  (N alpha_cnt))`` with ``s(t)`` the network-wide pulls ``alpha`` stands for (below);
* observe: ``gamma += (r e_a, e_a)`` and ``alpha += (r e_a, e_a) / N`` (the own pull enters the
  decision statistics at weight 1/N at once);
* communicate: one round on ``beta`` (plain: ``beta <- P beta``; accelerated: the Chebyshev
  recursion ``y_1 = P y_0 / lambda_2``, ``y_{r+1} = (2 / lambda_2) P y_r - y_{r-1}`` with the
  scalar ``w_0 = 1``, ``w_1 = 1 / lambda_2``, ``w_{r+1} = (2 / lambda_2) w_r - w_{r-1}``, so
  that after C rounds ``y_C / w_C = T_C(P / lambda_2) y_0 / T_C(1 / lambda_2)``); when the step
  ends a stage (``(t + 1) % C == 0``), after that round: plain ``alpha <- beta``,
  ``beta <- beta + gamma``, ``gamma <- 0``; accelerated ``delta <- delta + y_C / w_C``,
  ``alpha <- delta``, ``beta <- gamma`` (a fresh recursion), ``gamma <- 0``.

``s(t) = M + N t`` during the first stage (``t < C``) and ``s(t) = N (M + t - C)`` after it,
as in the authors' code (``s`` starts at K and grows by one per agent pull; it is reset to
``(t - C) N`` at every stage end, ``t`` counting the K initial pulls).

Example:
    >>> import decentral.graphs as g
    >>> from decentral.bandits import bernoulli, coop_ucb2, dducb, evaluate
    >>> cycle = g.ring(4, directed=False)
    >>> arms = bernoulli([0.9, 0.4])
    >>> coop = evaluate(coop_ucb2(cycle), arms, horizon=100, seeds=range(2))
    >>> dd = evaluate(dducb(cycle), arms, horizon=100, seeds=range(2))
    >>> coop.pulls.shape, dd.pulls.shape                  # [S, N, M]
    ((2, 4, 2), (2, 4, 2))
    >>> dducb(cycle).config["mixing_rounds"]              # C for eps = 1/22, |lambda_2| = 1/3
    5
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import decentral.graphs as g
from decentral._checks import sum_tolerance
from decentral.graphs import GraphSequence
from decentral.hypotheses import warn_hypothesis

from .decentralized import _graphs_argument
from .policy import Policy, check_clock, log_time, validate_constants

__all__ = [
    "CoopUCB2Params",
    "CoopUCB2State",
    "coop_ucb2",
    "landgren_consensus_matrix",
    "DDUCBParams",
    "DDUCBState",
    "dducb",
    "dducb_mixing_rounds",
    "second_eigenvalue_magnitude",
    "SUBLINEAR_TERMS",
]

#: The choices of coop-UCB2's sublinear ``f(t)`` (``L(t)`` the clock's logarithm):
#: ``"sqrt_log"`` (``sqrt(L)``, the default) and ``"log"`` (``L``).
SUBLINEAR_TERMS = ("sqrt_log", "log")

#: ``|lambda_2|`` at or above this counts as 1 (no mixing: disconnected or periodic).
_NO_MIXING = 1.0 - 1e-9
#: ``|lambda_2|`` below this counts as 0 (one round averages exactly).
_EXACT_MIXING = 1e-12


# ------------------------------------------------------------------------------------------
# graphs: static only
# ------------------------------------------------------------------------------------------

def _refuse_time_varying(graphs, policy: str, why: str) -> None:
    if isinstance(graphs, (list, tuple)):
        raise ValueError(f"{policy} needs a static graph: {why}. A list of graphs is a "
                         "time-varying (periodic) sequence; pass one adjacency or weight "
                         "matrix.")
    if isinstance(graphs, GraphSequence):
        static = graphs.form == "static" or (graphs.form == "periodic" and graphs.period == 1)
        if not static:
            raise ValueError(f"{policy} needs a static graph: {why}. Got a time-varying "
                             f"GraphSequence (form {graphs.form!r}); pass one adjacency, one "
                             "weight matrix or a static sequence (decentral.graphs.static).")


def _static_sequence(graphs, policy: str, why: str, rule: str | None,
                     backend: str | None) -> GraphSequence:
    """``graphs`` through :func:`decentral.graphs.as_sequence` (an adjacency with self-loops
    gets Metropolis weights unless ``rule`` says otherwise), refused unless static."""
    _refuse_time_varying(graphs, policy, why)
    return g.as_sequence(graphs, rule=rule, backend=backend, default_rule="metropolis")


def _sequence_matrix(seq: GraphSequence) -> np.ndarray:
    """The one float64 ``W [N, N]`` of a static (or period-1) sequence, on the host."""
    return np.asarray(seq.weights_host64(1)[0], np.float64)


def _undirected_pattern(seq: GraphSequence, policy: str) -> np.ndarray:
    """The boolean adjacency without self-loops of a static sequence (its support), refused
    unless symmetric."""
    mat = _sequence_matrix(seq) > 0
    adj = mat & ~np.eye(mat.shape[0], dtype=bool)
    if not np.array_equal(adj, adj.T):
        i, j = np.argwhere(adj != adj.T)[0]
        raise ValueError(f"{policy} needs an undirected graph (a symmetric adjacency): "
                         f"adj[{i}, {j}] = {adj[i, j]} but adj[{j}, {i}] = {adj[j, i]}. "
                         "Symmetrise it with `adj | adj.T`.")
    return adj


def _is_connected(adj: np.ndarray) -> bool:
    n = adj.shape[0]
    seen = np.zeros(n, bool)
    seen[0] = True
    frontier = seen.copy()
    while frontier.any():
        frontier = adj[frontier].any(axis=0) & ~seen
        seen |= frontier
    return bool(seen.all())


def second_eigenvalue_magnitude(W) -> float:
    """``|lambda_2|``: the second-largest eigenvalue *magnitude* of a symmetric ``W`` (0 for
    N = 1), the rate at which ``W^t`` forgets its start.

    Example:
        >>> import decentral.graphs as g
        >>> round(second_eigenvalue_magnitude(g.metropolis(g.ring(4, directed=False))), 12)
        0.333333333333
    """
    w = np.asarray(W, np.float64)
    if w.shape[0] < 2:
        return 0.0
    mags = np.sort(np.abs(np.linalg.eigvalsh((w + w.T) / 2)))[::-1]
    return float(min(mags[1], 1.0))


def landgren_consensus_matrix(graph, kappa: float | None = None) -> np.ndarray:
    """coop-UCB2's ``P = I - (kappa / d_max) L`` (float64, host) of an undirected graph.

    Args:
        graph: a symmetric boolean adjacency with self-loops (they do not enter the
            Laplacian), or a weight matrix or static sequence whose support is one (its
            weights are not used): what :func:`decentral.graphs.as_sequence` accepts.
        kappa: in ``(0, 1]``; None: ``d_max / (d_max + 1)`` (the default of :func:`coop_ucb2`).

    Example:
        >>> import decentral.graphs as g
        >>> P = landgren_consensus_matrix(g.ring(4, directed=False), kappa=0.5)
        >>> P[0].tolist()
        [0.5, 0.25, 0.0, 0.25]
    """
    seq = _static_sequence(graph, "landgren_consensus_matrix", "P is built from one Laplacian",
                           None, None)
    adj = _undirected_pattern(seq, "landgren_consensus_matrix")
    deg = adj.sum(axis=1).astype(np.float64)
    d_max = float(deg.max(initial=0.0))
    if kappa is None:
        kappa = _default_kappa(d_max)
    lap = np.diag(deg) - adj.astype(np.float64)
    if d_max == 0:
        return np.eye(adj.shape[0])
    return np.eye(adj.shape[0]) - (float(kappa) / d_max) * lap


def _default_kappa(d_max: float) -> float:
    return d_max / (d_max + 1.0) if d_max > 0 else 1.0


# ------------------------------------------------------------------------------------------
# coop-UCB2
# ------------------------------------------------------------------------------------------

class CoopUCB2Params(NamedTuple):
    """Sweepable constants of :func:`coop_ucb2` (Landgren et al.'s letters in brackets).

    Attributes:
        exploration_gamma: ``gamma >= 0`` in ``2 gamma / G(eta)`` (their theorem takes
            ``gamma > 1``; a smaller value warns). Default 2.9.
        concentration_eta: ``eta`` in ``(0, 4)``, ``G(eta) = 1 - eta^2 / 16``. Default 2.
        reward_sd: ``sigma_s >= 0``, the reward standard deviation the index assumes (their
            Gaussian model). Default 1.
        consensus_kappa: ``kappa`` in ``(0, 1]``, the step of ``P = I - (kappa / d_max) L``.
            :func:`coop_ucb2`'s default is ``d_max / (d_max + 1)``, i.e. ``P = I - L / (d_max
            + 1)`` (the 0.5 here only fills ``CoopUCB2Params()`` built by hand).

    The defaults ``sigma = 1, eta = 2, gamma = 2.9`` are those of a public third-party
    implementation; Landgren et al. state no single default. Each field is one number (a
    vector would apply per arm; several values are a sweep, ``sweep=True``).
    """

    exploration_gamma: float = 2.9
    concentration_eta: float = 2.0
    reward_sd: float = 1.0
    consensus_kappa: float = 0.5


class CoopUCB2State(NamedTuple):
    """Per-agent estimates of coop-UCB2 (both ``[N, M]``, float).

    Attributes:
        count_estimates: ``nhat_{i,k}(t)``, agent i's estimate of the network-average number
            of pulls of arm k (1 after the initialisation round).
        sum_estimates: ``shat_{i,k}(t)``, its estimate of the network-average reward sum.
    """

    count_estimates: jax.Array
    sum_estimates: jax.Array


def _upper_check(params, name: str, bound: float, strict: bool, policy: str) -> None:
    value = getattr(params, name)
    if isinstance(value, jax.core.Tracer):
        return
    arr = np.asarray(value)
    bad = arr >= bound if strict else arr > bound
    if np.any(bad):
        rule = "<" if strict else "<="
        raise ValueError(f"{policy}: params.{name} must be {rule} {bound:g}; got "
                         f"{arr.tolist()}.")


def _validate_coop(params):
    if not isinstance(params, CoopUCB2Params):
        raise ValueError("coop_ucb2: params must be CoopUCB2Params(exploration_gamma=..., "
                         "concentration_eta=..., reward_sd=..., consensus_kappa=...); got "
                         f"{type(params).__name__}.")
    out = validate_constants(params, {"exploration_gamma": (0.0, ">="),
                                      "concentration_eta": (0.0, ">"),
                                      "reward_sd": (0.0, ">="),
                                      "consensus_kappa": (0.0, ">")}, "coop_ucb2")
    _upper_check(out, "concentration_eta", 4.0, True, "coop_ucb2")
    _upper_check(out, "consensus_kappa", 1.0, False, "coop_ucb2")
    gamma = out.exploration_gamma
    if not isinstance(gamma, jax.core.Tracer) and np.any(np.asarray(gamma) <= 1):
        warn_hypothesis(f"coop_ucb2: exploration_gamma = {np.asarray(gamma).tolist()} <= 1; "
                        "Landgren et al.'s regret bound takes gamma > 1.")
    return out


def _coop_init(key, params, first_rewards) -> CoopUCB2State:
    first = jnp.asarray(first_rewards)
    return CoopUCB2State(jnp.ones(first.shape, first.dtype), first)


def _coop_update(state: CoopUCB2State, params, t, arms, rewards) -> CoopUCB2State:
    dtype = state.sum_estimates.dtype
    hit = jax.nn.one_hot(arms, state.count_estimates.shape[-1], dtype=dtype)
    return CoopUCB2State(state.count_estimates + hit,
                         state.sum_estimates + hit * jnp.asarray(rewards, dtype)[:, None])


def _coop_communicate(key, previous, local: CoopUCB2State, params, t, graph) -> CoopUCB2State:
    # graph holds H = I - L / (2 d_max) (positive diagonal); P = I - (kappa / d_max) L
    # = I + 2 kappa (H - I). One mix of both estimates.
    m = local.count_estimates.shape[-1]
    both = jnp.concatenate([local.count_estimates, local.sum_estimates], axis=-1)
    kappa = jnp.asarray(params.consensus_kappa, both.dtype)
    mixed = both + 2 * kappa * (g.mix(graph, both, exact_nonfinite=False) - both)
    return CoopUCB2State(mixed[:, :m], mixed[:, m:])


@functools.cache
def _coop_select(clock: str, sublinear: str):
    def select(key, state: CoopUCB2State, params: CoopUCB2Params, t, graph):
        n, m = state.count_estimates.shape
        dtype = state.sum_estimates.dtype
        log_t = log_time(t, clock, m, dtype=dtype)
        f = jnp.sqrt(log_t) if sublinear == "sqrt_log" else log_t
        counts = state.count_estimates
        eta = jnp.asarray(params.concentration_eta, dtype)
        scale = 2 * jnp.asarray(params.exploration_gamma, dtype) / (1 - eta ** 2 / 16)
        width = jnp.asarray(params.reward_sd, dtype) * jnp.sqrt(
            scale * (counts + f) / (n * counts) * log_t / counts)
        index = state.sum_estimates / counts + width
        return jnp.argmax(index, axis=-1).astype(jnp.int32)
    return select


def coop_ucb2(graphs=None, *, exploration_gamma: float = 2.9, concentration_eta: float = 2.0,
              reward_sd: float = 1.0, consensus_kappa: float | None = None,
              clock: str = "paper", sublinear: str = "sqrt_log", rule: str | None = None,
              backend: str | None = None, graph=None) -> Policy:
    """coop-UCB2 (Landgren, Srivastava, Leonard): running consensus on pull counts and reward
    sums, then a UCB index on the estimates (the rule and its order: module docstring).

    Args:
        graphs: an undirected static graph, anything :func:`decentral.graphs.as_sequence`
            accepts: a symmetric boolean adjacency with self-loops, a symmetric weight matrix
            or a static :class:`~decentral.graphs.GraphSequence`, of which only the *support*
            is taken (the consensus matrix is always Landgren's ``P = I - (kappa / d_max) L``,
            never given weights). Time-varying sequences and lists are refused.
        exploration_gamma, concentration_eta, reward_sd, consensus_kappa: the defaults of the
            sweepable params :class:`CoopUCB2Params`; ``consensus_kappa=None`` takes
            ``d_max / (d_max + 1)`` (positive diagonal, so ``P`` is aperiodic; ``kappa = 1``
            leaves the highest-degree agents without self-weight and an even cycle periodic).
        clock: the index logarithm ``L(t)``: ``"paper"`` (``ln t``, default), ``"plus_one"``,
            ``"total_pulls"`` (:data:`~decentral.bandits.CLOCKS`).
        sublinear: ``f`` of the index, one of :data:`SUBLINEAR_TERMS` (``sqrt(L(t))`` by
            default).
        rule: the weight rule of an adjacency (only its support is used; default
            ``"metropolis"``).
        backend: ``"dense"`` or ``"sparse"`` for the mixing (default: the given sequence's,
            else dense).
        graph: the old name of ``graphs`` (an alias; give one of the two).

    ``validate`` refuses, in any params a run gets, a constant that is not finite, out of its
    range or not one number (a vector would apply per arm; sweep several values). A run may
    pass another ``H`` of the same structure as data (``params.environment.graphs``, e.g.
    ``coop_ucb2(other_graph).graphs``); it must be symmetric, doubly stochastic with diagonal
    at least 1/2 (``P`` then stays non-negative for every ``kappa`` in ``(0, 1]``).

    Choices where the sources leave room: the initialisation round is not followed by a
    consensus step (the time-0 estimates are the agent's own, as Dec_UCB's ``z(0) = xbar(0)``);
    its values enter the consensus at the first communication. ``f`` and ``ln t`` share the
    clock's ``L(t)``, so the first two decisions are greedy in the paper's clock. ``sigma = 1``
    is the Gaussian-model default; rewards in ``[0, 1]`` are sub-Gaussian with scale 1/2.

    ``policy.graphs`` holds ``H = I - L / (2 d_max)`` (a weight matrix with self-loops); the
    step's ``P = I - (kappa / d_max) L`` is applied as ``X + 2 kappa (H X - X)``, so ``kappa``
    can be swept in one compile. N (the number of agents) enters the index: global
    information, like ``d_max``.

    Raises:
        ValueError: a time-varying sequence or a list of graphs (there is no single Laplacian),
            a directed graph, what ``as_sequence`` refuses (an adjacency without self-loops, a
            non-stochastic weight matrix), invalid constants (NaN, negative, not one number,
            ``eta`` outside ``(0, 4)``, ``kappa`` outside ``(0, 1]``), an unknown clock or
            ``sublinear``.

    Warns:
        HypothesisWarning: a disconnected graph; ``exploration_gamma <= 1``.

    Example:
        >>> import decentral.graphs as g
        >>> pol = coop_ucb2(g.ring(5, directed=False))
        >>> pol.params.consensus_kappa, pol.num_agents
        (0.6666666666666666, 5)
    """
    check_clock(clock)
    if sublinear not in SUBLINEAR_TERMS:
        raise ValueError(f"sublinear must be one of {SUBLINEAR_TERMS}; got {sublinear!r}.")
    given = _static_sequence(_graphs_argument(graphs, graph, "coop_ucb2"), "coop_ucb2",
                             "its P = I - (kappa/d_max) L is built from one fixed Laplacian "
                             "(d_max and N are global, fixed quantities)", rule, backend)
    adj = _undirected_pattern(given, "coop_ucb2")
    n = adj.shape[0]
    if n > 1 and not _is_connected(adj):
        warn_hypothesis("coop_ucb2: the graph is not connected, so the consensus estimates "
                        "never reach the network averages (Landgren et al. assume a "
                        "connected graph).")
    deg = adj.sum(axis=1).astype(np.float64)
    d_max = float(deg.max(initial=0.0))
    half = np.eye(n) if d_max == 0 else \
        np.eye(n) - (np.diag(deg) - adj.astype(np.float64)) / (2 * d_max)
    seq = g.static(half, backend=given.backend)
    kappa = _default_kappa(d_max) if consensus_kappa is None else consensus_kappa
    params = _validate_coop(CoopUCB2Params(exploration_gamma, concentration_eta, reward_sd,
                                           kappa))
    params = CoopUCB2Params(*(float(v) for v in params))
    return Policy(name="coop_ucb2", init=_coop_init, select=_coop_select(clock, sublinear),
                  update=_coop_update, params=params, validate=_validate_coop,
                  communicate=_coop_communicate, graphs=seq, num_agents=n,
                  config={"policy": "coop_ucb2", "clock": clock, "sublinear": sublinear,
                          "max_degree": d_max}, validate_graphs=_check_coop_graphs)


def _check_coop_graphs(seq: GraphSequence, name: str = "params.environment.graphs") -> None:
    """Refuse an ``H`` (given as data) with which ``P = I + 2 kappa (H - I)`` is not a
    symmetric, doubly stochastic, non-negative matrix for every ``kappa`` in ``(0, 1]``."""
    H = np.asarray(seq.weights_host(1)[0])
    tol = sum_tolerance(H.dtype, H.shape[0], 1e-9)
    if not (np.allclose(H, H.T, atol=tol) and g.is_doubly_stochastic(H)
            and np.all(np.diag(H) >= 0.5 - tol)):
        raise ValueError(f"coop_ucb2: {name} must hold H = I - L / (2 d_max) of an undirected "
                         "graph (symmetric, doubly stochastic, diagonal >= 1/2): the step "
                         "mixes with P = I + 2 kappa (H - I). Take it from "
                         "coop_ucb2(other_graph).graphs.")


# ------------------------------------------------------------------------------------------
# DDUCB
# ------------------------------------------------------------------------------------------

class DDUCBParams(NamedTuple):
    """Sweepable constants of :func:`dducb` (Martínez-Rubio et al.'s letters in brackets;
    defaults from the authors' code, damaru2/decentralized-bandits).

    Attributes:
        exploration_eta: ``eta >= 0`` in the width ``sqrt(2 eta sigma^2 ln s / (N n))``.
            Default 2.
        reward_sd: ``sigma >= 0``, the sub-Gaussian scale of the rewards. Default 1.
        consensus_precision: ``eps`` in ``(0, 1)``, the mixing precision that sets the stage
            length C (:func:`dducb_mixing_rounds`). Default 1/22.

    Each field is one number (a vector would apply per arm; several values are a sweep,
    ``sweep=True``).
    """

    exploration_eta: float = 2.0
    reward_sd: float = 1.0
    consensus_precision: float = 1.0 / 22.0


class DDUCBState(NamedTuple):
    """Per-agent statistics of DDUCB: (reward-sum, pull-count) pairs ``[N, M]``.

    Attributes:
        decision_sums, decision_counts: ``alpha``, what decisions use.
        mixing_sums, mixing_counts: ``beta``, being mixed during the stage (accelerated: the
            Chebyshev iterate ``y_r``).
        fresh_sums, fresh_counts: ``gamma``, the agent's own data of the current stage.
        previous_sums, previous_counts: accelerated only (else None): ``y_{r-1}``.
        settled_sums, settled_counts: accelerated only: ``delta``, the mixed data of finished
            stages.
        chebyshev_weight, chebyshev_previous: accelerated only, ``[N]``: the scalars ``w_r``,
            ``w_{r-1}`` of the recursion (each agent runs the same one).
    """

    decision_sums: jax.Array
    decision_counts: jax.Array
    mixing_sums: jax.Array
    mixing_counts: jax.Array
    fresh_sums: jax.Array
    fresh_counts: jax.Array
    previous_sums: Any = None
    previous_counts: Any = None
    settled_sums: Any = None
    settled_counts: Any = None
    chebyshev_weight: Any = None
    chebyshev_previous: Any = None


def dducb_mixing_rounds(lambda_2: float, num_agents: int, precision: float = 1.0 / 22.0, *,
                        accelerated: bool = False) -> int:
    """DDUCB's stage length C (host, float64).

    ``C = ceil(ln(N / eps) / ln(1 / |lambda_2|))`` (plain mixing) or
    ``C = ceil(ln(2N / eps) / sqrt(2 ln(1 / |lambda_2|)))`` (accelerated), at least 1
    (``lambda_2 = 0``: one round averages exactly).

    Raises:
        ValueError: ``|lambda_2| >= 1`` (a disconnected or periodic ``P`` never mixes).

    Example:
        >>> dducb_mixing_rounds(1 / 3, 4), dducb_mixing_rounds(1 / 3, 4, accelerated=True)
        (5, 4)
    """
    lam = abs(float(lambda_2))
    if lam >= _NO_MIXING:
        raise ValueError(f"DDUCB needs |lambda_2| < 1 (a connected, aperiodic gossip matrix); "
                         f"got {lam:.6g}, so C = ln(N/eps)/ln(1/|lambda_2|) is infinite.")
    log_inv = math.inf if lam < _EXACT_MIXING else -math.log(lam)
    if accelerated:
        ratio = math.log(2 * num_agents / precision) / math.sqrt(2 * log_inv)
    else:
        ratio = math.log(num_agents / precision) / log_inv
    return max(1, math.ceil(ratio))


def _rounds_traced(params, n: int, log_inv: float, accelerated: bool, dtype):
    eps = jnp.asarray(params.consensus_precision, dtype)
    if accelerated:
        ratio = jnp.log(2 * n / eps) / math.sqrt(2 * log_inv)
    else:
        ratio = jnp.log(n / eps) / log_inv
    return jnp.maximum(jnp.ceil(ratio), 1).astype(jnp.int32)


def _validate_dducb(params):
    if not isinstance(params, DDUCBParams):
        raise ValueError("dducb: params must be DDUCBParams(exploration_eta=..., reward_sd=..., "
                         f"consensus_precision=...); got {type(params).__name__}.")
    out = validate_constants(params, {"exploration_eta": (0.0, ">="),
                                      "reward_sd": (0.0, ">="),
                                      "consensus_precision": (0.0, ">")}, "dducb")
    _upper_check(out, "consensus_precision", 1.0, True, "dducb")
    return out


@functools.cache
def _dducb_init(accelerated: bool):
    def init(key, params, first_rewards) -> DDUCBState:
        first = jnp.asarray(first_rewards)
        n = first.shape[0]
        ones = jnp.ones(first.shape, first.dtype)
        zeros = jnp.zeros(first.shape, first.dtype)
        state = DDUCBState(first / n, ones / n, first, ones, zeros, zeros)
        if accelerated:
            w = jnp.ones((n,), first.dtype)
            state = state._replace(previous_sums=zeros, previous_counts=zeros,
                                   settled_sums=zeros, settled_counts=zeros,
                                   chebyshev_weight=w, chebyshev_previous=jnp.zeros_like(w))
        return state
    return init


def _dducb_update(state: DDUCBState, params, t, arms, rewards) -> DDUCBState:
    n, m = state.fresh_counts.shape
    dtype = state.fresh_sums.dtype
    hit = jax.nn.one_hot(arms, m, dtype=dtype)
    gain = hit * jnp.asarray(rewards, dtype)[:, None]
    return state._replace(fresh_sums=state.fresh_sums + gain,
                          fresh_counts=state.fresh_counts + hit,
                          decision_sums=state.decision_sums + gain / n,
                          decision_counts=state.decision_counts + hit / n)


@functools.cache
def _dducb_functions(accelerated: bool, log_inv: float, lambda_2: float):
    """select and communicate of :func:`dducb` for one mixing mode and one ``|lambda_2|``
    (cached: graphs with the same spectrum share one compile)."""
    chebyshev = accelerated and lambda_2 >= _EXACT_MIXING

    def select(key, state: DDUCBState, params: DDUCBParams, t, graph):
        n, m = state.decision_counts.shape
        dtype = state.decision_sums.dtype
        rounds = _rounds_traced(params, n, log_inv, accelerated, dtype)
        tt = jnp.asarray(t).astype(dtype)
        s = jnp.where(t < rounds, m + n * tt, n * (m + tt - rounds.astype(dtype)))
        sd = jnp.asarray(params.reward_sd, dtype)
        eta = jnp.asarray(params.exploration_eta, dtype)
        counts = state.decision_counts
        width = jnp.sqrt(2 * eta * sd ** 2 * jnp.log(s) / (n * counts))
        index = state.decision_sums / counts + width
        return jnp.argmax(index, axis=-1).astype(jnp.int32)

    def communicate(key, previous, local: DDUCBState, params, t, graph) -> DDUCBState:
        n, m = local.fresh_counts.shape
        dtype = local.fresh_sums.dtype
        rounds = _rounds_traced(params, n, log_inv, accelerated, dtype)
        stage_end = (t + 1) % rounds == 0
        beta = jnp.concatenate([local.mixing_sums, local.mixing_counts], axis=-1)
        fresh = jnp.concatenate([local.fresh_sums, local.fresh_counts], axis=-1)
        alpha = jnp.concatenate([local.decision_sums, local.decision_counts], axis=-1)
        mixed = g.mix(graph, beta, exact_nonfinite=False)
        zero = jnp.zeros_like(fresh)
        if not accelerated:
            alpha = jnp.where(stage_end, mixed, alpha)
            beta = jnp.where(stage_end, mixed + fresh, mixed)
            fresh = jnp.where(stage_end, zero, fresh)
            return local._replace(decision_sums=alpha[:, :m], decision_counts=alpha[:, m:],
                                  mixing_sums=beta[:, :m], mixing_counts=beta[:, m:],
                                  fresh_sums=fresh[:, :m], fresh_counts=fresh[:, m:])
        current = beta                              # y_r, before this round
        prev = jnp.concatenate([local.previous_sums, local.previous_counts], axis=-1)
        settled = jnp.concatenate([local.settled_sums, local.settled_counts], axis=-1)
        w, w_prev = local.chebyshev_weight, local.chebyshev_previous
        if chebyshev:
            first = (t % rounds) == 0
            c = jnp.where(first, 1 / lambda_2, 2 / lambda_2).astype(dtype)
            d = jnp.where(first, 0, 1).astype(dtype)
            y_new = c * mixed - d * prev
            w_new = c * w - d * w_prev
        else:                                   # lambda_2 = 0: one round is exact, C = 1
            y_new, w_new = mixed, w
        settled_new = settled + y_new / w_new[:, None]
        settled = jnp.where(stage_end, settled_new, settled)
        alpha = jnp.where(stage_end, settled_new, alpha)
        beta = jnp.where(stage_end, fresh, y_new)
        prev = jnp.where(stage_end, zero, current)
        w_next = jnp.where(stage_end, jnp.ones_like(w), w_new)
        w_prev_next = jnp.where(stage_end, jnp.zeros_like(w), w)
        fresh = jnp.where(stage_end, zero, fresh)
        return DDUCBState(alpha[:, :m], alpha[:, m:], beta[:, :m], beta[:, m:],
                          fresh[:, :m], fresh[:, m:], prev[:, :m], prev[:, m:],
                          settled[:, :m], settled[:, m:], w_next, w_prev_next)

    return select, communicate


def _gossip_matrix(seq: GraphSequence, who: str = "dducb") -> np.ndarray:
    """The float64 ``P`` of a static sequence, refused unless symmetric and doubly
    stochastic (within the precision of its own dtype: a float32 ``P`` is symmetric and
    stochastic to ~eps32 only)."""
    W = np.asarray(seq.weights_host(1)[0])                  # checked in its own dtype
    if not (np.allclose(W, W.T, atol=sum_tolerance(W.dtype, 1, 1e-9))
            and g.is_doubly_stochastic(W)):
        raise ValueError(f"{who} needs a symmetric doubly stochastic gossip matrix P (its "
                         "spectrum sets the stage length); pass a boolean adjacency to get "
                         "Metropolis weights.")
    return np.asarray(W, np.float64)


def _dducb_graph_check(lambda_2: float):
    """``validate_graphs`` of :func:`dducb`: a ``P`` given as data must be symmetric, doubly
    stochastic and have the ``|lambda_2|`` the policy was built for (its stage length and
    Chebyshev weights come from it)."""

    def check(seq: GraphSequence, name: str = "params.environment.graphs") -> None:
        lam = second_eigenvalue_magnitude(_gossip_matrix(seq, f"dducb ({name})"))
        if abs(lam - lambda_2) > 1e-9:
            raise ValueError(f"dducb: {name} has |lambda_2| = {lam:.12g}; the policy was built "
                             f"for {lambda_2:.12g} (its stage length C and the Chebyshev "
                             "recursion come from it). Build dducb on that graph instead.")

    return check


def dducb(graphs=None, *, accelerated: bool = False, exploration_eta: float = 2.0,
          reward_sd: float = 1.0, consensus_precision: float = 1.0 / 22.0,
          rule: str | None = None, backend: str | None = None, graph=None) -> Policy:
    """DDUCB (Martínez-Rubio, Kanade, Rebeschini, NeurIPS 2019): delayed, mixed network
    statistics and a UCB index on them (the rule, the stages and ``s(t)``: module docstring).

    Args:
        graphs: an undirected static graph, anything :func:`decentral.graphs.as_sequence`
            accepts: a symmetric boolean adjacency with self-loops (Metropolis weights unless
            ``rule`` says otherwise), a symmetric doubly stochastic weight matrix, or a static
            :class:`~decentral.graphs.GraphSequence` with such weights. Time-varying
            sequences and lists are refused.
        accelerated: Chebyshev-accelerated mixing (the paper's algorithm) instead of plain
            mixing ``P^C`` (default).
        exploration_eta, reward_sd, consensus_precision: the defaults of the sweepable params
            :class:`DDUCBParams` (``eta = 2``, ``sigma = 1``, ``eps = 1/22``); C is computed
            from ``eps`` inside the run, so ``eps`` too can be swept in one compile.
        rule, backend: as in :func:`decentral.graphs.as_sequence`.
        graph: the old name of ``graphs`` (an alias; give one of the two).

    ``validate`` refuses, in any params a run gets, a constant that is not finite, out of its
    range or not one number (a vector would apply per arm; sweep several values). A run may
    pass another ``P`` of the same structure as data (``params.environment.graphs``) only
    with the same ``|lambda_2|`` (e.g. the graph with its agents relabelled).

    Where this differs from the authors' code (damaru2/decentralized-bandits,
    ``bandit algorithms executions.py``), deliberately:

    * one gossip round per step (``P^C`` over a stage); their plain mixer multiplies by
      ``P^C`` at *each* of the C steps, and their accelerated mixer runs a whole C-round
      Chebyshev pass at each step (C^2 rounds per stage);
    * ``alpha <- beta`` copies: in their code ``alpha`` and ``beta`` (plain) or ``alpha`` and
      ``delta`` (accelerated) become the same array, so ``alpha`` also receives ``gamma`` at
      weight 1, or the 1/N own additions leak into ``delta``;
    * ``alpha = beta / N`` at the start (their code divides by K);
    * every agent of a step uses the same ``s(t)``; in their sequential loop agent i sees i
      more pulls;
    * ``lambda_2`` is the second-largest eigenvalue *magnitude* of ``P`` (what bounds the
      mixing error and what the Chebyshev recursion needs); their code takes the second-largest
      signed eigenvalue, which differs only when a negative eigenvalue dominates.

    ``policy.config["mixing_rounds"]`` is C for the default params (a swept ``eps`` gets its
    own C inside the run, the same formula in the run's dtype).

    Raises:
        ValueError: a time-varying sequence or list of graphs, a directed graph, what
            ``as_sequence`` refuses (an adjacency without self-loops), weights that are not
            symmetric doubly stochastic, ``|lambda_2| = 1`` (disconnected or periodic),
            invalid constants (NaN, negative, not one number, ``eps`` outside ``(0, 1)``).

    Example:
        >>> import decentral.graphs as g
        >>> pol = dducb(g.ring(4, directed=False), accelerated=True)
        >>> pol.config["mixing_rounds"], round(pol.config["lambda_2"], 6)
        (4, 0.333333)
    """
    why = ("its stage length C = ceil(ln(N/eps)/ln(1/|lambda_2|)) and the Chebyshev recursion "
           "come from the spectrum of one fixed gossip matrix P")
    seq = _static_sequence(_graphs_argument(graphs, graph, "dducb"), "dducb", why, rule,
                           backend)
    W = _gossip_matrix(seq)
    n = W.shape[0]
    lam = second_eigenvalue_magnitude(W)
    params = _validate_dducb(DDUCBParams(exploration_eta, reward_sd, consensus_precision))
    params = DDUCBParams(*(float(v) for v in params))
    rounds = dducb_mixing_rounds(lam, n, params.consensus_precision, accelerated=accelerated)
    log_inv = math.inf if lam < _EXACT_MIXING else -math.log(lam)
    select, communicate = _dducb_functions(bool(accelerated), log_inv, lam)
    return Policy(name="dducb", init=_dducb_init(bool(accelerated)), select=select,
                  update=_dducb_update, params=params, validate=_validate_dducb,
                  communicate=communicate, graphs=seq, num_agents=n,
                  config={"policy": "dducb", "accelerated": bool(accelerated),
                          "lambda_2": lam, "mixing_rounds": rounds},
                  validate_graphs=_dducb_graph_check(lam))
