"""The linear actor-critic itself: local rules, params and state, and the factories
:func:`linear_actor_critic` and :func:`rpbcac` (equations and order of operations in
:mod:`decentral.resilient_ac.linear`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from decentral.graphs import GraphSequence, as_sequence, as_table, gather
from decentral.hypotheses import warn_hypothesis
from decentral.schedules import StepSize, polynomial, satisfies_robbins_monro, validate_step_size

from ..aggregators import get_aggregator
from ..attackers import Attacker, replace_byzantine_messages
from ..consensus import (
    _byzantine_layout,
    _check_byzantine,
    _check_H,
    _hypotheses_once,
    check_hypotheses,
)
from ..projection import projection_step
from .adversaries import (
    TARGET_AVERAGE_REWARD,
    TARGET_CRITIC,
    TARGET_TEAM_REWARD,
    LinearAttackContext,
)
from .mdp import (
    FiniteMDP,
    _check_discount,
    num_actions_per_agent,
    validate_mdp,
)
from .rules import (
    actor_step,
    linear_actor_step,
    local_critic_step,
    local_reward_step,
    policy_score,
)

__all__ = ["LinearACParams", "LinearACState", "LinearACInfo", "linear_params",
           "linear_actor_critic", "rpbcac", "CONSENSUS_VARIANTS", "local_critic_step",
           "local_reward_step", "policy_score", "linear_actor_step", "actor_step",
           "estimates_of", "parameters_of"]

#: The consensus variants of the critic / team-reward step (a contract).
CONSENSUS_VARIANTS = ("projection", "trimmed", "mean")

_DEFAULT_AGGREGATOR = {"projection": "wmsr", "trimmed": "trimmed_mean", "mean": "mean"}


# =============================================================================================
# params, state, info
# =============================================================================================

class LinearACParams(NamedTuple):
    """What a user sweeps (data). Checked wherever it arrives: :func:`linear_params` and the
    algorithm's ``check_params`` (which :func:`~decentral.runner.run` calls on every run's
    params, each swept value too) apply the same checks.

    Attributes:
        mdp: the :class:`FiniteMDP` (arrays).
        critic_step: :class:`~decentral.schedules.StepSize` ``beta_{v,t}`` (critic, team reward,
            average reward), evaluated at the 0-based update index.
        actor_step: ``beta_{theta,t}`` (a step size; the actor's update itself is
            :func:`linear_actor_step`).
        discount: ``gamma`` in ``[0, 1)`` (unused by the average-reward criterion).
        critic0: ``[N, d_v]`` initial critic parameters.
        team_reward0: ``[N, d_f]`` initial team-reward parameters.
        policy0: ``[N, M, d_p]`` initial policy parameters.
        init_noise: standard deviation of a normal perturbation of ``critic0`` and
            ``team_reward0`` drawn per agent and seed from the init key (0: none).
        attacker: the attacker's params (None: its defaults).
        H: None (the algorithm's ``H``), or an integer scalar >= 0 (int32): the Byzantine
            in-neighbours the aggregation tolerates in this run, so that one compiled algorithm
            sweeps ``H`` (``vmap`` over params, or the runner's ``sweep``). A data ``H`` takes
            the aggregators' pairwise-rank path (``O(K^2)`` per receiver instead of
            ``O(K H)``), with the same result. Every value is checked (a bool, a float or a
            negative H is refused, never truncated), swept values too, and the W-MSR
            hypotheses are checked (as warnings) with the run's ``H`` and graphs when a run
            starts. Not for ``consensus="mean"`` (which trims nothing).
        graphs: None (the algorithm's graphs), or another
            :class:`~decentral.graphs.GraphSequence` of exactly the structure the algorithm
            was built with (N, backend, form, rule, table width): the run reads who hears whom
            (and, for ``"mean"``, the weights) from this one, so that one compiled algorithm
            sweeps several graphs. Checked when a run starts like the factory's graphs:
            structure, row-stochastic weights for ``"mean"``, and the W-MSR hypotheses as
            warnings.
    """

    mdp: FiniteMDP
    critic_step: StepSize
    actor_step: StepSize
    discount: Any
    critic0: Any
    team_reward0: Any
    policy0: Any
    init_noise: Any = 0.0
    attacker: Any = None
    H: Any = None
    graphs: Any = None


class LinearACState(NamedTuple):
    """One seed's state.

    Attributes:
        s: int32, the current MDP state ``s_t``.
        critic: ``[N, d_v]`` ``v^i``.
        team_reward: ``[N, d_f]`` ``lambda^i``.
        policy: ``[N, M, d_p]`` ``theta^i``.
        average_reward: ``[N]`` ``mu^i`` (average-reward criterion; stays 0 otherwise).
        attacker: the attacker's states (critic, team reward, average reward).
    """

    s: jax.Array
    critic: jax.Array
    team_reward: jax.Array
    policy: jax.Array
    average_reward: jax.Array
    attacker: Any


class LinearACInfo(NamedTuple):
    """Per-step diagnostics (never fed back).

    Attributes:
        state, joint_action, next_state: int32 ``s_t``, ``a_t``, ``s_{t+1}``.
        actions: ``[N]`` int32 every agent's action.
        rewards: ``[N]`` ``r^i_{t+1}``.
        td_error: ``[N]`` the local ``delta^i``.
        team_td_error: ``[N]`` the actor's ``deltã^i`` (0 without actor and for Byzantine
            agents).
    """

    state: jax.Array
    joint_action: jax.Array
    next_state: jax.Array
    actions: jax.Array
    rewards: jax.Array
    td_error: jax.Array
    team_td_error: jax.Array


def _as_schedule(x, name: str) -> StepSize:
    if isinstance(x, StepSize):
        try:
            return validate_step_size(x)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    raise ValueError(f"{name} must be a decentral.schedules.StepSize (e.g. "
                     f"schedules.polynomial(1.0, 0.65)); got {type(x).__name__}.")


def _param_array(x, shape, name: str) -> np.ndarray:
    arr = np.asarray(x, np.float64)
    try:
        arr = np.broadcast_to(arr, shape)
    except ValueError:
        raise ValueError(f"{name} must broadcast to {shape}; got shape {arr.shape}.") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} holds NaN or infinite entries.")
    return np.array(arr)


def _check_H_field(ph, consensus: str | None = None):
    """``params.H``: None, or an integer scalar >= 0 (a Python int when concrete; a traced
    int32 stays traced, its static dtype and shape checked). The one check of a data ``H``,
    made by the algorithm's ``check_params`` on every run's params and by its step."""
    if ph is None:
        return None
    if consensus == "mean":
        raise ValueError("params.H is set, but consensus='mean' trims nothing: leave "
                         "params.H as None.")
    if jnp.shape(ph) != ():
        raise ValueError(f"params.H must be a scalar int (one H per run; sweep it with the "
                         f"runner's sweep); got shape {jnp.shape(ph)}.")
    dt = jnp.result_type(ph)
    if dt == jnp.bool_ or not jnp.issubdtype(dt, jnp.integer):
        # the dtype is static, so this holds under jit too (a traced 1.5 would trim 2)
        raise ValueError(f"params.H must be an integer (build params with "
                         f"linear_params(..., H=1)); got dtype {dt}.")
    if isinstance(ph, jax.core.Tracer):
        return ph
    value = int(np.asarray(ph)[()])
    if value < 0:
        raise ValueError(f"params.H must be a non-negative int; got {value}.")
    return value


def _real_finite(x, name: str, shape: tuple | None = None) -> None:
    arr = np.asarray(x)
    if arr.dtype == object or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number) \
            or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must hold real numbers; got dtype {arr.dtype}.")
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} must be {shape}; got {arr.shape} (build params with "
                         "linear_params(mdp)).")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} holds NaN or infinite entries.")


def _check_linear_params(params, *, n: int | None = None, entry: bool = True) -> int:
    """The one check of a :class:`LinearACParams` (the fields the algorithm reads): the MDP,
    the step sizes, the discount, the initial parameters' shapes against the MDP (and ``n``
    agents when given) and finiteness, ``init_noise``, ``H`` (see :func:`_check_H_field`).
    ``entry``: the params of one run (step-size fields are scalars); False for
    :func:`linear_params`'s output, whose step sizes may carry a sweep axis. Returns ``M``.
    The graphs and the attacker params are the algorithm's to check (they depend on it)."""
    if not isinstance(params, LinearACParams):
        raise ValueError(f"params must be LinearACParams (linear_params(mdp)); got "
                         f"{type(params).__name__}.")
    mdp = params.mdp
    if not isinstance(mdp, FiniteMDP):
        raise ValueError(f"params.mdp must be a FiniteMDP (see random_mdp); got "
                         f"{type(mdp).__name__}.")
    try:
        validate_mdp(mdp)
    except ValueError as exc:
        raise ValueError(f"params.{exc}" if str(exc).startswith("mdp.") else
                         f"params.mdp: {exc}") from None
    if n is not None and mdp.num_agents != n:
        raise ValueError(f"params.mdp has {mdp.num_agents} agents; the graphs have N = {n}.")
    N, M = mdp.num_agents, num_actions_per_agent(mdp)
    for name in ("critic_step", "actor_step"):
        sched = _as_schedule(getattr(params, name), f"params.{name}")
        if entry and any(np.ndim(x) != 0 for x in sched):
            raise ValueError(f"params.{name} must have scalar fields (one schedule per run; "
                             f"sweep them with the runner's sweep); got shapes "
                             f"{[np.shape(x) for x in sched]}.")
    _check_discount(params.discount, "params.discount")
    want = {"critic0": (N, np.shape(mdp.state_features)[1]),
            "team_reward0": (N, np.shape(mdp.reward_features)[2]),
            "policy0": (N, M, np.shape(mdp.policy_features)[1])}
    for name, shape in want.items():
        _real_finite(getattr(params, name), f"params.{name}", shape)
    _real_finite(params.init_noise, "params.init_noise", ())
    if float(np.asarray(params.init_noise)) < 0:
        raise ValueError(f"params.init_noise must be a finite number >= 0; got "
                         f"{params.init_noise!r}.")
    _check_H_field(params.H)
    return M


def _step_size_hypotheses(critic_step: StepSize, actor_step: StepSize) -> None:
    """The two-time-scale hypotheses as warnings (Robbins-Monro steps, actor slower)."""
    for name, sched in (("critic_step", critic_step), ("actor_step", actor_step)):
        if np.ndim(sched.alpha0) == 0 and not satisfies_robbins_monro(sched):
            warn_hypothesis(f"{name} = {float(sched.alpha0):g} / (t + {float(sched.t0):g})^"
                            f"{float(sched.power):g} is not Robbins-Monro (power must lie in "
                            "(0.5, 1])", stacklevel=3)
    if all(np.ndim(x) == 0 for x in (*critic_step, *actor_step)):
        pv, pt = float(critic_step.power), float(actor_step.power)
        if pt <= pv:
            warn_hypothesis(f"beta_theta / beta_v does not tend to 0 (actor power {pt:g} <= "
                            f"critic power {pv:g}): the actor is not on the slower time scale",
                            stacklevel=3)


def linear_params(mdp: FiniteMDP, *, critic_step: StepSize | None = None,
                  actor_step: StepSize | None = None, discount: float = 0.9,
                  critic0=0.0, team_reward0=0.0, policy0=0.0, init_noise: float = 0.0,
                  attacker: Any = None, graphs=None, H: int | None = None,
                  dtype=None, graph=None) -> LinearACParams:
    """Validated :class:`LinearACParams` (host-side checks; hypotheses as warnings).

    Defaults: ``beta_{v,t} = (t + 1)^-0.65``, ``beta_{theta,t} = (t + 1)^-0.85``, ``gamma =
    0.9``, zero initial parameters.

    Warns (:class:`~decentral.hypotheses.HypothesisWarning`) when a step size is not
    Robbins-Monro (``sum beta = inf``, ``sum beta^2 < inf``: power in ``(0.5, 1]``) or when
    ``beta_theta / beta_v`` does not tend to 0 (actor power not above the critic's, or equal
    powers with ``alpha0`` ratio not 0): the two-time-scale hypotheses.

    ``graphs`` (optional): the graphs of this run, anything
    :func:`decentral.graphs.as_sequence` accepts (an adjacency without a rule gets
    ``rule="row"``, as in :func:`linear_actor_critic`); a run refuses a sequence of another
    structure than the algorithm's (see :class:`LinearACParams`). ``graph=`` is its older
    name (give one of the two). ``H`` (optional): an int >= 0 that replaces the algorithm's
    ``H`` (see :class:`LinearACParams`).

    Raises:
        ValueError: an invalid MDP, step size, discount outside ``[0, 1)``, initial values of
            the wrong shape or not finite, negative ``init_noise``, graphs that
            ``as_sequence`` refuses or with another number of agents than the MDP, ``H`` not
            an int >= 0 (the same checks as the algorithm's ``check_params``).
    """
    graphs = _graphs_alias(graphs, graph, "linear_params")
    validate_mdp(mdp)
    critic_step = _as_schedule(polynomial(1.0, 0.65) if critic_step is None else critic_step,
                               "critic_step")
    actor_step = _as_schedule(polynomial(1.0, 0.85) if actor_step is None else actor_step,
                              "actor_step")
    gamma = _check_discount(discount)
    noise = float(init_noise)
    if not (math.isfinite(noise) and noise >= 0):
        raise ValueError(f"init_noise must be a finite number >= 0; got {init_noise!r}.")
    if H is not None:
        H = jnp.asarray(_check_H(H), jnp.int32)
    N, M = mdp.num_agents, num_actions_per_agent(mdp)
    dv = np.shape(mdp.state_features)[1]
    df = np.shape(mdp.reward_features)[2]
    dp = np.shape(mdp.policy_features)[1]
    v0 = _param_array(critic0, (N, dv), "critic0")
    l0 = _param_array(team_reward0, (N, df), "team_reward0")
    t0 = _param_array(policy0, (N, M, dp), "policy0")
    _step_size_hypotheses(critic_step, actor_step)
    dt = jnp.result_type(float) if dtype is None else dtype

    def conv(a):
        return jnp.asarray(a, dt)

    mdp_dev = FiniteMDP(conv(mdp.transition), conv(mdp.rewards), conv(mdp.state_features),
                        conv(mdp.reward_features), conv(mdp.policy_features),
                        conv(mdp.initial_distribution))
    seq = None
    if graphs is not None:
        seq = as_sequence(graphs, default_rule="row")
        if seq.n != N:
            raise ValueError(f"graphs has {seq.n} agents; the MDP has N = {N} (graphs must be "
                             f"[N, N] or a sequence of N agents).")
    params = LinearACParams(mdp=mdp_dev, critic_step=StepSize(*(conv(x) for x in critic_step)),
                            actor_step=StepSize(*(conv(x) for x in actor_step)),
                            discount=conv(gamma), critic0=conv(v0), team_reward0=conv(l0),
                            policy0=conv(t0), init_noise=conv(noise), attacker=attacker,
                            H=H, graphs=seq)
    _check_linear_params(params, entry=False)
    return params


def _graphs_alias(graphs, graph, who: str):
    """``graphs``, or its older keyword ``graph`` (never both)."""
    if graph is not None:
        if graphs is not None:
            raise ValueError(f"{who}: give graphs= or its older name graph=, not both.")
        return graph
    return graphs


def estimates_of(state: LinearACState):
    """Record function: ``(critic [N, d_v], team_reward [N, d_f])``."""
    return state.critic, state.team_reward


def parameters_of(state: LinearACState):
    """Record function: ``(critic, team_reward, policy)``."""
    return state.critic, state.team_reward, state.policy


# =============================================================================================
# the algorithm
# =============================================================================================

def _next_state(key, probs):
    """Inverse-CDF draw from ``probs [S]`` (one uniform); never a zero-probability state."""
    c = jnp.cumsum(probs)
    c = c / c[-1]
    S = probs.shape[0]
    last = S - 1 - jnp.argmax(probs[::-1] > 0)
    u = jax.random.uniform(key, dtype=probs.dtype)
    return jnp.minimum(jnp.sum(c <= u, dtype=jnp.int32), last.astype(jnp.int32))


def linear_actor_critic(graphs=None, *, H: int, byzantine: Sequence[int] = (),
                        attacker: Attacker | None = None, consensus: str = "projection",
                        aggregator: str | Callable | None = None,
                        criterion: str = "discounted", actor: bool = True,
                        actor_iterate: str = "post", check: bool = True,
                        check_robustness: bool | None = None, rule: str | None = None,
                        backend: str | None = None, graph=None):
    """The linear consensus actor-critic as a runner ``Algorithm`` (equations and order of
    operations: :mod:`decentral.resilient_ac.linear`).

    Args:
        graphs: the sequence ``t -> G_t``: anything :func:`decentral.graphs.as_sequence`
            accepts (a ``GraphSequence`` of any form and backend, a weight matrix, or a boolean
            adjacency with self-loops, ``adj[i, j]``: i hears j; an adjacency without ``rule``
            gets ``rule="row"``). ``"projection"`` and ``"trimmed"`` read only who hears whom;
            ``consensus="mean"`` mixes with the weights, which must be row-stochastic (an
            adjacency: uniform over the in-neighbours and the agent itself). ``graph=`` is the
            older name of this argument (give one of the two).
        H: Byzantine in-neighbours tolerated by the aggregation (``0`` for ``"mean"``).
        byzantine: the Byzantine agents' indices.
        attacker: what the Byzantine agents send (any
            :class:`~decentral.resilient_ac.Attacker`; :func:`feature_extreme` is the
            per-coordinate-extreme attack). Called once per step for the critic messages, once
            for the team-reward messages (and once for the average reward), each with a
            :class:`LinearAttackContext` and the honest messages as ``values``.
        consensus: ``"projection"`` (the paper's method), ``"trimmed"`` (element-wise
            baseline) or ``"mean"`` (Zhang et al.).
        aggregator: the resilient rule (default W-MSR for ``"projection"``, the element-wise
            trimmed mean for ``"trimmed"``); any name of
            :data:`~decentral.resilient_ac.AGGREGATORS` (aliases accepted) or a callable
            ``(values, mask, H)``. Not used by ``"mean"``.
        criterion: ``"discounted"`` (default) or ``"average"``.
        actor: False keeps every policy fixed (the critic / team-reward theorem).
        actor_iterate: ``"post"`` (default: the actor reads the post-consensus ``v, lambda``)
            or ``"pre"`` (the local-step ``v~, lambda~``).
        check: check the W-MSR hypotheses and warn (:func:`~decentral.resilient_ac.
            check_hypotheses`; for ``"mean"`` with ``H = 0``), here on the factory's graphs
            and, when a run starts, on ``params.graphs`` with ``params.H``.
        check_robustness: as in :func:`~decentral.resilient_ac.check_hypotheses`.
        rule, backend: as in :func:`decentral.graphs.as_sequence`.

    Returns:
        An ``Algorithm`` with state :class:`LinearACState`, params :class:`LinearACParams`
        (:func:`linear_params`; checked by its ``check_params`` wherever they arrive, each
        swept value too: the MDP and its agent count, step sizes, discount, initial values,
        ``init_noise``, ``H``, the attacker params, ``graphs``), info :class:`LinearACInfo`.
        A run that diverges advises reducing the step sizes.

    Raises:
        ValueError: ``graphs`` not accepted by ``as_sequence``, an unknown option, bad ``H``
            (negative, or nonzero with ``"mean"``), Byzantine indices that are not integers
            in ``[0, N)`` (or repeat), a missing attacker, ``"mean"`` over a sequence some of
            whose matrices are not row-stochastic.
    """
    from decentral.runner import Algorithm

    graphs = _graphs_alias(graphs, graph, "linear_actor_critic")
    if graphs is None:
        raise ValueError("linear_actor_critic needs graphs (a GraphSequence, a weight matrix "
                         "or a boolean adjacency).")
    seq = as_sequence(graphs, rule=rule, backend=backend, default_rule="row")
    H = _check_H(H)
    if consensus not in CONSENSUS_VARIANTS:
        raise ValueError(f"consensus must be one of {CONSENSUS_VARIANTS}; got {consensus!r}.")
    if criterion not in ("discounted", "average"):
        raise ValueError(f"criterion must be 'discounted' or 'average'; got {criterion!r}.")
    if actor_iterate not in ("post", "pre"):
        raise ValueError(f"actor_iterate must be 'post' or 'pre'; got {actor_iterate!r}.")
    if consensus == "mean" and H != 0:
        raise ValueError("consensus='mean' is plain averaging (Zhang et al.), which trims "
                         f"nothing: pass H=0 (got H={H}).")
    byz = _check_byzantine(byzantine, seq.n)
    if byz and attacker is None:
        raise ValueError("byzantine agents need an attacker (e.g. linear.feature_extreme()).")
    if attacker is not None and not isinstance(attacker, Attacker):
        raise ValueError(f"attacker must be a resilient_ac.Attacker; got "
                         f"{type(attacker).__name__}.")
    agg_name = _DEFAULT_AGGREGATOR[consensus] if aggregator is None else aggregator
    agg = get_aggregator(agg_name)
    if consensus == "mean":            # mixes by the weights: the same check as every family
        from decentral.graphs import require_stochastic_sequence

        require_stochastic_sequence(seq, "row", who="consensus='mean' (Zhang et al.'s "
                                                    "weighted average)")
    if check:
        check_hypotheses(seq, H, byz, check_robustness=check_robustness)
    n = seq.n
    coop, slot, byz_arr = _byzantine_layout(n, byz)
    attacked = attacker is not None and bool(byz)
    average = criterion == "average"
    if attacked:
        attacker.validate_params(None, name="attacker.params")

    def check_params(params) -> None:
        _check_linear_params(params, n=n)
        _check_H_field(params.H, consensus)
        if attacked and params.attacker is not None:
            attacker.validate_params(params.attacker)
        if params.graphs is not None:
            seq.require_same_structure(params.graphs)
            if consensus == "mean":
                from decentral.graphs import require_stochastic_sequence

                require_stochastic_sequence(params.graphs, "row",
                                            who="consensus='mean' (params.graphs)")
        if check and (params.graphs is not None or params.H is not None):
            h = H if params.H is None else int(np.asarray(params.H))
            where = ("params.graphs" if params.graphs is not None else "the graphs") + \
                (f" with params.H = {h}" if params.H is not None else "")
            _hypotheses_once(seq if params.graphs is None else params.graphs, h, byz,
                             check_robustness, where)

    def _graph(t, key, params):
        """The table of step ``t`` of the run's graphs (``params.graphs`` or the factory's);
        the sequence decides whether ``key`` is used (per-seed random draws)."""
        graphs_t = seq if params.graphs is None else params.graphs
        return as_table(graphs_t.at(t, key))

    def _run_H(params: LinearACParams):
        """The run's H: the algorithm's (a Python int), or ``params.H`` (an int when concrete,
        a traced int32 inside jit / vmap; its static dtype and shape are checked here too)."""
        ph = _check_H_field(params.H, consensus)
        return H if ph is None else ph

    def _shapes(params: LinearACParams):
        mdp = params.mdp
        if mdp.rewards.shape[0] != n:
            raise ValueError(f"the MDP has {mdp.rewards.shape[0]} agents; the graph has {n}.")
        M = num_actions_per_agent(mdp)
        want = {"critic0": (n, mdp.state_features.shape[1]),
                "team_reward0": (n, mdp.reward_features.shape[2]),
                "policy0": (n, M, mdp.policy_features.shape[1])}
        for name, shape in want.items():
            if tuple(jnp.shape(getattr(params, name))) != shape:
                raise ValueError(f"params.{name} must be {shape}; got "
                                 f"{tuple(jnp.shape(getattr(params, name)))} (build params "
                                 "with linear_params(mdp)).")
        return M

    def _ctx(table, feature, target, rewards=None, next_feature=None, step_size=None,
             discount=None):
        return LinearAttackContext(table, byz_arr, coop, feature, jnp.int32(target), rewards,
                                   next_feature, step_size, discount)

    def init(key, params: LinearACParams) -> LinearACState:
        _shapes(params)
        mdp = params.mdp
        k_s, k_v, k_l, k_a = jax.random.split(key, 4)
        dtype = jnp.result_type(params.critic0)
        p0 = jnp.asarray(mdp.initial_distribution)
        s0 = _next_state(k_s, p0)
        v = params.critic0 + params.init_noise * jax.random.normal(k_v, params.critic0.shape,
                                                                   dtype)
        lam = params.team_reward0 + params.init_noise * jax.random.normal(
            k_l, params.team_reward0.shape, dtype)
        mu = jnp.zeros((n,), dtype)
        astate = ()
        if attacked:
            table = _graph(0, k_a, params)
            ap = attacker.params if params.attacker is None else params.attacker
            astate = (attacker.init(k_a, ap, v, _ctx(table, mdp.state_features[s0], 0)),
                      attacker.init(k_a, ap, lam, _ctx(table, mdp.reward_features[s0, 0], 1)),
                      attacker.init(k_a, ap, mu, _ctx(table, jnp.ones((), dtype), 2)))
        return LinearACState(s0, v, lam, jnp.asarray(params.policy0), mu, astate)

    def _combine(table, own, msgs_honest, feature, beta, astate, params, key, t, target,
                 rewards, next_feature=None):
        """Gather, replace the Byzantine messages, aggregate; the new values ``[N, ...]``."""
        h = _run_H(params)
        gathered = gather(table, msgs_honest)                            # [N, K, ...]
        if attacked:
            ap = attacker.params if params.attacker is None else params.attacker
            ctx = _ctx(table, feature, target, rewards, next_feature, beta,
                       None if average else params.discount)
            astate, sent = attacker.advance(key, astate, ap, t, msgs_honest, ctx)
            want = (len(byz),) + msgs_honest.shape
            if tuple(sent.shape) != want:
                raise ValueError(f"attacker {attacker.name!r} returned messages of shape "
                                 f"{tuple(sent.shape)}; expected [B, N, ...] = {want}.")
            gathered = replace_byzantine_messages(table, gathered, slot,
                                                  sent.astype(msgs_honest.dtype))
        if consensus == "mean":
            w = jnp.where(table.mask, table.weight, 0).astype(gathered.dtype)
            w = w.reshape(w.shape + (1,) * (gathered.ndim - 2))
            out = jnp.sum(w * gathered, axis=1)
        elif consensus == "projection" and target != TARGET_AVERAGE_REWARD:
            out = jax.vmap(lambda o, g_, m: projection_step(o, g_, m, feature, beta, h, agg))(
                own, gathered, table.mask)
        else:                          # element-wise (and the scalar average reward)
            out = jax.vmap(lambda g_, m: agg(g_, m, h))(gathered, table.mask)
        cm = coop.reshape((n,) + (1,) * (msgs_honest.ndim - 1))
        return jnp.where(cm, out.astype(msgs_honest.dtype), msgs_honest), astate

    def step(key, state: LinearACState, params: LinearACParams, t, x_t):
        M = _shapes(params)
        mdp = params.mdp
        k_act, k_next, k_graph, k_a1, k_a2, k_a3 = jax.random.split(key, 6)
        beta_v = params.critic_step(t).astype(state.critic.dtype)
        beta_th = params.actor_step(t).astype(state.critic.dtype)
        gamma = params.discount
        s = state.s
        pf = mdp.policy_features[s]                                      # [d_p]
        logits = jnp.einsum("nmd,d->nm", state.policy, pf)
        actions = jax.random.categorical(k_act, logits, axis=-1).astype(jnp.int32)
        strides = jnp.asarray(M ** np.arange(n - 1, -1, -1), jnp.int32)
        joint = jnp.sum(actions * strides)
        s_next = _next_state(k_next, mdp.transition[s, joint])
        rewards = mdp.rewards[:, s, joint]                               # [N]
        phi, phi_next = mdp.state_features[s], mdp.state_features[s_next]
        f = mdp.reward_features[s, joint]
        mu = state.average_reward if average else None
        v_loc, delta = jax.vmap(local_critic_step, in_axes=(0, None, None, 0, None, None,
                                                            0 if average else None))(
            state.critic, phi, phi_next, rewards, gamma, beta_v, mu)
        lam_loc = jax.vmap(local_reward_step, in_axes=(0, None, 0, None))(
            state.team_reward, f, rewards, beta_v)
        table = _graph(t, k_graph, params)
        ast = state.attacker if attacked else ((), (), ())
        v_new, a1 = _combine(table, state.critic, v_loc, phi, beta_v, ast[0], params, k_a1, t,
                             TARGET_CRITIC, rewards, phi_next)
        lam_new, a2 = _combine(table, state.team_reward, lam_loc, f, beta_v, ast[1], params,
                               k_a2, t, TARGET_TEAM_REWARD, rewards)
        a3 = ast[2]
        mu_loc = mu_new = state.average_reward
        if average:
            mu_loc = (1 - beta_v) * state.average_reward + beta_v * rewards
            mu_new, a3 = _combine(table, state.average_reward, mu_loc,
                                  jnp.ones((), mu_loc.dtype), beta_v, ast[2], params, k_a3, t,
                                  TARGET_AVERAGE_REWARD, rewards)
        theta = state.policy
        team_td = jnp.zeros_like(rewards)
        if actor:
            v_a, lam_a, mu_a = ((v_new, lam_new, mu_new) if actor_iterate == "post"
                                else (v_loc, lam_loc, mu_loc))
            rbar = lam_a @ f
            if average:
                team_td = rbar - mu_a + v_a @ phi_next - v_a @ phi
            else:
                team_td = rbar + gamma * (v_a @ phi_next) - v_a @ phi
            team_td = jnp.where(coop, team_td, 0)
            theta_new = jax.vmap(linear_actor_step, in_axes=(0, None, 0, 0, None))(
                theta, pf, actions, team_td, beta_th)
            theta = jnp.where(coop[:, None, None], theta_new, theta)
        new = LinearACState(s_next, v_new, lam_new, theta, mu_new,
                            (a1, a2, a3) if attacked else ())
        info = LinearACInfo(s, joint, s_next, actions, rewards, delta, team_td)
        return new, info

    name = f"rpbcac.{consensus}"
    config = _config(seq, H, byz, attacker, agg_name, consensus, criterion, actor,
                     actor_iterate)
    return Algorithm(init=init, step=step, name=name, version="1", max_horizon=seq.length,
                     config=config, check_params=check_params,
                     divergence_hint="reduce params.critic_step (the critic / team-reward "
                                     "step size) or params.actor_step")


def rpbcac(graphs=None, *, H: int, byzantine: Sequence[int] = (),
           attacker: Attacker | None = None, consensus: str = "projection", graph=None,
           **options):
    """Resilient projection-based consensus actor-critic (Figura, Lin, Liu, Gupta,
    arXiv:2111.06776), linear function approximation; **the equations are our reconstruction**
    (:mod:`decentral.resilient_ac.linear`).

    ``rpbcac`` is the paper's name for :func:`linear_actor_critic` with
    ``consensus="projection"``, the paper's method, and the same function: every argument
    (``graphs`` with its older name ``graph=``, ``rule``, ``backend``, ...) is
    :func:`linear_actor_critic`'s. ``consensus="trimmed"`` and ``"mean"`` give the element-wise
    and the Zhang et al. (arXiv:1802.08757, Algorithm 2) baselines, as there.

    Example:
        >>> import decentral.graphs as g
        >>> from decentral.resilient_ac.linear import feature_extreme
        >>> alg = rpbcac(g.complete(5), H=1, byzantine=[4], attacker=feature_extreme(),
        ...              actor=False)
        >>> alg.name, alg.config["consensus"], alg.config["aggregator"]
        ('rpbcac.projection', 'projection', 'wmsr')
    """
    return linear_actor_critic(graphs, H=H, byzantine=byzantine, attacker=attacker,
                               consensus=consensus, graph=graph, **options)


def _config(seq: GraphSequence, H, byz, attacker, agg_name, consensus, criterion, actor,
            actor_iterate) -> dict:
    """A readable description of what the functions close over (the checkpoint fingerprint
    also holds the traced program, which sees the attacker's and aggregator's code)."""
    from decentral.runner.fingerprint import hash_tree

    att = None if attacker is None else {"name": attacker.name,
                                         "params": hash_tree(attacker.params)}
    agg = agg_name if isinstance(agg_name, str) else getattr(agg_name, "__qualname__",
                                                             "callable")
    return {"graphs": seq.digest(), "H": H, "byzantine": list(byz), "attacker": att,
            "aggregator": agg, "consensus": consensus, "criterion": criterion,
            "actor": bool(actor), "actor_iterate": actor_iterate}
