"""Objectives split across agents, ``F(x) = sum_i f_i(x)``: agent i evaluates only ``f_i``.

Every problem has the same small protocol, vectorized over agents (``x`` is ``[N, d]``, row i
the point at which agent i evaluates its own ``f_i``; any float dtype, float64 for exact
checks):

* ``value(x) -> [N]``: ``f_i(x_i)``;
* ``gradient(x) -> [N, d]``: ``grad f_i(x_i)`` (a subgradient for a nonsmooth problem);
* ``stochastic_gradient(key, x, noise) -> [N, d]``: ``gradient(x) + noise * eps``, ``eps`` a
  standard normal ``[N, d]`` drawn from ``key`` (unbiased, variance ``noise**2`` per
  coordinate: the noise model of stochastic gradient tracking analyses);
* ``objective(x) -> scalar``: ``F(x) = sum_i f_i(x)`` at one point ``x [d]``.

and these constants, computed once in float64 (the paper letters in brackets):

* ``smoothness`` ``[N]`` (``L_i``: ``grad f_i`` is ``L_i``-Lipschitz; ``inf`` when nonsmooth)
  and ``max_smoothness`` (``L = max_i L_i``);
* ``strong_convexity`` (``mu``: the strong-convexity modulus of the average ``F / N``; 0 when
  it is only convex);
* ``optimum`` ``[d]`` (``x*``) and ``optimal_value`` (``F* = F(x*)``);
* ``heterogeneity`` (``zeta^2 = (1/N) sum_i ||grad f_i(x*)||^2``; None when nonsmooth).

Problems: :func:`quadratic` and :func:`random_quadratic`; least squares is a quadratic
(:func:`least_squares`); :func:`logistic_regression` (l2-regularized, labels +-1) and
:func:`l1_regression` (nonsmooth). Their rows are split across agents by
:func:`decentral.optimization.data.split_rows`; real data sets are in
:mod:`decentral.optimization.data`.

Example:
    >>> import numpy as np
    >>> p = quadratic(np.stack([np.eye(2), 3 * np.eye(2)]), np.array([[1.0, 0.0], [0.0, 3.0]]))
    >>> p.optimum.tolist(), p.max_smoothness, p.strong_convexity
    ([0.25, 0.75], 3.0, 2.0)
    >>> float(np.abs(p.gradient(np.tile(p.optimum, (2, 1))).sum(axis=0)).max()) < 1e-12
    True
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
from scipy import optimize

from decentral._checks import check_int

__all__ = ["Problem", "QuadraticProblem", "LogisticProblem", "L1RegressionProblem",
           "quadratic", "random_quadratic", "least_squares", "logistic_regression",
           "l1_regression"]


def _float_array(value, name: str, ndim: int) -> np.ndarray:
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real array; got {type(value).__name__}.") from None
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions; got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} has non-finite entries (NaN or inf).")
    return arr


def _point_batch(x, dim: int, num_agents: int) -> jax.Array:
    x = jnp.asarray(x)
    if x.ndim != 2 or x.shape != (num_agents, dim):
        raise ValueError(f"x must be [N, d] = [{num_agents}, {dim}] (row i at agent i); got "
                         f"shape {x.shape}.")
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(jnp.result_type(float))
    return x


@dataclass(frozen=True, eq=False)
class Problem:
    """The protocol and constants shared by every problem (see the module docstring).

    Subclasses set the arrays and implement ``_value`` / ``_gradient`` on ``[N, d]`` points.
    """

    name: str
    num_agents: int
    dim: int
    smoothness: np.ndarray
    strong_convexity: float
    optimum: np.ndarray
    optimal_value: float
    heterogeneity: float | None
    fingerprint: str = field(repr=False)

    @property
    def max_smoothness(self) -> float:
        """``L = max_i L_i``."""
        return float(np.max(self.smoothness))

    def value(self, x) -> jax.Array:
        """``[N]``: ``f_i(x_i)`` for ``x [N, d]``."""
        return self._value(_point_batch(x, self.dim, self.num_agents))

    def gradient(self, x) -> jax.Array:
        """``[N, d]``: ``grad f_i(x_i)`` (a subgradient where ``f_i`` is not smooth)."""
        return self._gradient(_point_batch(x, self.dim, self.num_agents))

    def stochastic_gradient(self, key, x, noise) -> jax.Array:
        """``gradient(x) + noise * eps``, ``eps ~ N(0, I)`` of shape ``[N, d]`` from ``key``.

        With ``noise == 0`` no sample is drawn (a ``lax.cond``: the exact gradient, the same
        numbers as ``gradient + 0 * eps``); a sweep that batches ``noise`` draws for every
        member."""
        x = _point_batch(x, self.dim, self.num_agents)
        grad = self._gradient(x)
        noise = jnp.asarray(noise, x.dtype)

        def noisy(g):
            return g + noise * jax.random.normal(key, x.shape, x.dtype)

        return jax.lax.cond(noise == 0, lambda g: g, noisy, grad)

    def objective(self, x) -> jax.Array:
        """``F(x) = sum_i f_i(x)`` at one point ``x [d]``."""
        x = jnp.asarray(x)
        if x.shape != (self.dim,):
            raise ValueError(f"x must be one point [d] = [{self.dim}]; got shape {x.shape}.")
        return jnp.sum(self.value(jnp.broadcast_to(x, (self.num_agents, self.dim))))

    def config(self) -> dict:
        """What a factory closing over this problem records in its ``Algorithm.config``: the
        name, the sizes and a hash of every array (two different problems never share one)."""
        return {"problem": self.name, "num_agents": self.num_agents, "dim": self.dim,
                "fingerprint": self.fingerprint}

    def _value(self, x):                                   # pragma: no cover - abstract
        raise NotImplementedError

    def _gradient(self, x):                                # pragma: no cover - abstract
        raise NotImplementedError


def _fingerprint(*arrays: np.ndarray, extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    for a in arrays:
        h.update(str(a.shape).encode())
        h.update(np.ascontiguousarray(a, np.float64).tobytes())
    return h.hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# quadratics (and least squares)
# ---------------------------------------------------------------------------------------------

UNROLL_MAX_DIM = 32
"""Up to this dimension a quadratic's gradient is summed column by column (see
``QuadraticProblem._gradient``); above it, one batched matrix-vector product."""


@dataclass(frozen=True, eq=False)
class QuadraticProblem(Problem):
    """``f_i(x) = 1/2 x^T A_i x - b_i^T x + c_i`` (see :func:`quadratic`)."""

    hessians: np.ndarray = field(default=None, repr=False)
    linear: np.ndarray = field(default=None, repr=False)
    offsets: np.ndarray = field(default=None, repr=False)

    def _value(self, x):
        A = jnp.asarray(self.hessians, x.dtype)
        b = jnp.asarray(self.linear, x.dtype)
        return (0.5 * jnp.einsum("nd,nde,ne->n", x, A, x) - jnp.einsum("nd,nd->n", b, x)
                + jnp.asarray(self.offsets, x.dtype))

    def _gradient(self, x):
        A = jnp.asarray(self.hessians, x.dtype)
        if self.dim <= UNROLL_MAX_DIM:
            # sum_e A[:, :, e] x[:, e]: d fused multiply-adds over [N, d], where XLA's CPU
            # batched dot of N tiny d x d products runs 15-60x slower (N = 1e5, d = 4)
            Ax = A[:, :, 0] * x[:, 0:1]
            for e in range(1, self.dim):
                Ax = Ax + A[:, :, e] * x[:, e:e + 1]
        else:
            Ax = jnp.einsum("nde,ne->nd", A, x)
        return Ax - jnp.asarray(self.linear, x.dtype)


def quadratic(A, b, offsets=None, *, name: str = "quadratic") -> QuadraticProblem:
    """``f_i(x) = 1/2 x^T A_i x - b_i^T x + c_i``, ``A_i`` symmetric positive semidefinite.

    Constants: ``L_i = lambda_max(A_i)``, ``mu = lambda_min((1/N) sum_i A_i)`` (must be > 0: the
    minimizer is then unique), ``x* = (sum_i A_i)^-1 sum_i b_i`` (float64 solve),
    ``zeta^2 = (1/N) sum_i ||A_i x* - b_i||^2``.

    Args:
        A: ``[N, d, d]`` Hessians, symmetric and positive semidefinite.
        b: ``[N, d]`` linear terms.
        offsets: ``[N]`` constants ``c_i`` (default 0): they change values, not gradients.
        name: what the problem is called in configs and messages.

    Raises:
        ValueError: shapes, a non-symmetric or indefinite ``A_i``, non-finite entries, or a
            singular ``sum_i A_i`` (no unique minimizer), naming the argument.
    """
    A = _float_array(A, "A (the Hessians, [N, d, d])", 3)
    N, d, d2 = A.shape
    if d != d2 or N < 1 or d < 1:
        raise ValueError(f"A must be [N, d, d] with N, d >= 1; got shape {A.shape}.")
    b = _float_array(b, "b (the linear terms, [N, d])", 2)
    if b.shape != (N, d):
        raise ValueError(f"b must be [N, d] = [{N}, {d}] to match A; got shape {b.shape}.")
    c = np.zeros(N) if offsets is None else _float_array(offsets, "offsets ([N])", 1)
    if c.shape != (N,):
        raise ValueError(f"offsets must be [N] = [{N}]; got shape {c.shape}.")
    scale = max(1.0, float(np.abs(A).max()))
    asym = float(np.abs(A - A.transpose(0, 2, 1)).max())
    if asym > 1e-10 * scale:
        raise ValueError(f"A must be symmetric (each A_i); the largest |A_i - A_i^T| is "
                         f"{asym:.3g}.")
    A = 0.5 * (A + A.transpose(0, 2, 1))
    eig = np.linalg.eigvalsh(A)                                           # [N, d], ascending
    if eig[:, 0].min() < -1e-12 * scale:
        i = int(np.argmin(eig[:, 0]))
        raise ValueError(f"A must be positive semidefinite (each f_i convex); A[{i}] has the "
                         f"eigenvalue {eig[i, 0]:.3g}.")
    mean_eig = np.linalg.eigvalsh(A.mean(axis=0))
    if mean_eig[0] <= 1e-12 * scale:
        raise ValueError(f"sum_i A_i is singular (smallest eigenvalue of the mean "
                         f"{mean_eig[0]:.3g}): F has no unique minimizer; add a regularizer.")
    x_star = np.linalg.solve(A.sum(axis=0), b.sum(axis=0))
    grads = np.einsum("nde,e->nd", A, x_star) - b
    value = float(np.sum(0.5 * np.einsum("d,nde,e->n", x_star, A, x_star) - b @ x_star + c))
    for arr in (A, b, c, x_star):
        arr.setflags(write=False)
    return QuadraticProblem(
        name=name, num_agents=N, dim=d, smoothness=np.maximum(eig[:, -1], 0.0),
        strong_convexity=float(mean_eig[0]), optimum=x_star, optimal_value=value,
        heterogeneity=float(np.mean(np.sum(grads ** 2, axis=1))),
        fingerprint=_fingerprint(A, b, c, extra=name), hessians=A, linear=b, offsets=c)


def random_quadratic(num_agents: int, dim: int, *, strong_convexity: float = 1.0,
                     smoothness: float = 10.0, heterogeneity: float = 1.0,
                     seed: int = 0) -> QuadraticProblem:
    """A random strongly convex quadratic whose constants lie within given bounds.

    ``A_i = Q_i diag(lambda_i) Q_i^T`` with ``Q_i`` a random rotation and ``lambda_i ~
    U[mu, L]``, so every ``f_i`` is ``mu``-strongly convex and ``L``-smooth; the problem's own
    constants (``strong_convexity`` of the average, ``smoothness``) are computed from the
    drawn ``A_i`` and lie inside ``[mu, L]``, usually well inside (averaging rotated spectra
    narrows them). ``b_i = A_i x0 +
    s d_i`` with ``x0, d_i`` standard normal, ``d_i`` centred over agents, so ``x* = x0``
    exactly and ``zeta^2 = s^2 (1/N) sum_i ||d_i||^2``; ``s`` is set so that ``zeta^2`` equals
    ``heterogeneity`` (0: every agent has the same minimizer).

    Raises:
        ValueError: a count below 1, ``0 < strong_convexity <= smoothness`` violated, a
            negative ``heterogeneity``, or a positive one with a single agent (one agent's
            gradient vanishes at its own minimizer).
    """
    N = check_int(num_agents, "num_agents")
    d = check_int(dim, "dim")
    mu, L = float(strong_convexity), float(smoothness)
    if not (0.0 < mu <= L < np.inf):
        raise ValueError(f"need 0 < strong_convexity <= smoothness < inf; got "
                         f"strong_convexity={strong_convexity!r}, smoothness={smoothness!r}.")
    zeta2 = float(heterogeneity)
    if not (0.0 <= zeta2 < np.inf):
        raise ValueError(f"heterogeneity (zeta^2) must be finite and >= 0; got "
                         f"{heterogeneity!r}.")
    if N == 1 and zeta2 > 0:
        raise ValueError("heterogeneity must be 0 with num_agents = 1: a single agent's "
                         "gradient vanishes at the minimizer.")
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))
    Q = np.linalg.qr(rng.standard_normal((N, d, d)))[0]
    lam = rng.uniform(mu, L, size=(N, d))
    A = np.einsum("nij,nj,nkj->nik", Q, lam, Q)
    x0 = rng.standard_normal(d)
    D = rng.standard_normal((N, d))
    D -= D.mean(axis=0)
    spread = float(np.mean(np.sum(D ** 2, axis=1)))
    s = np.sqrt(zeta2 / spread) if spread > 0 else 0.0
    b = np.einsum("nde,e->nd", A, x0) + s * D
    return quadratic(A, b, name=f"random_quadratic(N={N}, d={d}, seed={seed})")


def least_squares(features, targets, mask=None, *, regularization: float = 0.0,
                  name: str = "least_squares") -> QuadraticProblem:
    """``f_i(x) = (1/(2 m_i)) ||A_i x - y_i||^2 + (rho/2) ||x||^2`` as a :class:`QuadraticProblem`.

    ``features [N, m, d]``, ``targets [N, m]`` and ``mask [N, m]`` (1 on agent i's ``m_i``
    real rows, 0 on padding; default all 1), as :func:`~decentral.optimization.data.split_rows`
    returns them. ``A_i^T A_i / m_i + rho I`` is agent i's Hessian, so ``L_i =
    sigma_max(A_i)^2 / m_i + rho``; a single ``f_i`` need not be strongly convex when ``m_i <
    d``, while ``F`` is when the stacked rows have full column rank or ``rho > 0``.
    """
    A, y, w = _rows(features, targets, mask)
    rho = _nonnegative(regularization, "regularization")
    d = A.shape[2]
    hess = np.einsum("nm,nmd,nme->nde", w, A, A) + rho * np.eye(d)[None]
    lin = np.einsum("nm,nmd,nm->nd", w, A, y)
    offs = 0.5 * np.einsum("nm,nm->n", w, y ** 2)
    return quadratic(hess, lin, offs, name=name)


def _nonnegative(value, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number >= 0; got {value!r}.") from None
    if not (0.0 <= v < np.inf):
        raise ValueError(f"{name} must be a real number >= 0; got {value!r}.")
    return v


def _rows(features, targets, mask):
    """Checked ``(A [N, m, d], y [N, m], w [N, m] = mask / m_i)`` of row-split data."""
    A = _float_array(features, "features ([N, m, d])", 3)
    N, m, _ = A.shape
    y = _float_array(targets, "targets ([N, m])", 2)
    if y.shape != (N, m):
        raise ValueError(f"targets must be [N, m] = [{N}, {m}] to match features; got shape "
                         f"{y.shape}.")
    msk = np.ones((N, m)) if mask is None else _float_array(mask, "mask ([N, m])", 2)
    if msk.shape != (N, m) or not np.all((msk == 0) | (msk == 1)):
        raise ValueError(f"mask must be [N, m] = [{N}, {m}] of 0s and 1s; got shape "
                         f"{msk.shape}.")
    counts = msk.sum(axis=1)
    if np.any(counts < 1):
        raise ValueError(f"every agent needs at least one row; agents "
                         f"{np.flatnonzero(counts < 1).tolist()} have none (mask).")
    return A * msk[..., None], y * msk, msk / counts[:, None]


# ---------------------------------------------------------------------------------------------
# logistic regression
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class LogisticProblem(Problem):
    """``f_i(x) = sum_j w_ij log(1 + exp(-y_j a_j^T x)) + (lambda/2) ||x||^2`` (see
    :func:`logistic_regression`)."""

    features: np.ndarray = field(default=None, repr=False)
    labels: np.ndarray = field(default=None, repr=False)
    weights: np.ndarray = field(default=None, repr=False)
    regularization: float = 0.0

    def _value(self, x):
        A, y, w = (jnp.asarray(v, x.dtype) for v in (self.features, self.labels, self.weights))
        margin = y * jnp.einsum("nmd,nd->nm", A, x)
        return (jnp.sum(w * jnp.logaddexp(0.0, -margin), axis=1)
                + 0.5 * self.regularization * jnp.sum(x ** 2, axis=1))

    def _gradient(self, x):
        A, y, w = (jnp.asarray(v, x.dtype) for v in (self.features, self.labels, self.weights))
        margin = y * jnp.einsum("nmd,nd->nm", A, x)
        coef = -w * y * jax.nn.sigmoid(-margin)
        return jnp.einsum("nm,nmd->nd", coef, A) + self.regularization * x


def logistic_regression(features, labels, mask=None, *, regularization: float = 1e-2,
                        name: str = "logistic_regression") -> LogisticProblem:
    """l2-regularized logistic loss of agent i's rows, ``f_i(x) = (1/m_i) sum_j log(1 +
    exp(-y_j a_j^T x)) + (lambda/2) ||x||^2``, labels ``y_j`` in {-1, +1}.

    Constants: ``mu = lambda``; ``L_i = sigma_max(A_i)^2 / (4 m_i) + lambda`` (the logistic
    curvature is at most 1/4). The optimum is found by damped Newton in float64 on ``F``
    until ``||grad F(x*)|| <= 1e-13 max(1, ||grad F(0)||)`` (accepted up to 10 times that
    when the last steps stall at round-off).

    Args:
        features, labels, mask: ``[N, m, d]``, ``[N, m]`` (+-1 on real rows), ``[N, m]``, as
            :func:`~decentral.optimization.data.split_rows` returns them.
        regularization: ``lambda > 0`` (the problem is then strongly convex).

    Raises:
        ValueError: shapes, labels other than +-1 on real rows, ``lambda <= 0``, or a Newton
            solve that does not reach the tolerance.
    """
    A, y, w = _rows(features, labels, mask)
    lam = _nonnegative(regularization, "regularization")
    if lam <= 0:
        raise ValueError("regularization (lambda) must be > 0 for logistic regression: without "
                         "it the minimizer need not exist (separable data).")
    real = w > 0
    if not np.all(np.isin(y[real], (-1.0, 1.0))):
        raise ValueError("labels must be -1 or +1 on every real row.")
    N, _, d = A.shape
    x_star = _newton_logistic(A, y, w, lam)
    margin = y * np.einsum("nmd,d->nm", A, x_star)
    loss = np.sum(w * np.logaddexp(0.0, -margin), axis=1) + 0.5 * lam * x_star @ x_star
    grads = np.einsum("nm,nmd->nd", -w * y * _sigmoid(-margin), A) + lam * x_star
    sigma = np.array([np.linalg.norm(A[i] * np.sqrt(w[i])[:, None], 2) for i in range(N)])
    for arr in (A, y, w, x_star):
        arr.setflags(write=False)
    return LogisticProblem(
        name=name, num_agents=N, dim=d, smoothness=sigma ** 2 / 4.0 + lam,
        strong_convexity=lam, optimum=x_star, optimal_value=float(loss.sum()),
        heterogeneity=float(np.mean(np.sum(grads ** 2, axis=1))),
        fingerprint=_fingerprint(A, y, w, extra=f"{name}|{lam!r}"), features=A, labels=y,
        weights=w, regularization=lam)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -z))


def _newton_logistic(A, y, w, lam, *, max_steps: int = 100) -> np.ndarray:
    N, _, d = A.shape
    x = np.zeros(d)

    def total(x):
        margin = y * np.einsum("nmd,d->nm", A, x)
        return float(np.sum(w * np.logaddexp(0.0, -margin)) + 0.5 * N * lam * x @ x)

    def grad_hess(x):
        margin = y * np.einsum("nmd,d->nm", A, x)
        s = _sigmoid(-margin)
        g = np.einsum("nm,nmd->d", -w * y * s, A) + N * lam * x
        H = np.einsum("nm,nmd,nme->de", w * s * (1 - s), A, A) + N * lam * np.eye(d)
        return g, H

    g, H = grad_hess(x)
    target = 1e-13 * max(1.0, float(np.linalg.norm(g)))
    for _ in range(max_steps):
        if np.linalg.norm(g) <= target:
            return x
        step = np.linalg.solve(H, g)
        f0, t = total(x), 1.0
        while total(x - t * step) > f0 - 0.25 * t * float(g @ step) and t > 1e-12:
            t *= 0.5
        x = x - t * step
        g, H = grad_hess(x)
    if np.linalg.norm(g) <= 10 * target:       # round-off floor reached on the last steps
        return x
    raise ValueError(f"Newton's method did not reach ||grad F|| <= {target:.2g} in {max_steps} "
                     f"steps (last {np.linalg.norm(g):.2g}); check the data's scaling.")


# ---------------------------------------------------------------------------------------------
# l1 regression (nonsmooth)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class L1RegressionProblem(Problem):
    """``f_i(x) = sum_j w_ij |a_j^T x - y_j|`` (see :func:`l1_regression`)."""

    features: np.ndarray = field(default=None, repr=False)
    targets: np.ndarray = field(default=None, repr=False)
    weights: np.ndarray = field(default=None, repr=False)
    lipschitz: np.ndarray = field(default=None, repr=False)

    def _value(self, x):
        A, y, w = (jnp.asarray(v, x.dtype) for v in (self.features, self.targets, self.weights))
        return jnp.sum(w * jnp.abs(jnp.einsum("nmd,nd->nm", A, x) - y), axis=1)

    def _gradient(self, x):
        A, y, w = (jnp.asarray(v, x.dtype) for v in (self.features, self.targets, self.weights))
        r = jnp.einsum("nmd,nd->nm", A, x) - y
        return jnp.einsum("nm,nmd->nd", w * jnp.sign(r), A)


def l1_regression(features, targets, mask=None, *,
                  name: str = "l1_regression") -> L1RegressionProblem:
    """Least absolute deviations of agent i's rows, ``f_i(x) = (1/m_i) sum_j |a_j^T x - y_j|``:
    convex, nonsmooth (``smoothness`` is ``inf``, ``strong_convexity`` 0, ``heterogeneity``
    None); ``gradient`` returns the subgradient ``(1/m_i) sum_j sign(a_j^T x - y_j) a_j``,
    whose norm is at most ``lipschitz[i] = (1/m_i) sum_j ||a_j||`` (``G_i``).

    The optimum solves the linear program ``min sum_j w_j t_j`` subject to ``-t <= A x - y <=
    t`` (scipy's HiGHS); ``F*`` is recomputed from ``x*`` in float64. The minimizer of an l1
    fit need not be unique; ``optimal_value`` is.
    """
    A, y, w = _rows(features, targets, mask)
    N, m, d = A.shape
    real = w.ravel() > 0
    rows, rhs, wt = A.reshape(N * m, d)[real], y.ravel()[real], w.ravel()[real]
    k = rows.shape[0]
    cost = np.concatenate([np.zeros(d), wt])
    eye = np.eye(k)
    a_ub = np.block([[rows, -eye], [-rows, -eye]])
    b_ub = np.concatenate([rhs, -rhs])
    bounds = [(None, None)] * d + [(0, None)] * k
    res = optimize.linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")
    if res.status != 0:
        raise ValueError(f"the l1 fit's linear program failed: {res.message}")
    x_star = np.asarray(res.x[:d], np.float64)
    value = float(np.sum(w * np.abs(np.einsum("nmd,d->nm", A, x_star) - y)))
    G = np.einsum("nm,nm->n", w, np.linalg.norm(A, axis=2))
    for arr in (A, y, w, x_star, G):
        arr.setflags(write=False)
    return L1RegressionProblem(
        name=name, num_agents=N, dim=d, smoothness=np.full(N, np.inf), strong_convexity=0.0,
        optimum=x_star, optimal_value=value, heterogeneity=None,
        fingerprint=_fingerprint(A, y, w, extra=name), features=A, targets=y, weights=w,
        lipschitz=G)
