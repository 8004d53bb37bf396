"""The resilient family on the library's one contract (issue 24): graphs through
``as_sequence`` and as data in the params, params checked by ``run`` wherever they arrive
(swept values too), attackers whose params are checked and whose step may use the library's
``(state, info)`` order, one aggregator registry, and the renamed API with its aliases.

Every test here fails on the code before the conversion (a missing check, keyword or name);
the module imports only names that existed before, so each test fails for its own reason."""

from __future__ import annotations

import contextlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import decentral.graphs as g
from decentral.hypotheses import HypothesisWarning
from decentral.resilient_ac import (
    Attacker,
    ResilientParams,
    constant,
    huge,
    mlp,
    random_values,
    resilient_consensus,
    switch_attacker,
    values_of,
)
from decentral.resilient_ac import learning as ex
from decentral.resilient_ac.linear import (
    feature_extreme,
    linear_actor_critic,
    linear_params,
    random_mdp,
    rpbcac,
)
from decentral.runner import run, stack_params


def resilient_consensus_params(x0, attacker=None, **kw):
    """The params helper under its new name (imported here, so that the module loads on the
    old code and each test fails for its own reason)."""
    from decentral.resilient_ac import resilient_consensus_params as helper

    return helper(x0, attacker, **kw)


def _k5_less_one_edge():
    a = g.complete(5).copy()
    a[0, 1] = False
    return a


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypothesisWarning)
        yield


@pytest.fixture(scope="module")
def mdp():
    return random_mdp(0, num_states=3, num_actions_per_agent=2, num_agents=5, feature_dim=2)


# ------------------------------------------------------------------------------------------
# resilient consensus
# ------------------------------------------------------------------------------------------

def test_resilient_consensus_takes_what_as_sequence_takes():
    """A weight matrix (only its pattern is read), rule= / backend= keywords, and the sparse
    backend give the run of the boolean adjacency (W-MSR reads who hears whom; the sparse
    table lists the in-neighbours in another order, so sums may differ in the last bit)."""
    params = ResilientParams(jnp.arange(5.0))
    ref = run(resilient_consensus(g.complete(5), 1, [4], huge()), params, [0, 1], 6,
              record_fn=values_of, progress=False).records
    for graphs, kw in ((g.row_stochastic(g.complete(5)), {}),
                       (g.column_stochastic(g.complete(5)), {}),
                       (g.complete(5), {"rule": "column"}),
                       (g.complete(5), {"backend": "sparse"})):
        alg = resilient_consensus(graphs, 1, [4], huge(), **kw)
        got = run(alg, params, [0, 1], 6, record_fn=values_of, progress=False).records
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)


def test_resilient_params_graphs_run_as_data_and_are_checked():
    swap = g.static(_k5_less_one_edge(), rule="row")
    alg = resilient_consensus(g.complete(5), 1, [4], constant(5.0))
    params = resilient_consensus_params(np.arange(5.0), graphs=swap)
    a = run(alg, params, [0], 5, record_fn=values_of, progress=False).records
    b = run(resilient_consensus(swap, 1, [4], constant(5.0)), params._replace(graphs=None),
            [0], 5, record_fn=values_of, progress=False).records
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, run(alg, params._replace(graphs=None), [0], 5,
                                     record_fn=values_of, progress=False).records)
    with pytest.raises(ValueError, match=r"params\.graphs has another structure.*n is 6"):
        run(alg, params._replace(graphs=g.static(g.complete(6), rule="row")), [0], 2,
            progress=False)
    # the hypotheses are checked on the run's graphs (the paper's graph is only 2-robust)
    with pytest.warns(HypothesisWarning, match=r"params\.graphs: graph 0 .* 2-robust"):
        run(alg, params._replace(graphs=g.static(g.circulant(5, [-1, -2, -3]), rule="row")),
            [0], 2, progress=False)


def test_resilient_x0_checked_by_run_even_when_set_by_replace():
    alg = resilient_consensus(g.complete(5), 1, [4], constant(), check=False)
    params = ResilientParams(jnp.arange(5.0))
    for bad, match in ((np.array([0.0, np.inf, 0, 0, 0]), r"params\.x0 has NaN or infinite"),
                       (np.zeros(4), r"params\.x0 has 4 agents"),
                       (np.ones(5, bool), r"params\.x0 must be real numbers")):
        with pytest.raises(ValueError, match=match):
            run(alg, params._replace(x0=bad), [0], 2, progress=False)


@pytest.mark.parametrize("which, match", [(np.int32(2), r"\['which'\] = 2 is outside"),
                                          (np.int32(-1), r"\['which'\] = -1 is outside"),
                                          (np.float32(1.0), r"must be an integer"),
                                          (np.bool_(True), r"must be an integer")], ids=repr)
def test_switch_attacker_selector_out_of_range_is_refused(which, match):
    """The gather would clamp ``which = 2`` to the last attacker and read -1 from the end."""
    sw = switch_attacker([constant(1.0), constant(2.0)])
    alg = resilient_consensus(g.complete(5), 1, [4], sw)
    params = ResilientParams(jnp.arange(5.0), {"which": which, "each": sw.params["each"]})
    with pytest.raises(ValueError, match=r"params\.attacker .*" + match):
        run(alg, params, [0], 2, progress=False)


def test_a_swept_selector_is_checked_entry_by_entry():
    sw = switch_attacker([constant(1.0), constant(2.0)])
    alg = resilient_consensus(g.complete(5), 1, [4], sw)
    plist = [ResilientParams(jnp.arange(5.0), {"which": np.int32(k), "each": sw.params["each"]})
             for k in (0, 1, 5)]
    with pytest.raises(ValueError, match=r"params sweep entry 2: params\.attacker"):
        run(alg, stack_params(plist), [0], 2, sweep=True, progress=False)


def test_attacker_params_checks_of_the_library_attacks():
    alg = resilient_consensus(g.complete(5), 1, [4], random_values(-1.0, 1.0))
    params = ResilientParams(jnp.arange(5.0))
    with pytest.raises(ValueError, match=r"params\.attacker .*'low'\] must not exceed"):
        run(alg, params._replace(attacker={"low": np.asarray(2.0), "high": np.asarray(1.0)}),
            [0], 2, progress=False)
    with pytest.raises(ValueError, match=r"params\.attacker does not have the structure"):
        run(alg, params._replace(attacker={"lo": np.asarray(0.0)}), [0], 2, progress=False)
    with pytest.raises(ValueError, match=r"must not exceed"):
        resilient_consensus(g.complete(5), 1, [4], random_values(1.0, -1.0))


def test_an_attacker_in_the_librarys_state_info_order_runs_and_is_checked():
    def init(key, params, values, ctx):
        return jnp.zeros((), jnp.int32)

    def step(key, state, params, t, values, ctx):             # (state, messages)
        return state + 1, jnp.full((1,) + values.shape, params["value"], values.dtype)

    def check(params):
        if np.asarray(params["value"]) < 0:
            raise ValueError("['value'] must be >= 0.")

    first = Attacker(init, step, {"value": jnp.asarray(3.0)}, "state_first", check,
                     state_first=True)
    old = constant(3.0)                                         # (messages, state)
    assert old.check_params is not None and not old.state_first
    params = ResilientParams(jnp.arange(5.0))
    a = run(resilient_consensus(g.complete(5), 1, [4], first), params, [0], 4,
            progress=False)
    b = run(resilient_consensus(g.complete(5), 1, [4], old), params, [0], 4, progress=False)
    np.testing.assert_array_equal(a.final_state.x, b.final_state.x)
    assert int(a.final_state.attacker[0]) == 4                 # its state was carried
    with pytest.raises(ValueError, match=r"params\.attacker \(attacker 'state_first'\): "
                                         r"\['value'\] must be >= 0"):
        run(resilient_consensus(g.complete(5), 1, [4], first),
            params._replace(attacker={"value": np.asarray(-1.0)}), [0], 2, progress=False)
    # switch_attacker plays both orders
    sw = switch_attacker([old, first])
    s1 = run(resilient_consensus(g.complete(5), 1, [4], sw),
             params._replace(attacker={"which": np.int32(1), "each": sw.params["each"]}),
             [0], 4, progress=False)
    np.testing.assert_array_equal(s1.final_state.x, a.final_state.x)


# ------------------------------------------------------------------------------------------
# the linear actor-critic
# ------------------------------------------------------------------------------------------

def test_linear_graphs_keyword_alias_and_params_graphs(mdp):
    base = linear_params(mdp)
    with _quiet():
        by_kw = rpbcac(graphs=g.complete(5), H=1, byzantine=[4], attacker=feature_extreme())
        by_old = rpbcac(graph=g.complete(5), H=1, byzantine=[4], attacker=feature_extreme())
    a = run(by_kw, base, [0], 4, progress=False).final_state
    b = run(by_old, base, [0], 4, progress=False).final_state
    np.testing.assert_array_equal(a.critic, b.critic)
    with pytest.raises(ValueError, match="not both"):
        rpbcac(g.complete(5), graph=g.complete(5), H=1)
    with pytest.raises(ValueError, match="not both"):
        linear_params(mdp, graphs=g.complete(5), graph=g.complete(5))
    swap = linear_params(mdp, graphs=_k5_less_one_edge())
    assert isinstance(swap.graphs, g.GraphSequence) and not hasattr(swap, "graph")
    c = run(by_kw, swap, [0], 4, progress=False).final_state
    with _quiet():
        rebuilt = rpbcac(_k5_less_one_edge(), H=1, byzantine=[4], attacker=feature_extreme())
    d = run(rebuilt, base, [0], 4, progress=False).final_state
    np.testing.assert_array_equal(c.critic, d.critic)
    with pytest.raises(ValueError, match=r"params\.graphs has another structure"):
        run(by_kw, base._replace(graphs=g.static(g.complete(5), rule="row",
                                                 backend="sparse")), [0], 2, progress=False)


def test_linear_hypotheses_are_checked_on_the_graphs_and_H_of_the_run(mdp):
    with _quiet():
        alg = rpbcac(g.complete(5), H=1, byzantine=[4], attacker=feature_extreme())
    paper = linear_params(mdp, graphs=g.circulant(5, [-1, -2, -3]))
    with pytest.warns(HypothesisWarning, match=r"params\.graphs: .*2-robust"):
        run(alg, paper, [0], 2, progress=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", HypothesisWarning)
        run(alg, linear_params(mdp, H=2), [0], 2, progress=False)
    texts = [str(w.message) for w in caught if issubclass(w.category, HypothesisWarning)]
    assert any(t.startswith("the graphs with params.H = 2: ") and "fewer than 2H + 1 = 5" in t
               for t in texts), texts


def test_linear_mean_params_graphs_must_be_row_stochastic(mdp):
    alg = linear_actor_critic(g.row_stochastic(g.complete(5)), H=0, consensus="mean")
    col = linear_params(mdp, graphs=g.column_stochastic(_k5_less_one_edge()))
    with pytest.raises(ValueError, match=r"params\.graphs.*row-stochastic"):
        run(alg, col, [0], 2, progress=False)


@pytest.mark.parametrize("swept, match", [
    (np.array([1, -1], np.int32), r"sweep entry 1: params\.H must be a non-negative int"),
    (np.array([True, False]), r"sweep entry 0: params\.H must be an integer"),
])
def test_a_swept_H_is_checked_for_every_value(mdp, swept, match):
    """A concrete params.H was checked, a swept one (traced in the run) was not."""
    with _quiet():
        alg = rpbcac(g.complete(5), H=1, byzantine=[4], attacker=feature_extreme())
    plist = stack_params([linear_params(mdp, H=1)] * 2)._replace(H=swept)
    with pytest.raises(ValueError, match=match):
        run(alg, plist, [0], 2, sweep=True, progress=False)


@pytest.mark.parametrize("field, value, match", [
    ("discount", 1.0, r"params\.discount \(gamma\) must lie in \[0, 1\)"),
    ("init_noise", -1.0, r"params\.init_noise"),
    ("critic0", np.zeros((5, 3)), r"params\.critic0 must be \(5, 2\)"),
    ("team_reward0", np.full((5, 2), np.inf), r"params\.team_reward0 holds NaN or infinite"),
    ("actor_step", 0.01, r"params\.actor_step must be a decentral\.schedules\.StepSize"),
])
def test_linear_fields_set_by_replace_are_checked_by_run(mdp, field, value, match):
    with _quiet():
        alg = rpbcac(g.complete(5), H=1, byzantine=[4], attacker=feature_extreme())
    with pytest.raises(ValueError, match=match):
        run(alg, linear_params(mdp)._replace(**{field: value}), [0], 2, progress=False)


def test_linear_divergence_hint_names_the_step_sizes(mdp):
    with _quiet():
        alg = rpbcac(g.complete(5), H=1, byzantine=[4], attacker=feature_extreme())
    assert "params.critic_step" in alg.divergence_hint


# ------------------------------------------------------------------------------------------
# the grid-world learners
# ------------------------------------------------------------------------------------------

# the old name (a documented alias of LearningProtocol), so the learner tests reach run() on
# the old code too
TINY = mlp.Protocol("v1", width=4, episodes_per_update=2, epochs=1, message_steps=1,
                    adversary_epochs=1, adversary_batch=0, adversary_actor_batch=0,
                    buffer_collections=1, shared_templates=True)


def _learn_params():
    from decentral.resilient_ac.learning.gridworld import grid_world, paper_targets

    env = grid_world("v1")
    tmpl = jax.eval_shape(lambda: mlp.init_nets(jax.random.key(0), 5, env.obs_dim,
                                                env.tr_input_dim, env.num_actions, TINY.width,
                                                TINY.shared_templates))
    f = np.dtype(jnp.result_type(float))
    return ex.LearnParams(
        H=np.int32(1), agent_type=np.array([0, 0, 0, 0, 3], np.int32), oracle=np.bool_(False),
        targets=paper_targets("v1", 50), seed=np.uint32(50), phase=np.int32(0),
        warm=np.bool_(False),
        start_nets=jax.tree_util.tree_map(lambda s: np.zeros(s.shape, s.dtype), tmpl),
        in_nodes=ex.PAPER_IN_NODES[None].copy(), critic_lr=np.asarray(0.01, f),
        actor_lr=np.asarray(0.002, f), gamma=np.asarray(0.9, f), epsilon=np.asarray(0.05, f))


@pytest.mark.parametrize("field, value, match", [
    ("H", np.int32(-1), r"params\.H must be a non-negative int"),
    ("H", np.float32(1.0), r"params\.H must be a non-negative int"),
    ("agent_type", np.array([1, 0, 0, 0, 0], np.int32), r"params\.agent_type: agents \[0\]"),
    ("agent_type", np.array([0, 0, 0, 0, 9], np.int32), r"params\.agent_type holds unknown"),
    ("agent_type", np.array([0, 0, 0, 0, 0, 0], np.int32), r"params\.agent_type must be"),
    ("oracle", np.float32(1.0), r"params\.oracle must be a bool"),
    ("targets", np.array([[0, 0], [3, 5], [1, 4], [5, 5], [5, 6]], np.int32),
     r"params\.targets must lie in 0\.\.5"),
    ("seed", np.float64(50.0), r"params\.seed must be an integer"),
    ("seed", np.int64(2**31), r"params\.seed must lie in \[0, 2\*\*32\) and be stored unsigned"),
    ("in_nodes", np.array([[[0, 1, 2, 5]] * 5], np.int32), r"params\.in_nodes holds indices"),
    ("in_nodes", np.array([[[1, 0, 2, 3]] * 5], np.int32), r"params\.in_nodes\[i\]\[0\] must"),
    ("critic_lr", np.asarray(-0.1), r"params\.critic_lr must be a finite positive number"),
    ("actor_lr", np.asarray(np.inf), r"params\.actor_lr must be a finite positive number"),
    ("gamma", np.asarray(1.0), r"params\.gamma \(the discount\) must lie in \[0, 1\)"),
    ("epsilon", np.asarray(-0.5), r"params\.epsilon \(exploration probability\)"),
])
def test_learn_params_are_checked_by_the_learner(field, value, match):
    """Refused by run before anything compiles (the learner had no check_params)."""
    alg = ex.learner(TINY, "corrected", adversary_slots=(4,))
    with pytest.raises(ValueError, match=match):
        run(alg, _learn_params()._replace(**{field: value}), [0], 1, progress=False)


def test_learner_params_of_a_sweep_are_checked_entry_by_entry():
    alg = ex.learner(TINY, "corrected", adversary_slots=(4,))
    swept = _learn_params()._replace(H=np.array([1, -2], np.int32))
    with pytest.raises(ValueError, match=r"params sweep entry 1: params\.H"):
        run(alg, swept, [0], 1, sweep=["H"], progress=False)


def test_experiment_graphs_accept_what_as_sequence_accepts():
    k5 = ex.K5_IN_NODES[None]
    np.testing.assert_array_equal(ex.resolve_graph(g.row_stochastic(g.complete(5))), k5)
    np.testing.assert_array_equal(ex.resolve_graph(g.static(g.complete(5), rule="row",
                                                            backend="sparse")), k5)
    with pytest.raises(ValueError, match="add_self_loops"):
        ex.resolve_graph(g.complete(5) & ~np.eye(5, dtype=bool))
    with pytest.raises(ValueError, match=r"a weight matrix must be \[5, 5\]"):
        ex.resolve_graph(g.row_stochastic(g.complete(4)))
    # run_runs / run_experiment take graphs= (graph= kept) and code_version= (version= kept)
    for kw in ({"graphs": g.static(g.complete(5), rule="row")},
               {"graphs": g.row_stochastic(g.complete(5))}, {"graph": "k5"},
               {"code_version": "v1"}, {"version": "v1"}):
        with pytest.raises(ValueError, match="multiple of 100"):
            ex.run_experiment("greedy", 1, seeds=[0], episodes=150, **kw)
    with pytest.raises(ValueError, match="not both"):
        ex.run_runs([("greedy", 1, False)], graphs="k5", graph="paper", seeds=[0])
    with pytest.raises(ValueError, match="not both"):
        ex.run_runs([("greedy", 1, False)], code_version="v1", version="v1", seeds=[0])


# ------------------------------------------------------------------------------------------
# names
# ------------------------------------------------------------------------------------------

def test_one_aggregator_registry_with_the_old_keys_as_aliases():
    from decentral.resilient_ac import AGGREGATOR_ALIASES, AGGREGATORS, get_aggregator
    from decentral.resilient_ac.aggregators import clipped_mean, trimmed_mean

    assert get_aggregator("trimmed") is trimmed_mean is AGGREGATORS["trimmed_mean"]
    assert get_aggregator("clipped") is clipped_mean
    assert set(AGGREGATOR_ALIASES) == {"trimmed", "clipped"}
    v = jnp.array([[1.0], [5.0], [-7.0], [2.0], [100.0]])
    assert float(mlp.aggregate("trimmed_mean", v, 1)[0]) == float(mlp.aggregate("trimmed", v,
                                                                                 1)[0])
    assert mlp.Variant(aggregator="clipped_mean", hidden_aggregator="trimmed_mean")
    alg = resilient_consensus(g.complete(5), 1, [4], constant(), aggregator="clipped")
    assert alg.name == "resilient_consensus.clipped"


def test_renamed_api_and_its_aliases():
    import typing

    from decentral.resilient_ac import consensus_params
    from decentral.resilient_ac import linear as lin
    from decentral.resilient_ac import resilient_consensus_params as helper
    from decentral.resilient_ac.learning.gridworld import grid_world

    assert consensus_params is helper
    assert mlp.Protocol is mlp.LearningProtocol and mlp.Protocol is not typing.Protocol
    assert mlp.PROTOCOLS["v2"].code_version == "v2"
    assert lin.actor_step is lin.linear_actor_step
    assert mlp.actor_step is mlp.mlp_actor_step
    assert grid_world(code_version="v2") == grid_world(version="v2") == grid_world("v2")
    assert grid_world("v2").code_version == "v2"
    with pytest.raises(ValueError, match="not both"):
        grid_world(code_version="v1", version="v2")
    assert ex.learner(code_version="v1") is ex.learner(version="v1") is ex.learner("v1")
