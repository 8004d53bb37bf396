"""What every optimization factory shares: the checks of its problem and graph sequences, its
params check, the state dtype, joint mixing of several per-agent arrays, and the stability
warnings.

A factory calls :func:`check_problem`, then :func:`sequence_for` once per graph sequence it
takes (``"row"``, ``"column"`` or ``"doubly"`` stochastic), and builds its ``check_params``
with :func:`params_checker`. Inside a step, :func:`mix_together` mixes several ``[N, k]``
arrays with one call of :func:`decentral.graphs.mix` (one matmul or one gather pass).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from decentral.graphs import GraphSequence, as_sequence, mix, require_stochastic_sequence
from decentral.optimization.params import OptimizationParams, check_optimization_params
from decentral.optimization.problems import Problem

__all__ = ["check_problem", "sequence_for", "state_dtype", "params_checker", "mix_together",
           "noise_key", "graphs_of", "static_symmetric_weights",
           "warn_step_above"]


def check_problem(problem, who: str) -> None:
    """Raise ValueError unless ``problem`` is a :class:`Problem`."""
    if not isinstance(problem, Problem):
        raise ValueError(f"{who}: problem must be a decentral.optimization Problem (quadratic, "
                         f"logistic_regression, ...); got {type(problem).__name__}.")


def sequence_for(problem: Problem, graphs, kind: str, who: str, *, rule=None, backend=None,
                 name: str = "graphs") -> GraphSequence:
    """``graphs`` as a :class:`~decentral.graphs.GraphSequence` checked ``kind``-stochastic
    with the problem's number of agents.

    Raises:
        ValueError: the weights are not ``kind``-stochastic (naming the step) or the sizes
            differ, naming ``name``.
    """
    seq = as_sequence(graphs, rule=rule, backend=backend)
    require_stochastic_sequence(seq, kind, who=f"{who} ({name})")
    if seq.n != problem.num_agents:
        raise ValueError(f"{who}: {name} has {seq.n} agents but the problem has "
                         f"{problem.num_agents}.")
    return seq


def state_dtype(dtype) -> np.dtype:
    """The dtype of the iterates when the params give no ``x0`` (default JAX's float)."""
    return jnp.dtype(dtype) if dtype is not None else jnp.zeros(()).dtype


def params_checker(problem: Problem, sequences: dict[str, tuple[GraphSequence, str]],
                   who: str, extra: Callable | None = None) -> Callable:
    """The factory's ``check_params``: :func:`check_optimization_params` with the problem's
    sizes, then ``params.graphs`` (same structure and stochasticity as the factory's own; a
    ``(pull, push)`` pair where the factory takes two sequences), then ``extra(params)``.

    Args:
        sequences: ``{name: (sequence, kind)}`` in the order the factory takes them.
    """
    n, d = problem.num_agents, problem.dim
    names = list(sequences)

    def check_params(params) -> None:
        check_optimization_params(params, num_agents=n, dim=d)
        if params.graphs is not None:
            given = params.graphs if len(names) > 1 else (params.graphs,)
            if len(names) > 1 and (not isinstance(given, tuple) or len(given) != len(names)):
                raise ValueError(f"params.graphs of {who} must be a tuple ({', '.join(names)}) "
                                 f"of graph sequences; got {type(params.graphs).__name__}.")
            for name, other in zip(names, given, strict=True):
                seq, kind = sequences[name]
                label = "params.graphs" if len(names) == 1 else f"params.graphs ({name})"
                if not isinstance(other, GraphSequence):
                    raise ValueError(f"{label} must be a decentral.graphs GraphSequence; got "
                                     f"{type(other).__name__}.")
                seq.require_same_structure(other, name=label)
                require_stochastic_sequence(other, kind, who=f"{who} ({label})")
        if extra is not None:
            extra(params)

    return check_params


def graphs_of(params: OptimizationParams, own: tuple[GraphSequence, ...]) -> tuple:
    """The sequences of this run: ``params.graphs`` where given, else the factory's own."""
    if params.graphs is None:
        return own
    return params.graphs if isinstance(params.graphs, tuple) else (params.graphs,)


def mix_together(W, *arrays: jax.Array) -> tuple[jax.Array, ...]:
    """``(W @ a for a in arrays)`` in one :func:`~decentral.graphs.mix` call on the
    column-stacked ``[N, sum k]`` array (each ``a`` is ``[N, k]``), cast back to each dtype."""
    widths = [a.shape[1] for a in arrays]
    stacked = jnp.concatenate(arrays, axis=1) if len(arrays) > 1 else arrays[0]
    out = mix(W, stacked, exact_nonfinite=False)
    parts = jnp.split(out, np.cumsum(widths)[:-1], axis=1)
    return tuple(p.astype(a.dtype) for p, a in zip(parts, arrays, strict=True))


def noise_key(key: jax.Array) -> jax.Array:
    """The key of the gradient noise of a step (or of ``init``): ``fold_in(key, 1)``."""
    return jax.random.fold_in(key, 1)


def static_symmetric_weights(seq: GraphSequence, *, max_agents: int = 2000,
                             tol: float = 1e-12) -> np.ndarray | None:
    """The float64 matrix W of a static sequence whose W is symmetric, or None (not static,
    not symmetric, or more than ``max_agents`` agents: its spectrum is not computed)."""
    if seq.form != "static" or seq.n > max_agents:
        return None
    W = np.asarray(seq.weights_host64(1)[0], np.float64)
    return W if np.abs(W - W.T).max() <= tol else None


def warn_step_above(params: OptimizationParams, threshold: float, what: str, *,
                    boundary_allowed: bool = False) -> None:
    """A :class:`~decentral.hypotheses.HypothesisWarning` when a constant step of ``params``
    (a sweep member with ``power == 0``) is at least ``threshold`` (above it, where the
    theorem's condition is ``alpha <= threshold``: ``boundary_allowed``); ``what`` names the
    condition and its source. Decaying schedules fall below any threshold and are not warned
    about."""
    from decentral.hypotheses import warn_hypothesis

    step = params.step_size
    alpha0, t0, power = (np.broadcast_arrays(*(np.asarray(f, np.float64) for f in step)))
    constant = power == 0
    if not np.any(constant):
        return
    alpha = float(np.max(alpha0[constant]))
    if alpha > threshold or (alpha == threshold and not boundary_allowed):
        warn_hypothesis(f"constant step size {alpha:.4g} vs {threshold:.4g}, {what}: the "
                        "theorem does not apply and the iterates may diverge", stacklevel=4)
