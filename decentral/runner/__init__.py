"""The runner: many seeds (and hyperparameter values) of one algorithm, compiled once.

An algorithm is a pair of pure functions (:class:`Algorithm`); :func:`run` drives it with
``lax.scan`` over time inside ``jit``, ``vmap`` over seeds (and over a params axis for a sweep),
records at chosen steps, runs in chunks so a progress bar can tick and a long run can checkpoint
and resume, and shards the seeds axis over devices when more than one is present (the same code
path on one CPU).

The package, in the order data flows:

* :mod:`~decentral.runner.algorithm` — the contract: :class:`Algorithm` (init, step, name,
  version, max_horizon, config), the :class:`InitFn` / :class:`StepFn` / :class:`RecordFn`
  protocols, :class:`RecordContext`, :class:`RunResult`, :class:`DivergenceError`;
* :mod:`~decentral.runner.keys` — the key derivation (results never depend on chunking,
  resuming or device count);
* :mod:`~decentral.runner.plan` — every argument checked before anything compiles;
* :mod:`~decentral.runner.compile` — the jitted init / chunk / locate functions, cached;
* :mod:`~decentral.runner.fingerprint` and :mod:`~decentral.runner.checkpoint` — what a
  checkpoint must see to never resume another run, and the files it writes;
* :mod:`~decentral.runner.driver` — :func:`run`, orchestration over the plan.

Writing an algorithm (the pattern every family follows; :mod:`decentral.consensus` is the
template): a factory takes the *static structure* (graph sequence, problem tables, sizes) as
arguments, closes ``init`` / ``step`` over it and describes it in ``config``; everything a user
*sweeps* (step sizes, exploration constants, initial values) goes in ``params``, so
``run(alg, params, seeds, T, sweep="step_size")`` sweeps in one compile. An algorithm built on a
graph sequence of finite length (an explicit stack) gets that length as its ``max_horizon``
automatically, and longer runs are refused before compiling.

Compilation: the compiled functions are cached by ``(algorithm, record_fn, record layout, sweep
axes, devices)``; the chunk start is a traced argument, so a run compiles once whatever its
chunking. A new ``record_fn`` lambda per call compiles anew: define it once.

Example:
    >>> import jax, jax.numpy as jnp
    >>> walk = Algorithm(init=lambda k, p: jnp.zeros(3),
    ...                  step=lambda k, s, p, t, x: (s + p * jax.random.normal(k, (3,)), None),
    ...                  name="random_walk")
    >>> res = run(walk, 0.1, seeds=[0, 1], num_steps=100, record_at=log_spaced_steps(100, 3))
    >>> res.records.shape, res.record_steps.tolist()
    ((2, 3, 3), [1, 10, 100])
"""

from .algorithm import (
    Algorithm,
    DivergenceError,
    DivergenceWarning,
    FrozenConfig,
    InitFn,
    RecordContext,
    RecordFn,
    RunResult,
    StepFn,
    stack_params,
)
from .driver import run
from .fingerprint import Unfingerprintable
from .keys import KEY_DERIVATION, seed_keys, step_key
from .plan import log_spaced_steps

__all__ = [
    "Algorithm",
    "RunResult",
    "DivergenceError",
    "DivergenceWarning",
    "FrozenConfig",
    "InitFn",
    "StepFn",
    "RecordFn",
    "RecordContext",
    "Unfingerprintable",
    "run",
    "seed_keys",
    "step_key",
    "stack_params",
    "log_spaced_steps",
    "KEY_DERIVATION",
]
