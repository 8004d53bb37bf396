"""The device layout of a run (``run(..., layout=...)``): the default rule and the refusals.

Runs split over several devices are tested in tests/test_runner_distributed.py (a fresh Python
with emulated devices); here only what one device can check.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import decentral.graphs as g
from decentral.consensus import consensus, consensus_params
from decentral.push_sum import push_sum
from decentral.runner import MIN_AGENTS_PER_DEVICE, Algorithm, choose_layout, run


@pytest.mark.parametrize(("devices", "seeds", "agents", "grid"), [
    (1, 1, None, (1, 1)),
    (4, 64, 10**6, (4, 1)),          # enough seeds: seeds only, no communication
    (4, 2, 10**6, (2, 2)),           # the devices two seeds cannot fill split agents
    (4, 1, 10**6, (1, 4)),
    (4, 1, None, (4, 1)),            # no agent axis declared: padded seeds
    (4, 1, 4 * MIN_AGENTS_PER_DEVICE - 4, (4, 1)),   # blocks too small
    (4, 1, 4 * MIN_AGENTS_PER_DEVICE + 2, (4, 1)),   # not a multiple of 4: unequal blocks
    (6, 4, 6 * 10**4, (3, 2)),       # the largest divisor of 6 that is at most 4 seeds
])
def test_default_layout_rule(devices, seeds, agents, grid):
    assert choose_layout(None, n_devices=devices, n_seeds=seeds, num_agents=agents) == grid


def test_named_and_explicit_layouts():
    assert choose_layout("seeds", n_devices=4, n_seeds=1, num_agents=None) == (4, 1)
    assert choose_layout("agents", n_devices=4, n_seeds=64, num_agents=8) == (1, 4)
    assert choose_layout((2, 2), n_devices=4, n_seeds=1, num_agents=8) == (2, 2)
    assert choose_layout([4, 1], n_devices=4, n_seeds=1, num_agents=None) == (4, 1)


@pytest.mark.parametrize(("layout", "agents", "match"), [
    ("rows", 8, "layout must be None, one of"),
    ((2, 2, 1), 8, "pair of positive ints"),
    ((0, 4), 8, "pair of positive ints"),
    ((1.5, 2), 8, "pair of positive ints"),
    ((True, 4), 8, "pair of positive ints"),
    ((2, 1), 8, "needs 2 devices; the run has 4"),
    ("agents", None, "does not declare its agent axis"),
    ((1, 4), 6, "multiple of the agent-device count"),
])
def test_bad_layouts_are_refused_by_name(layout, agents, match):
    with pytest.raises(ValueError, match=match):
        choose_layout(layout, n_devices=4, n_seeds=8, num_agents=agents)


def test_run_refuses_a_bad_layout_before_compiling():
    alg = consensus(g.static(g.ring(5), rule="row"))
    with pytest.raises(ValueError, match="layout must be None"):
        run(alg, consensus_params(), seeds=[0], num_steps=2, layout="diagonal")
    walk = Algorithm(init=lambda k, p: jax.numpy.zeros(3), step=lambda k, s, p, t, x: (s, None),
                     name="walk")
    assert walk.num_agents is None
    with pytest.raises(ValueError, match="does not declare its agent axis"):
        run(walk, None, seeds=[0], num_steps=2, layout=(1, 2),
            devices=jax.devices()[:1] * 2)


def test_one_device_layouts_give_the_same_numbers():
    alg = consensus(g.static(g.exponential(16, sparse=True), rule="row"), shape=2)
    runs = [run(alg, consensus_params(), seeds=[0, 1], num_steps=5, layout=lay).records.x
            for lay in (None, "seeds", "agents", (1, 1))]
    for other in runs[1:]:
        np.testing.assert_array_equal(other, runs[0])


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "8"])
def test_algorithm_num_agents_is_checked(bad):
    with pytest.raises(ValueError, match="num_agents must be a positive int or None"):
        Algorithm(init=lambda k, p: 0.0, step=lambda k, s, p, t, x: (s, None), name="a",
                  num_agents=bad)


def test_mixing_families_declare_their_agent_axis():
    assert consensus(g.static(g.ring(7), rule="row")).num_agents == 7
    assert push_sum(g.static(g.ring(7), rule="column")).num_agents == 7
