"""Compile batching: run several bandit systems as one compiled program.

Compiling a bandit run costs seconds (the heterogeneous sampler of the first version, with the
Beta law's gamma sampler, about 10 s), far more than running it at the figures' sizes. Two
tricks let one compilation serve several curves without changing any number:

**Block-diagonal systems** (:func:`block_system`, :func:`run_blocks`). Disconnected blocks —
Dec_UCB on several graphs, and isolated agents — are stacked into one weight matrix and run by
one ``dec_ucb(W, theorem=1)`` with one exploration constant per agent (index width
``sqrt(c_i ln t / n)``):

* ``c_i = 4/3`` with flocking weights is Dec_UCB of Theorem 1 (:func:`dec_ucb_block`);
* ``c_i = 3 / |N_i|`` with Metropolis weights is Dec_UCB of Theorem 2, whose width is
  ``sqrt(3 ln t / (|N_i| n))``;
* ``c_i = 2`` on an isolated agent (``W = [[1]]``) is UCB1 exactly (:func:`ucb1_block`):
  max-consensus keeps ``m = n``, forced exploration never fires and ``z = xbar``.

Blocks share no edge, so each runs exactly its own algorithm; ``tests/test_figures.py`` checks
both reductions pull for pull. Agent ``b N + i`` of a system of copies faces agent ``i``'s laws
with its own reward streams (so curves of different blocks are not paired on the same samples).

**Shared samplers** (:func:`with_shared_sampler`). A sampler that evaluates several reward
families on every draw and keeps the one each (agent, arm) follows gives the same rewards as
the family's own sampler, and one program then serves every draw of families (and every law
of the list): fewer compiles, slower draws — worth it where compiling dominates.

Example:
    >>> W, c, where = block_system([ucb1_block(2), ucb1_block(1)])
    >>> W.shape, c.tolist(), where[1]
    ((3, 3), [2.0, 2.0, 2.0], slice(2, 3, None))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

import decentral.graphs as g
from decentral.bandits import DecUCBParams, dec_ucb

from .common import evaluate_curves

__all__ = ["dec_ucb_block", "ucb1_block", "block_system", "run_blocks", "with_shared_sampler"]


def dec_ucb_block(adj: np.ndarray, theorem: int) -> tuple[np.ndarray, np.ndarray]:
    """``(weights, exploration constants)`` of Dec_UCB on ``adj`` as a block of
    :func:`block_system`: Theorem 1, flocking weights and ``c_i = 4/3``; Theorem 2, Metropolis
    weights and ``c_i = 3 / |N_i|`` (its width ``sqrt(3 ln t / (|N_i| n))``). ``adj`` is a
    boolean adjacency with self-loops (refused without them, as by every graph argument of
    the library; ``decentral.graphs.add_self_loops`` adds them)."""
    adj = np.asarray(adj)
    if theorem == 1:
        return g.row_stochastic(adj), np.full(len(adj), 4.0 / 3.0)
    if theorem == 2:
        return g.metropolis(adj), 3.0 / adj.sum(axis=1)
    raise ValueError(f"theorem must be 1 or 2; got {theorem!r}.")


def ucb1_block(num_agents: int) -> tuple[np.ndarray, np.ndarray]:
    """N isolated agents with ``c = 2`` as a block of :func:`block_system`: UCB1 exactly (with
    ``W = [[1]]`` max-consensus keeps ``m = n``, forced exploration never fires, ``z = xbar``
    and the width is ``sqrt(2 ln t / n)``; spec of the baselines)."""
    return np.eye(num_agents), np.full(num_agents, 2.0)


def block_system(blocks) -> tuple[np.ndarray, np.ndarray, list[slice]]:
    """Disconnected blocks ``[(weights [n_b, n_b], constants [n_b]), ...]`` as one system:
    the block-diagonal weights ``[N, N]``, the per-agent exploration constants ``[N]`` and each
    block's agent slice. Run as ``dec_ucb(W, theorem=1)`` with ``DecUCBParams(c)`` (width
    ``sqrt(c_i ln t / n)``), every block is exactly its own algorithm: no block hears another.
    """
    weights = [np.asarray(w, np.float64) for w, _ in blocks]
    sizes = [len(w) for w in weights]
    W = np.zeros((sum(sizes), sum(sizes)))
    where, start = [], 0
    for w, n in zip(weights, sizes, strict=True):
        W[start:start + n, start:start + n] = w
        where.append(slice(start, start + n))
        start += n
    c = np.concatenate([np.broadcast_to(np.asarray(k, np.float64), (n,))
                        for (_, k), n in zip(blocks, sizes, strict=True)])
    return W, c, where


def run_blocks(blocks: Mapping[object, tuple[np.ndarray, np.ndarray]], arms, horizon: int,
               seeds) -> dict[object, dict[str, np.ndarray]]:
    """Run the :func:`block_system` of ``blocks`` (name -> block) in one compile, both
    metrics; returns name -> ``{"t", "regret", "parity"}`` with ``[S, R, n_b]`` curves."""
    W, c, where = block_system(list(blocks.values()))
    res = evaluate_curves(dec_ucb(W, theorem=1), arms, horizon, seeds, params=DecUCBParams(c),
                          parity=True)
    return {name: {"t": res["t"], "regret": res["regret"][..., sl],
                   "parity": res["parity"][..., sl]}
            for name, sl in zip(blocks, where, strict=True)}


def with_shared_sampler(arms, families: Iterable[str]):
    """``arms`` with a sampler that evaluates every family of ``families`` on each draw
    (:meth:`~decentral.bandits.Arms.with_extra_families`): the same rewards, one compiled
    program for every arms object of the same shapes and family list."""
    return arms.with_extra_families(list(families))
