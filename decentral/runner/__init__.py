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
* :mod:`~decentral.runner.program` — the traced program of a run (jaxprs of init, one step and
  the record function, constants by content): the identity of what a run computes, for
  checkpoints and the compile cache;
* :mod:`~decentral.runner.fingerprint` and :mod:`~decentral.runner.checkpoint` — content
  digests, and the checkpoint files (a checkpoint resumes only the run it was written by);
* :mod:`~decentral.runner.horizon` — the explicit graph stacks an algorithm reaches (its
  default ``max_horizon``);
* :mod:`~decentral.runner.driver` — :func:`run`, orchestration over the plan.

Writing an algorithm (the pattern every family follows; :mod:`decentral.consensus` is the
template): a factory takes the *static structure* (graph sequence, problem tables, sizes) as
arguments, closes ``init`` / ``step`` over it and describes it in ``config``; everything a user
*sweeps* (step sizes, exploration constants, initial values) goes in ``params``, so
``run(alg, params, seeds, T, sweep="step_size")`` sweeps in one compile. An algorithm built on a
graph sequence of finite length (an explicit stack) gets that length as its ``max_horizon``
automatically, and longer runs are refused before compiling.

Compilation: the compiled functions are cached by ``(algorithm, record_fn, record layout, sweep
axes, devices, params shapes)`` and, behind that, by the traced program: an algorithm built
anew whose program (and constants) equal an earlier one's reuses its compilation. The chunk
start is a traced argument, so a run compiles once whatever its chunking.

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
from .layout import MIN_AGENTS_PER_DEVICE, choose_layout
from .plan import log_spaced_steps, validate_seeds
from .program import Program, RunPrograms, trace_program

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
    "validate_seeds",
    "trace_program",
    "Program",
    "RunPrograms",
    "KEY_DERIVATION",
    "choose_layout",
    "MIN_AGENTS_PER_DEVICE",
]
