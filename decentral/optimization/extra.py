"""EXTRA: an exact first-order method for decentralized optimization with one static
symmetric mixing matrix.

Shi, Ling, Wu & Yin, "EXTRA: An exact first-order algorithm for decentralized consensus
optimization", SIAM J. Optim. 25(2), 2015, Algorithm 1. ``W`` static,
symmetric, doubly stochastic; ``W~`` (default ``(I + W) / 2``); then::

    x(1)   = W x(0) - alpha grad F(x(0))
    x(k+2) = (I + W) x(k+1) - W~ x(k) - alpha (grad F(x(k+1)) - grad F(x(k)))

The paper's step is constant; a schedule gives ``alpha_{k+1} grad F(x(k+1)) - alpha_k
grad F(x(k))`` in place of the last term (the same for a constant step up to rounding). With
the default ``W~``, ``W~ x(k) = (x(k) + W x(k)) / 2`` reuses the previous step's ``W x(k)``:
communication is one d-vector per edge per step; a given ``W~`` costs a second mixing per step
(its messages travel on its own edges).

The paper's Assumption 1 asks ``W``, ``W~`` symmetric with ``(I + W)/2 >= W~ >= W``,
``W~ > 0``, ``null(W - W~) = span(1)`` and ``null(I - W~) >= span(1)``; with convex ``f_i``
with L-Lipschitz gradients, Theorem 3.3 gives convergence to an optimum for
``0 < alpha < 2 lambda_min(W~) / L`` (Theorem 3.5: O(1/k) ergodic rate; Theorem 3.7: linear
under restricted strong convexity, with a smaller step). A constant step at or above
``2 lambda_min(W~) / L`` gets a :class:`~decentral.hypotheses.HypothesisWarning`.

Rounding: along the agents' mean, EXTRA's recursion has an eigenvalue 1 (the sum of its
correction terms is conserved, and is zero only in exact arithmetic). Once the iterates have
converged every step makes the same rounding error, nothing damps it, and the error to the
optimum grows linearly in k (float64, 8 agents: about 1.3e-15 per step). Run in float64 and
mind long horizons.

Exact identity (float64): ``mean_i x_i(k+1) = mean_i x_i(k) - alpha mean_i grad f_i(x_i(k))``.

Example:
    >>> import numpy as np
    >>> import decentral.graphs as g
    >>> from decentral.optimization import extra, optimization_params, random_quadratic
    >>> from decentral.runner import run
    >>> p = random_quadratic(4, 2, smoothness=2.0, heterogeneity=1.0, seed=0)
    >>> res = run(extra(p, g.static(g.ring(4) | g.ring(4).T, rule="metropolis")),
    ...           optimization_params(0.05), seeds=[0], num_steps=500)
    >>> bool(np.abs(np.asarray(res.final_state.x[0]) - p.optimum).max() < 1e-3)
    True
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

from decentral.graphs import as_sequence
from decentral.optimization.base import (
    check_problem,
    mix_together,
    noise_key,
    params_checker,
    sequence_for,
    state_dtype,
    warn_step_above,
)
from decentral.optimization.params import OptimizationParams
from decentral.schedules import step_size

__all__ = ["ExtraState", "extra"]

SPECTRUM_MAX_AGENTS = 2000


class ExtraState(NamedTuple):
    """State of EXTRA.

    Attributes:
        x: ``[N, d]`` the iterates ``x(k)``.
        x_prev: ``[N, d]`` ``x(k-1)`` (``x(0)`` before the first step).
        wx_prev: ``[N, d]`` ``W x(k-1)``.
        ag_prev: ``[N, d]`` ``alpha_{k-1} grad F(x(k-1))`` (the same gradient sample).
    """

    x: jax.Array
    x_prev: jax.Array
    wx_prev: jax.Array
    ag_prev: jax.Array

    @property
    def estimate(self) -> jax.Array:
        """The agents' estimates ``[N, d]``: the iterates."""
        return self.x


def _static_csr(seq, who: str, name: str) -> sp.csr_array:
    if seq.form != "static":
        raise ValueError(f"{who} needs one static {name} (its correction sums (W - W~) x(t) "
                         f"over all past steps); got a {seq.form} sequence.")
    return sp.csr_array(seq.fixed_csr()[0], dtype=np.float64)


def _asymmetry(W: sp.csr_array) -> float:
    diff = (W - W.T).tocsr()
    return float(np.abs(diff.data).max()) if diff.nnz else 0.0


def extra(problem, graphs, *, w_tilde=None, allow_nonsymmetric: bool = False, dtype=None,
          rule: str | None = None, backend: str | None = None):
    """EXTRA over one static symmetric doubly stochastic W (see the module docstring).

    Args:
        problem: a :class:`~decentral.optimization.problems.Problem` (closed over).
        graphs: a static sequence (or a matrix / pattern with ``rule``) whose W is symmetric
            and doubly stochastic (``rule="metropolis"`` on an undirected graph).
        w_tilde: None for ``(I + W) / 2``, or a static symmetric doubly stochastic ``W~`` of
            the same agents (anything :func:`decentral.graphs.as_sequence` accepts).
        allow_nonsymmetric: run a row-stochastic, non-symmetric W anyway (the planted
            control where EXTRA can diverge); default False refuses it.
        dtype: dtype of the iterates when the params give no ``x0``.
        rule, backend: as in :func:`decentral.graphs.as_sequence`.

    Returns:
        An :class:`~decentral.runner.Algorithm` with state :class:`ExtraState`;
        ``params.graphs`` is not accepted (the matrix is structure here).

    Raises:
        ValueError: not a Problem, a time-varying sequence, W not symmetric (unless
            ``allow_nonsymmetric``) or not stochastic, or a bad ``w_tilde``.

    Warns:
        HypothesisWarning: where params arrive, when a constant step is at least
            ``2 lambda_min(W~) / L`` (computed for N <= 2000).
    """
    from decentral.runner import Algorithm

    check_problem(problem, "extra")
    kind = "row" if allow_nonsymmetric else "doubly"
    graphs = sequence_for(problem, graphs, kind, "extra", rule=rule, backend=backend)
    W = _static_csr(graphs, "extra", "W")
    asym = _asymmetry(W)
    if asym > 1e-12 and not allow_nonsymmetric:
        raise ValueError(f"extra needs a symmetric W (max |W - W^T| = {asym:.3g}); its "
                         "convergence fails on directed weights. Build W with "
                         "rule='metropolis' on an undirected graph, or pass "
                         "allow_nonsymmetric=True for the planted control.")
    tilde = None
    if w_tilde is not None:
        tilde = sequence_for(problem, as_sequence(w_tilde, rule=rule, backend=graphs.backend),
                             "doubly", "extra", name="w_tilde")
        wt = _static_csr(tilde, "extra", "w_tilde")
        if _asymmetry(wt) > 1e-12:
            raise ValueError("extra: w_tilde must be symmetric.")
    n, d = problem.num_agents, problem.dim
    x_dtype = state_dtype(dtype)

    check_extra = None
    if n <= SPECTRUM_MAX_AGENTS and asym <= 1e-12:
        dense_tilde = (np.eye(n) + W.toarray()) / 2 if tilde is None else wt.toarray()
        threshold = 2.0 * float(np.linalg.eigvalsh(dense_tilde)[0]) / problem.max_smoothness

        def check_extra(params) -> None:
            warn_step_above(params, threshold, "EXTRA's condition alpha < 2 lambda_min(W~) / L "
                            "(Shi et al. 2015, Theorem 3.3)")

    def check_params(params) -> None:
        if params.graphs is not None:
            raise ValueError("params.graphs is not accepted by extra: its W is static "
                             "structure; build another extra(...) to change it.")
        params_checker(problem, {"graphs": (graphs, kind)}, "extra", check_extra)(params)

    def init(key, params: OptimizationParams) -> ExtraState:
        x = jnp.zeros((n, d), x_dtype) if params.x0 is None else jnp.asarray(params.x0)
        zero = jnp.zeros_like(x)
        return ExtraState(x=x, x_prev=x, wx_prev=zero, ag_prev=zero)

    def step(key, state, params: OptimizationParams, t, x_t):
        x = state.x
        (wx,) = mix_together(graphs.at(t, key), x)
        g = problem.stochastic_gradient(noise_key(key), x, params.gradient_noise)
        ag = step_size(params.step_size, t).astype(x.dtype) * g
        if tilde is None:
            tilde_prev = (state.x_prev + state.wx_prev) / 2
        else:
            (tilde_prev,) = mix_together(tilde.at(t, key), state.x_prev)
        later = x + wx - tilde_prev - (ag - state.ag_prev)
        x_new = jnp.where(t == 0, wx - ag, later)
        return ExtraState(x=x_new, x_prev=x, wx_prev=wx, ag_prev=ag), None

    config = {"problem": problem.config(), "graphs": graphs.digest(),
              "w_tilde": None if tilde is None else tilde.digest(),
              "allow_nonsymmetric": allow_nonsymmetric, "dtype": str(x_dtype)}
    return Algorithm(init=init, step=step, name="extra", version="1", config=config,
                     check_params=check_params, num_agents=n)
