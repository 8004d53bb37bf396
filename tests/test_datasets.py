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
