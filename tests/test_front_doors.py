"""The grid-world conveniences are thin layers over ``decentral.runner.run``:
``resilient_ac.run_runs`` / ``run_experiment`` return the numbers that calling ``run`` yourself
returns, seed for seed. (``bandits.evaluate`` against ``run``:
``tests/test_bandits.py::test_evaluate_environment_as_data_matches_closed_over_constants``.)"""

import jax
import numpy as np
import pytest

from decentral.resilient_ac import learning as ex
from decentral.resilient_ac.learning import gridworld, mlp
from decentral.runner import run

TINY = mlp.LearningProtocol("v1", width=4, episodes_per_update=2, epochs=1, message_steps=1,
                            adversary_epochs=1, adversary_batch=0, adversary_actor_batch=0,
                            buffer_collections=1, shared_templates=True)


def _direct_params(seeds, types, H):
    """The runs of ``run_runs([(scenario, H, False)], seeds=seeds)`` built by hand from the
    documented fields of LearnParams (one run per seed)."""
    P = len(seeds)
    env = gridworld.grid_world("v1", num_agents=5)
    tmpl = jax.eval_shape(lambda: mlp.init_nets(jax.random.key(0), 5, env.obs_dim,
                                                env.tr_input_dim, env.num_actions, TINY.width,
                                                TINY.shared_templates))
    f = np.dtype(jax.numpy.result_type(float))
    hp = ex.HYPERPARAMS
    return ex.LearnParams(
        H=np.full(P, H, np.int32), agent_type=np.tile(np.asarray(types, np.int32), (P, 1)),
        oracle=np.zeros(P, bool),
        targets=np.stack([gridworld.paper_targets("v1", s) for s in seeds]).astype(np.int32),
        seed=np.asarray(seeds, np.uint32), phase=np.zeros(P, np.int32),
        warm=np.zeros(P, bool),
        start_nets=jax.tree_util.tree_map(lambda s: np.zeros((P,) + s.shape, s.dtype), tmpl),
        in_nodes=ex.resolve_graph("paper", 5), critic_lr=np.asarray(hp["critic_lr"], f),
        actor_lr=np.asarray(hp["actor_lr"], f), gamma=np.asarray(hp["gamma"], f),
        epsilon=np.asarray(hp["epsilon"], f))


def test_run_experiment_returns_what_run_returns():
    seeds = list(ex.default_seeds("v1")[:2])
    res = ex.run_experiment("greedy", 1, code_version=TINY, seeds=seeds, episodes=4, phases=1)
    types = [mlp.COOPERATIVE] * 5
    types[ex.ADVERSARY] = mlp.AGENT_TYPES["greedy"]
    alg = ex.learner(TINY, "corrected", adversary_slots=(ex.ADVERSARY,))
    swept = ["H", "agent_type", "oracle", "targets", "seed", "phase", "warm", "start_nets"]
    by_hand = _direct_params(seeds, types, 1)
    direct = run(alg, by_hand, [0], 4 // TINY.episodes_per_update,
                 record_fn=lambda state, ctx: ctx.info, record_context=True, sweep=swept)
    for name in ("coop_return", "adversary_return", "estimate"):
        mine = np.asarray(getattr(direct.records, name))[:, 0].reshape(len(seeds), -1)
        np.testing.assert_array_equal(getattr(res, name), mine, err_msg=name)
    assert res.coop_return.shape == (2, 4) and np.all(np.isfinite(res.coop_return))
    # the public helper builds the same params (what run_runs runs)
    helped = ex.stack_runs([ex.learner_params("greedy", 1, s, code_version=TINY) for s in seeds])
    assert list(ex.RUN_FIELDS) == swept
    for a, b in zip(jax.tree_util.tree_leaves(helped), jax.tree_util.tree_leaves(by_hand),
                    strict=True):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a, b)


def test_stack_runs_refuses_runs_that_differ_in_a_shared_field():
    a = ex.learner_params("greedy", 1, 50, code_version=TINY)
    with pytest.raises(ValueError, match="differ in gamma"):
        ex.stack_runs([a, a._replace(gamma=np.asarray(0.5))])
    with pytest.raises(ValueError, match="seeds"):
        ex.learner_params("greedy", 1, -1, code_version=TINY)
