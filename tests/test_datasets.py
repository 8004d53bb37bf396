"""decentral.datasets: the papers' small public data, and the old import paths re-exporting it."""

import numpy as np
import pytest

import decentral.graphs as g
from decentral.datasets import figura2021, zhu2021


def test_zhu2021_graphs_are_bundled_and_read_in_the_library_orientation():
    names = zhu2021.paper_graph_names()
    assert len(names) == 6
    for name in names:
        adj = zhu2021.paper_graph(name)
        assert adj.shape == (6, 6) and adj.dtype == bool and adj.diagonal().all()
        kind = zhu2021.paper_graph_kind(name)
        assert (kind == "undirected") == bool(np.array_equal(adj, adj.T))
        assert (kind == "weak") != bool(g.is_strongly_connected(adj))    # undirected: connected
    # the weakly connected graph's sink 3: it hears 0, 1, 2, 5 and nobody hears it
    assert zhu2021.paper_graph("weakly")[:, 3].nonzero()[0].tolist() == [3]
    with pytest.raises(ValueError, match="unknown paper graph"):
        zhu2021.paper_graph("ring")


def test_figura2021_experiment_graph_and_example1():
    adj = figura2021.experiment_graph()
    assert adj.sum(axis=1).tolist() == [4] * 5 and adj.diagonal().all()
    assert g.is_r_robust(adj, 2) and not g.is_r_robust(adj, 3)
    mdp = figura2021.example1_mdp()
    np.testing.assert_array_equal(np.asarray(mdp.rewards)[:, :, 0], figura2021.EXAMPLE1_REWARDS)
    with pytest.raises(ValueError, match="rewards must be"):
        figura2021.example1_mdp(rewards=np.zeros((5, 3)))


def test_old_import_paths_re_export_the_same_objects():
    from decentral import bandits, resilient_ac
    from decentral.bandits import paper_graphs
    from decentral.resilient_ac import experiments, linear

    assert bandits.paper_graph is zhu2021.paper_graph is paper_graphs.paper_graph
    assert bandits.paper_graph_kind is zhu2021.paper_graph_kind
    assert resilient_ac.example1_mdp is linear.example1_mdp is figura2021.example1_mdp
    assert linear.EXAMPLE1_REWARDS is figura2021.EXAMPLE1_REWARDS
    assert experiments.PAPER_IN_NODES is figura2021.EXPERIMENT_IN_NODES


def test_learner_modules_keep_their_former_paths():
    from decentral.resilient_ac import experiments, gridworld, learning, mlp

    assert experiments.run_experiment is learning.run_experiment
    assert experiments.learner is learning.learner
    assert gridworld.grid_world is learning.grid_world
    assert mlp.consensus_epoch is learning.mlp.consensus_epoch
    assert mlp.LearningProtocol is learning.LearningProtocol
    assert set(experiments.__all__) <= set(dir(experiments))


@pytest.mark.parametrize("module, name", [
    ("decentral.resilient_ac.experiments", "V1_LOGGED"),
    ("decentral.resilient_ac.experiments", "v2_panel_arrays"),
    ("decentral.resilient_ac.linear", "example1_figure_data"),
])
def test_paper_numbers_that_left_the_library_say_where_they_went(module, name):
    import importlib

    mod = importlib.import_module(module)
    with pytest.raises(AttributeError, match=f"proofs_checks.resilient_ac.setups.{name}"):
        getattr(mod, name)
    with pytest.raises(AttributeError, match="has no attribute"):
        mod.no_such_name  # noqa: B018


def test_logged_runs_drive_the_grid_world_defaults():
    from decentral.resilient_ac import learning

    for version in ("v1", "v2"):
        assert learning.default_seeds(version) == figura2021.LOGGED_SEEDS[version]
        assert learning.default_episodes(version) == figura2021.LOGGED_EPISODES[version]
        assert learning.default_phases(version) == figura2021.LOGGED_PHASES[version]
        for seed in figura2021.LOGGED_SEEDS[version]:
            np.testing.assert_array_equal(learning.paper_targets(version, seed),
                                          figura2021.LOGGED_TARGETS[(version, seed)])
    # the Example 1 attacker pushes along the mean feature, or along the current one
    mean_feature = figura2021.EXAMPLE1_FEATURES.mean(0)
    params = figura2021.example1_attacker(push=-1.0).params
    np.testing.assert_allclose(params["team_reward_target"], mean_feature, rtol=1e-6)
    assert float(params["team_reward"]) == -1.0
    assert "team_reward_target" not in figura2021.example1_attacker("current_feature").params \
        or not np.any(figura2021.example1_attacker("current_feature").params["team_reward_target"])
    with pytest.raises(ValueError, match="direction"):
        figura2021.example1_attacker("sideways")
