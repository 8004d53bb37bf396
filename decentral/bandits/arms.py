"""Reward distributions on ``[0, 1]`` and counter-based reward streams.

The setting (Zhu, Mulle, Smith, Liu, arXiv 2111.10933): N agents share M arms; the
reward ``X_{i,k}(t)`` of arm k for agent i is i.i.d. over t, supported on ``[0, 1]``, with a mean
``mu_k`` shared by all agents, while the *distributions* may differ across agents (the
"heterogeneous" setting of the first version; the journal version takes them identical).

Families (each constructor takes the means ``[M]`` and returns an :class:`Arms`):

* :func:`bernoulli` — ``Bernoulli(mu_k)``;
* :func:`beta_distribution` — ``Beta(a, b)`` with mean ``mu_k`` and standard deviation ``sd``
  (moment matching: ``a = mu (mu (1 - mu) / sd^2 - 1)``, ``b = (1 - mu) (mu (1 - mu) / sd^2 - 1)``);
* :func:`truncated_normal` — a normal ``N(loc, sd^2)`` truncated to ``[0, 1]``. By default
  ``loc = mu_k`` (how the authors' code parameterises it), so the **true mean differs from
  mu_k** near 0 and 1; :attr:`Arms.means` holds the exact true means and every gap is computed
  from them. ``parameterization="mean"`` solves for the ``loc`` whose truncated mean is ``mu_k``;
* :func:`uniform` — ``U[mu_k - width / 2, mu_k + width / 2]`` (the widest interval inside
  ``[0, 1]`` by default);
* :func:`heterogeneous` — a family per (agent, arm), sharing the means.

**Reward streams are pull-indexed and counter-based.** The ``j``-th pull (``j = 0`` is the
initial pull at ``t = 0``) of arm ``k`` by agent ``i`` returns the sample drawn with the key::

    fold_in(fold_in(fold_in(reward_key, i), k), j)

where ``reward_key`` is derived from the run's seed only. So every policy run on the same seed
sees the same sample for the same (agent, arm, pull), whatever it pulled before: comparisons
between policies are paired ("common random numbers") and no reward table is stored. The key
of (i, k, j) does not depend on N or M either, so instances that differ in their number of
agents or arms share the streams they have in common. Streams are independent across agents
by default. ``correlated=True`` drops the agent from the key (``fold_in(fold_in(reward_key,
k), j)``), so every agent's j-th sample of arm k is the same draw (the same value for identical
distributions): the regime
of the journal version's experiment notebooks (csasmith/vip-mab, ``code/KL_UCB/``), where every
(agent, arm) distribution object is seeded with the same ``RandomState(seed=1)``; a labelled
option for comparisons with the paper's figures, not the default.

Example:
    >>> import jax
    >>> from decentral.bandits import truncated_normal
    >>> arms = truncated_normal([0.9, 0.5], sd=0.1)
    >>> [round(float(m), 4) for m in arms.means[0]]     # true means: 0.9 shifts down
    [0.8712, 0.5]
    >>> r = arms.reward(jax.random.key(0), 0, 1, 7)     # agent 0, arm 1, its 8th pull
    >>> bool(0.0 <= float(r) <= 1.0)
    True
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from decentral.hypotheses import warn_hypothesis

__all__ = [
    "Arms",
    "FAMILIES",
    "bernoulli",
    "beta_distribution",
    "truncated_normal",
    "uniform",
    "heterogeneous",
    "truncated_normal_mean",
]

#: Family names, in the order of their integer codes in :attr:`Arms.family`.
FAMILIES = ("bernoulli", "beta", "truncated_normal", "uniform")
_BERNOULLI, _BETA, _TRUNCNORM, _UNIFORM = range(4)

#: Largest distance (in units of ``sd``) the parent normal's location may sit outside
#: ``[0, 1]``: beyond it the inverse-erf sampler loses its accuracy in float32.
_TRUNCNORM_MAX_OFFSET = 3.0

#: Two agents' true means of one arm closer than this count as equal (heterogeneous check).
MEANS_TOLERANCE = 1e-9


@dataclasses.dataclass(frozen=True, eq=False)
class Arms:
    """M arms with rewards on ``[0, 1]``, for every agent (build with the family functions).

    Attributes:
        family: int8 ``[A, M]`` family code per (agent, arm) (index into :data:`FAMILIES`).
            ``A = 1`` when every agent faces the same distributions (any number of agents),
            else ``A = N`` (:func:`heterogeneous`).
        first: float64 ``[A, M]`` first parameter: ``p`` (Bernoulli), ``a`` (Beta), ``loc``
            (truncated normal), ``low`` (uniform).
        second: float64 ``[A, M]`` second parameter: unused (Bernoulli), ``b`` (Beta), ``sd``
            (truncated normal), ``high`` (uniform).
        means: float64 ``[A, M]`` the **true** means of the distributions sampled.
        nominal_means: float64 ``[M]`` the means the arms were built from.
        correlated: reward streams shared by all agents (see the module docstring).
        per_agent: True when the rows are per agent (:func:`heterogeneous`), so ``A = N``.
        description: a short human-readable summary (for reports).
        extra_families: codes of families the sampler evaluates besides those used
            (:meth:`with_extra_families`); they change no reward.
    """

    family: np.ndarray
    first: np.ndarray
    second: np.ndarray
    means: np.ndarray
    nominal_means: np.ndarray
    correlated: bool = False
    per_agent: bool = False
    description: str = ""
    extra_families: tuple = ()

    def __post_init__(self):
        for name in ("family", "first", "second", "means", "nominal_means"):
            arr = np.array(getattr(self, name))
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def num_arms(self) -> int:
        """M, the number of arms."""
        return int(self.family.shape[1])

    @property
    def num_agents(self) -> int | None:
        """N for per-agent (heterogeneous) arms; None when every agent shares the arms."""
        return int(self.family.shape[0]) if self.per_agent else None

    @property
    def families_present(self) -> tuple[str, ...]:
        """Names of the families used somewhere (sorted by code)."""
        return tuple(FAMILIES[c] for c in sorted(set(self.family.ravel().tolist())))

    def _rows(self, arr: np.ndarray, num_agents: int) -> np.ndarray:
        if arr.shape[0] == 1 and not self.per_agent:
            return np.broadcast_to(arr, (num_agents, arr.shape[1])).copy()
        if arr.shape[0] != num_agents:
            raise ValueError(f"these arms are given per agent for N = {arr.shape[0]} agents; "
                             f"got num_agents = {num_agents}.")
        return arr.copy()

    def true_means(self, num_agents: int) -> np.ndarray:
        """float64 ``[N, M]``: the true mean of every (agent, arm).

        Example:
            >>> bernoulli([0.2, 0.7]).true_means(2)
            array([[0.2, 0.7],
                   [0.2, 0.7]])
        """
        return self._rows(self.means, num_agents)

    def gaps(self, num_agents: int) -> np.ndarray:
        """float64 ``[N, M]``: ``Delta_{i,k} = max_l mu_{i,l} - mu_{i,k}`` from the true means
        (each agent's gaps against its own best arm; equal rows when all agents share the
        means, as the setting assumes).

        Example:
            >>> bernoulli([0.2, 0.7]).gaps(1)
            array([[0.5, 0. ]])
        """
        mu = self.true_means(num_agents)
        return mu.max(axis=1, keepdims=True) - mu

    def best_means(self, num_agents: int) -> np.ndarray:
        """float64 ``[N]``: ``mu*_i = max_k mu_{i,k}``."""
        return self.true_means(num_agents).max(axis=1)

    def with_correlated(self, correlated: bool = True) -> Arms:
        """A copy whose reward streams are shared across agents (or not).

        Example:
            >>> bernoulli([0.2, 0.7]).with_correlated().correlated
            True
        """
        return dataclasses.replace(self, correlated=bool(correlated))

    def with_extra_families(self, families: Sequence[str]) -> Arms:
        """A copy whose sampler also evaluates ``families`` (names from :data:`FAMILIES`).

        Every (agent, arm) still draws from its own law with the same key, so the rewards are
        the same; each draw costs the extra families' work. Arms that differ only in which of
        these families they use then have the same :meth:`structure`, and :func:`evaluate`
        runs them with one compiled program.

        Example:
            >>> a = bernoulli([0.3, 0.6]).with_extra_families(["beta"])
            >>> a.structure()[0], a.families_present          # codes evaluated, families used
            ((0, 1), ('bernoulli',))
        """
        codes = []
        for name in families:
            if name not in FAMILIES:
                raise ValueError(f"unknown family {name!r}; choose from {FAMILIES}.")
            codes.append(FAMILIES.index(name))
        return dataclasses.replace(self, extra_families=tuple(sorted(set(codes))))

    def _codes(self) -> tuple[int, ...]:
        """Family codes the sampler evaluates: those used and :attr:`extra_families`."""
        return tuple(sorted(set(self.family.ravel().tolist()) | set(self.extra_families)))

    def digest(self) -> str:
        """Content digest (families, parameters, stream mode): enters checkpoint fingerprints."""
        h = hashlib.sha256()
        for arr in (self.family.astype(np.int8), self.first.astype(np.float64),
                    self.second.astype(np.float64)):
            h.update(str(arr.shape).encode())
            h.update(np.ascontiguousarray(arr).tobytes())
        h.update(b"correlated" if self.correlated else b"independent")
        h.update(b"per-agent" if self.per_agent else b"shared")
        return "arms:" + h.hexdigest()

    def __hash__(self) -> int:
        return hash(self.digest())

    def __eq__(self, other) -> bool:
        return isinstance(other, Arms) and self.digest() == other.digest()

    def __repr__(self) -> str:
        mode = ", correlated" if self.correlated else ""
        return f"Arms({self.description}, M={self.num_arms}{mode})"

    def stream_key(self, reward_key, agent, arm):
        """The key of agent ``agent``'s stream of arm ``arm``:
        ``fold_in(fold_in(reward_key, agent), arm)``, or ``fold_in(reward_key, arm)`` when
        :attr:`correlated` (int scalars; vmap over them). Pull ``j`` of that stream uses
        ``fold_in(stream_key, j)``."""
        key = reward_key if self.correlated else jax.random.fold_in(reward_key, agent)
        return jax.random.fold_in(key, arm)

    def stream_keys(self, reward_key, num_agents: int, *, tables: dict | None = None):
        """``[N, M]`` keys :meth:`stream_key` of every (agent, arm) (computed once per run).

        ``tables``: None, or :meth:`tables` of arms with this :meth:`structure` (traced): the
        stream mode is then read from ``tables["correlated"]`` (the key each arm is folded into
        is the reward key or the agent's key; the same keys)."""
        m = self.num_arms
        agents = jnp.repeat(jnp.arange(num_agents, dtype=jnp.int32), m)
        arms = jnp.tile(jnp.arange(m, dtype=jnp.int32), num_agents)
        if tables is None:
            keys = jax.vmap(self.stream_key, in_axes=(None, 0, 0))(reward_key, agents, arms)
            return keys.reshape(num_agents, m)
        impl = jax.random.key_impl(reward_key)
        per_agent = jax.vmap(lambda i: jax.random.fold_in(reward_key, i))(agents)
        parent = jnp.where(jnp.asarray(tables["correlated"]),
                           jax.random.key_data(reward_key)[None],
                           jax.random.key_data(per_agent))        # the key arm k folds into
        keys = jax.vmap(jax.random.fold_in)(jax.random.wrap_key_data(parent, impl=impl), arms)
        return keys.reshape(num_agents, m)

    def structure(self) -> tuple:
        """Everything a compiled sampler depends on besides the tables (:meth:`tables`): the
        families it evaluates, per-agent rows or shared ones, and the tables' shape ``[A, M]``.
        Arms of equal structure share one compiled program when their tables are passed as
        data (:meth:`stream_keys` and :meth:`sampler` with ``tables=``), whatever their
        parameters and stream mode.

        Example:
            >>> bernoulli([0.2, 0.7]).structure() == bernoulli([0.5, 0.1],
            ...                                                correlated=True).structure()
            True
        """
        return (self._codes(), bool(self.per_agent), tuple(int(d) for d in self.family.shape))

    def tables(self, dtype: Any = None) -> dict:
        """The data of the arms as numpy arrays: ``{"family": int32 [A, M], "first": [A, M],
        "second": [A, M], "correlated": bool}`` (floats in ``dtype``, default JAX's default
        float), to pass to :meth:`stream_keys` and :meth:`sampler` as traced data.

        Example:
            >>> sorted(bernoulli([0.2, 0.7]).tables())
            ['correlated', 'family', 'first', 'second']
        """
        dt = np.dtype(dtype) if dtype is not None else np.dtype(jnp.zeros(()).dtype)
        return {"family": np.asarray(self.family, np.int32),
                "first": np.asarray(self.first, dt), "second": np.asarray(self.second, dt),
                "correlated": np.asarray(bool(self.correlated))}

    def sampler(self, dtype: Any = None, *, tables: dict | None = None):
        """The unbatched draw ``draw(stream_key, agent, arm, pull) -> reward`` in ``[0, 1]``.

        ``stream_key`` is agent ``agent``'s key of arm ``arm`` (:meth:`stream_key`); the sample
        uses ``fold_in(stream_key, pull)`` and the law of (agent, arm). All arguments are
        scalars (vmap over them).

        Args:
            dtype: float dtype of the rewards (default: JAX's default float when traced).
            tables: None (this instance's parameters, closed over as constants), or tables
                shaped like :meth:`tables` (e.g. traced arrays) of arms with this instance's
                :meth:`structure`: one compiled program then serves all of them.
        """
        per_agent = self.per_agent
        codes = self._codes()
        if tables is None:
            family, first, second = self.family, self.first, self.second
        else:
            family, first, second = tables["family"], tables["first"], tables["second"]

        def draw(stream_key, agent, arm, pull):
            dt = jnp.dtype(dtype) if dtype is not None else jnp.zeros(()).dtype
            row = agent if per_agent else 0
            key = jax.random.fold_in(stream_key, pull)
            a = jnp.asarray(first, dt)[row, arm]
            b = jnp.asarray(second, dt)[row, arm]
            if len(codes) == 1:
                return _SAMPLERS[codes[0]](key, a, b, dt)
            code = jnp.asarray(family, jnp.int32)[row, arm]
            out = jnp.zeros((), dt)
            for c in codes:   # only the families present; benign parameters elsewhere
                mine = code == c
                sa, sb = _SAFE[c]
                value = _SAMPLERS[c](key, jnp.where(mine, a, sa), jnp.where(mine, b, sb), dt)
                out = jnp.where(mine, value, out)
            return out

        return draw

    def reward(self, reward_key, agent, arm, pull, dtype: Any = None):
        """The reward of pull ``pull`` (0-based; 0 is the initial pull) of arm ``arm`` by agent
        ``agent`` on the run whose reward key is ``reward_key``: the key
        ``fold_in(fold_in(fold_in(reward_key, agent), arm), pull)`` (agent left out when
        :attr:`correlated`). For references and tests; runs use :meth:`stream_keys` once and
        :meth:`sampler` per pull.

        Example:
            >>> import jax
            >>> arms = bernoulli([0.0, 1.0])
            >>> float(arms.reward(jax.random.key(3), 0, 1, 5))
            1.0
        """
        return self.sampler(dtype)(self.stream_key(reward_key, agent, arm), agent, arm, pull)


# ------------------------------------------------------------------------------------------
# samplers: one key, one draw, a value in [0, 1]
# ------------------------------------------------------------------------------------------

def _draw_bernoulli(key, p, _, dtype):
    return (jax.random.uniform(key, (), dtype) < p).astype(dtype)


def _draw_beta(key, a, b, dtype):
    return jnp.clip(jax.random.beta(key, a, b, (), dtype), 0.0, 1.0)


def _draw_truncated_normal(key, loc, sd, dtype):
    z = jax.random.truncated_normal(key, (0.0 - loc) / sd, (1.0 - loc) / sd, (), dtype)
    return jnp.clip(loc + sd * z, 0.0, 1.0)


def _draw_uniform(key, low, high, dtype):
    return jnp.clip(low + (high - low) * jax.random.uniform(key, (), dtype), 0.0, 1.0)


_SAMPLERS = {_BERNOULLI: _draw_bernoulli, _BETA: _draw_beta,
             _TRUNCNORM: _draw_truncated_normal, _UNIFORM: _draw_uniform}
_SAFE = {_BERNOULLI: (0.5, 0.0), _BETA: (1.0, 1.0), _TRUNCNORM: (0.5, 1.0),
         _UNIFORM: (0.0, 1.0)}


# ------------------------------------------------------------------------------------------
# constructors
# ------------------------------------------------------------------------------------------

def _means(means, *, open_interval: bool = False, family: str = "") -> np.ndarray:
    arr = np.asarray(means)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)
                                   or arr.dtype == bool):
        raise ValueError(f"means must be numbers; got dtype {arr.dtype}.")
    arr = arr.astype(np.float64)
    if arr.ndim != 1:
        raise ValueError(f"means must be a vector [M] (one mean per arm, shared by every "
                         f"agent); got shape {list(arr.shape)}. For per-agent families use "
                         "heterogeneous().")
    if arr.shape[0] < 2:
        raise ValueError(f"a bandit needs M >= 2 arms; got M = {arr.shape[0]}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"means has NaN or infinite entries: {arr.tolist()}.")
    if np.any(arr < 0) or np.any(arr > 1):
        bad = np.nonzero((arr < 0) | (arr > 1))[0].tolist()
        raise ValueError(f"means must lie in [0, 1] (rewards are supported on [0, 1]); arms "
                         f"{bad} have means {arr[bad].tolist()}.")
    if open_interval and (np.any(arr <= 0) or np.any(arr >= 1)):
        bad = np.nonzero((arr <= 0) | (arr >= 1))[0].tolist()
        raise ValueError(f"{family} needs means strictly inside (0, 1); arms {bad} have means "
                         f"{arr[bad].tolist()} (a deterministic arm is bernoulli(0 or 1)).")
    return arr


def _spread(value, name: str, m: int, *, allow_zero: bool = False) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{name} must be a number or a vector [M]; got dtype {arr.dtype}.")
    arr = arr.astype(np.float64)
    if arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] != m):
        raise ValueError(f"{name} must be a scalar or a vector [M] = [{m}]; got shape "
                         f"{list(arr.shape)}.")
    arr = np.broadcast_to(arr, (m,)).copy()
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} has NaN or infinite entries: {arr.tolist()}.")
    if np.any(arr < 0) or (not allow_zero and np.any(arr == 0)):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}; got "
                         f"{arr.tolist()}.")
    return arr


def _build(code: int, first, second, means, nominal, correlated, description) -> Arms:
    m = len(nominal)
    return Arms(family=np.full((1, m), code, np.int8), first=np.asarray(first)[None],
                second=np.asarray(second)[None], means=np.asarray(means)[None],
                nominal_means=nominal, correlated=bool(correlated), description=description)


def bernoulli(means, *, correlated: bool = False) -> Arms:
    """Bernoulli arms: reward 1 with probability ``mu_k``, else 0.

    Args:
        means: ``[M]`` means in ``[0, 1]``, ``M >= 2``.
        correlated: share reward streams across agents (see the module docstring).

    Raises:
        ValueError: means not a vector of finite numbers in ``[0, 1]``, or ``M < 2``.

    Example:
        >>> bernoulli([0.3, 0.6]).means
        array([[0.3, 0.6]])
    """
    mu = _means(means)
    return _build(_BERNOULLI, mu, np.zeros_like(mu), mu, mu, correlated, "bernoulli")


def beta_distribution(means, sd, *, correlated: bool = False) -> Arms:
    """Beta arms with mean ``mu_k`` and standard deviation ``sd`` (moment matching).

    ``a = mu (mu (1 - mu) / sd^2 - 1)``, ``b = (1 - mu) (mu (1 - mu) / sd^2 - 1)`` (the first
    version's experiments, sd 0.05). ``Beta(mu, 1 - mu)`` (the journal version's Figs 4-6) is
    ``sd = sqrt(mu (1 - mu) / 2)``.

    Args:
        means: ``[M]`` means strictly inside ``(0, 1)``.
        sd: standard deviation, a scalar or ``[M]``, with ``sd^2 < mu (1 - mu)``.
        correlated: share reward streams across agents.

    Raises:
        ValueError: bad means, a non-positive / NaN sd, or ``sd^2 >= mu (1 - mu)`` (no Beta law
            on ``[0, 1]`` has that variance).

    Example:
        >>> arms = beta_distribution([0.5, 0.2], sd=0.1)
        >>> arms.first[0].round(9).tolist(), arms.second[0].round(9).tolist()   # a, b
        ([12.0, 3.0], [12.0, 12.0])
    """
    mu = _means(means, open_interval=True, family="beta_distribution")
    sd = _spread(sd, "sd", len(mu))
    var = sd ** 2
    limit = mu * (1 - mu)
    if np.any(var >= limit):
        bad = np.nonzero(var >= limit)[0].tolist()
        raise ValueError(f"beta_distribution: sd^2 must be < mu (1 - mu) (the largest variance "
                         f"of a law on [0, 1] with mean mu); arms {bad} have sd "
                         f"{sd[bad].tolist()} but sqrt(mu (1 - mu)) = "
                         f"{np.sqrt(limit[bad]).tolist()}.")
    common = limit / var - 1
    return _build(_BETA, mu * common, (1 - mu) * common, mu, mu, correlated,
                  "beta_distribution")


def truncated_normal_mean(loc, sd) -> np.ndarray:
    """Exact mean of ``N(loc, sd^2)`` truncated to ``[0, 1]`` (scipy's ``truncnorm``).

    ``loc + sd (phi(alpha) - phi(beta)) / (Phi(beta) - Phi(alpha))`` with
    ``alpha = -loc / sd``, ``beta = (1 - loc) / sd``.

    Example:
        >>> round(float(truncated_normal_mean(0.5, 0.1)), 12)
        0.5
    """
    from scipy.stats import truncnorm

    loc = np.asarray(loc, np.float64)
    sd = np.asarray(sd, np.float64)
    return np.asarray(truncnorm.mean((0.0 - loc) / sd, (1.0 - loc) / sd, loc=loc, scale=sd),
                      np.float64)


def _location_for_mean(mu: float, sd: float) -> float:
    from scipy.optimize import brentq

    def gap(loc):
        return float(truncated_normal_mean(loc, sd)) - mu

    lo, hi = mu - 1.0, mu + 1.0
    for _ in range(60):
        if gap(lo) < 0:
            break
        lo -= 2 * (mu - lo)
    for _ in range(60):
        if gap(hi) > 0:
            break
        hi += 2 * (hi - mu)
    return float(brentq(gap, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500))


def truncated_normal(means, sd, *, parameterization: str = "location",
                     correlated: bool = False) -> Arms:
    """A normal distribution truncated to ``[0, 1]``.

    With ``parameterization="location"`` (default; how both versions of the authors' code
    build it: scipy ``truncnorm`` with ``loc = mu_k``, ``scale = sd``) the parent normal is
    centred at ``mu_k`` and the true mean (:attr:`Arms.means`, exact, from
    :func:`truncated_normal_mean`) moves towards 1/2 near the ends of ``[0, 1]``.
    ``parameterization="mean"`` instead solves (Brent's method) for the location whose truncated
    mean is exactly ``mu_k`` — the paper's text, which says "mean mu_k".

    Args:
        means: ``[M]`` means in ``[0, 1]`` (strictly inside for ``"mean"``).
        sd: scale of the parent normal, a scalar or ``[M]``, ``> 0``.
        parameterization: ``"location"`` or ``"mean"``.
        correlated: share reward streams across agents.

    Raises:
        ValueError: bad means or sd; with ``"mean"``, a location more than 3 sd outside
            ``[0, 1]`` (the sampler is not accurate there; use a smaller sd).

    Example:
        >>> arms = truncated_normal([0.05, 0.5], sd=0.05, parameterization="mean")
        >>> [round(float(m), 12) for m in arms.means[0]]
        [0.05, 0.5]
    """
    if parameterization not in ("location", "mean"):
        raise ValueError(f"parameterization must be 'location' or 'mean'; got "
                         f"{parameterization!r}.")
    by_mean = parameterization == "mean"
    mu = _means(means, open_interval=by_mean, family="truncated_normal(parameterization='mean')")
    sd = _spread(sd, "sd", len(mu))
    if by_mean:
        loc = np.array([_location_for_mean(float(m), float(s)) for m, s in zip(mu, sd,
                                                                                strict=True)])
        far = (loc < -_TRUNCNORM_MAX_OFFSET * sd) | (loc > 1 + _TRUNCNORM_MAX_OFFSET * sd)
        if np.any(far):
            bad = np.nonzero(far)[0].tolist()
            raise ValueError(f"truncated_normal: for arms {bad} the location with the requested "
                             f"mean is {loc[bad].tolist()}, more than {_TRUNCNORM_MAX_OFFSET:g} "
                             "sd outside [0, 1], where the sampler is inaccurate; use a smaller "
                             "sd or means farther from 0 and 1.")
    else:
        loc = mu
    true = truncated_normal_mean(loc, sd)
    return _build(_TRUNCNORM, loc, sd, true, mu, correlated,
                  f"truncated_normal({parameterization})")


def uniform(means, width=None, *, correlated: bool = False) -> Arms:
    """Uniform arms on ``[mu_k - width / 2, mu_k + width / 2]``.

    Args:
        means: ``[M]`` means in ``[0, 1]``.
        width: the full width of the support (``high - low``), a scalar or ``[M]``, ``>= 0``;
            None (default) takes the widest support inside ``[0, 1]``,
            ``width = 2 min(mu, 1 - mu)`` (the first version's code).
        correlated: share reward streams across agents.

    Raises:
        ValueError: bad means, a negative / NaN width, or a support leaving ``[0, 1]``.

    Example:
        >>> arms = uniform([0.25, 0.5], width=0.5)
        >>> arms.first[0].tolist(), arms.second[0].tolist()   # low, high
        ([0.0, 0.25], [0.5, 0.75])
    """
    mu = _means(means)
    if width is None:
        w = 2 * np.minimum(mu, 1 - mu)
    else:
        w = _spread(width, "width", len(mu), allow_zero=True)
    low, high = mu - w / 2, mu + w / 2
    tol = 1e-12
    if np.any(low < -tol) or np.any(high > 1 + tol):
        bad = np.nonzero((low < -tol) | (high > 1 + tol))[0].tolist()
        raise ValueError(f"uniform: the support [mu - width/2, mu + width/2] must stay inside "
                         f"[0, 1]; arms {bad} have supports "
                         f"{[[float(low[k]), float(high[k])] for k in bad]}. Use a smaller "
                         "width (None gives the widest that fits).")
    low, high = np.clip(low, 0, 1), np.clip(high, 0, 1)
    return _build(_UNIFORM, low, high, (low + high) / 2, mu, correlated, "uniform")


def heterogeneous(families: Sequence[Arms], choice=None, *,
                  correlated: bool | None = None) -> Arms:
    """Arms whose distribution family differs per (agent, arm), the means shared.

    Two forms:

    * ``heterogeneous([arms_0, ..., arms_{N-1}])``: agent i faces ``arms_i`` (one
      :class:`Arms` per agent);
    * ``heterogeneous(families, choice)``: ``choice[i, k]`` (int ``[N, M]``) picks which of
      ``families`` agent i's arm k follows — the first version's experiments draw it uniformly
      from ``[beta_distribution(mu, 0.05), bernoulli(mu), truncated_normal(mu, 0.05)]``.

    The setting assumes every agent's arm k has the same mean. When the true means differ (a
    location-parameterised truncated normal near 0 or 1 beside a Bernoulli arm of the same
    nominal mean) a :class:`~decentral.hypotheses.HypothesisWarning` says by how much; each
    agent's gaps are then computed from its own true means.

    Args:
        families: a list of :class:`Arms` (shared-by-all-agents arms) with the same M.
        choice: None, or int ``[N, M]`` indices into ``families``.
        correlated: share reward streams across agents; None takes it from ``families``
            (which must then agree).

    Raises:
        ValueError: an empty list, entries that are not shared-by-all :class:`Arms`, different
            M, a ``choice`` of the wrong shape or out of range, mixed ``correlated`` flags.

    Example:
        >>> import numpy as np
        >>> mu = [0.3, 0.7]
        >>> arms = heterogeneous([bernoulli(mu), uniform(mu)], np.array([[0, 1], [1, 1]]))
        >>> arms.num_agents, arms.family.tolist()
        (2, [[0, 3], [3, 3]])
    """
    fams = list(families) if not isinstance(families, Arms) else [families]
    if not fams:
        raise ValueError("heterogeneous needs at least one Arms.")
    for idx, f in enumerate(fams):
        if not isinstance(f, Arms):
            raise ValueError(f"heterogeneous: entry {idx} is a {type(f).__name__}, not Arms "
                             "(build it with bernoulli, beta_distribution, truncated_normal or "
                             "uniform).")
        if f.num_agents is not None:
            raise ValueError(f"heterogeneous: entry {idx} is already per-agent; pass arms "
                             "shared by all agents.")
    m = fams[0].num_arms
    if any(f.num_arms != m for f in fams):
        raise ValueError(f"heterogeneous: every entry must have the same number of arms; got "
                         f"{[f.num_arms for f in fams]}.")
    if correlated is None:
        flags = {f.correlated for f in fams}
        if len(flags) > 1:
            raise ValueError("heterogeneous: the entries disagree on correlated; pass "
                             "correlated=True or False explicitly.")
        correlated = flags.pop()
    if choice is None:
        pick = np.repeat(np.arange(len(fams))[:, None], m, axis=1)
    else:
        pick = np.asarray(choice)
        if not np.issubdtype(pick.dtype, np.integer) or pick.ndim != 2 or pick.shape[1] != m:
            raise ValueError(f"choice must be an int array [N, M] with M = {m}; got "
                             f"{pick.dtype}{list(pick.shape)}.")
        if np.any(pick < 0) or np.any(pick >= len(fams)):
            raise ValueError(f"choice entries must be in [0, {len(fams)}); got values in "
                             f"[{pick.min()}, {pick.max()}].")
    if pick.shape[0] < 1:
        raise ValueError("heterogeneous needs at least one agent.")
    cols = np.arange(m)[None, :]

    def stack(attr):
        table = np.stack([getattr(f, attr)[0] for f in fams])        # [F, M]
        return table[pick, np.broadcast_to(cols, pick.shape)]

    means = stack("means")
    spread = means.max(axis=0) - means.min(axis=0)
    if np.any(spread > MEANS_TOLERANCE):
        k = int(np.argmax(spread))
        best = means.argmax(axis=1)
        extra = "" if np.all(best == best[0]) else (
            f"; the best arm even differs between agents ({sorted(set(best.tolist()))})")
        warn_hypothesis(f"heterogeneous arms: the agents' true means of an arm differ (by up to "
                        f"{spread[k]:.3g}, arm {k}); the setting assumes equal means, so each "
                        f"agent's gaps use its own true means{extra}.")
    names = sorted({FAMILIES[c] for c in stack("family").ravel().tolist()})
    nominal = np.asarray(fams[0].nominal_means)
    return Arms(family=stack("family").astype(np.int8), first=stack("first"),
                second=stack("second"), means=means, nominal_means=nominal,
                correlated=bool(correlated), per_agent=True,
                description="heterogeneous(" + ", ".join(names)
                + ")")
