"""decentral.optimization problems: gradients against autodiff, optima to float64 precision,
constants against their definitions, the data splits, and bad input."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from decentral.optimization import (
    breast_cancer,
    diabetes,
    digits,
    l1_regression,
    least_squares,
    logistic_regression,
    quadratic,
    random_quadratic,
    split_rows,
    standardize,
)

pytestmark = pytest.mark.usefixtures("x64_module")


def _autodiff_gradient(problem, x):
    return jax.vmap(lambda i, xi: jax.grad(
        lambda z: problem.value(x.at[i].set(z))[i])(xi))(jnp.arange(x.shape[0]), x)


def _at(problem, point):
    return jnp.tile(jnp.asarray(point, jnp.float64), (problem.num_agents, 1))


def test_quadratic_constants_and_gradient():
    p = random_quadratic(6, 4, strong_convexity=0.5, smoothness=8.0, heterogeneity=2.0, seed=3)
    A, b = p.hessians, p.linear
    eig = np.linalg.eigvalsh(A)
    assert eig.min() >= 0.5 - 1e-12 and eig.max() <= 8.0 + 1e-12
    assert p.smoothness == pytest.approx(eig[:, -1])
    assert p.strong_convexity == pytest.approx(np.linalg.eigvalsh(A.mean(0))[0])
    assert p.strong_convexity >= 0.5 - 1e-12
    x = jnp.asarray(np.random.default_rng(0).standard_normal((6, 4)))
    np.testing.assert_allclose(p.gradient(x), _autodiff_gradient(p, x), rtol=1e-12, atol=1e-12)
    # optimum: the gradients sum to 0, the heterogeneity is exactly the one asked for
    g = np.asarray(p.gradient(_at(p, p.optimum)))
    assert np.abs(g.sum(0)).max() <= 1e-12
    assert np.mean(np.sum(g ** 2, 1)) == pytest.approx(2.0, rel=1e-12)
    assert p.heterogeneity == pytest.approx(2.0, rel=1e-12)
    assert float(p.objective(p.optimum)) == pytest.approx(p.optimal_value, rel=1e-12)
    # F* is the minimum: any other point is worse
    for _ in range(5):
        other = p.optimum + 0.1 * np.random.default_rng(_).standard_normal(4)
        assert float(p.objective(other)) > p.optimal_value
    # zeta^2 = 0: every agent's minimizer is x*
    same = random_quadratic(6, 4, heterogeneity=0.0, seed=3)
    assert np.abs(np.asarray(same.gradient(_at(same, same.optimum)))).max() <= 1e-12
    assert np.allclose(b.sum(0), A.sum(0) @ p.optimum)


def test_quadratic_exact_small_case_and_config():
    p = quadratic(np.stack([np.eye(2), 3 * np.eye(2)]), np.array([[1.0, 0.0], [0.0, 3.0]]),
                  offsets=[1.0, 2.0])
    assert p.optimum.tolist() == [0.25, 0.75]
    # F(x) = 2||x||^2 - x1 - 3 x2 + 3 at x* = (1/4, 3/4): 2 * 10/16 - 1/4 - 9/4 + 3
    assert p.optimal_value == pytest.approx(2 * 10 / 16 - 0.25 - 2.25 + 3.0)
    assert p.config()["fingerprint"] != quadratic(np.stack([np.eye(2), 3 * np.eye(2)]),
                                                  np.zeros((2, 2))).config()["fingerprint"]
    assert p.config() == quadratic(np.stack([np.eye(2), 3 * np.eye(2)]),
                                   np.array([[1.0, 0.0], [0.0, 3.0]]),
                                   offsets=[1.0, 2.0]).config()


def test_stochastic_gradient_mean_and_spread():
    p = random_quadratic(4, 3, seed=1)
    x = _at(p, np.zeros(3))
    draws = jax.vmap(lambda k: p.stochastic_gradient(k, x, 0.5))(
        jax.random.split(jax.random.PRNGKey(0), 4000))
    noise = np.asarray(draws - p.gradient(x))
    assert abs(noise.mean()) < 0.02 and noise.std() == pytest.approx(0.5, rel=0.03)
    np.testing.assert_array_equal(p.stochastic_gradient(jax.random.PRNGKey(1), x, 0.0),
                                  p.gradient(x))
    assert p.gradient(x.astype(jnp.float32)).dtype == jnp.float32


def test_least_squares_matches_the_stacked_solve():
    rng = np.random.default_rng(2)
    X, y = rng.standard_normal((23, 3)), rng.standard_normal(23)
    A, t, mask = split_rows(X, y, 5)
    p = least_squares(A, t, mask, regularization=0.1)
    # F = sum_i (1/(2 m_i)) ||A_i x - y_i||^2 + (N rho / 2) ||x||^2, solved as one weighted system
    m = mask.sum(1)
    w = np.concatenate([np.full(int(k), 1 / np.sqrt(k)) for k in m])
    rows = np.concatenate([A[i, :int(m[i])] for i in range(5)]) * w[:, None]
    rhs = np.concatenate([t[i, :int(m[i])] for i in range(5)]) * w
    full = np.vstack([rows, np.sqrt(5 * 0.1) * np.eye(3)])
    want = np.linalg.lstsq(full, np.concatenate([rhs, np.zeros(3)]), rcond=None)[0]
    np.testing.assert_allclose(p.optimum, want, rtol=1e-12, atol=1e-12)
    x = jnp.asarray(rng.standard_normal((5, 3)))
    direct = [0.5 / m[i] * np.sum((A[i, :int(m[i])] @ np.asarray(x[i]) - t[i, :int(m[i])]) ** 2)
              + 0.05 * float(x[i] @ x[i]) for i in range(5)]
    np.testing.assert_allclose(p.value(x), direct, rtol=1e-12)
    sig = [np.linalg.norm(A[i, :int(m[i])], 2) ** 2 / m[i] + 0.1 for i in range(5)]
    np.testing.assert_allclose(p.smoothness, sig, rtol=1e-10)


def test_split_rows_partitions():
    X = np.arange(14.0).reshape(7, 2)
    A, t, mask = split_rows(X, np.array([5, 3, 6, 0, 1, 4, 2.0]), 3, partition="sorted")
    assert mask.sum(1).tolist() == [3.0, 2.0, 2.0]
    assert t[0, :3].tolist() == [0.0, 1.0, 2.0] and t[2, :2].tolist() == [5.0, 6.0]
    assert A[2, 2].tolist() == [0.0, 0.0]                         # padding
    A1, _, _ = split_rows(X, np.zeros(7), 3, seed=1)
    A2, _, _ = split_rows(X, np.zeros(7), 3, seed=1)
    np.testing.assert_array_equal(A1, A2)
    assert sorted(A1[mask > 0][:, 0].tolist()) == X[:, 0].tolist()
    with pytest.raises(ValueError, match="partition"):
        split_rows(X, np.zeros(7), 3, partition="random")
    with pytest.raises(ValueError, match="num_agents must be <= 7"):
        split_rows(X, np.zeros(7), 8)
    Z = standardize(X)
    assert Z.shape == (7, 3) and np.allclose(Z[:, :2].mean(0), 0) and np.all(Z[:, 2] == 1)


def test_logistic_breast_cancer_optimum_and_constants():
    p = breast_cancer(8)
    assert (p.num_agents, p.dim) == (8, 31)
    g = np.asarray(p.gradient(_at(p, p.optimum)))
    assert np.linalg.norm(g.sum(0)) <= 1e-12
    x = jnp.asarray(np.random.default_rng(4).standard_normal((8, 31)) * 0.3)
    np.testing.assert_allclose(p.gradient(x), _autodiff_gradient(p, x), rtol=1e-10, atol=1e-12)
    assert p.strong_convexity == 0.01
    # L_i bounds the largest Hessian eigenvalue of f_i (checked at random points and at 0,
    # where the logistic curvature 1/4 is attained)
    A, y, w = p.features, p.labels, p.weights
    for point in (np.asarray(x), np.zeros((8, 31))):
        s = 1 / (1 + np.exp(-y * np.einsum("nmd,nd->nm", A, point)))
        hess = np.einsum("nm,nmd,nme->nde", w * s * (1 - s), A, A) + 0.01 * np.eye(31)
        top = np.linalg.eigvalsh(hess)[:, -1]
        assert np.all(top <= p.smoothness * (1 + 1e-12))
    assert np.allclose(top, p.smoothness)                   # at 0 the bound is attained
    assert p.heterogeneity > 0 and float(p.objective(p.optimum)) == pytest.approx(
        p.optimal_value, rel=1e-12)


def test_logistic_digits_and_diabetes_load():
    d = digits(4)
    assert d.dim == 65 and np.linalg.norm(np.asarray(
        d.gradient(_at(d, d.optimum))).sum(0)) <= 1e-11
    ls = diabetes(10, partition="sorted")
    assert ls.dim == 11 and ls.num_agents == 10 and ls.heterogeneity > 0
    assert np.abs(np.asarray(ls.gradient(_at(ls, ls.optimum))).sum(0)).max() <= 1e-12


def test_l1_regression_optimum_is_the_minimum():
    rng = np.random.default_rng(5)
    X = np.hstack([rng.standard_normal((40, 2)), np.ones((40, 1))])
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.laplace(size=40)
    A, t, mask = split_rows(X, y, 4)
    p = l1_regression(A, t, mask)
    assert np.isinf(p.max_smoothness) and p.strong_convexity == 0.0 and p.heterogeneity is None
    assert float(p.objective(p.optimum)) == pytest.approx(p.optimal_value, rel=1e-12)
    for k in range(20):
        other = p.optimum + 0.05 * np.random.default_rng(k).standard_normal(3)
        assert float(p.objective(other)) >= p.optimal_value - 1e-12
    # the subgradient bound: ||g_i|| <= G_i at any point
    x = jnp.asarray(rng.standard_normal((4, 3)))
    assert np.all(np.linalg.norm(np.asarray(p.gradient(x)), axis=1) <= p.lipschitz + 1e-12)


@pytest.mark.parametrize("bad, match", [
    (dict(A=np.ones((2, 2, 3)), b=np.ones((2, 2))), "A must be"),
    (dict(A=np.stack([np.eye(2)] * 2), b=np.ones((2, 3))), "b must be"),
    (dict(A=np.stack([[[1.0, 1.0], [0.0, 1.0]]] * 2), b=np.ones((2, 2))), "symmetric"),
    (dict(A=np.stack([-np.eye(2)] * 2), b=np.ones((2, 2))), "positive semidefinite"),
    (dict(A=np.stack([np.diag([1.0, 0.0])] * 2), b=np.ones((2, 2))), "singular"),
    (dict(A=np.stack([np.eye(2)] * 2), b=[[np.nan, 0.0], [0.0, 0.0]]), "non-finite"),
    (dict(A=np.stack([np.eye(2)] * 2), b=np.ones((2, 2)), offsets=[1.0]), "offsets"),
])
def test_quadratic_refuses_bad_input(bad, match):
    with pytest.raises(ValueError, match=match):
        quadratic(**bad)


def test_other_bad_input():
    with pytest.raises(ValueError, match="strong_convexity"):
        random_quadratic(3, 2, strong_convexity=2.0, smoothness=1.0)
    with pytest.raises(ValueError, match="heterogeneity"):
        random_quadratic(3, 2, heterogeneity=-1.0)
    with pytest.raises(ValueError, match="num_agents = 1"):
        random_quadratic(1, 2, heterogeneity=1.0)
    assert random_quadratic(1, 2, heterogeneity=0.0).heterogeneity <= 1e-20
    A, t, mask = split_rows(np.ones((4, 2)), np.array([1.0, -1, 1, -1]), 2)
    with pytest.raises(ValueError, match="regularization"):
        logistic_regression(A, t, mask, regularization=0.0)
    with pytest.raises(ValueError, match="labels"):
        logistic_regression(A, 2 * t, mask)
    with pytest.raises(ValueError, match="at least one row"):
        least_squares(A, t, np.array([[1.0, 1.0], [0.0, 0.0]]))
    p = random_quadratic(3, 2)
    with pytest.raises(ValueError, match=r"x must be \[N, d\]"):
        p.gradient(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="one point"):
        p.objective(np.zeros((3, 2)))
