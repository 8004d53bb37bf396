"""The per-update rules of the grid-world learners of resilient projection-based consensus
actor-critic (RPBCAC; Figura, Lin, Liu, Gupta, "Resilient Consensus-based Multi-agent
Reinforcement Learning with Function Approximation", arXiv:2111.06776): aggregation, local fits,
the cooperative consensus step, one consensus epoch of all agents (adversaries included) and the
actors' step. The networks are in :mod:`decentral.resilient_ac.learning.networks`, the agent
types, variants and protocols in :mod:`decentral.resilient_ac.learning.variants`; their names
are re-exported here.

**The resilient step, batch form.** The last hidden layer is the feature map ``phi(s)`` (critic)
or ``f(s, a)`` (team reward) and the output layer ``w = [kernel; bias]`` is the linear
parameter, so ``||phi||^2 + 1`` enters every normalisation. In one *consensus epoch* every
agent computes a message (its critic and team-reward network after a local fit to its own
target, which a cooperative agent transmits and then discards) and every cooperative agent,
receiving the messages of its in-neighbours (own message at ``k = 0``),

1. aggregates the hidden layers element-wise (``hidden_aggregator``);
2. projects each received network onto its own features: predictions ``y[k, b]`` of
   message ``k`` on sample ``b`` against its own prediction ``yhat[b]``, i.e. the errors
   ``e[k, b] = (y[k, b] - yhat[b]) / (2 lr n_b)``;
3. aggregates the errors with the resilient rule (``aggregator``, ``H`` tolerated
   in-neighbours) to ``ebar[b]``;
4. moves the output layer only: ``w <- w + 2 lr mean_b ebar[b] [phi'_b; 1]``, which is one SGD
   step on the mean squared error with target ``yhat'[b] + ebar[b]``, ``phi'`` the features of
   the new hidden layers.

Two forms of steps 2-3 exist (:class:`Variant` flags):

* ``proj_norm="per_sample"``, ``trim_layout="per_sample"`` (**the library default**, the
  corrected per-sample form): ``y[k, b] = [phi'_b; 1]^T w_k`` uses the agent's *new* hidden
  layers and in-neighbour ``k``'s output layer, ``n_b = ||phi'_b||^2 + 1``, and the rule is
  applied per sample along ``k`` (never across samples). Since every rule here commutes with
  positive affine maps, this equals aggregating the values, ``y*_b = agg_k(y[k, b])``, and
  taking the weighted output step of :func:`~decentral.resilient_ac.weighted_output_step`
  (weights ``1 / (2 lr n_b)``); for one sample it puts the prediction on ``y*_b`` exactly.
* ``proj_norm="batch_frobenius"``, ``trim_layout="flatten_v1"`` (as in the authors' v1 code,
  commit 61b07cf): ``y[k, b]`` is the *whole* received network's prediction, ``yhat`` the
  agent's current network, ``n_b = ||Phi||_F^2 + 1`` the squared Frobenius norm of the
  agent's pre-step feature matrix of the whole batch (the same for every sample), the
  team-reward errors use ``lr`` instead of ``2 lr`` (twice as large), and the ``[K, B]``
  errors are flattened into one vector whose first entry (own message, sample 0) is the
  "own value" of W-MSR: one scalar ``ebar`` for the whole batch.

Variants (:data:`VARIANTS`, the labels of every table and figure):

=================  =============  ===========  ===========  ================  ============
label              trim_layout    aggregator   hidden       proj_norm         collision
=================  =============  ===========  ===========  ================  ============
``v1-faithful``    flatten_v1     wmsr         trimmed      batch_frobenius   (fixed)
``v1-corrected``   per_sample     wmsr         wmsr         per_sample        (fixed)
``v2-faithful``    per_sample     clipped      clipped      per_sample        as_coded
``v2-corrected``   per_sample     wmsr         wmsr         per_sample        fixed
=================  =============  ===========  ===========  ================  ============

(``trimmed`` = plain element-wise trimmed mean, ``clipped`` = the clipped mean of the authors'
v2 code; see :mod:`~decentral.resilient_ac.aggregators`.) ``H = 0`` makes every rule the plain
mean: the non-resilient consensus actor-critic of Zhang, Yang, Liu, Zhang, Basar (ICML 2018)
in this batch form.

**Agent types** (:data:`AGENT_TYPES`; an ``int32 [A]`` array, data, so scenarios vmap):
cooperative (consensus as above), greedy (fits critic and team reward to its own reward and
keeps them; transmits them), faulty (transmits its initial critic and team reward forever,
never updates them), malicious (fits the transmitted critic and team reward to ``-r_coop``,
the negated cooperative team reward, and keeps them; trains a private critic on its own
reward for its actor). The three adversaries are one stateful attacker of the
:class:`~decentral.resilient_ac.Attacker` protocol (:func:`learning_adversaries`, state
:class:`AdversaryNets`, context :class:`MLPAttackContext`), the default of
:func:`consensus_epoch`; another attacker of the same contract can replace it (messages per
receiver). Adversaries use their own reward and their own (greedy: the transmitted; faulty:
the fixed; malicious: the private) critic in their actor step.

**Protocols** (:data:`PROTOCOLS`): the per-update schedule of the authors' two code versions
(widths, episodes per update, epochs, how messages are fitted; see :class:`LearningProtocol`,
formerly ``Protocol``, a name kept as an alias; it is not :class:`typing.Protocol`).

**"Version".** Three things are called a version in this family: the *code version* of the
authors' repository the grid world and the protocols follow (``"v1"``, commit ``61b07cf``,
and ``"v2"``, commit ``f10f863``: ``LearningProtocol.version`` / ``.code_version``,
``GridWorld.version`` / ``.code_version``, the ``code_version=`` keyword of the learners);
``Algorithm.version``, the revision label of an algorithm (``"1"``); and the paper's arXiv
versions, which the code versions were written for. New keywords say ``code_version``; the
``version`` fields and keywords stay (saved results and reference files use them).

Everything here is pure and unbatched over runs (the caller vmaps over seeds and scenarios);
agent axes are vmapped inside. The episode loop and the training driver are in
:mod:`~decentral.resilient_ac.learning.experiments`; the derivations in the docs page on the
learning experiments.

"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from decentral._checks import check_indices
from decentral.graphs import NeighborTable

from ..aggregators import get_aggregator
from ..attackers import Attacker, replace_byzantine_messages
from ..projection import weighted_output_step
from .networks import (
    KERAS_ADAM_EPS,
    LEAKY_SLOPE,
    MLP,
    Batch,
    Nets,
    apply,
    features,
    glorot_uniform,
    hidden_layers,
    init_mlp,
    init_nets,
    output_layer,
    value,
    with_hidden_layers,
    with_output_layer,
)
from .variants import (
    AGENT_TYPES,
    COOPERATIVE,
    FAULTY,
    GREEDY,
    MALICIOUS,
    PROTOCOLS,
    VARIANTS,
    LearningProtocol,
    Protocol,
    Variant,
    get_protocol,
    get_variant,
)

__all__ = [
    "LEAKY_SLOPE", "KERAS_ADAM_EPS", "COOPERATIVE", "GREEDY", "FAULTY", "MALICIOUS",
    "AGENT_TYPES", "Variant", "VARIANTS", "get_variant", "LearningProtocol", "Protocol",
    "PROTOCOLS",
    "get_protocol", "MLP", "Nets", "Batch", "glorot_uniform", "init_mlp", "features", "apply",
    "value", "output_layer", "with_output_layer", "hidden_layers", "with_hidden_layers",
    "init_nets", "flatten_v1_wmsr", "aggregate", "local_fit", "minibatch_fit",
    "cooperative_update", "error_form_update", "team_targets", "AdversaryNets",
    "MLPAttackContext", "learning_adversaries", "consensus_epoch",
    "actor_deltas", "actor_loss", "mlp_actor_step", "actor_step", "adam_init",
]

# ------------------------------------------------------------------------------------------
# aggregation
# ------------------------------------------------------------------------------------------


def flatten_v1_wmsr(errors, H) -> jax.Array:
    """The v1 code's trimming of a ``[K, B]`` error array (quirk Q1, as in the authors' code).

    The array is raveled (in-node major); its first entry (own message, sample 0) is the only
    "own value"; among the other ``K B - 1`` numbers (the own message's other samples
    included) the ``H`` smallest are dropped if below it and the ``H`` largest if above it;
    the rest are averaged with it. This is W-MSR on the raveled vector; one scalar for the
    whole batch. ``H`` may be traced. A NaN among the other numbers counts as ``+inf`` (as in
    :mod:`~decentral.resilient_ac.aggregators`: trimmed first from the top, never averaged in);
    a NaN own value is left as it is.
    """
    v = jnp.ravel(errors)
    others = jnp.where(jnp.isnan(v[1:]), jnp.asarray(jnp.inf, v.dtype), v[1:])
    x0, rest = v[0], jnp.sort(others)
    n = rest.shape[0]
    idx = jnp.arange(n)
    drop = ((idx < H) & (rest < x0)) | ((idx >= n - H) & (rest > x0))
    kept = jnp.sum(jnp.where(drop, 0.0, rest))
    return (x0 + kept) / (1 + n - jnp.sum(drop)).astype(v.dtype)


def _as_H(H):
    """A concrete integer array becomes a Python int (the aggregators' checked form); a traced
    one stays traced; a float or bool array is refused (``int(1.5)`` would truncate it)."""
    if isinstance(H, jax.core.Tracer) or isinstance(H, int):
        return H
    arr = np.asarray(H)
    if arr.shape != () or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"H must be a non-negative integer (a Python int or an integer "
                         f"array); got {H!r}.")
    return int(arr)


def aggregate(name: str, values, H) -> jax.Array:
    """The rule ``name`` (a name of :data:`~decentral.resilient_ac.AGGREGATORS` or an alias:
    ``"wmsr"``, ``"trimmed"``, ``"clipped"``, ``"mean"``, ...) over the leading in-node axis of
    ``values [K, ...]`` (own value at ``k = 0``), element-wise."""
    return get_aggregator(name)(values, None, _as_H(H))


def _aggregate_tree(name: str, trees, H):
    return jax.tree_util.tree_map(lambda v: aggregate(name, v, H), trees)


# ------------------------------------------------------------------------------------------
# local fits
# ------------------------------------------------------------------------------------------


def _mse_grad(p: MLP, x, y, weight=None):
    def loss(q):
        err = y - value(q, x)
        if weight is None:
            return jnp.mean(err * err)
        return jnp.sum(weight * err * err) / jnp.sum(weight)
    return jax.grad(loss)(p)


def _sgd(p: MLP, grad, lr):
    opt = optax.sgd(lr)
    updates, _ = opt.update(grad, opt.init(p), p)
    return optax.apply_updates(p, updates)


def local_fit(p: MLP, x, y, lr, steps: int) -> MLP:
    """``steps`` full-batch SGD steps (rate ``lr``) on the mean squared error to the fixed
    targets ``y [B]``, all layers (the Keras ``MeanSquaredError``: mean over the batch)."""
    for _ in range(steps):
        p = _sgd(p, _mse_grad(p, x, y), lr)
    return p


def minibatch_fit(key, nets: tuple, inputs: tuple, targets: tuple, lr, epochs: int,
                  batch_size: int) -> tuple:
    """Minibatch SGD on several networks at once (each its own inputs and targets, one shared
    shuffle): ``epochs`` passes over the ``B`` samples in random order, minibatches of
    ``batch_size`` (the last one smaller), as Keras ``fit`` does.

    Args:
        key: shuffle key.
        nets: tuple of :class:`MLP`.
        inputs, targets: tuples of ``[B, d]`` and ``[B]`` arrays, one per net.
        lr: SGD rate.
        epochs, batch_size: static ints.
    """
    B = targets[0].shape[0]
    n_batches = -(-B // batch_size)
    pad = n_batches * batch_size - B

    def epoch(carry, k):
        perm = jnp.concatenate([jax.random.permutation(k, B), jnp.zeros((pad,), jnp.int32)])
        valid = (jnp.arange(n_batches * batch_size) < B).astype(targets[0].dtype)
        perm, valid = perm.reshape(n_batches, batch_size), valid.reshape(n_batches, batch_size)

        def mb(c, xs):
            idx, w = xs
            c = tuple(_sgd(p, _mse_grad(p, x[idx], y[idx], w), lr)
                      for p, x, y in zip(c, inputs, targets, strict=True))
            return c, None

        carry, _ = jax.lax.scan(mb, carry, (perm, valid))
        return carry, None

    out, _ = jax.lax.scan(epoch, tuple(nets), jax.random.split(key, epochs))
    return out


# ------------------------------------------------------------------------------------------
# the cooperative consensus step
# ------------------------------------------------------------------------------------------


def _augment(phi):
    return jnp.concatenate([phi, jnp.ones(phi.shape[:-1] + (1,), phi.dtype)], axis=-1)


def cooperative_update(own: MLP, received: MLP, x, H, lr, variant: Variant,
                       team_reward: bool = False) -> MLP:
    """One cooperative agent's resilient consensus step of a critic or team-reward network.

    Args:
        own: the agent's current network (before its local fit).
        received: the gathered messages, an :class:`MLP` with a leading in-node axis ``[K]``,
            the agent's own message (its locally fitted network) at ``k = 0``.
        x: ``[B, d]`` the inputs of the batch.
        H: in-neighbours tolerated (int, may be traced).
        lr: the critic / team-reward SGD rate.
        variant: the :class:`Variant` flags.
        team_reward: ``True`` for the team-reward network (only the ``batch_frobenius``
            normalisation treats it differently: ``lr`` instead of ``2 lr``, quirk Q4).

    Returns:
        The new network: hidden layers aggregated element-wise, output layer moved as in the
        module docstring.
    """
    new_hidden = _aggregate_tree(variant.hidden_aggregator, hidden_layers(received), H)
    own_new = with_hidden_layers(own, new_hidden)
    phi_new = features(own_new, x)                                    # [B, h]
    aug_new = _augment(phi_new)
    w_own = output_layer(own)
    if variant.proj_norm == "per_sample":
        W = output_layer(received)                                    # [K, h + 1]
        y = W @ aug_new.T                                             # [K, B]
        if variant.trim_layout == "per_sample":
            y_star = aggregate(variant.aggregator, y, H)              # [B]
            return with_output_layer(own_new, weighted_output_step(w_own, phi_new, y_star,
                                                                   lr))
        y_hat = aug_new @ w_own
        norm = jnp.sum(aug_new * aug_new, axis=-1)                    # ||phi'_b||^2 + 1
        errors = (y - y_hat) / (2.0 * lr * norm)
    else:
        phi_old = features(own, x)
        y_hat = value(own, x)                                         # [B]
        y = jax.vmap(lambda q: value(q, x))(received)                 # [K, B]
        norm = jnp.sum(phi_old * phi_old) + 1.0                       # ||Phi||_F^2 + 1
        scale = lr if team_reward else 2.0 * lr
        errors = (y - y_hat) / (scale * norm)
    if variant.trim_layout == "flatten_v1":
        ebar = flatten_v1_wmsr(errors, H) if variant.aggregator == "wmsr" else jnp.mean(errors)
        ebar = jnp.broadcast_to(ebar, errors.shape[1:])
    else:
        ebar = aggregate(variant.aggregator, errors, H)               # [B]
    w = w_own + 2.0 * lr * jnp.mean(ebar[:, None] * aug_new, axis=0)
    return with_output_layer(own_new, w)


def error_form_update(own: MLP, received: MLP, x, H, lr, aggregator: str = "wmsr",
                      hidden_aggregator: str = "wmsr") -> MLP:
    """The per-sample corrected step written with errors (a reference for tests): after the
    hidden-layer aggregation, ``e[k, b] = (y[k, b] - yhat[b]) / (beta (||phi'_b||^2 + 1))``
    with ``beta = 2 lr``, ``ebar_b = agg_k(e[k, b])``, ``w <- w + beta mean_b ebar_b
    [phi'_b; 1]``. Equal to :func:`cooperative_update` with the per-sample flags because the
    rules commute with positive affine maps."""
    own_new = with_hidden_layers(own, _aggregate_tree(hidden_aggregator,
                                                      hidden_layers(received), H))
    aug = _augment(features(own_new, x))
    w = output_layer(own)
    beta = 2.0 * lr
    y = output_layer(received) @ aug.T
    e = (y - aug @ w) / (beta * jnp.sum(aug * aug, axis=-1))
    ebar = aggregate(aggregator, e, H)
    return with_output_layer(own_new, w + beta * jnp.mean(ebar[:, None] * aug, axis=0))


# ------------------------------------------------------------------------------------------
# one consensus epoch of all agents
# ------------------------------------------------------------------------------------------


class AdversaryNets(NamedTuple):
    """The state of an MLP attacker: the Byzantine agents' own networks, ``[S, ...]`` per
    field (``S`` the adversary slots, in slot order). The learner keeps it in those agents'
    rows of :class:`Nets` (their actor steps and the records read it there).

    Attributes:
        critic: the critic each Byzantine agent keeps (and, for greedy / malicious, sends).
        team_reward: its team-reward model (same roles).
        private_critic: the malicious agent's own critic for its actor.
    """

    critic: MLP
    team_reward: MLP
    private_critic: MLP


class MLPAttackContext(NamedTuple):
    """:class:`~decentral.resilient_ac.AttackContext` plus what a learning adversary of the MLP
    experiments uses in one consensus epoch.

    Attributes:
        table: the epoch's in-neighbour table (:class:`~decentral.graphs.NeighborTable`).
        byzantine: ``[S]`` int32, the adversary slots (agents that may be Byzantine).
        cooperative: ``[A]`` bool (a slot whose agent is cooperative in this run sends its
            honest message: the attacker's message for it is ignored).
        agent_type: int32 ``[A]`` (:data:`AGENT_TYPES`): which adversary each slot plays.
        batch: the epoch's training batch.
        targets: ``[B, A]`` the reward each agent fits (:func:`team_targets`).
        lr: the critic's learning rate; gamma: the discount.
    """

    table: Any
    byzantine: jax.Array
    cooperative: jax.Array
    agent_type: jax.Array
    batch: Batch
    targets: jax.Array
    lr: Any
    gamma: Any


def learning_adversaries(protocol: str | LearningProtocol = "v1") -> Attacker:
    """The greedy, faulty and malicious agents of the grid-world experiments (Figura, Lin,
    Liu, Gupta, Section V) as one stateful :class:`~decentral.resilient_ac.Attacker` for the
    MLP learners; ``ctx.agent_type`` (data) says which one each slot plays, so scenarios
    sweep in one compiled program.

    State: :class:`AdversaryNets` (``init`` takes the slots' rows of the :class:`Nets` it is
    given as ``values``). ``step(key, state, params, t, values, ctx)`` with ``values = (critic
    messages, team-reward messages)``, the honest messages of every agent ``[A, ...]``
    (each agent's critic / team reward after its local fit, :func:`consensus_epoch`), and
    ``ctx`` an :class:`MLPAttackContext`; per slot:

    * greedy: fits its critic (targets ``r + gamma V(s')``, its own reward) and team reward
      (targets ``r``), keeps and sends them;
    * malicious: the same fit with the negated cooperative team reward ``-r_coop`` as reward,
      keeps and sends it; it also fits its private critic to its own reward (its actor's);
    * faulty: sends its current (the initial) networks forever, never updates them.

    The fit is ``protocol.adversary_epochs`` full-batch steps (v1: one, which is the honest
    message's own fit, so the slot's honest message is reused) or, with
    ``protocol.adversary_batch > 0`` (v2), that many epochs of minibatch steps (keys split
    from ``key``, one per slot). Every receiver gets the same message; messages are
    ``([S, A, ...] critic, [S, A, ...] team reward)``. Params: none (``{}``).

    Example:
        >>> learning_adversaries("v2").name
        'learning_adversaries.v2'
    """
    protocol = get_protocol(protocol)
    # v1: the adversaries' fit is the message fit itself (one full-batch step), so only the
    # private critic needs work of its own
    same_fit = not protocol.adversary_batch \
        and protocol.adversary_epochs == protocol.message_steps

    def init(key, params, values, ctx):
        del key, params
        nets = values
        return AdversaryNets(_take(nets.critic, ctx.byzantine),
                             _take(nets.team_reward, ctx.byzantine),
                             _take(nets.private_critic, ctx.byzantine))

    def step(key, state, params, t, values, ctx):
        del params, t
        if not isinstance(ctx, MLPAttackContext):
            raise ValueError("learning_adversaries needs an MLPAttackContext (the batch and "
                             "targets of the epoch); consensus_epoch passes it.")
        msg_c, msg_t = values
        obs, nobs, tr_in = ctx.batch.obs, ctx.batch.next_obs, ctx.batch.tr_input
        slots = ctx.byzantine
        kind = ctx.agent_type[slots]                                          # [S]
        rho_s, own_s = ctx.targets[:, slots], ctx.batch.rewards[:, slots]

        def critic_target(p, r):
            return r + ctx.gamma * jax.lax.stop_gradient(value(p, nobs))

        def fit(k, c, t_, p, r, r_own):
            if protocol.adversary_batch:
                return minibatch_fit(k, (c, t_, p), (obs, tr_in, obs),
                                     (critic_target(c, r), r, critic_target(p, r_own)),
                                     ctx.lr, protocol.adversary_epochs,
                                     protocol.adversary_batch)
            p_new = local_fit(p, obs, critic_target(p, r_own), ctx.lr,
                              protocol.adversary_epochs)
            if same_fit:
                return c, t_, p_new
            return (local_fit(c, obs, critic_target(c, r), ctx.lr, protocol.adversary_epochs),
                    local_fit(t_, tr_in, r, ctx.lr, protocol.adversary_epochs), p_new)

        keys = jax.random.split(key, slots.shape[0])
        c_fit, t_fit, p_fit = jax.vmap(fit, in_axes=(0, 0, 0, 0, 1, 1))(
            keys, state.critic, state.team_reward, state.private_critic, rho_s, own_s)
        if same_fit:
            c_fit, t_fit = _take(msg_c, slots), _take(msg_t, slots)
        fitting = (kind == GREEDY) | (kind == MALICIOUS)
        new = AdversaryNets(_where_agents(fitting, c_fit, state.critic),
                            _where_agents(fitting, t_fit, state.team_reward),
                            _where_agents(kind == MALICIOUS, p_fit, state.private_critic))
        n = ctx.cooperative.shape[0]
        sent = jax.tree_util.tree_map(
            lambda v: jnp.broadcast_to(v[:, None], (v.shape[0], n) + v.shape[1:]),
            (new.critic, new.team_reward))
        return sent, new

    return Attacker(init, step, {}, f"learning_adversaries.{protocol.version}")


def team_targets(rewards, agent_type, oracle) -> jax.Array:
    """``[B, A]`` the reward each agent fits: its own (cooperative, greedy, faulty);
    ``-r_coop`` (malicious); ``r_coop`` for cooperative agents of an oracle run.
    ``r_coop`` is the mean over cooperative agents (the v1 code's malicious agent uses the
    mean over all *other* agents, the same with one adversary)."""
    coop = agent_type == COOPERATIVE
    w = coop.astype(rewards.dtype)
    r_coop = rewards @ w / jnp.maximum(jnp.sum(w), 1.0)
    rho = jnp.where((agent_type == MALICIOUS)[None, :], -r_coop[:, None], rewards)
    return jnp.where((coop & oracle)[None, :], r_coop[:, None], rho)


def _where_agents(mask, a, b):
    """Per-agent select between two stacked pytrees (``mask [A]``)."""
    def sel(x, y):
        return jnp.where(mask.reshape(mask.shape + (1,) * (x.ndim - 1)), x, y)
    return jax.tree_util.tree_map(sel, a, b)


def _take(tree, idx):
    return jax.tree_util.tree_map(lambda v: v[idx], tree)


def _put(tree, idx, part):
    return jax.tree_util.tree_map(lambda v, p: v.at[idx].set(p), tree, part)


def _check_agent_types(agent_type, adversary_slots) -> None:
    """``adversary_slots`` are integer agent indices in range (checked on the static shape,
    also under tracing: a float would be truncated, an index past the end clamped), and every
    agent outside them is cooperative (skipped under tracing)."""
    slots = check_indices(adversary_slots, "adversary_slots", int(np.shape(agent_type)[0]),
                          hint="adversary_slots lists agent indices, e.g. (4,).")
    if isinstance(agent_type, jax.core.Tracer):
        return
    types = np.asarray(agent_type)
    outside = np.setdiff1d(np.arange(types.shape[0]), np.asarray(slots, int))
    bad = outside[types[outside] != COOPERATIVE]
    if bad.size:
        raise ValueError(f"agents {bad.tolist()} are not cooperative but are not among the "
                         f"adversary slots {tuple(adversary_slots)}: they would neither "
                         "update nor attack. Add them to adversary_slots.")


def consensus_epoch(key, nets: Nets, batch: Batch, agent_type, in_nodes, H, oracle, lr, gamma,
                    protocol: LearningProtocol, variant: Variant, adversary_slots: tuple,
                    attacker: Attacker | None = None, attacker_params=None, t=0) -> Nets:
    """One consensus epoch of every agent on ``batch`` (critic and team reward; actors
    untouched).

    Messages: a cooperative agent fits its critic (targets ``rho + gamma V(s')`` with its
    current critic, fixed during the fit) and team reward (targets ``rho``) with
    ``protocol.message_steps`` full-batch SGD steps and transmits the result, keeping its
    current networks. The agents of ``adversary_slots`` (static) that are not cooperative in
    this run send what ``attacker`` sends (default :func:`learning_adversaries`: greedy,
    faulty, malicious per ``agent_type``), per receiver; the attacker's state
    (:class:`AdversaryNets`) lives in those agents' rows of ``nets``. Then every cooperative
    agent applies :func:`cooperative_update` to the messages of ``in_nodes`` (``[A, K]``, own
    index first).

    Every agent outside ``adversary_slots`` must be cooperative (``agent_type``): a
    non-cooperative agent elsewhere would neither update nor attack. Checked here when
    ``agent_type`` is concrete (not under ``jit``); :func:`~decentral.resilient_ac.
    experiments.run_runs` builds valid types.

    The attacker's state lives in ``nets``, not in a separate carry: every epoch runs
    ``attacker.init(key, params, nets, ctx)`` (which reads the Byzantine rows) and then
    ``attacker.advance`` (its ``step``) with the same ``key``; the state it returns is written
    back
    into those rows. The learners pass the update index as ``t``, the same for every epoch
    of one update.

    Args:
        attacker: an :class:`~decentral.resilient_ac.Attacker` over networks whose state is
            an :class:`AdversaryNets` and whose ``step`` takes an :class:`MLPAttackContext`
            and the honest messages ``(critic, team reward)`` ``[A, ...]`` and returns
            ``([S, A, ...], [S, A, ...])`` messages.
        attacker_params: its params (default: ``attacker.params``).
        t: the step index passed to the attacker.

    Raises:
        ValueError: a concrete ``agent_type`` with a non-cooperative agent outside
            ``adversary_slots``, or an attacker whose state is not :class:`AdversaryNets`.
    """
    _check_agent_types(agent_type, adversary_slots)
    obs, nobs, tr_in = batch.obs, batch.next_obs, batch.tr_input
    rho = team_targets(batch.rewards, agent_type, oracle)                 # [B, A]
    coop = agent_type == COOPERATIVE

    def critic_target(p, r):
        return r + gamma * jax.lax.stop_gradient(value(p, nobs))

    def message(c, t_, r):
        return (local_fit(c, obs, critic_target(c, r), lr, protocol.message_steps),
                local_fit(t_, tr_in, r, lr, protocol.message_steps))

    msg_c, msg_t = jax.vmap(message, in_axes=(0, 0, 1))(nets.critic, nets.team_reward, rho)
    gathered_c, gathered_t = _take(msg_c, in_nodes), _take(msg_t, in_nodes)  # [A, K, ...]
    if adversary_slots:
        attacker = learning_adversaries(protocol) if attacker is None else attacker
        ap = attacker.params if attacker_params is None else attacker_params
        slots = jnp.asarray(adversary_slots, jnp.int32)
        A = agent_type.shape[0]
        table = NeighborTable(in_nodes, jnp.ones(in_nodes.shape, batch.rewards.dtype),
                              jnp.ones(in_nodes.shape, bool))
        ctx = MLPAttackContext(table, slots, coop, agent_type, batch, rho, lr, gamma)
        state = attacker.init(key, ap, nets, ctx)
        state, (sent_c, sent_t) = attacker.advance(key, state, ap, t, (msg_c, msg_t), ctx)
        if not isinstance(state, AdversaryNets):
            raise ValueError(f"attacker {getattr(attacker, 'name', attacker)!r}: its state "
                             "must be an AdversaryNets (the Byzantine agents' critic, team "
                             f"reward and private critic), got {type(state).__name__}.")
        # a slot sends the attacker's message only where its agent is not cooperative
        byz_slot = jnp.full((A,), -1, jnp.int32).at[slots].set(
            jnp.where(coop[slots], -1, jnp.arange(slots.shape[0], dtype=jnp.int32)))
        gathered_c = jax.tree_util.tree_map(
            lambda g, m: replace_byzantine_messages(table, g, byz_slot, m), gathered_c, sent_c)
        gathered_t = jax.tree_util.tree_map(
            lambda g, m: replace_byzantine_messages(table, g, byz_slot, m), gathered_t, sent_t)
        adversary = ~coop
        kept_c = _where_agents(adversary, _put(nets.critic, slots, state.critic), nets.critic)
        kept_t = _where_agents(adversary, _put(nets.team_reward, slots, state.team_reward),
                               nets.team_reward)
        private = _where_agents(adversary, _put(nets.private_critic, slots,
                                                state.private_critic), nets.private_critic)
    else:
        kept_c, kept_t, private = nets.critic, nets.team_reward, nets.private_critic

    def coop_step(c, t_, gc, gt):
        return (cooperative_update(c, gc, obs, H, lr, variant, team_reward=False),
                cooperative_update(t_, gt, tr_in, H, lr, variant, team_reward=True))

    new_c, new_t = jax.vmap(coop_step)(nets.critic, nets.team_reward, gathered_c, gathered_t)
    critic = _where_agents(coop, new_c, kept_c)
    team_reward = _where_agents(coop, new_t, kept_t)
    return Nets(nets.actor, critic, team_reward, private)


# ------------------------------------------------------------------------------------------
# actors
# ------------------------------------------------------------------------------------------


def actor_deltas(nets: Nets, batch: Batch, agent_type, gamma) -> jax.Array:
    """``[B, A]`` the per-sample weights of the actor step.

    Cooperative: ``TR_i(s, a) + gamma V_i(s') - V_i(s)`` (the team TD error from its own
    team-reward model and critic); adversaries: ``r_i + gamma V(s') - V(s)`` with their own
    reward and own critic (the private one for a malicious agent).
    """
    def one(c, t, p, typ, r):
        coop_delta = (value(t, batch.tr_input) + gamma * value(c, batch.next_obs)
                      - value(c, batch.obs))
        own = jax.tree_util.tree_map(lambda a, b: jnp.where(typ == MALICIOUS, a, b), p, c)
        adv_delta = r + gamma * value(own, batch.next_obs) - value(own, batch.obs)
        return jnp.where(typ == COOPERATIVE, coop_delta, adv_delta)

    return jax.vmap(one, in_axes=(0, 0, 0, 0, 1), out_axes=1)(
        nets.critic, nets.team_reward, nets.private_critic, agent_type, batch.rewards)


def actor_loss(actor: MLP, obs, actions, delta, weight=None) -> jax.Array:
    """``mean_b delta_b * CE_b`` with ``CE_b = -log pi(a_b | s_b)``: the Keras sparse
    categorical cross-entropy with sample weights ``delta`` (negative weights allowed), whose
    gradient is the policy gradient ``-mean_b delta_b grad log pi``. ``weight`` (0/1) masks
    samples of a padded minibatch (the mean runs over the real ones)."""
    logp = jax.nn.log_softmax(apply(actor, obs), axis=-1)
    ce = -jnp.take_along_axis(logp, actions[:, None], axis=-1)[:, 0]
    delta = jax.lax.stop_gradient(delta)
    if weight is None:
        return jnp.mean(delta * ce)
    return jnp.sum(weight * delta * ce) / jnp.sum(weight)


def adam_init(actor: MLP):
    """Adam state of one actor (optax ``scale_by_adam``, eps as Keras)."""
    return optax.scale_by_adam(eps=KERAS_ADAM_EPS).init(actor)


def _adam_step(actor, opt, grad, lr):
    updates, opt = optax.scale_by_adam(eps=KERAS_ADAM_EPS).update(grad, opt, actor)
    updates = jax.tree_util.tree_map(lambda u: -lr * u, updates)
    return optax.apply_updates(actor, updates), opt


def mlp_actor_step(key, actors: MLP, opt, batch: Batch, deltas, agent_type, lr,
                   adversary_batch: int = 0):
    """One Adam step per agent (rate ``lr``) on :func:`actor_loss` over the whole batch; with
    ``adversary_batch > 0`` (v2 code) the adversaries instead take one epoch of Adam steps
    on shuffled minibatches of that size. (The linear family's actor step is
    :func:`~decentral.resilient_ac.linear.linear_actor_step`; ``actor_step`` is this
    function's older name, kept as an alias.)

    Returns:
        ``(actors, opt)`` stacked over agents.
    """
    def full(a, o, acts, d):
        g = jax.grad(actor_loss)(a, batch.obs, acts, d)
        return _adam_step(a, o, g, lr)

    new_a, new_o = jax.vmap(full, in_axes=(0, 0, 1, 1))(actors, opt, batch.actions, deltas)
    if not adversary_batch:
        return new_a, new_o
    B = batch.obs.shape[0]
    n_b = -(-B // adversary_batch)
    pad = n_b * adversary_batch - B

    def minibatched(k, a, o, acts, d):
        perm = jnp.concatenate([jax.random.permutation(k, B), jnp.zeros((pad,), jnp.int32)])
        valid = (jnp.arange(n_b * adversary_batch) < B).astype(d.dtype)

        def mb(c, xs):
            idx, w = xs
            g = jax.grad(actor_loss)(c[0], batch.obs[idx], acts[idx], d[idx], w)
            return _adam_step(c[0], c[1], g, lr), None

        (a, o), _ = jax.lax.scan(mb, (a, o), (perm.reshape(n_b, -1), valid.reshape(n_b, -1)))
        return a, o

    keys = jax.random.split(key, agent_type.shape[0])
    adv_a, adv_o = jax.vmap(minibatched, in_axes=(0, 0, 0, 1, 1))(keys, actors, opt,
                                                                 batch.actions, deltas)
    coop = agent_type == COOPERATIVE
    return _where_agents(coop, new_a, adv_a), _where_agents(coop, new_o, adv_o)


#: The older name of :func:`mlp_actor_step` (kept for user code).
actor_step = mlp_actor_step
