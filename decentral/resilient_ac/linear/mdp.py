"""Finite MDPs with private rewards and linear features, and their exact references.

A :class:`FiniteMDP` holds a finite MDP with one private reward per agent and the features of
the linear learners (:mod:`decentral.resilient_ac.linear`); :func:`random_mdp` draws one,
:func:`validate_mdp` checks one, and :func:`exact_references` computes on the host (float64)
what the linear critic and team-reward model converge to under a fixed joint policy: the
stationary distribution, the projected Bellman fixed point and the least-squares team-reward
fit of Figura, Lin, Liu, Gupta, arXiv:2111.06776 (derivations in ``docs/resilient_linear.md``).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from decentral._checks import sum_tolerance

__all__ = ["FiniteMDP", "random_mdp", "validate_mdp", "num_actions_per_agent", "joint_policy",
           "LinearReferences", "exact_references"]


def _check_discount(discount, name: str = "discount") -> float:
    if isinstance(discount, bool | np.bool_) or np.ndim(discount) != 0:
        raise ValueError(f"{name} must be a number in [0, 1); got {discount!r}.")
    try:
        g = float(np.asarray(discount))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in [0, 1); got {discount!r}.") from None
    if not (math.isfinite(g) and 0.0 <= g < 1.0):
        raise ValueError(f"{name} (gamma) must lie in [0, 1); got {discount!r}.")
    return g


# =============================================================================================
# the finite MDP
# =============================================================================================

class FiniteMDP(NamedTuple):
    """A finite MDP with private rewards and the features of the linear learners (arrays).

    Joint actions are indexed agent 0 first: ``a = sum_i a^i M^(N - 1 - i)`` with ``M`` actions
    per agent, so ``A = M^N``.

    Attributes:
        transition: ``[S, A, S]`` ``P(s' | s, a)`` (rows sum to 1).
        rewards: ``[N, S, A]`` private rewards ``r^i(s, a)``.
        state_features: ``[S, d_v]`` critic features ``phi(s)`` (no zero row).
        reward_features: ``[S, A, d_f]`` team-reward features ``f(s, a)`` (no zero row).
        policy_features: ``[S, d_p]`` policy features ``phi_pi(s)`` (logits
            ``theta^i [M, d_p] @ phi_pi(s)``); the identity gives tabular softmax policies.
        initial_distribution: ``[S]`` law of ``s_0``.
    """

    transition: Any
    rewards: Any
    state_features: Any
    reward_features: Any
    policy_features: Any
    initial_distribution: Any

    @property
    def num_states(self) -> int:
        return int(np.shape(self.transition)[0])

    @property
    def num_agents(self) -> int:
        return int(np.shape(self.rewards)[0])

    @property
    def num_joint_actions(self) -> int:
        return int(np.shape(self.transition)[1])

    def digest(self) -> str:
        """``"mdp:<sha256>"`` of every array (host values), for configurations."""
        import hashlib

        h = hashlib.sha256()
        for name, a in zip(self._fields, self, strict=True):
            arr = np.ascontiguousarray(np.asarray(a))
            h.update(f"{name}|{arr.shape}|{arr.dtype.str}|".encode())
            h.update(arr.tobytes())
        return "mdp:" + h.hexdigest()


def num_actions_per_agent(mdp: FiniteMDP) -> int:
    """``M`` with ``A = M^N`` (from the shapes; an error when ``A`` is not an N-th power)."""
    n, a = mdp.num_agents, mdp.num_joint_actions
    m = max(1, int(round(a ** (1.0 / n))))
    for cand in (m - 1, m, m + 1):
        if cand >= 1 and cand ** n == a:
            return cand
    raise ValueError(f"the MDP has A = {a} joint actions, which is not M^N for N = {n} agents; "
                     "joint actions must enumerate every combination of the agents' actions.")


def _host(a, name: str, ndim: int) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim != ndim:
        raise ValueError(f"mdp.{name} must have {ndim} axes; got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"mdp.{name} holds NaN or infinite entries.")
    return arr


def validate_mdp(mdp: FiniteMDP, *, tol: float = 1e-8) -> FiniteMDP:
    """Check an MDP on the host (shapes, finiteness, stochastic rows, nonzero features); return
    it unchanged. Probability sums must be 1 within ``tol``, raised to ``64 S eps`` of the
    arrays' dtype when that is larger (the float32 MDP a float32 run holds is valid).

    Raises:
        ValueError: what is wrong and how to fix it.
    """
    if not isinstance(mdp, FiniteMDP):
        raise ValueError(f"expected a FiniteMDP (see random_mdp); got {type(mdp).__name__}.")
    if any(isinstance(leaf, jax.core.Tracer) for leaf in mdp):
        return mdp
    P = _host(mdp.transition, "transition", 3)
    S, A, S2 = P.shape
    if S2 != S or S < 1 or A < 1:
        raise ValueError(f"mdp.transition must be [S, A, S]; got {P.shape}.")
    if np.any(P < 0):
        raise ValueError("mdp.transition has negative probabilities.")
    sums = P.sum(axis=2)
    # sums checked in the precision of the given arrays (float32 rows: ~S eps32, not 1e-8)
    row_tol = sum_tolerance(np.asarray(mdp.transition).dtype, S, tol)
    bad = np.argwhere(np.abs(sums - 1.0) > row_tol)
    if bad.size:
        s, a = bad[0]
        raise ValueError(f"mdp.transition[{s}, {a}] sums to {sums[s, a]!r}, not 1; normalise "
                         "every row P(. | s, a).")
    R = _host(mdp.rewards, "rewards", 3)
    if R.shape[1:] != (S, A) or R.shape[0] < 1:
        raise ValueError(f"mdp.rewards must be [N, S = {S}, A = {A}]; got {R.shape}.")
    num_actions_per_agent(mdp)
    phi = _host(mdp.state_features, "state_features", 2)
    if phi.shape[0] != S:
        raise ValueError(f"mdp.state_features must be [S = {S}, d_v]; got {phi.shape}.")
    f = _host(mdp.reward_features, "reward_features", 3)
    if f.shape[:2] != (S, A):
        raise ValueError(f"mdp.reward_features must be [S = {S}, A = {A}, d_f]; got {f.shape}.")
    pf = _host(mdp.policy_features, "policy_features", 2)
    if pf.shape[0] != S:
        raise ValueError(f"mdp.policy_features must be [S = {S}, d_p]; got {pf.shape}.")
    for name, rows in (("state_features", phi), ("reward_features", f.reshape(S * A, -1))):
        zero = np.flatnonzero(np.sum(rows * rows, axis=1) == 0.0)
        if zero.size:
            raise ValueError(f"mdp.{name} has zero feature rows (first: {zero[0]}); the "
                             "projection step divides by ||feature||^2, so every feature must "
                             "be nonzero (add a constant coordinate, for instance).")
    mu0 = _host(mdp.initial_distribution, "initial_distribution", 1)
    mu_tol = sum_tolerance(np.asarray(mdp.initial_distribution).dtype, S, tol)
    if mu0.shape != (S,) or np.any(mu0 < 0) or abs(mu0.sum() - 1.0) > mu_tol:
        raise ValueError(f"mdp.initial_distribution must be a probability vector of length {S}.")
    return mdp


def _np_rng(key) -> np.random.Generator:
    """A numpy generator from a JAX key or an int seed (host-side generation in float64)."""
    if isinstance(key, int | np.integer):
        return np.random.default_rng(int(key))
    data = np.asarray(jax.random.key_data(key) if jnp.issubdtype(jnp.asarray(key).dtype,
                                                                  jax.dtypes.prng_key)
                      else key)
    return np.random.default_rng(data.astype(np.uint64).ravel().tolist())


def _unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _full_rank_features(rng, rows: int, dim: int, name: str) -> np.ndarray:
    if dim > rows:
        raise ValueError(f"{name} = {dim} exceeds the number of rows {rows}: the features "
                         "cannot have full column rank.")
    for _ in range(100):
        q, _ = np.linalg.qr(rng.normal(size=(rows, dim)))      # orthonormal columns
        x = _unit_rows(q)
        sv = np.linalg.svd(x, compute_uv=False)
        if sv[-1] > 0.05 * sv[0]:
            return x
    raise RuntimeError("could not draw well-conditioned features")   # pragma: no cover


def random_mdp(key, num_states: int, num_actions_per_agent: int, num_agents: int,
               feature_dim: int, *, reward_feature_dim: int | None = None,
               policy_feature_dim: int | None = None, heterogeneity: float = 0.5,
               reward_noise: float = 0.05, dirichlet: float = 1.0,
               min_transition: float = 0.02) -> FiniteMDP:
    """A random ergodic MDP for ``N`` agents with private rewards (host-side, float64).

    * ``P(. | s, a) = (1 - S m) Dirichlet(dirichlet) + m`` with ``m = min_transition``: every
      entry ``>= m > 0``, so the state chain is ergodic under every policy.
    * ``phi(s)`` ``[S, d_v]`` and ``f(s, a)`` ``[S, A, d_f]``: the rows of a random matrix with
      orthonormal columns, each scaled to unit norm (non-one-hot, mixed signs, full column
      rank, condition number at most 20; ``d_v = S`` gives an orthogonal ``Phi``).
    * Rewards nearly linear in ``f``: ``r^i(s, a) = f(s, a)^T w^i + reward_noise xi^i(s, a)``
      with ``w^i = w + heterogeneity u^i`` (``w, u^i, xi^i`` standard normal); so the
      approximation error of the linear team-reward model is about ``reward_noise``, and
      ``heterogeneity = 0`` gives identical rewards (``xi`` then shared too).
    * ``phi_pi(s)``: the identity (tabular softmax) unless ``policy_feature_dim`` is given.
    * ``s_0`` uniform.

    Args:
        key: a JAX key or an int seed.
        num_states, num_actions_per_agent, num_agents: ``S``, ``M``, ``N`` (``A = M^N``).
        feature_dim: ``d_v <= S``.
        reward_feature_dim: ``d_f <= S A`` (default ``d_v``).
        policy_feature_dim: ``d_p <= S`` (default: tabular).
        heterogeneity, reward_noise: see above (>= 0).
        dirichlet: concentration of the transition rows (> 0).
        min_transition: the floor ``m`` of every transition probability (``0 < m <= 1/S``).

    Returns:
        A validated :class:`FiniteMDP` of float64 numpy arrays.

    Example:
        >>> mdp = random_mdp(0, 3, 2, 2, 2)
        >>> mdp.transition.shape, mdp.rewards.shape, mdp.reward_features.shape
        ((3, 4, 3), (2, 3, 4), (3, 4, 2))
    """
    from decentral._checks import check_int

    S = check_int(num_states, "num_states")
    M = check_int(num_actions_per_agent, "num_actions_per_agent")
    N = check_int(num_agents, "num_agents")
    dv = check_int(feature_dim, "feature_dim")
    df = dv if reward_feature_dim is None else check_int(reward_feature_dim,
                                                         "reward_feature_dim")
    A = M ** N
    for name, x in (("heterogeneity", heterogeneity), ("reward_noise", reward_noise)):
        if not (math.isfinite(float(x)) and float(x) >= 0):
            raise ValueError(f"{name} must be a finite number >= 0; got {x!r}.")
    if not (math.isfinite(float(dirichlet)) and float(dirichlet) > 0):
        raise ValueError(f"dirichlet must be > 0; got {dirichlet!r}.")
    if not 0 < float(min_transition) <= 1.0 / S:
        raise ValueError(f"min_transition must lie in (0, 1/S = {1.0 / S:g}]; got "
                         f"{min_transition!r}.")
    rng = _np_rng(key)
    m = float(min_transition)
    P = (1.0 - S * m) * rng.dirichlet(np.full(S, float(dirichlet)), size=(S, A)) + m
    P /= P.sum(axis=2, keepdims=True)
    phi = _full_rank_features(rng, S, dv, "feature_dim")
    f = _full_rank_features(rng, S * A, df, "reward_feature_dim").reshape(S, A, df)
    w = rng.normal(size=df)
    u = rng.normal(size=(N, df))
    if heterogeneity == 0:
        xi = np.broadcast_to(rng.normal(size=(S, A)), (N, S, A))
    else:
        xi = rng.normal(size=(N, S, A))
    R = np.einsum("sad,nd->nsa", f, w + float(heterogeneity) * u) + float(reward_noise) * xi
    if policy_feature_dim is None:
        pf = np.eye(S)
    else:
        pf = _full_rank_features(rng, S, check_int(policy_feature_dim, "policy_feature_dim"),
                                 "policy_feature_dim")
    mdp = FiniteMDP(P, np.ascontiguousarray(R), phi, f, pf, np.full(S, 1.0 / S))
    return validate_mdp(mdp)


# =============================================================================================
# exact references (host, float64)
# =============================================================================================

def _softmax_np(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def joint_policy(mdp: FiniteMDP, policy) -> np.ndarray:
    """``pi(a | s) = prod_i pi^i(a^i | s)`` ``[S, A]`` for policy parameters ``[N, M, d_p]``
    (host, float64)."""
    theta = np.asarray(policy, np.float64)
    N, M = mdp.num_agents, num_actions_per_agent(mdp)
    pf = np.asarray(mdp.policy_features, np.float64)
    if theta.shape != (N, M, pf.shape[1]):
        raise ValueError(f"policy must be [N = {N}, M = {M}, d_p = {pf.shape[1]}]; got "
                         f"{theta.shape}.")
    per_agent = _softmax_np(np.einsum("nmd,sd->snm", theta, pf))       # [S, N, M]
    decode = np.stack(np.unravel_index(np.arange(M ** N), (M,) * N), axis=1)   # [A, N]
    probs = per_agent[:, np.arange(N)[None, :], decode]                  # [S, A, N]
    return probs.prod(axis=2)


class LinearReferences(NamedTuple):
    """Exact quantities under a fixed joint policy (host, float64); see
    :func:`exact_references`. Shapes: ``S`` states, ``A`` joint actions, ``N`` agents.

    Attributes:
        policy: ``[S, A]`` joint policy.
        state_distribution: ``[S]`` stationary law ``d`` of the state chain.
        state_action_distribution: ``[S, A]`` ``d(s) pi(a | s)``.
        values: ``[N, S]`` ``V^i_pi``, each agent's discounted value of its own reward.
        team_reward: ``[S, A]`` average reward of the cooperative agents.
        team_values: ``[S]`` the value of ``team_reward`` (the average of their ``V^i``).
        reward_fits: ``[N, d_f]`` ``lambda^i_LS``, the ``d``-weighted least-squares fit of
            ``r^i`` by ``f``; ``team_reward_fit`` ``[d_f]`` the fit of ``team_reward``.
        critic_fits: ``[N, d_v]`` the TD(0) fixed points of each agent's reward;
            ``team_critic_fit`` ``[d_v]`` the one of ``team_reward``.
        reward_hull: ``[2, S, A]`` min / max of ``r^j(s, a)`` over cooperative ``j``.
        value_hull: ``[2, S]`` min / max of ``V^j_pi(s)`` over cooperative ``j``.
        reward_approx_error: ``[S, A]`` ``max_j |f(s, a)^T lambda^j_LS - r^j(s, a)|`` over
            cooperative ``j`` (the approximation error of the linear team-reward model).
        value_approx_error: ``[S]`` ``max_j |phi(s)^T v^j_TD - V^j_pi(s)|``.
        reward_band: ``[2, S, A]`` the hull widened by ``reward_approx_error``.
        value_band: ``[2, S]`` the value hull widened by ``value_approx_error``.
        reward_worst_band: ``[2, S, A]`` every value the least-squares fit of a reward that
            takes values in the hull at every (s, a) can take (a worst case, see the docs).
        value_worst_band: ``[2, S]`` the same for the TD(0) fit of such a reward.
    """

    policy: np.ndarray
    state_distribution: np.ndarray
    state_action_distribution: np.ndarray
    values: np.ndarray
    team_reward: np.ndarray
    team_values: np.ndarray
    reward_fits: np.ndarray
    team_reward_fit: np.ndarray
    critic_fits: np.ndarray
    team_critic_fit: np.ndarray
    reward_hull: np.ndarray
    value_hull: np.ndarray
    reward_approx_error: np.ndarray
    value_approx_error: np.ndarray
    reward_band: np.ndarray
    value_band: np.ndarray
    reward_worst_band: np.ndarray
    value_worst_band: np.ndarray


def _box_image(Mat, lo, hi):
    """Range of ``Mat @ g`` over ``lo <= g <= hi`` (entry-wise): ``(min, max)``."""
    a, b = Mat * lo[None, :], Mat * hi[None, :]
    return np.minimum(a, b).sum(axis=1), np.maximum(a, b).sum(axis=1)


def exact_references(mdp: FiniteMDP, policy, cooperative=None, *,
                     discount: float = 0.9) -> LinearReferences:
    """What the linear critic and team-reward model converge to under a fixed joint policy.

    With ``P_pi(s, s') = sum_a pi(a|s) P(s'|s, a)``, ``d`` its stationary law, ``D = diag(d)``,
    ``W = diag(d(s) pi(a|s))`` and ``r^i_pi(s) = sum_a pi(a|s) r^i(s, a)``:

    * ``V^i_pi = (I - gamma P_pi)^-1 r^i_pi``;
    * ``lambda^i_LS = (F^T W F)^-1 F^T W r^i`` (``F`` the ``[S A, d_f]`` feature matrix): the
      fixed point of the local team-reward step under on-policy sampling;
    * ``v^i_TD = (Phi^T D (I - gamma P_pi) Phi)^-1 Phi^T D r^i_pi``: the TD(0) fixed point;
    * the team quantities are those of the cooperative average reward (linear in the reward,
      so the averages of the individual fits).

    Args:
        mdp: the MDP.
        policy: ``[N, M, d_p]`` policy parameters (every agent's, Byzantine included).
        cooperative: ``[N]`` bool (default: all agents).
        discount: ``gamma`` in ``[0, 1)``.

    Returns:
        :class:`LinearReferences`.
    """
    validate_mdp(mdp)
    gamma = _check_discount(discount)
    N, S, A = mdp.num_agents, mdp.num_states, mdp.num_joint_actions
    coop = np.ones(N, bool) if cooperative is None else np.asarray(cooperative, bool)
    if coop.shape != (N,) or not coop.any():
        raise ValueError(f"cooperative must be a boolean [N = {N}] mask with a True entry.")
    pi = joint_policy(mdp, policy)                                      # [S, A]
    P = np.asarray(mdp.transition, np.float64)
    R = np.asarray(mdp.rewards, np.float64)
    Pp = np.einsum("sa,sat->st", pi, P)
    from decentral.markov import stationary_distribution

    d = stationary_distribution(Pp)
    wsa = d[:, None] * pi
    r_pi = np.einsum("sa,nsa->ns", pi, R)
    V = np.linalg.solve(np.eye(S) - gamma * Pp, r_pi.T).T                # [N, S]
    F = np.asarray(mdp.reward_features, np.float64).reshape(S * A, -1)
    W = wsa.reshape(-1)
    FtW = F.T * W
    lam = np.linalg.solve(FtW @ F, FtW @ R.reshape(N, -1).T).T           # [N, d_f]
    Phi = np.asarray(mdp.state_features, np.float64)
    Amat = Phi.T @ (d[:, None] * ((np.eye(S) - gamma * Pp) @ Phi))
    v = np.linalg.solve(Amat, Phi.T @ (d[:, None] * r_pi.T)).T           # [N, d_v]
    rc, Vc = R[coop], V[coop]
    reward_hull = np.stack([rc.min(0), rc.max(0)])
    value_hull = np.stack([Vc.min(0), Vc.max(0)])
    fit_r = np.einsum("sad,nd->nsa", F.reshape(S, A, -1), lam)
    r_err = np.abs(fit_r - R)[coop].max(0)
    v_err = np.abs(v @ Phi.T - V)[coop].max(0)
    # worst case: the fit of any reward g with g(s, a) in the hull at every (s, a)
    proj_r = F @ np.linalg.solve(FtW @ F, FtW)                            # [SA, SA]
    wlo, whi = _box_image(proj_r, reward_hull[0].ravel(), reward_hull[1].ravel())
    avg = np.zeros((S, S * A))                                           # g -> g_pi
    avg[np.repeat(np.arange(S), A), np.arange(S * A)] = pi.ravel()
    proj_v = Phi @ np.linalg.solve(Amat, Phi.T @ (d[:, None] * avg))     # [S, SA]
    vlo, vhi = _box_image(proj_v, reward_hull[0].ravel(), reward_hull[1].ravel())
    return LinearReferences(
        policy=pi, state_distribution=d, state_action_distribution=wsa, values=V,
        team_reward=rc.mean(0), team_values=Vc.mean(0), reward_fits=lam,
        team_reward_fit=lam[coop].mean(0), critic_fits=v, team_critic_fit=v[coop].mean(0),
        reward_hull=reward_hull, value_hull=value_hull, reward_approx_error=r_err,
        value_approx_error=v_err,
        reward_band=np.stack([reward_hull[0] - r_err, reward_hull[1] + r_err]),
        value_band=np.stack([value_hull[0] - v_err, value_hull[1] + v_err]),
        reward_worst_band=np.stack([np.minimum(reward_hull[0], wlo.reshape(S, A)),
                                    np.maximum(reward_hull[1], whi.reshape(S, A))]),
        value_worst_band=np.stack([np.minimum(value_hull[0], vlo),
                                   np.maximum(value_hull[1], vhi)]))
