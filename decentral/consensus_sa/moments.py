"""Exact first and second moments of linear SA driven by a finite Markov chain.

Every algorithm of this family is, on a deterministic graph sequence, an affine recursion in
the row-major vectorisation ``vec(Theta)`` of the ``[N, d]`` iterate, switched by the chain:

    vec(Theta_{t+1}) = F_t(X_t) vec(Theta_t) + g_t(X_t),
    F_t(x) = W1_t ⊗ I_d + alpha_t W2_t ⊗ A(x),        g_t(x) = alpha_t vec(W3_t B(x)),

(row-major vec: ``vec(M X N^T) = (M ⊗ N) vec(X)``) with

* consensus SA, combine-then-adapt (eq. (3)): ``W1 = W2 = W_t``, ``W3 = I``;
* adapt-then-combine (Remark 1): ``W1 = W_t``, ``W2 = W3 = I``;
* push-SA (eq. (9)) on the unnormalised ``Theta~``: ``W1 = W^_t``,
  ``W2 = W^_t diag(1/y_t)``, ``W3 = W^_t``, and ``Theta = diag(1/y_t) Theta~`` with the
  deterministic ``y_t`` of the column-stochastic sequence.

A Markov jump linear system: with ``m_t(x) = E[theta_t 1{X_t = x}]``,
``M_t(x) = E[theta_t theta_t^T 1{X_t = x}]`` and ``p_t(x) = P(X_t = x)``,

    m_{t+1}(y) = sum_x P(x, y) [F(x) m_t(x) + p_t(x) g(x)]
    M_{t+1}(y) = sum_x P(x, y) [F(x) M_t(x) F(x)^T + F(x) m_t(x) g(x)^T
                                + g(x) m_t(x)^T F(x)^T + p_t(x) g(x) g(x)^T]

and ``E theta_t = sum_x m_t(x)``, ``E theta_t theta_t^T = sum_x M_t(x)`` exactly (no sampling).
``F(x)`` is formed for all states at once and ``F M F^T`` is a batched matrix product (cost
about ``4 (Nd)^3`` per state and step); the sum over ``x`` uses the pair structure of TD(0)'s chain
``(s, s') -> (s', s'')`` (``|S_mrp|^2 (Nd)^2`` per step instead of ``|S_mrp|^4 (Nd)^2``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from decentral._checks import check_int
from decentral.graphs import as_sequence

__all__ = ["Moments", "DEFAULT_FLOP_BUDGET", "mjls_moments", "record_steps_of",
           "weighted_error_from_moments", "host_alphas", "refuse_params_graphs",
           "deterministic_weights", "initial_moments_inputs"]

#: Largest estimated cost (floating-point operations) :func:`mjls_moments` accepts unless the
#: caller raises ``max_flops``: about a minute on two CPU cores.
DEFAULT_FLOP_BUDGET = 3e11


class Moments(NamedTuple):
    """Exact moments at the recorded steps.

    Attributes:
        steps: ``[R]`` the number of updates done at each record.
        mean: ``[R, N, d]``, ``E theta_t``.
        second: ``[R, N*d, N*d]``, ``E vec(Theta_t) vec(Theta_t)^T`` (row-major vec).
    """

    steps: np.ndarray
    mean: np.ndarray
    second: np.ndarray


def record_steps_of(num_steps: int, record_at) -> np.ndarray:
    """Sorted, distinct record steps in ``[0, num_steps]`` (default: all ``T + 1``)."""
    T = check_int(num_steps, "num_steps")
    if record_at is None:
        return np.arange(T + 1, dtype=np.int64)
    r = np.asarray(record_at)
    if r.ndim != 1 or r.size == 0 or not np.issubdtype(r.dtype, np.integer):
        raise ValueError("record_at must be a non-empty 1-D sequence of integer steps.")
    r = r.astype(np.int64)
    if np.any(np.diff(r) <= 0) or r[0] < 0 or r[-1] > T:
        raise ValueError(f"record_at must be strictly increasing within [0, {T}].")
    return r


def mjls_moments(*, transition, A, B, W1, W2, W3, alphas, out_scale, theta0, p0, num_steps,
                 record_at=None, pair_states: int | None = None,
                 max_flops: float = DEFAULT_FLOP_BUDGET) -> Moments:
    """The recursion of the module docstring, in float64, recorded at ``record_at``.

    Args:
        transition: ``[S, S]`` chain matrix; A ``[S, d, d]``; B ``[S, N, d]``.
        W1, W2, W3: ``[T, N, N]`` per-step matrices (host arrays).
        alphas: ``[T]`` step sizes.
        out_scale: ``[T + 1, N]`` factor applied to agent rows of the output (ones, or
            ``1 / y_t`` for push-SA).
        theta0: ``[N, d]``; p0: ``[S]`` law of ``X_0``.
        pair_states: ``|S_mrp|`` when the chain is TD's pair chain (enables the cheap sum).
        max_flops: refuse (ValueError) an estimated cost above this.
    """
    T = check_int(num_steps, "num_steps")
    steps = record_steps_of(T, record_at)
    S, N, d = B.shape
    v = N * d
    mix_cost = (pair_states ** 2 if pair_states else S * S) * v * v
    cost = float(T) * (S * (4.0 * v ** 3 + 2.0 * N * d * d * v) + 2.0 * mix_cost)
    if cost > max_flops:
        raise ValueError(
            f"exact moments would cost about {cost:.2g} floating-point operations (T = {T}, "
            f"S = {S} chain states, N*d = {v}), above the budget max_flops = {max_flops:.2g} "
            "(about a minute here); run fewer steps, a smaller problem, or raise max_flops.")
    with jax.enable_x64(True):
        P = jnp.asarray(transition, jnp.float64)
        A_ = jnp.asarray(A, jnp.float64)
        B_ = jnp.asarray(B, jnp.float64)
        xs = (jnp.asarray(W1, jnp.float64), jnp.asarray(W2, jnp.float64),
              jnp.asarray(W3, jnp.float64), jnp.asarray(alphas, jnp.float64))
        th0 = jnp.asarray(theta0, jnp.float64).reshape(v)
        p = jnp.asarray(p0, jnp.float64)
        m0 = p[:, None] * th0[None, :]
        M0 = p[:, None, None] * (th0[:, None] * th0[None, :])[None]
        scale = jnp.asarray(out_scale, jnp.float64)
        eye_d = jnp.eye(d, dtype=jnp.float64)

        Pm = _mrp_of_pair(P, pair_states) if pair_states else None

        def mix_states(h):
            """``sum_x P(x, y) h(x)`` for every y."""
            if Pm is None:
                return jnp.einsum("xy,x...->y...", P, h)
            sm, rest = pair_states, h.shape[1:]
            g = h.reshape((sm, sm) + rest).sum(axis=0)           # sum over s of h((s, u))
            lead = (slice(None), slice(None)) + (None,) * len(rest)
            out = Pm[lead] * g[:, None]                          # P(u, v) * g(u)
            return out.reshape((sm * sm,) + rest)

        def one(t, carry):
            m, M, p = carry
            W1t, W2t, W3t, a = (x[t] for x in xs)

            # F(x) = W1 ⊗ I + a W2 ⊗ A(x), all states at once: [S, v, v]
            F = jnp.kron(W1t, eye_d)[None] + a * jnp.einsum("ik,xjl->xijkl", W2t, A_).reshape(
                S, v, v)
            G = a * jnp.einsum("ik,xkj->xij", W3t, B_).reshape(S, v)
            Fm = jnp.einsum("xab,xb->xa", F, m)
            FMF = jnp.einsum("xab,xbc,xdc->xad", F, M, F)
            cross = Fm[:, :, None] * G[:, None, :]
            hm = Fm + p[:, None] * G
            hM = FMF + cross + jnp.swapaxes(cross, 1, 2) + p[:, None, None] * (
                G[:, :, None] * G[:, None, :])
            return mix_states(hm), mix_states(hM), mix_states(p[:, None])[:, 0]

        def emit(t, m, M):
            s = jnp.repeat(scale[t], d)
            return (m.sum(axis=0) * s).reshape(N, d), M.sum(axis=0) * s[:, None] * s[None, :]

        def segment(carry, gap):
            m, M, p, t = carry
            m, M, p = lax.fori_loop(t, t + gap, one, (m, M, p))
            t = t + gap
            return (m, M, p, t), emit(t, m, M)

        gaps = np.diff(np.concatenate([[0], steps])).astype(np.int64)
        run = jax.jit(lambda c, g: lax.scan(segment, c, g))
        (_, _, _, _), (mean, second) = run((m0, M0, p, jnp.int64(0)), jnp.asarray(gaps))
        return Moments(steps, np.asarray(mean), np.asarray(second))


def _mrp_of_pair(P_pair, sm: int):
    """The state chain ``P(u, v)`` read back from its pair chain (row ``(s, u)``, column
    ``(u, v)``: any ``s`` with a valid row gives it; rows are equal across ``s``)."""
    Q = P_pair.reshape(sm, sm, sm, sm)            # [s, u, u', v]
    idx = jnp.arange(sm)
    return Q[0, idx, idx, :]                      # [u, v]


def weighted_error_from_moments(moments: Moments, pi, target) -> np.ndarray:
    """``E sum_i pi_t^i ||theta_t^i - target||^2`` at each recorded step from exact moments.

    Args:
        pi: ``[N]`` or ``[R, N]`` weights (e.g. the absolute probability sequence at the
            recorded steps; ones for an unweighted sum).
        target: ``[d]``.
    """
    N, d = moments.mean.shape[1:]
    sec = moments.second.reshape(-1, N, d, N, d)
    sq = np.einsum("rijij->ri", sec)                        # E ||theta^i||^2
    lin = moments.mean @ np.asarray(target)                  # theta*^T E theta^i
    per_agent = sq - 2 * lin + float(np.dot(target, target))
    w = np.broadcast_to(np.asarray(pi, np.float64), per_agent.shape)
    return (w * per_agent).sum(axis=1)


def refuse_params_graphs(params) -> None:
    """The exact moments follow the ``graphs`` argument; refuse params carrying other graphs
    (rather than silently computing the moments of one sequence for a run of another)."""
    if getattr(params, "graphs", None) is not None:
        raise ValueError("params.graphs is set, but the exact moments take the sequence as "
                         "their graphs argument: pass it there and leave params.graphs None.")


def host_alphas(step, num_steps: int) -> np.ndarray:
    from decentral.schedules import StepSize

    if not isinstance(step, StepSize):
        raise ValueError("params.step_size must be a StepSize.")
    a0, t0, power = (np.asarray(v, np.float64) for v in step)
    if a0.ndim or t0.ndim or power.ndim:
        raise ValueError("exact_moments takes one params value; for a sweep call it once per "
                         "step size.")
    t = np.arange(num_steps, dtype=np.float64)
    return a0 / (t + t0) if power == 1 else a0 / (t + t0) ** power


def deterministic_weights(graphs, num_steps: int) -> np.ndarray:
    """``W_0 .. W_{T-1}`` on the host in float64, refusing per-seed random sequences."""
    if graphs.form == "random" and not graphs.shared_across_seeds:
        raise ValueError("exact moments need one deterministic graph sequence; this random "
                         "sequence draws new graphs per seed (shared_across_seeds=False), so "
                         "the moments would also average over graphs. Use a shared draw "
                         "(random_edge_drops(..., key=k)) or a fixed sequence.")
    if graphs.length is not None and num_steps > graphs.length:
        raise ValueError(f"num_steps = {num_steps} exceeds the {graphs.length} graphs of the "
                         "explicit stack.")
    return graphs.weights_host64(num_steps)


def initial_moments_inputs(problem, params):
    """``(theta0 [N, d], p0 [S])`` of ``params`` (zeros and stationary by default)."""
    N, d = problem.num_agents, problem.dim
    theta0 = np.zeros((N, d)) if params.theta0 is None else \
        np.asarray(params.theta0, np.float64)
    p0 = problem.stationary if params.initial_distribution is None else \
        np.asarray(params.initial_distribution, np.float64)
    return theta0, p0


def exact_moments(problem, graphs, params, num_steps: int, *,
                  variant: str = "combine_then_adapt", record_at=None,
                  max_flops: float = DEFAULT_FLOP_BUDGET) -> Moments:
    """Exact ``E theta_t`` and ``E vec(Theta_t) vec(Theta_t)^T`` of :func:`consensus_sa`.

    The same ``problem``, ``graphs`` and ``params`` a Monte-Carlo run takes (one params value,
    not a sweep); the chain starts from ``params.initial_distribution`` (stationary by
    default). Deterministic sequences only: static, periodic, explicit, one-peer, and random
    drops shared across seeds (their one realisation). Cost and budget: module docstring.

    Args:
        record_at: recorded steps in ``[0, T]`` (default all ``T + 1``).
        max_flops: refuse an estimated cost above it (ValueError).

    Returns:
        :class:`Moments` (``mean [R, N, d]``, ``second [R, N*d, N*d]``).

    Example:
        >>> import decentral.graphs as g
        >>> from decentral.consensus_sa import random_mrp, td0_problem, sa_params
        >>> from decentral.schedules import constant
        >>> prob = td0_problem(*random_mrp(0, num_states=3, num_features=2, num_agents=2), 0.5)
        >>> mom = exact_moments(prob, g.static(g.complete(2), rule="row"),
        ...                     sa_params(constant(0.1)), 50, record_at=[0, 50])
        >>> mom.mean.shape, mom.second.shape
        ((2, 2, 2), (2, 4, 4))
    """
    from .algorithm import VARIANTS, check_graphs, check_sa_params

    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}; got {variant!r}.")
    T = check_int(num_steps, "num_steps")
    graphs = as_sequence(graphs)
    check_graphs(graphs, problem.num_agents, "row")
    check_sa_params(params, num_agents=problem.num_agents, dim=problem.dim,
                    num_states=problem.num_states)
    refuse_params_graphs(params)
    W = deterministic_weights(graphs, T)
    eye = np.broadcast_to(np.eye(problem.num_agents), W.shape)
    W2 = W if variant == "combine_then_adapt" else eye
    theta0, p0 = initial_moments_inputs(problem, params)
    pair = problem.td[0].transition.shape[0] if problem.td is not None else None
    return mjls_moments(transition=problem.transition, A=problem.A, B=problem.b, W1=W, W2=W2,
                        W3=eye, alphas=host_alphas(params.step_size, T),
                        out_scale=np.ones((T + 1, problem.num_agents)), theta0=theta0, p0=p0,
                        num_steps=T, record_at=record_at, pair_states=pair,
                        max_flops=max_flops)
