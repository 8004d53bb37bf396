"""How a run lays its seeds and agents out over devices: the ``(seeds, agents)`` device mesh.

A run's devices form a two-axis mesh ``seeds x agents``. The seeds axis splits the Monte-Carlo
seeds (each device group runs whole seeds: no communication at all); the agents axis splits
the agents of every seed into contiguous blocks, one per device, for an algorithm that declares
its agent axis (:attr:`~decentral.runner.Algorithm.num_agents`).

Splitting agents is GSPMD's job: the state leaves with a leading agent axis are placed and kept
(a sharding constraint after every update) in blocks of agents, and XLA's partitioner inserts
the communication the step needs. For the mixing step ``x_i <- sum_j W_ij x_j`` it
**all-gathers** the state over the agents axis (every device receives every agent's value,
then mixes its own block: a gather from a neighbour table or its rows of ``W``), which is what
a halo exchange sends when the graph's neighbourhoods span the blocks (the exponential graph,
dense and random graphs) and more than a halo exchange on a local graph (a ring, a grid). The
arithmetic of every agent is the same as on one device, so results agree with the unsharded
run up to the order of floating-point sums XLA picks for a split product (tested to relative
``1e-12`` in float64; bitwise for table mixing, whose sums do not cross blocks).

Default layout (``layout=None``): seeds first, since they need no communication. With ``D``
devices and ``S`` seeds, the seeds axis takes ``s``, the largest divisor of ``D`` that is at
most ``S``; the remaining factor ``a = D / s`` goes to the agents when the algorithm declares
``num_agents``, ``a`` divides it (blocks are equal) and every device would hold at least
:data:`MIN_AGENTS_PER_DEVICE` agents, else the seeds take all ``D`` devices as before (padded
seeds). So many seeds on few devices split seeds only; one seed of a large network on several
devices splits agents.

Example:
    >>> choose_layout(None, n_devices=4, n_seeds=2, num_agents=100_000)
    (2, 2)
    >>> choose_layout(None, n_devices=4, n_seeds=64, num_agents=100_000)
    (4, 1)
    >>> choose_layout("agents", n_devices=4, n_seeds=64, num_agents=12)
    (1, 4)
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

__all__ = ["MIN_AGENTS_PER_DEVICE", "LAYOUTS", "choose_layout", "make_mesh", "agent_leaves",
           "state_shardings"]

#: The default layout splits agents only when every device gets at least this many.
MIN_AGENTS_PER_DEVICE = 1024

#: The named layouts ``run(..., layout=...)`` accepts besides None and ``(seeds, agents)``.
LAYOUTS = ("seeds", "agents")


def choose_layout(layout: Any, *, n_devices: int, n_seeds: int,
                  num_agents: int | None) -> tuple[int, int]:
    """The mesh shape ``(seed devices, agent devices)`` of a run (see the module docstring).

    Args:
        layout: None (the default rule), ``"seeds"`` (all devices on seeds), ``"agents"``
            (all devices on agents) or a pair ``(seed devices, agent devices)`` whose product
            is the device count.
        n_devices, n_seeds: the run's device and seed counts.
        num_agents: the algorithm's :attr:`~decentral.runner.Algorithm.num_agents`.

    Raises:
        ValueError: an unknown layout, a pair that does not multiply to the device count, or
            agents split for an algorithm that does not declare ``num_agents`` or whose
            agent count is not a multiple of the agent-device count.
    """
    if layout is None:
        s = max(k for k in range(1, n_devices + 1) if n_devices % k == 0 and k <= n_seeds)
        a = n_devices // s
        if a > 1 and (num_agents is None or num_agents < a * MIN_AGENTS_PER_DEVICE
                      or num_agents % a):
            return n_devices, 1
        return s, a
    if isinstance(layout, str):
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be None, one of {LAYOUTS} or a pair (seed devices, "
                             f"agent devices); got {layout!r}.")
        grid = (n_devices, 1) if layout == "seeds" else (1, n_devices)
    else:
        try:
            grid = tuple(int(v) for v in layout)
            ok = len(grid) == 2 and all(v >= 1 for v in grid) and \
                all(not isinstance(v, bool) and float(v) == int(v) for v in layout)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(f"layout must be None, one of {LAYOUTS} or a pair of positive "
                             f"ints (seed devices, agent devices); got {layout!r}.")
        if grid[0] * grid[1] != n_devices:
            raise ValueError(f"layout {grid} needs {grid[0] * grid[1]} devices; the run has "
                             f"{n_devices} (pass devices=... or another layout).")
    if grid[1] > 1:
        if num_agents is None:
            raise ValueError(f"layout {layout!r} splits agents, but this algorithm does not "
                             "declare its agent axis (Algorithm.num_agents is None); use "
                             "layout='seeds'.")
        if num_agents % grid[1]:
            raise ValueError(f"layout {layout!r} splits {num_agents} agents over {grid[1]} "
                             "devices, which needs a multiple of the agent-device count "
                             "(equal blocks); pass fewer agent devices (a layout pair "
                             "(seed devices, agent devices) with devices=...) or "
                             "layout='seeds'.")
    return grid


def make_mesh(devices, grid: tuple[int, int]) -> Mesh:
    """The ``("seeds", "agents")`` mesh of ``devices`` in the shape ``grid``."""
    return Mesh(np.asarray(list(devices), dtype=object).reshape(grid), ("seeds", "agents"))


def agent_leaves(state_avals, num_agents: int | None, mesh: Mesh) -> Any:
    """A pytree of bools shaped like the (unbatched) state: True where a leaf is split over
    the agents axis (its first axis has length ``num_agents`` and the mesh splits agents)."""
    split = num_agents is not None and mesh.shape["agents"] > 1
    return jax.tree_util.tree_map(
        lambda a: bool(split and len(a.shape) >= 1 and a.shape[0] == num_agents), state_avals)


def state_shardings(mesh: Mesh, split, *, sweep: bool) -> Any:
    """The ``NamedSharding`` of every batched state leaf: ``[P?, S, N, ...]`` split over seeds
    and, where ``split`` says so, agents."""
    lead = (None, "seeds") if sweep else ("seeds",)
    return jax.tree_util.tree_map(
        lambda s: NamedSharding(mesh, P(*lead, "agents") if s else P(*lead)), split)
