"""Linear stochastic-approximation problems driven by one finite Markov chain.

Lin, Gupta, Liu, *Finite-Time Error Bounds for Distributed Linear Stochastic Approximation*
(Section 2, "data model"): every agent observes one common Markov chain ``X_t`` on a finite
state space; the matrix ``A(X_t)`` (``d x d``) is common to all agents and only the vector
``b^i(X_t)`` is agent-specific. The local drift of agent i at ``theta`` is
``A(X_t) theta + b^i(X_t)``; its stationary mean is ``A theta + b^i`` with

    A   = sum_x mu(x) A(x),        b^i = sum_x mu(x) b^i(x)        (Assumption 2)

(``mu`` the chain's stationary distribution). Assumption 4 asks ``A`` to be Hurwitz.

Distributed TD(0) (the flagship instance, :func:`td0_problem`): the chain is the pair chain
``X_t = (s_t, s_{t+1})`` of a Markov reward process, and

    A(s, s') = phi(s) (gamma phi(s') - phi(s))^T,      b^i(s, s') = r^i(s, s') phi(s),

so ``A = Phi^T D_mu (gamma P - I) Phi`` (Hurwitz for full-rank features and gamma < 1) and
``b^i = Phi^T D_mu rbar^i`` with ``rbar^i(s) = sum_s' P(s, s') r^i(s, s')``. Sign convention:
this ``A`` is the negative of the "``Phi^T D (I - gamma P) Phi``" some codes use; with it the
SA update is ``theta + alpha (A theta + b)`` and the fixed point is ``theta* = -A^{-1} b``.

Example:
    >>> mrp = random_mrp(0, num_states=5, num_features=2, num_agents=3)
    >>> prob = td0_problem(mrp.transition, mrp.features, mrp.rewards, 0.8)
    >>> prob.num_states, prob.num_agents, prob.dim
    (25, 3, 2)
    >>> bool(np.all(np.linalg.eigvals(prob.mean_A()).real < 0))      # Hurwitz
    True
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

import jax
import numpy as np

from decentral._checks import check_int, sum_tolerance
from decentral.markov import (
    MarkovChain,
    markov_chain,
    pair_chain,
    stationary_distribution,
)

__all__ = [
    "LinearSAProblem",
    "MRP",
    "td0_problem",
    "random_mrp",
    "limit",
    "local_limits",
]


def _finite(arr, name: str, ndim: int) -> np.ndarray:
    a = np.asarray(arr)
    if isinstance(arr, jax.core.Tracer):
        raise ValueError(f"{name} is traced (inside jit/vmap); build problems on the host.")
    if a.dtype == object or not np.issubdtype(a.dtype, np.number) or \
            np.issubdtype(a.dtype, np.complexfloating):
        raise ValueError(f"{name} must be a real numeric array; got dtype {a.dtype}.")
    if a.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} axes; got shape {a.shape}.")
    a = a.astype(np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} holds NaN or infinite values.")
    return a


class LinearSAProblem:
    """The tables of a linear SA problem: ``transition [S, S]``, ``A [S, d, d]``, ``b [S, N, d]``.

    Agent i's drift at state x is ``A[x] theta + b[x, i]`` (Lin, Gupta, Liu, eq. (1)). An i.i.d.
    noise sequence is the special case of identical rows of ``transition``.

    Args:
        transition: row-stochastic ``[S, S]``, ``transition[x, y] = P(X_{t+1} = y | X_t = x)``,
            with one closed class (so the stationary distribution ``mu`` is unique).
        A: ``[S, d, d]``, shared by all agents.
        b: ``[S, N, d]``, agent-specific.

    Attributes:
        transition, A, b: float64 numpy arrays (read-only copies).
        stationary: ``mu``, ``[S]``.
        td: for :func:`td0_problem`, the :class:`MRP` it was built from with the discount
            (``(mrp, discount)``), else None; the exact-moment oracle uses its pair structure.

    Raises:
        ValueError: shapes that disagree (the message names them), NaN/inf, a transition matrix
            that is not row-stochastic or has several closed classes.
    """

    def __init__(self, transition, A, b, *, td=None):
        p = _finite(transition, "transition", 2)
        a = _finite(A, "A", 3)
        bb = _finite(b, "b", 3)
        s = p.shape[0]
        if p.shape != (s, s):
            raise ValueError(f"transition must be square; got shape {p.shape}.")
        if a.shape[0] != s or a.shape[1] != a.shape[2]:
            raise ValueError(f"A must be [S, d, d] with S = {s} chain states; got {a.shape}.")
        if bb.shape[0] != s or bb.shape[2] != a.shape[1]:
            raise ValueError(f"b must be [S, N, d] = [{s}, N, {a.shape[1]}] (S chain states, "
                             f"d = {a.shape[1]} from A); got {bb.shape}.")
        given = np.asarray(transition)       # row sums are checked in the given dtype's
        self.chain: MarkovChain = markov_chain(given)   # precision (the same float64 values)
        self.stationary = stationary_distribution(given)
        for arr in (p, a, bb):
            arr.setflags(write=False)
        self.transition, self.A, self.b = p, a, bb
        self.td = td

    @property
    def num_states(self) -> int:
        """S, the number of chain states."""
        return self.transition.shape[0]

    @property
    def num_agents(self) -> int:
        """N."""
        return self.b.shape[1]

    @property
    def dim(self) -> int:
        """d, the dimension of each agent's parameter."""
        return self.A.shape[1]

    def mean_A(self) -> np.ndarray:
        """``A = sum_x mu(x) A(x)`` (Assumption 2), ``[d, d]``."""
        return np.einsum("x,xij->ij", self.stationary, self.A)

    def mean_b(self) -> np.ndarray:
        """``b^i = sum_x mu(x) b^i(x)`` for every agent, ``[N, d]``."""
        return np.einsum("x,xnj->nj", self.stationary, self.b)

    def reachable(self) -> np.ndarray:
        """Indices of the states with positive stationary mass (for TD: the pairs
        ``(s, s')`` with ``P(s, s') > 0``); sup-norms A_max, b_max are taken over these."""
        return np.flatnonzero(self.stationary > 0)

    def digest(self) -> str:
        """``"linear_sa/1:<sha256>"`` of the three tables (an Algorithm's config holds it)."""
        h = hashlib.sha256(b"linear_sa/1")
        for arr in (self.transition, self.A, self.b):
            h.update(str(arr.shape).encode())
            h.update(np.ascontiguousarray(arr).tobytes())
        return f"linear_sa/1:{h.hexdigest()}"

    def __repr__(self) -> str:
        kind = "td0" if self.td is not None else "linear"
        return (f"LinearSAProblem({kind}, S={self.num_states}, N={self.num_agents}, "
                f"d={self.dim})")


class MRP(NamedTuple):
    """A finite Markov reward process with linear features and per-agent rewards.

    Attributes:
        transition: ``[S, S]`` row-stochastic.
        features: ``Phi``, ``[S, d]`` (row s is ``phi(s)``), full column rank.
        rewards: ``[N, S, S]``, ``rewards[i, s, s'] = r^i(s, s')``.
    """

    transition: np.ndarray
    features: np.ndarray
    rewards: np.ndarray


def td0_problem(mrp_transition, features, rewards, discount: float) -> LinearSAProblem:
    """Distributed TD(0) with linear features as a :class:`LinearSAProblem` on the pair chain.

    ``X_t = (s_t, s_{t+1})`` with index ``s * S + s'`` (:func:`decentral.markov.pair_index`),
    ``A(s, s') = phi(s) (gamma phi(s') - phi(s))^T`` and ``b^i(s, s') = r^i(s, s') phi(s)``.

    Args:
        mrp_transition: ``[S, S]`` transition matrix of the states (irreducible, aperiodic).
        features: ``[S, d]``, full column rank (else ``A`` is singular).
        rewards: ``[N, S]`` (``r^i(s)``, the same for every next state) or ``[N, S, S]``.
        discount: gamma in ``[0, 1)``.

    Returns:
        The problem, with ``td = (MRP, discount)`` and ``S**2`` chain states.

    Example:
        >>> P = np.array([[0.5, 0.5], [0.2, 0.8]])
        >>> prob = td0_problem(P, np.eye(2), np.array([[1.0, 0.0]]), 0.5)
        >>> prob.A[1] + 0.0    # pair (0, 1): phi(0) (0.5 phi(1) - phi(0))^T
        array([[-1. ,  0.5],
               [ 0. ,  0. ]])
    """
    p = _finite(mrp_transition, "mrp_transition", 2)
    phi = _finite(features, "features", 2)
    r = np.asarray(rewards)
    if r.ndim == 2:
        r = _finite(r, "rewards", 2)
        r = np.repeat(r[:, :, None], p.shape[0], axis=2)
    r = _finite(r, "rewards", 3)
    s = p.shape[0]
    if phi.shape[0] != s:
        raise ValueError(f"features must be [S, d] with S = {s} states; got {phi.shape}.")
    if r.shape[1:] != (s, s):
        raise ValueError(f"rewards must be [N, S] or [N, S, S] with S = {s}; got "
                         f"{np.shape(rewards)}.")
    gamma = float(discount)
    if not 0.0 <= gamma < 1.0:
        raise ValueError(f"discount must lie in [0, 1); got {discount!r}.")
    if np.linalg.matrix_rank(phi) < phi.shape[1]:
        raise ValueError(f"features [S, d] = {phi.shape} are not of full column rank, so A is "
                         "singular and theta* is not unique; drop dependent features.")
    # A[(s, s')] = phi(s) (gamma phi(s') - phi(s))^T
    A = phi[:, None, :, None] * (gamma * phi[None, :, None, :] - phi[:, None, None, :])
    A = A.reshape(s * s, phi.shape[1], phi.shape[1])
    b = np.einsum("nuv,uj->uvnj", r, phi).reshape(s * s, r.shape[0], phi.shape[1])
    given = np.asarray(mrp_transition)      # keep its dtype: the pair chain's row sums are
    pair = pair_chain(given).astype(given.dtype)    # then checked in that precision
    return LinearSAProblem(pair, A, b, td=(MRP(p, phi, r), gamma))


def random_mrp(seed, num_states: int, num_features: int, num_agents: int, *,
               reward_range: tuple[float, float] = (-1.0, 1.0),
               next_state_rewards: bool = False) -> MRP:
    """A random MRP in the style of the distributed-TD literature's experiments.

    ``P``: rows drawn uniformly from the simplex (``Dirichlet(1, ..., 1)``, so every entry is
    positive: irreducible and aperiodic); ``Phi``: standard normal ``[S, d]`` (full column rank
    with probability 1, checked); rewards ``r^i(s)`` (or ``r^i(s, s')`` with
    ``next_state_rewards``) uniform in ``reward_range``, independent across agents (the
    heterogeneity that makes ``theta*_pi`` differ from ``theta*_unif``).

    Args:
        seed: an integer seed (numpy's PCG64) or a JAX key (its data seeds numpy).

    Example:
        >>> mrp = random_mrp(3, num_states=8, num_features=3, num_agents=6)
        >>> mrp.transition.shape, mrp.features.shape, mrp.rewards.shape
        ((8, 8), (8, 3), (6, 8, 8))
    """
    s = check_int(num_states, "num_states", minimum=2)
    d = check_int(num_features, "num_features", maximum=s)
    n = check_int(num_agents, "num_agents")
    if isinstance(seed, jax.Array):
        seed = np.asarray(jax.random.key_data(seed) if jax.numpy.issubdtype(
            seed.dtype, jax.dtypes.prng_key) else seed).astype(np.uint64).tolist()
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(s), size=s)
    phi = rng.standard_normal((s, d))
    while np.linalg.matrix_rank(phi) < d:     # probability 0; kept for honesty
        phi = rng.standard_normal((s, d))
    lo, hi = (float(v) for v in reward_range)
    if not lo < hi:
        raise ValueError(f"reward_range must be (low, high) with low < high; got "
                         f"{reward_range!r}.")
    if next_state_rewards:
        r = rng.uniform(lo, hi, size=(n, s, s))
    else:
        r = np.repeat(rng.uniform(lo, hi, size=(n, s))[:, :, None], s, axis=2)
    return MRP(p, phi, r)


def _require_hurwitz(A: np.ndarray) -> None:
    eig = np.linalg.eigvals(A)
    if not np.all(eig.real < 0):
        raise ValueError(f"the stationary A is not Hurwitz (eigenvalue real parts up to "
                         f"{eig.real.max():.3g}); Assumption 4 fails and theta* is not an "
                         "attracting equilibrium.")


def limit(problem: LinearSAProblem, pi) -> np.ndarray:
    """``theta*_pi = -A^{-1} sum_i pi_i b^i``: the equilibrium the network reaches when the
    absolute probability sequence of its graphs tends to ``pi`` (Lin, Gupta, Liu, Theorem 2;
    for push-SA, ``pi`` uniform: Theorem 4).

    Args:
        problem: the tables.
        pi: ``[N]`` stochastic vector (e.g. :func:`decentral.graphs.perron_vector` of a fixed
            W; ``np.full(N, 1/N)`` for the straight average ``theta*_unif``), summing to 1
            within 1e-9 or ``64 N eps`` of its dtype (float32 Perron vectors are accepted).

    Raises:
        ValueError: ``pi`` not a stochastic ``[N]`` vector, or ``A`` not Hurwitz.

    Example:
        >>> P = np.array([[0.5, 0.5], [0.2, 0.8]])
        >>> prob = td0_problem(P, np.eye(2), np.array([[1.0, 0.0], [0.0, 1.0]]), 0.5)
        >>> limit(prob, [0.5, 0.5])       # mean reward 0.5 everywhere: V = 0.5 / (1 - 0.5)
        array([1., 1.])
        >>> limit(prob, [1.0, 0.0]).round(4)     # agent 0's value function alone
        array([1.4118, 0.2353])
    """
    given = np.asarray(pi)
    w = np.asarray(pi, dtype=np.float64)
    tol = sum_tolerance(given.dtype, problem.num_agents, 1e-9)   # float32 pi: ~N eps32
    if w.shape != (problem.num_agents,) or np.any(w < 0) or not np.all(np.isfinite(w)) \
            or abs(w.sum() - 1.0) > tol:
        raise ValueError(f"pi must be a stochastic vector of length N = {problem.num_agents}; "
                         f"got {np.asarray(pi)!r}.")
    A = problem.mean_A()
    _require_hurwitz(A)
    return -np.linalg.solve(A, problem.mean_b().T @ w)


def local_limits(problem: LinearSAProblem) -> np.ndarray:
    """``theta_i* = -A^{-1} b^i`` of each agent alone, ``[N, d]``; ``theta*_pi`` is their
    pi-weighted average."""
    A = problem.mean_A()
    _require_hurwitz(A)
    return -np.linalg.solve(A, problem.mean_b().T).T
