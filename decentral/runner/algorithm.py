"""The algorithm contract: :class:`Algorithm`, its function protocols, and what :func:`run`
returns.

An algorithm is two pure functions over a NamedTuple state (the pattern of optax / blackjax):

* ``init(key, params) -> State`` builds one seed's state (unbatched; per-agent arrays carry a
  leading agent axis);
* ``step(key, state, params, t, x_t) -> (State, Info)`` performs update ``t`` (0-based).

A family *factory* (see :func:`decentral.consensus.consensus`, the template) takes the static
structure — graph sequence, problem tables, sizes — as arguments, closes ``init``/``step`` over
it, describes it in ``config``, and leaves everything a user sweeps (step sizes, exploration
constants, initial values) to ``params``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple, Protocol, runtime_checkable

import jax
import numpy as np

from .fingerprint import array_digest
from .horizon import reachable_horizon

__all__ = [
    "Algorithm",
    "InitFn",
    "StepFn",
    "RecordFn",
    "RecordContext",
    "RunResult",
    "DivergenceError",
    "DivergenceWarning",
    "FrozenConfig",
    "stack_params",
]


@runtime_checkable
class InitFn(Protocol):
    """``init(key, params) -> State``: one seed's initial state from its init key."""

    def __call__(self, key: jax.Array, params: Any) -> Any: ...


@runtime_checkable
class StepFn(Protocol):
    """``step(key, state, params, t, x_t) -> (State, Info)``.

    ``key`` is the step's key, ``t`` an int32 scalar (0-based update index), ``x_t`` the t-th
    slice of the scanned inputs (None without ``xs``). The new state has the structure, shapes
    and dtypes of ``state``; ``Info`` is per-step diagnostics (may be None), never fed back.
    """

    def __call__(self, key: jax.Array, state: Any, params: Any, t: jax.Array,
                 x_t: Any) -> tuple[Any, Any]: ...


class RecordContext(NamedTuple):
    """What a ``record_fn`` sees besides the state when ``run(..., record_context=True)``.

    Attributes:
        t: int32 scalar, the number of updates done (the record "at step t": the state after
            ``t`` updates; 0 for the initial record).
        info: the ``Info`` of the update just performed (update ``t - 1``); zeros shaped like it
            for the initial record.
        x: the scanned input of that update, ``xs[t - 1]`` (zeros shaped like ``xs[0]`` for the
            initial record; None when ``run`` got no ``xs``).
    """

    t: jax.Array
    info: Any
    x: Any


@runtime_checkable
class RecordFn(Protocol):
    """``record_fn(state)`` (default) or ``record_fn(state, ctx)`` with ``record_context=True``,
    ``ctx`` a :class:`RecordContext`; returns the pytree kept at each record point."""

    def __call__(self, state: Any, *ctx: RecordContext) -> Any: ...


class FrozenConfig(Mapping):
    """An immutable, hashable JSON-like mapping (the frozen form of ``Algorithm.config``).

    Built from a dict whose values are JSON scalars, lists/tuples, dicts with string keys,
    numpy/JAX arrays (kept as a content digest ``"array:<dtype><shape>:<sha256>"``) or objects
    with a ``digest()`` method such as a :class:`~decentral.graphs.GraphSequence` (kept as that
    digest).

    Example:
        >>> cfg = FrozenConfig({"n": 4, "weights": np.eye(2)})
        >>> cfg["n"], cfg["weights"][:14]
        (4, 'array:float64[')
        >>> hash(cfg) == hash(FrozenConfig({"n": 4, "weights": np.eye(2)}))
        True
    """

    __slots__ = ("_data", "_text")

    def __init__(self, data: Mapping[str, Any] | None = None):
        plain = _jsonable_config(dict(data or {}), "config")
        object.__setattr__(self, "_data", plain)
        object.__setattr__(self, "_text", json.dumps(plain, sort_keys=True,
                                                     separators=(",", ":")))

    def __setattr__(self, name, value):
        raise AttributeError("FrozenConfig is immutable")

    def __getitem__(self, key):
        value = self._data[key]
        return _freeze(value)

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(self._text)

    def __eq__(self, other) -> bool:
        if isinstance(other, FrozenConfig):
            return self._text == other._text
        if isinstance(other, Mapping):
            try:
                return self._text == FrozenConfig(other)._text
            except (TypeError, ValueError):
                return False
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenConfig({self._text})"

    def to_json(self) -> dict:
        """A plain (mutable) JSON-able copy."""
        return json.loads(self._text)


def _freeze(value):
    if isinstance(value, dict):
        return FrozenConfig(value)
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _jsonable_config(value, where: str):
    """Turn a config value into plain JSON data (arrays and digestible objects by digest)."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        f = float(value)
        return f if np.isfinite(f) else repr(f)
    if isinstance(value, FrozenConfig):
        return value.to_json()
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError(f"{where} keys must be strings; got {k!r}.")
            out[k] = _jsonable_config(v, f"{where}[{k!r}]")
        return out
    if isinstance(value, list | tuple):
        return [_jsonable_config(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, np.ndarray | np.generic | jax.Array):
        return array_digest(value)
    if isinstance(value, np.dtype):
        return str(value)
    digest = getattr(value, "digest", None)
    if callable(digest):
        out = digest()
        if not isinstance(out, str):
            raise ValueError(f"{where}: {type(value).__name__}.digest() must return a str.")
        return out
    raise ValueError(
        f"{where} is a {type(value).__name__}, which a configuration cannot hold; use JSON "
        "values (numbers, strings, lists, dicts), arrays, or objects with a digest() method."
    )


@dataclasses.dataclass(frozen=True)
class Algorithm:
    """An algorithm as pure functions, the unit :func:`~decentral.runner.run` executes.

    Attributes:
        init: ``init(key, params) -> State`` for one seed (:class:`InitFn`).
        step: ``step(key, state, params, t, x_t) -> (State, Info)`` (:class:`StepFn`).
        name: names the algorithm in progress bars, messages and checkpoint fingerprints.
        version: a label of the algorithm's revision, kept in checkpoints and result files
            (what a run computes is identified by its traced program, whatever the label).
        max_horizon: largest ``num_steps`` the algorithm supports. None (default) means: the
            shortest finite ``length`` of any graph sequence ``init``/``step`` reach (an
            explicit stack), else unbounded. :func:`run` refuses longer runs before compiling.
        config: a readable description of what ``init``/``step`` close over, as JSON-like data
            (arrays and graph sequences are stored by content digest; see
            :class:`FrozenConfig`). It enters the checkpoint fingerprint beside the traced
            program, so a resume with another graph or option is refused with the differing
            field named. A hand-written algorithm may leave it None; it is required to
            checkpoint a program with parts its trace cannot see (a ``pure_callback``, custom
            derivative rules: see :mod:`~decentral.runner.program`).
        check_params: ``check_params(params)``, the algorithm's own check of the params it is
            run with: :func:`~decentral.runner.run` calls it on the params it is given (for a
            sweep, on every swept value separately) before anything compiles, so a value set by
            ``_replace`` or swept is checked exactly like one built by the family's params
            helper (which calls the same function). It raises ``ValueError`` naming the field;
            its return value is ignored. Hypotheses that the run breaks are warnings there, not
            errors. Default None: no check beyond the runner's (no NaN, consistent sweep axes).
        divergence_hint: what the :class:`DivergenceError` of this algorithm advises (e.g.
            ``"reduce params.step_size"``); default: check the inputs and params.
        cpu_compiler_options: XLA options (``{name: value}``, stored as sorted pairs) the
            runner compiles this algorithm's programs with when they run on CPU devices (on
            other backends they are ignored), e.g. ``{"xla_cpu_use_fusion_emitters": False}``
            where XLA's older loop emitters compile and run a family's step faster. Options
            choose how XLA emits code; some (optimisation levels) can move float results in
            the last bits, so non-empty options enter the checkpoint fingerprint and a resume
            with other options is refused. Default: none (XLA's defaults).
        num_agents: the size ``N`` of the leading agent axis of the state's per-agent leaves,
            or None (default). It lets :func:`~decentral.runner.run` split the agents over
            devices (``run(..., layout="agents")``): every state leaf whose first
            (unbatched) axis has length ``N`` is split along it, the others are kept whole
            on every device of an agent group. The mixing families (consensus, push-sum,
            consensus SA, push-SA) set it; it never changes what is computed.

    ``Algorithm`` is frozen and hashable (the runner's compile cache is keyed by it).

    Example:
        >>> import jax.numpy as jnp
        >>> from decentral.runner import run
        >>> alg = Algorithm(init=lambda k, p: jnp.zeros(2),
        ...                 step=lambda k, s, p, t, x: (s + p, None), name="drift")
        >>> run(alg, 1.0, seeds=[0], num_steps=4).final_state
        array([[4., 4.]], dtype=float32)
    """

    init: Callable
    step: Callable
    name: str
    version: str = "0"
    max_horizon: int | None = None
    config: Any = None
    cpu_compiler_options: Any = ()
    check_params: Callable | None = None
    divergence_hint: str | None = None
    num_agents: int | None = None

    def __post_init__(self):
        if not callable(self.init) or not callable(self.step):
            raise ValueError("Algorithm.init and Algorithm.step must be callables.")
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Algorithm.name must be a non-empty str; got {self.name!r}.")
        object.__setattr__(self, "version", str(self.version))
        if self.check_params is not None and not callable(self.check_params):
            raise ValueError(f"Algorithm.check_params must be a callable check_params(params) "
                             f"or None; got {type(self.check_params).__name__}.")
        if self.divergence_hint is not None and not isinstance(self.divergence_hint, str):
            raise ValueError(f"Algorithm.divergence_hint must be a str or None; got "
                             f"{self.divergence_hint!r}.")
        object.__setattr__(self, "cpu_compiler_options",
                           _compiler_options(self.cpu_compiler_options))
        if self.num_agents is not None:
            if isinstance(self.num_agents, bool) or not isinstance(self.num_agents,
                                                                   int | np.integer) \
                    or self.num_agents < 1:
                raise ValueError(f"Algorithm.num_agents must be a positive int or None; got "
                                 f"{self.num_agents!r}.")
            object.__setattr__(self, "num_agents", int(self.num_agents))
        if self.config is not None and not isinstance(self.config, FrozenConfig):
            if not isinstance(self.config, Mapping):
                raise ValueError(f"Algorithm.config must be a mapping (JSON-like dict) or None; "
                                 f"got {type(self.config).__name__}.")
            object.__setattr__(self, "config", FrozenConfig(self.config))
        if self.max_horizon is None:
            object.__setattr__(self, "max_horizon",
                               reachable_horizon((self.init, self.step, self.check_params)))
        elif isinstance(self.max_horizon, bool) or not isinstance(self.max_horizon,
                                                                  int | np.integer) \
                or self.max_horizon < 1:
            raise ValueError(f"Algorithm.max_horizon must be a positive int or None; got "
                             f"{self.max_horizon!r}.")
        else:
            object.__setattr__(self, "max_horizon", int(self.max_horizon))

    def replace(self, **changes) -> Algorithm:
        """A copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)


def _compiler_options(options) -> tuple:
    """``{name: value}`` or pairs -> sorted ``((name, value), ...)`` (hashable), checked."""
    if options is None:
        return ()
    pairs = list(options.items()) if isinstance(options, Mapping) else list(options)
    out = []
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str)
                and isinstance(pair[1], bool | int | float | str)):
            raise ValueError(f"Algorithm.cpu_compiler_options must map XLA option names (str) "
                             f"to bool, int, float or str values; got {pair!r}.")
        out.append(pair)
    return tuple(sorted(out))


class RunResult(NamedTuple):
    """What :func:`~decentral.runner.run` returns.

    Attributes:
        records: pytree of ``record_fn`` outputs with leading axes ``[P?, S, n_records, ...]``
            (``P`` only for a sweep), as numpy arrays.
        record_steps: ``[n_records]`` int64, the number of updates done at each record.
        final_state: the state after ``num_steps`` updates, leading axes ``[P?, S, ...]`` (numpy
            arrays; PRNG-key leaves stay JAX key arrays).
        seeds: ``[S]`` int64, the seeds in output order.
        num_steps: number of updates performed.
    """

    records: Any
    record_steps: np.ndarray
    final_state: Any
    seeds: np.ndarray
    num_steps: int


class DivergenceError(FloatingPointError):
    """The carried state (or a record) became non-finite (NaN or inf).

    Attributes:
        chunk: index of the chunk in which it happened (-1: the initial state).
        step_range: ``(first, last)`` 0-based update indices of that chunk.
        seeds: the seeds that diverged.
        param_indices: for a sweep, the params index of each diverged seed (else None).
        first_step: for each diverged seed, the 0-based index of the first update after which
            its state (or the record taken there) was non-finite (-1: the initial state).
        where: for each diverged seed, ``"state"`` or ``"record"``.
    """

    def __init__(self, message, *, chunk, step_range, seeds, param_indices=None,
                 first_step=None, where=None):
        super().__init__(message)
        self.chunk = chunk
        self.step_range = step_range
        self.seeds = seeds
        self.param_indices = param_indices
        self.first_step = first_step
        self.where = where

    def __reduce__(self):  # keep the attributes when pickled (e.g. across processes)
        kwargs = dict(chunk=self.chunk, step_range=self.step_range, seeds=self.seeds,
                      param_indices=self.param_indices, first_step=self.first_step,
                      where=self.where)
        return (_rebuild_divergence, (str(self), kwargs))


def _rebuild_divergence(message, kwargs):
    return DivergenceError(message, **kwargs)


class DivergenceWarning(RuntimeWarning):
    """Warning issued instead of :class:`DivergenceError` when ``on_divergence="warn"``."""


def stack_params(params_list) -> Any:
    """Stack a list of params pytrees into one with a leading sweep axis, for ``sweep=True``.

    Example:
        >>> from typing import NamedTuple
        >>> class Params(NamedTuple):
        ...     alpha: float
        >>> stack_params([Params(alpha=0.1), Params(alpha=0.2)]).alpha
        array([0.1, 0.2])
    """
    if len(params_list) == 0:
        raise ValueError("stack_params needs at least one params value.")
    return jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]),
                                  *params_list)
