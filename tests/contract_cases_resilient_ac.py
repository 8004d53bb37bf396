"""Contract cases of resilient consensus, the linear actor-critic and the grid-world learner (see
tests/contract_cases.py)."""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from contract_cases import Case

import decentral.graphs as g


def _k5_less_one_edge() -> np.ndarray:
    """K5 without the edge 1 -> 0: still 3-robust (the W-MSR hypotheses hold for H = 1 with
    one Byzantine agent) and of K5's structure on both backends (table width 5)."""
    a = g.complete(5).copy()
    a[0, 1] = False
    return a


def _counter_attacker():
    """A stateful attacker written in the library's ``(state, messages)`` order
    (``state_first=True``): it counts its steps and sends the receiver's own value plus the
    count."""
    from decentral.resilient_ac import Attacker

    def init(key, params, values, ctx):
        del key, params, values, ctx
        return jnp.zeros((), jnp.int32)

    def step(key, state, params, t, values, ctx):
        del key, t
        shift = params["scale"] * (state + 1).astype(values.dtype)
        msgs = jnp.broadcast_to(values + shift, (ctx.byzantine.shape[0],) + values.shape)
        return state + 1, msgs

    return Attacker(init, step, {"scale": jnp.asarray(1.0)}, "counter", state_first=True)


# ---- resilient consensus ------------------------------------------------------------------

def resilient_case(backend: str = "dense") -> Case:
    from decentral.resilient_ac import (
        constant,
        huge,
        resilient_consensus,
        resilient_consensus_params,
        switch_attacker,
    )

    sw = switch_attacker([constant(3.0), huge(100.0)])
    alg = resilient_consensus(g.complete(5), 1, [4], sw, backend=backend)
    params = resilient_consensus_params(np.arange(10.0).reshape(5, 2),
                                        {"which": np.int32(1), "each": sw.params["each"]})
    each = sw.params["each"]
    bad = [
        (params._replace(x0=np.full((5, 2), np.inf)), r"params\.x0 has NaN or infinite"),
        (params._replace(x0=np.zeros((4, 2))), r"params\.x0 has 4 agents"),
        (params._replace(x0=np.full(5, True)), r"params\.x0 must be real numbers"),
        (params._replace(attacker={"which": np.int32(2), "each": each}),
         r"params\.attacker .*\['which'\] = 2 is outside"),
        (params._replace(attacker={"which": np.float32(1.0), "each": each}),
         r"params\.attacker .*\['which'\] must be an integer"),
        (params._replace(attacker={"which": np.int32(0)}),
         r"params\.attacker does not have the structure"),
        (params._replace(graphs=g.static(g.complete(6), rule="row", backend=backend)),
         r"params\.graphs has another structure.*n is 6"),
    ]
    other = resilient_consensus(g.complete(5), 1, [3], sw, backend=backend)
    swap = g.static(_k5_less_one_edge(), rule="row", backend=backend)
    return Case(alg, params, bad, other,
                graph_swap=(params._replace(graphs=swap),
                            resilient_consensus(swap, 1, [4], sw)))


def resilient_random_case() -> Case:
    from decentral.resilient_ac import constant, resilient_consensus, resilient_consensus_params

    drops = g.random_edge_drops(g.complete(5), 0.3, shared_across_seeds=False)
    alg = resilient_consensus(drops, 1, [4], constant(10.0))
    params = resilient_consensus_params(np.arange(5.0))
    bad = [(params._replace(x0=np.array([1.0, np.nan, 0, 0, 0])), r"params\.x0"),
           (params._replace(attacker={"value": np.array(["x"])}),
            r"params\.attacker .*must hold real numbers"),
           (params._replace(graphs=g.random_edge_drops(g.complete(5), 0.3, key=0)),
            r"params\.graphs has another structure.*shared_across_seeds")]
    other = resilient_consensus(g.random_edge_drops(g.complete(5), 0.5,
                                                    shared_across_seeds=False),
                                1, [4], constant(10.0))
    swap = drops.replace(drop_prob=0.6)
    return Case(alg, params, bad, other,
                graph_swap=(params._replace(graphs=swap),
                            resilient_consensus(swap, 1, [4], constant(10.0))))


def resilient_stateful_case() -> Case:
    from decentral.resilient_ac import (
        random_values,
        resilient_consensus,
        resilient_consensus_params,
        switch_attacker,
    )
    from decentral.resilient_ac.linear import faulty_adversary

    sw = switch_attacker([faulty_adversary(), _counter_attacker(), random_values(-1.0, 1.0)])
    alg = resilient_consensus(g.complete(5), 1, [4], sw)
    each = sw.params["each"]
    params = resilient_consensus_params(np.arange(5.0), {"which": np.int32(1), "each": each})
    bad = [(params._replace(attacker={"which": np.int32(1),
                                      "each": (each[0], {"scale": np.asarray(1.0)},
                                               {"low": np.asarray(2.0),
                                                "high": np.asarray(1.0)})}),
            r"params\.attacker .*\['each'\]\[2\] .*'low'\] must not exceed"),
           (params._replace(attacker={"which": np.int32(-1), "each": each}),
            r"params\.attacker .*\['which'\] = -1 is outside"),
           (params._replace(x0=np.zeros(3)), r"params\.x0 has 3 agents")]
    other = resilient_consensus(g.complete(5), 1, [4], sw, aggregator="trimmed_mean")
    swap = g.static(_k5_less_one_edge(), rule="row")
    return Case(alg, params, bad, other,
                graph_swap=(params._replace(graphs=swap), resilient_consensus(swap, 1, [4], sw)))


# ---- the linear actor-critic ----------------------------------------------------------------

def _small_mdp():
    from decentral.resilient_ac.linear import random_mdp

    return random_mdp(0, num_states=3, num_actions_per_agent=2, num_agents=5, feature_dim=2)


def linear_case(consensus: str) -> Case:
    from decentral.resilient_ac.linear import (
        feature_extreme,
        greedy_adversary,
        linear_actor_critic,
        linear_params,
        random_mdp,
        rpbcac,
    )
    from decentral.schedules import StepSize

    mdp = _small_mdp()
    params = linear_params(mdp)
    if consensus == "projection":
        alg = rpbcac(g.complete(5), H=1, byzantine=[4], attacker=feature_extreme())
        other = rpbcac(g.complete(5), H=1, byzantine=[3], attacker=feature_extreme())
    elif consensus == "trimmed":
        alg = linear_actor_critic(g.complete(5), H=1, byzantine=[4],
                                  attacker=greedy_adversary(), consensus="trimmed")
        other = linear_actor_critic(g.complete(5), H=1, byzantine=[4],
                                    attacker=greedy_adversary(), consensus="trimmed",
                                    actor_iterate="pre")
    else:
        alg = linear_actor_critic(g.complete(5), H=0, consensus="mean")
        other = linear_actor_critic(g.complete(5), H=0, consensus="mean", actor=False)
    other_mdp = random_mdp(1, num_states=3, num_actions_per_agent=2, num_agents=4,
                           feature_dim=2)
    f = np.float32 if not jax.config.jax_enable_x64 else np.float64
    bad = [
        (params._replace(discount=f(1.0)), r"params\.discount"),
        (params._replace(critic0=np.zeros((5, 3))), r"params\.critic0 must be \(5, 2\)"),
        (params._replace(policy0=np.full((5, 2, 3), np.inf)), r"params\.policy0 holds NaN"),
        (params._replace(critic_step=StepSize(f(-1.0), f(1.0), f(0.65))),
         r"params\.critic_step: alpha0"),
        (params._replace(actor_step=1e-3), r"params\.actor_step must be a .*StepSize"),
        (params._replace(init_noise=f(-1.0)), r"params\.init_noise"),
        (params._replace(mdp=linear_params(other_mdp).mdp), r"params\.mdp has 4 agents"),
        (params._replace(graphs=g.static(g.complete(6), rule="row")),
         r"params\.graphs has another structure.*n is 6"),
    ]
    if consensus == "mean":
        w_col = g.column_stochastic(_k5_less_one_edge())
        base = linear_actor_critic(g.row_stochastic(g.complete(5)), H=0, consensus="mean")
        bad += [(params._replace(H=np.int32(1)), r"params\.H is set, but consensus='mean'"),
                (params._replace(graphs=g.static(w_col)), r"row-stochastic")]
        swap = g.static(g.row_stochastic(_k5_less_one_edge()))
        alg, other = base, linear_actor_critic(g.row_stochastic(g.complete(5)), H=0,
                                               consensus="mean", actor=False)
        graph_swap = (params._replace(graphs=swap),
                      linear_actor_critic(swap, H=0, consensus="mean"))
    else:
        bad += [(params._replace(H=np.float32(1.5)), r"params\.H must be an integer"),
                (params._replace(H=np.bool_(True)), r"params\.H must be an integer"),
                (params._replace(H=np.int32(-1)), r"params\.H must be a non-negative int"),
                (params._replace(H=np.array([1, 1], np.int32)), r"params\.H must be a scalar"),
                (params._replace(attacker={"critic": np.asarray(1.0)}),
                 r"params\.attacker does not have the structure")]
        swap = g.static(_k5_less_one_edge(), rule="row")
        rebuilt = (rpbcac(swap, H=1, byzantine=[4], attacker=feature_extreme())
                   if consensus == "projection" else
                   linear_actor_critic(swap, H=1, byzantine=[4], attacker=greedy_adversary(),
                                       consensus="trimmed"))
        graph_swap = (params._replace(graphs=swap), rebuilt)
    return Case(alg, params, bad, other, graph_swap=graph_swap)


# ---- the grid-world learner -------------------------------------------------------------------

def _tiny_protocol():
    from decentral.resilient_ac.learning.mlp import LearningProtocol

    return LearningProtocol("v1", width=4, episodes_per_update=2, epochs=1, message_steps=1,
                            adversary_epochs=1, adversary_batch=0, adversary_actor_batch=0,
                            buffer_collections=1, shared_templates=True)


def learner_case() -> Case:
    from decentral.resilient_ac import learning as ex
    from decentral.resilient_ac.learning.algorithm import _record_metrics

    proto = _tiny_protocol()
    alg = ex.learner(proto, "corrected", adversary_slots=(4,))
    params = ex.learner_params("malicious", 1, 50, code_version=proto)
    f = np.dtype(jnp.result_type(float))
    bad_nets = params.start_nets._replace(
        critic=params.start_nets.critic._replace(w1=np.zeros((5, 10, 3), f)))
    bad = [
        (params._replace(H=np.float32(1.0)), r"params\.H must be a non-negative int"),
        (params._replace(H=np.int32(-1)), r"params\.H must be a non-negative int"),
        (params._replace(agent_type=np.array([3, 0, 0, 0, 0], np.int32)),
         r"params\.agent_type: agents \[0\] are not cooperative"),
        (params._replace(agent_type=np.array([0, 0, 0, 0, 7], np.int32)),
         r"params\.agent_type holds unknown codes \[7\]"),
        (params._replace(agent_type=np.array([0, 0, 0, 0, 1.0])), r"params\.agent_type must"),
        (params._replace(oracle=np.int32(1)), r"params\.oracle must be a bool"),
        (params._replace(targets=np.full((5, 2), 6, np.int32)), r"params\.targets must lie"),
        (params._replace(seed=np.float32(50.0)), r"params\.seed must be an integer"),
        (params._replace(seed=np.int64(-1)), r"params\.seed must be >= 0"),
        (params._replace(phase=np.int32(-1)), r"params\.phase"),
        (params._replace(warm=np.int32(0)), r"params\.warm must be a bool"),
        (params._replace(start_nets=bad_nets), r"params\.start_nets.*critic.*w1"),
        (params._replace(in_nodes=np.full((1, 5, 4), 5, np.int32)),
         r"params\.in_nodes holds indices outside"),
        (params._replace(in_nodes=ex.PAPER_IN_NODES[None].astype(float)),
         r"params\.in_nodes must be an integer table"),
        (params._replace(critic_lr=np.asarray(0.0, f)), r"params\.critic_lr"),
        (params._replace(actor_lr=np.asarray(np.inf, f)), r"params\.actor_lr"),
        (params._replace(gamma=np.asarray(1.0, f)), r"params\.gamma"),
        (params._replace(epsilon=np.asarray(1.5, f)), r"params\.epsilon"),
    ]
    other = ex.learner(proto, "faithful", adversary_slots=(4,))
    # Declared batch-dependent (Case.batch_invariant): the actor's gradient contracts the
    # episode batch in matrix products (x^T @ g of every dense layer) whose XLA CPU kernel
    # splits the reduction by the device's thread partition, so with the seeds split over 2
    # host devices the actors differ from the 1-device run in the last bit (6e-8 in float32
    # after 8 updates); on one device any seed batch (1 to 4 seeds) gives identical numbers.
    return Case(alg, params, bad, other, record_fn=_record_metrics, record_context=True,
                batch_invariant=False)


CASES: dict[str, Callable] = {
    "resilient_consensus": resilient_case,
    "resilient_consensus.sparse": lambda: resilient_case("sparse"),
    "resilient_consensus.random_per_seed": resilient_random_case,
    "resilient_consensus.stateful_attacker": resilient_stateful_case,
    "linear_actor_critic.projection": lambda: linear_case("projection"),
    "linear_actor_critic.trimmed": lambda: linear_case("trimmed"),
    "linear_actor_critic.mean": lambda: linear_case("mean"),
    "grid_world_learner": learner_case,
}
