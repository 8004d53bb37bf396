"""Resilient consensus actor-critic with linear function approximation (RPBCAC, linear case).

Figura, Lin, Liu, Gupta, "Resilient Consensus-based Multi-agent Reinforcement Learning with
Function Approximation", arXiv:2111.06776, built on the networked actor-critic of Zhang, Yang,
Liu, Zhang, Başar, "Fully Decentralized Multi-Agent Reinforcement Learning with Networked
Agents", ICML 2018 (arXiv:1802.08757), Algorithm 2.

**The linear equations below are OUR RECONSTRUCTION** from the paper's description (abstract,
figure captions) and the authors' code: the body text of the paper, with its exact equations,
was not available. The reconstruction and its derivations are in ``docs/resilient_linear.md``.

Setting. ``N`` agents see the global state ``s`` of a finite MDP and the joint action
``a = (a^1, ..., a^N)``; agent ``i`` receives a private reward ``r^i(s, a)``. The team objective
is the discounted return of the cooperative agents' average reward. Every agent keeps a linear
critic ``V(s; v) = phi(s)^T v``, a linear team-reward model ``rbar(s, a; lambda) = f(s, a)^T
lambda`` and a softmax policy over its own actions with logits ``theta^i phi_pi(s)``.

One iteration ``t`` (0-based), in this order:

1. every agent samples ``a^i ~ pi^i(. | s_t; theta^i)``; the MDP moves to ``s_{t+1}`` and pays
   ``r^i_{t+1} = r^i(s_t, a_t)``;
2. local step of every agent (fast step ``beta_v = beta_{v,t}``)::

       delta^i   = r^i + gamma phi(s_{t+1})^T v^i - phi(s_t)^T v^i
       v~^i      = v^i + beta_v delta^i phi(s_t)
       lambda~^i = lambda^i + beta_v (r^i - f_t^T lambda^i) f_t          f_t = f(s_t, a_t)

   (average-reward criterion: ``delta^i = r^i - mu^i + phi(s_{t+1})^T v^i - phi(s_t)^T v^i``
   and ``mu~^i = (1 - beta_v) mu^i + beta_v r^i``);
3. every agent sends ``v~^i, lambda~^i`` (and ``mu~^i``) to its out-neighbours; a Byzantine
   agent's messages come from an :class:`~decentral.resilient_ac.Attacker`, per receiver;
4. consensus of every cooperative receiver ``i`` over the received values (own at ``k = 0``):

   * ``consensus="projection"`` (the paper's resilient projection-based consensus): each
     received parameter is projected onto the current feature,
     ``e^{ij} = (v~^j - v^i)^T phi_t / (beta_v ||phi_t||^2)``, the scalars are aggregated with
     W-MSR, ``ebar^i = WMSR_H({e^{ij}})``, and ``v^i <- v^i + beta_v ebar^i phi_t``; the same for
     ``lambda`` with ``f_t`` (:func:`~decentral.resilient_ac.projection_step`). The new
     prediction is ``phi_t^T v^i_{t+1} = WMSR_H({phi_t^T v~^j})``;
   * ``consensus="trimmed"`` (the baseline "method of trimmed means"): every coordinate of the
     received parameters is aggregated on its own (element-wise trimmed mean by default);
   * ``consensus="mean"`` (Zhang et al. step 7, not resilient, ``H = 0``):
     ``v^i <- sum_j c(i, j) v~^j`` with the graph's row-stochastic weights;

   ``mu`` (average reward only) is a scalar and is aggregated directly;
5. actor (slow step ``beta_theta = beta_{theta,t}``) of every cooperative agent::

       deltã^i  = f_t^T lambda^i + gamma phi(s_{t+1})^T v^i - phi(s_t)^T v^i
       theta^i <- theta^i + beta_theta deltã^i psi^i,   psi^i = grad log pi^i(a^i | s_t)

   with the post-consensus iterates ``v^i_{t+1}, lambda^i_{t+1}`` (``actor_iterate="post"``,
   default) or the local-step ones ``v~^i, lambda~^i`` (``"pre"``). Byzantine agents act with
   their initial policy forever (a stationary policy, as the paper's actor result assumes).

Step sizes are data (:class:`LinearACParams`): ``beta_{v,t} = (t + 1)^-0.65`` and
``beta_{theta,t} = (t + 1)^-0.85`` by default, evaluated at the 0-based update index ``t``
(the first update uses ``t = 0``, i.e. steps of 1). ``actor=False`` keeps every policy at its
initial value (the fixed-policy mode of the critic / team-reward theorem).

The MDP is data too (:class:`FiniteMDP`, a NamedTuple of arrays inside the params), so one
compiled algorithm serves any MDP of the same sizes; :func:`random_mdp` draws one and
:func:`exact_references` computes what the critic and the team-reward model converge to.

Example:
    >>> import jax, decentral.graphs as g
    >>> from decentral.runner import run
    >>> mdp = random_mdp(jax.random.key(0), num_states=4, num_actions_per_agent=2,
    ...                  num_agents=5, feature_dim=3)
    >>> alg = rpbcac(g.complete(5), H=1, byzantine=[4], attacker=feature_extreme())
    >>> res = run(alg, linear_params(mdp), seeds=[0, 1], num_steps=200)
    >>> res.final_state.critic.shape                       # [seeds, agents, d]
    (2, 5, 3)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from decentral.datasets.figura2021 import EXAMPLE1_FEATURES, EXAMPLE1_REWARDS, example1_mdp
from decentral.graphs import GraphSequence, as_sequence, as_table, gather
from decentral.hypotheses import warn_hypothesis
from decentral.schedules import StepSize, polynomial, satisfies_robbins_monro, validate_step_size

from .aggregators import get_aggregator
from .attackers import Attacker, receiver_views, replace_byzantine_messages
from .consensus import (
    _byzantine_layout,
    _check_byzantine,
    _check_H,
    _hypotheses_once,
    check_hypotheses,
)
from .mdp import (
    FiniteMDP,
    LinearReferences,
    _check_discount,
    exact_references,
    joint_policy,
    num_actions_per_agent,
    random_mdp,
    validate_mdp,
)
from .projection import projection_step

__all__ = [
    "FiniteMDP", "random_mdp", "validate_mdp", "num_actions_per_agent", "joint_policy",
    "LinearReferences", "exact_references",
    "LinearAttackContext", "feature_extreme", "greedy_adversary", "faulty_adversary",
    "malicious_adversary", "ADVERSARIES",
    "LinearACParams", "LinearACState", "LinearACInfo", "linear_params",
    "linear_actor_critic", "rpbcac", "CONSENSUS_VARIANTS",
    "local_critic_step", "local_reward_step", "policy_score", "linear_actor_step", "actor_step",
    "estimates_of", "parameters_of",
    "example1_mdp", "example1_attacker", "example1_figure_data", "EXAMPLE1_FEATURES",
    "EXAMPLE1_REWARDS",
]

#: The consensus variants of the critic / team-reward step (a contract).
CONSENSUS_VARIANTS = ("projection", "trimmed", "mean")

_DEFAULT_AGGREGATOR = {"projection": "wmsr", "trimmed": "trimmed_mean", "mean": "mean"}

#: ``LinearAttackContext.target`` codes: what a message is a parameter of.
TARGET_CRITIC, TARGET_TEAM_REWARD, TARGET_AVERAGE_REWARD = 0, 1, 2


# =============================================================================================
# the per-coordinate-extreme attack on linear parameters
# =============================================================================================

class LinearAttackContext(NamedTuple):
    """:class:`~decentral.resilient_ac.AttackContext` plus what a linear attacker may use.

    Attributes:
        table: this step's in-neighbour table.
        byzantine: ``[B]`` int32 Byzantine indices.
        cooperative: ``[N]`` bool.
        feature: the current feature of the parameter attacked: ``phi(s_t)`` for the critic,
            ``f(s_t, a_t)`` for the team-reward model, ``1`` for the average reward.
        target: int32, 0 critic, 1 team-reward model, 2 average reward.
        rewards: ``[N]`` this step's rewards ``r^i_{t+1}`` (None at ``init``).
        next_feature: ``phi(s_{t+1})`` for the critic messages, else None.
        step_size: this step's fast step ``beta_{v,t}`` (None at ``init``).
        discount: ``gamma``, or None under the average-reward criterion.
    """

    table: Any
    byzantine: jax.Array
    cooperative: jax.Array
    feature: jax.Array
    target: jax.Array
    rewards: Any = None
    next_feature: Any = None
    step_size: Any = None
    discount: Any = None


def feature_extreme(critic: float = 1.0, team_reward: float = -1.0, *,
                    critic_target=None, team_reward_target=None) -> Attacker:
    """The per-coordinate-extreme attack on linear parameters (needs a
    :class:`LinearAttackContext`, which the algorithms of this module pass).

    For receiver ``i`` with cooperative messages ``w^j`` (its own included) and current
    feature ``x``: coordinate ``k`` of the message is ``max_j w^j_k`` where
    ``push * x_k >= 0`` and ``min_j w^j_k`` elsewhere, with ``push = critic`` for critic
    messages (default +1: push the value up) and ``push = team_reward`` for team-reward
    messages (default -1: push the estimate down); the average reward uses ``critic``. Every
    coordinate is inside the cooperative range, so element-wise trimming keeps it, while
    ``x^T message`` is at least (push up) ``max_j x^T w^j``.

    With ``critic_target`` / ``team_reward_target`` (a fixed direction, e.g. the mean feature:
    the "batch-mean feature" form of the attack) the signs of that direction replace those of
    the current feature: the attack then pushes the estimate along the fixed direction, which
    differs from the current feature in the states not visited. Note: with the current feature,
    and the cooperative agents at consensus, the honest messages differ only along ``x``, and
    the message is exactly the one of the cooperative agent with the extreme local step (see
    ``docs/resilient_linear.md``).

    Params ``{"critic", "team_reward", "critic_target", "team_reward_target"}`` (signs and
    directions; all zero directions mean "the current feature"; sweepable).

    Example:
        >>> att = feature_extreme(team_reward_target=[0.5, -0.25])
        >>> att.name, att.params["team_reward_target"].tolist()
        ('feature_extreme_fixed_direction', [0.5, -0.25])
    """

    def init(key, params, values, ctx):
        del key, params, values, ctx
        return ()

    def step(key, state, params, t, values, ctx):
        del key, t
        values = jnp.asarray(values)
        views = receiver_views(values, ctx, ctx.byzantine[0] if ctx.byzantine.shape[0] else 0)
        coop = views.cooperative.reshape(views.cooperative.shape
                                         + (1,) * (values.ndim - 1))        # [N, K, 1...]
        big = jnp.finfo(values.dtype).max
        hi = jnp.max(jnp.where(coop, views.received, -big), axis=1)
        lo = jnp.min(jnp.where(coop, views.received, big), axis=1)
        any_coop = jnp.any(views.cooperative, axis=1).reshape((-1,) + (1,) * (values.ndim - 1))
        own = views.received[:, 0]
        hi, lo = jnp.where(any_coop, hi, own), jnp.where(any_coop, lo, own)
        is_tr = ctx.target == TARGET_TEAM_REWARD
        push = jnp.where(is_tr, params["team_reward"], params["critic"])
        feature = jnp.broadcast_to(jnp.asarray(ctx.feature, values.dtype), values.shape[1:])
        if values.ndim > 1:
            fixed = jnp.where(is_tr, params["team_reward_target"], params["critic_target"])
            d = values.shape[1]
            fixed = jnp.pad(fixed, (0, max(0, d - fixed.shape[0])))[:d].astype(values.dtype)
            feature = jnp.where(jnp.any(fixed != 0), fixed, feature)
        up = push * feature >= 0
        msg = jnp.where(up, hi, lo)                                        # [N, ...]
        return jnp.broadcast_to(msg, (ctx.byzantine.shape[0],) + msg.shape), state

    tc = np.zeros(0) if critic_target is None else np.asarray(critic_target, np.float64)
    tr = np.zeros(0) if team_reward_target is None else np.asarray(team_reward_target,
                                                                   np.float64)
    width = max(tc.size, tr.size, 1)

    def pad(a):
        return jnp.asarray(np.pad(a.ravel(), (0, width - a.size)))

    params = {"critic": jnp.asarray(float(critic)),
              "team_reward": jnp.asarray(float(team_reward)),
              "critic_target": pad(tc), "team_reward_target": pad(tr)}
    name = "feature_extreme" if width == 1 and not (tc.any() or tr.any()) else \
        "feature_extreme_fixed_direction"
    return Attacker(init, step, params, name, _check_feature_extreme)


def _check_feature_extreme(params) -> None:
    """``feature_extreme``'s params: real scalar signs ``critic`` / ``team_reward``, 1-D
    finite direction vectors (zeros: the current feature)."""
    for k in ("critic", "team_reward"):
        arr = np.asarray(params[k])
        if arr.ndim != 0 or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number):
            raise ValueError(f"[{k!r}] must be one real number (the push's sign); got "
                             f"{params[k]!r}.")
    for k in ("critic_target", "team_reward_target"):
        arr = np.asarray(params[k])
        if arr.ndim != 1 or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number) \
                or not np.all(np.isfinite(arr)):
            raise ValueError(f"[{k!r}] must be a 1-D vector of finite numbers (all zeros: "
                             f"the current feature); got shape {arr.shape}.")


# =============================================================================================
# the learning adversaries of the experiments, as stateful attackers
# =============================================================================================

def _broadcast(msg, ctx):
    """``[B, ...]`` per-sender messages -> ``[B, N, ...]``: every receiver gets the same."""
    n = ctx.cooperative.shape[0]
    return jnp.broadcast_to(msg[:, None], (msg.shape[0], n) + msg.shape[1:])


def greedy_adversary() -> Attacker:
    """The greedy adversary of the experiments (Figura, Lin, Liu, Gupta, Section V) in the
    linear family: it fits the critic and the team-reward model to its *own* reward and sends
    that fit to every receiver, ignoring everyone else.

    In :func:`linear_actor_critic` a Byzantine agent's stored parameters are its own local steps
    (step 2 of the module docstring; it never takes part in consensus), so the message is the
    honest local-step value of the Byzantine agent itself: ``values[b]`` for every receiver.
    Stateless. Works with any :class:`~decentral.resilient_ac.AttackContext`.

    Example:
        >>> greedy_adversary().name
        'greedy'
    """

    def init(key, params, values, ctx):
        del key, params, values, ctx
        return ()

    def step(key, state, params, t, values, ctx):
        del key, params, t
        return _broadcast(jnp.asarray(values)[ctx.byzantine], ctx), state

    return Attacker(init, step, {}, "greedy")


def faulty_adversary() -> Attacker:
    """The faulty adversary of the experiments: it sends its *initial* parameters forever
    (a frozen critic and team-reward model). Stateful: :meth:`~Attacker.init` keeps
    ``values[b]`` of the values it is initialised with (the initial parameters, in
    :func:`linear_actor_critic`), every step sends them to every receiver.

    Example:
        >>> faulty_adversary().name
        'faulty'
    """

    def init(key, params, values, ctx):
        del key, params
        return jnp.asarray(values)[ctx.byzantine]

    def step(key, state, params, t, values, ctx):
        del key, params, t, values
        return _broadcast(state, ctx), state

    return Attacker(init, step, {}, "faulty")


def malicious_adversary() -> Attacker:
    """The malicious adversary of the experiments: it fits its critic and team-reward model to
    *minus the mean cooperative reward* and sends that fit to every receiver, so that the
    cooperative agents, if they average it in, minimise their return. Stateful, and it needs
    the :class:`LinearAttackContext` that :func:`linear_actor_critic` passes.

    State per Byzantine agent ``b``: its own parameter ``w_b`` (initialised to its initial
    parameter) and, under the average-reward criterion, its own average ``mu_b``. With
    ``rbar_c = mean_{j cooperative} r^j_{t+1}`` and the step's ``beta = beta_{v,t}``, each step
    first moves ``w_b`` by the same local rule as an honest agent (step 2 of the module
    docstring) with reward ``-rbar_c``, then sends the new ``w_b``:

    * critic: ``w += beta (-rbar_c + gamma phi'^T w - phi^T w) phi`` (average reward:
      ``-rbar_c - mu_b + phi'^T w - phi^T w``, then ``mu_b <- (1 - beta) mu_b - beta rbar_c``);
    * team-reward model: ``w += beta (-rbar_c - f^T w) f``;
    * average reward (scalar): ``w <- (1 - beta) w - beta rbar_c``.

    Example:
        >>> malicious_adversary().name
        'malicious'
    """

    def init(key, params, values, ctx):
        del key, params
        w = jnp.asarray(values)[ctx.byzantine]
        return w, jnp.zeros(w.shape[:1], w.dtype)

    def step(key, state, params, t, values, ctx):
        del key, params, t, values
        if ctx.rewards is None or ctx.step_size is None:
            raise ValueError("malicious_adversary needs a LinearAttackContext with this step's "
                             "rewards and step size (the linear actor-critic passes them).")
        w, mu = state
        coop = ctx.cooperative
        rbar = jnp.sum(jnp.where(coop, ctx.rewards, 0)) / jnp.maximum(jnp.sum(coop), 1)
        r = (-rbar).astype(w.dtype)
        beta = jnp.asarray(ctx.step_size, w.dtype)
        if w.ndim == 1:                                             # the average reward
            w = (1 - beta) * w + beta * r
        elif ctx.next_feature is not None:                          # the critic
            w, _ = jax.vmap(local_critic_step, in_axes=(0, None, None, None, None, None,
                                                        None if ctx.discount is not None
                                                        else 0))(
                w, ctx.feature, ctx.next_feature, r, ctx.discount, beta,
                None if ctx.discount is not None else mu)
            if ctx.discount is None:
                mu = (1 - beta) * mu + beta * r
        else:                                                       # the team-reward model
            w = jax.vmap(local_reward_step, in_axes=(0, None, None, None))(w, ctx.feature, r,
                                                                           beta)
        return _broadcast(w, ctx), (w, mu)

    return Attacker(init, step, {}, "malicious")


#: The learning adversaries of the experiments, by name.
ADVERSARIES = {"greedy": greedy_adversary, "faulty": faulty_adversary,
               "malicious": malicious_adversary}


# =============================================================================================
# local rules (unbatched, rlax style)
# =============================================================================================

def local_critic_step(v, phi, phi_next, reward, discount, step, average_reward=None):
    """``(v~, delta)``: ``delta = r + gamma phi'^T v - phi^T v`` (average reward:
    ``r - mu + phi'^T v - phi^T v``) and ``v~ = v + step delta phi``."""
    if average_reward is None:
        delta = reward + discount * jnp.dot(phi_next, v) - jnp.dot(phi, v)
    else:
        delta = reward - average_reward + jnp.dot(phi_next, v) - jnp.dot(phi, v)
    return v + step * delta * phi, delta


def local_reward_step(lam, f, reward, step):
    """``lambda~ = lambda + step (r - f^T lambda) f`` (the local team-reward step)."""
    return lam + step * (reward - jnp.dot(f, lam)) * f


def policy_score(theta, policy_feature, action):
    """``psi = grad_theta log pi(action | s)`` for logits ``theta [M, d_p] @ phi_pi(s)``:
    ``(e_action - pi(. | s)) phi_pi(s)^T`` ``[M, d_p]``."""
    probs = jax.nn.softmax(theta @ policy_feature)
    onehot = jax.nn.one_hot(action, theta.shape[0], dtype=probs.dtype)
    return (onehot - probs)[:, None] * policy_feature[None, :]


def linear_actor_step(theta, policy_feature, action, team_td_error, step):
    """``theta + step deltã psi`` (one actor step of the linear family; the MLP learners'
    is :func:`~decentral.resilient_ac.mlp.mlp_actor_step`)."""
    return theta + step * team_td_error * policy_score(theta, policy_feature, action)


#: The older name of :func:`linear_actor_step` (kept for user code; the step-size field
#: ``LinearACParams.actor_step`` is another thing: the actor's step size ``beta_theta``).
actor_step = linear_actor_step


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
    """The linear consensus actor-critic (module docstring) as a runner ``Algorithm``.

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
    (module docstring).

    ``rpbcac`` is the paper's name for :func:`linear_actor_critic` with
    ``consensus="projection"``, the paper's method, and the same function: every argument
    (``graphs`` with its older name ``graph=``, ``rule``, ``backend``, ...) is
    :func:`linear_actor_critic`'s. ``consensus="trimmed"`` and ``"mean"`` give the element-wise
    and the Zhang et al. (arXiv:1802.08757, Algorithm 2) baselines, as there.

    Example:
        >>> import decentral.graphs as g
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


# =============================================================================================
# Example 1 (Figs. 3-4) reconstruction
# =============================================================================================

def example1_attacker(direction: str = "mean_feature", push: float = 1.0,
                      features=None) -> Attacker:
    """The Byzantine agent of our Example 1 reconstruction: the per-coordinate extreme
    (:func:`feature_extreme`) pushing the team-reward estimate up (``push = +1``, the paper's
    "overestimation") by the sign of the mean feature ``(f(0) + f(1)) / 2``
    (``direction="mean_feature"``, the batch-mean-feature rule) or of the current feature
    (``"current_feature"``, which at consensus only duplicates the message of the
    cooperative agent with the largest reward; see ``docs/resilient_linear.md``)."""
    f = EXAMPLE1_FEATURES if features is None else np.asarray(features, np.float64)
    if direction == "mean_feature":
        return feature_extreme(1.0, push, critic_target=f.mean(0),
                               team_reward_target=f.mean(0))
    if direction == "current_feature":
        return feature_extreme(1.0, push)
    raise ValueError(f"direction must be 'mean_feature' or 'current_feature'; got "
                     f"{direction!r}.")


def example1_figure_data(*, graphs=None, num_steps: int = 3000, seeds: Sequence[int] = (0,),
                         record_every: int = 10, push: float = 1.0,
                         direction: str = "mean_feature",
                         variants: Sequence[str] = ("projection", "trimmed"),
                         features=None, rewards=None,
                         init_noise: float = 0.5, graph=None) -> dict[str, np.ndarray]:
    """Arrays for the Example 1 figure (our reconstruction of Figs. 3-4): cooperative estimates
    ``rbar(s; lambda^i_t)`` against the iteration, per consensus variant, with the cooperative
    hull and the true team average.

    Fixed policy, ``H = 1`` (``H = 0`` for ``"mean"``), agent 4 Byzantine with
    :func:`example1_attacker` (``direction``, ``push``), ``graphs`` ``K5`` by default (anything
    :func:`rpbcac` accepts; ``graph=`` is its older name), initial parameters ``init_noise``
    times a standard normal per agent and seed.

    Returns:
        ``{"steps": [R], "hull": [2, S] (min, max of the cooperative r^j(s)),
        "team_average": [S], "estimates/<variant>": [seeds, R, 4, S], "features": [S, 2],
        "rewards": [5, S]}``.

    Example:
        >>> d = example1_figure_data(num_steps=100, seeds=range(2), variants=("trimmed",))
        >>> d["estimates/trimmed"].shape, d["hull"].shape
        ((2, 10, 4, 2), (2, 2))
    """
    from decentral.graphs import complete
    from decentral.runner import run

    graphs = _graphs_alias(graphs, graph, "example1_figure_data")
    mdp = example1_mdp(features, rewards)
    adj = complete(5) if graphs is None else graphs
    params = linear_params(mdp, init_noise=init_noise)
    F = jnp.asarray(mdp.state_features)
    attacker = example1_attacker(direction, push, features)

    def record(state):
        return state.team_reward @ F.T                                  # [N, S]

    out: dict[str, np.ndarray] = {}
    steps = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for variant in variants:
            alg = rpbcac(adj, H=0 if variant == "mean" else 1, byzantine=[4],
                         attacker=attacker, consensus=variant, actor=False)
            res = run(alg, params, seeds=list(seeds), num_steps=num_steps,
                      record_every=record_every, record_fn=record)
            out[f"estimates/{variant}"] = np.asarray(res.records)[:, :, :4, :]
            steps = res.record_steps
    r = np.asarray(mdp.rewards)[:4, :, 0]
    out.update(steps=np.asarray(steps), hull=np.stack([r.min(0), r.max(0)]),
               team_average=r.mean(0), features=np.asarray(mdp.state_features),
               rewards=np.asarray(mdp.rewards)[:, :, 0])
    return out
