"""Throughput of the linear resilient actor-critic (:func:`decentral.resilient_ac.linear.rpbcac`)
against a numpy loop of the same computation.

The computation: S seeds of the projection-based actor-critic (Figura, Lin, Liu, Gupta,
arXiv:2111.06776; the linear equations are our reconstruction) on one random MDP with ``N``
agents (``M = 2`` actions each, ``A = 2^N`` joint actions), critic and team-reward features of
dimension ``d``, tabular softmax policies, graph ``K_N``, ``H = 1``, agent ``N - 1`` Byzantine
with the per-coordinate-extreme attack (:func:`~decentral.resilient_ac.linear.feature_extreme`),
discounted criterion, actor on, ``beta_v = (t+1)^-0.65``, ``beta_theta = (t+1)^-0.85``, for T
updates; float32.

* decentral: :func:`decentral.runner.run` (``jit``, ``lax.scan`` over time, ``vmap`` over seeds,
  the seeds sharded over every device), records off (the final state only). Timed twice:
  including compilation (the first call of a fresh algorithm) and compiled (median of repeats).
* reference: numpy, Python loops over seeds, time and agents, the same rules (sampling with
  ``numpy.random``; per receiver the projected errors, a sort-based W-MSR, the update along the
  feature; the actor). Timed on two step counts of one seed and extrapolated linearly to S
  seeds and T steps (the per-step cost is flat in t).

Agreement: on a short run the JAX side records every step's state, joint action and next state
(a ``lax.scan`` over the algorithm's ``step``); the numpy loop replays those draws and must reach
the same final critic, team-reward and policy parameters (float32 vs float64: relative
tolerance ``tolerance``). The run is short on purpose: W-MSR keeps a value equal to the own
value and drops one a rounding error above it, and the attack duplicates a cooperative message
(at consensus, the receiver's own one), so two arithmetics (XLA float32, numpy float64; even XLA
and numpy both in float64) eventually branch differently at such a tie.

Example:
    >>> rows = bench_linear_updates(S=2, N=3, d=2, T=20, states=3,
    ...                             loop_steps=(10, 20), check_steps=10, repeats=1)
    >>> [r.variant.split(",")[0] for r in rows], all(r.agree for r in rows)
    (['including compilation', 'compiled'], True)
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.harness import BenchResult, measure, ratio
from decentral.graphs import complete
from decentral.resilient_ac.linear import (
    FiniteMDP,
    feature_extreme,
    linear_params,
    random_mdp,
    rpbcac,
)
from decentral.runner import run

__all__ = ["make_problem", "numpy_loop", "jax_replay_draws", "bench_linear_updates"]

CRITIC_POWER, ACTOR_POWER, DISCOUNT, H = 0.65, 0.85, 0.9, 1


def make_problem(N: int, d: int, states: int, seed: int = 0) -> FiniteMDP:
    """The benchmark MDP: ``random_mdp(seed, states, 2, N, d)`` (``d_v = d_f = d``)."""
    return random_mdp(seed, states, 2, N, d, reward_feature_dim=d)


def _algorithm(N: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rpbcac(complete(N), H=H, byzantine=[N - 1], attacker=feature_extreme())


def _wmsr(own: float, others: np.ndarray, h: int) -> float:
    above = np.sort(others[others > own])[::-1][h:]
    below = np.sort(others[others < own])[h:]
    kept = np.concatenate([[own], above, below, others[others == own]])
    return float(kept.mean())


def numpy_loop(mdp: FiniteMDP, num_steps: int, *, seed: int = 0, replay=None,
               initial=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reference: loops over time and agents (one seed), float64.

    Args:
        mdp: the MDP.
        num_steps: T.
        seed: seed of ``numpy.random.default_rng`` (actions and transitions) when not replaying.
        replay: ``(states [T], actions [T, N], next_states [T])`` to replay instead of drawing.
        initial: ``(critic [N, d], team_reward [N, d], policy [N, M, S], s0)``; zeros and
            ``s0 = 0`` by default.

    Returns:
        The final ``(critic, team_reward, policy)``.
    """
    P = np.asarray(mdp.transition, np.float64)
    R = np.asarray(mdp.rewards, np.float64)
    Phi = np.asarray(mdp.state_features, np.float64)
    F = np.asarray(mdp.reward_features, np.float64)
    PF = np.asarray(mdp.policy_features, np.float64)
    N, S = R.shape[0], P.shape[0]
    M = 2
    byz = N - 1
    coop = [i for i in range(N) if i != byz]
    strides = M ** np.arange(N - 1, -1, -1)
    if initial is None:
        v = np.zeros((N, Phi.shape[1]))
        lam = np.zeros((N, F.shape[2]))
        theta = np.zeros((N, M, PF.shape[1]))
        s = 0
    else:
        v, lam, theta, s = (np.array(initial[0], np.float64), np.array(initial[1], np.float64),
                            np.array(initial[2], np.float64), int(initial[3]))
    rng = np.random.default_rng(seed)
    actions = np.zeros(N, np.int64)
    for t in range(num_steps):
        beta_v = (t + 1.0) ** -CRITIC_POWER
        beta_th = (t + 1.0) ** -ACTOR_POWER
        if replay is not None:
            s = int(replay[0][t])
        pf = PF[s]
        probs = np.empty((N, M))
        for i in range(N):
            logits = theta[i] @ pf
            p = np.exp(logits - logits.max())
            probs[i] = p / p.sum()
            actions[i] = replay[1][t, i] if replay is not None else rng.choice(M, p=probs[i])
        joint = int(actions @ strides)
        s_next = int(replay[2][t]) if replay is not None else int(rng.choice(S, p=P[s, joint]))
        phi, phi_next, f = Phi[s], Phi[s_next], F[s, joint]
        v_loc, lam_loc = np.empty_like(v), np.empty_like(lam)
        for i in range(N):
            r = R[i, s, joint]
            delta = r + DISCOUNT * phi_next @ v[i] - phi @ v[i]
            v_loc[i] = v[i] + beta_v * delta * phi
            lam_loc[i] = lam[i] + beta_v * (r - f @ lam[i]) * f
        v_new, lam_new = v_loc.copy(), lam_loc.copy()
        for i in coop:
            senders = [i] + [j for j in range(N) if j != i]       # K_N, own first
            for new, loc, old, x, push in ((v_new, v_loc, v, phi, 1.0),
                                           (lam_new, lam_loc, lam, f, -1.0)):
                honest = [j for j in senders if j != byz]
                hi = np.max(loc[honest], axis=0)
                lo = np.min(loc[honest], axis=0)
                attack = np.where(push * x >= 0, hi, lo)
                msgs = np.stack([attack if j == byz else loc[j] for j in senders])
                e = (msgs - old[i]) @ x / (beta_v * (x @ x))
                new[i] = old[i] + beta_v * _wmsr(e[0], e[1:], H) * x
        for i in coop:
            td = lam_new[i] @ f + DISCOUNT * v_new[i] @ phi_next - v_new[i] @ phi
            psi = (np.eye(M)[actions[i]] - probs[i])[:, None] * pf[None, :]
            theta[i] = theta[i] + beta_th * td * psi
        v, lam, s = v_new, lam_new, s_next
    return v, lam, theta


def jax_replay_draws(mdp: FiniteMDP, num_steps: int, seed: int):
    """One seed of the JAX algorithm for ``num_steps`` with the runner's key derivation;
    returns the draws ``(states, actions, next_states)``, the initial state and the final
    ``(critic, team_reward, policy)``."""
    from decentral.runner import seed_keys

    N = mdp.num_agents
    alg = _algorithm(N)
    params = linear_params(mdp, discount=DISCOUNT)
    init_key, root = seed_keys(seed)
    state0 = alg.init(init_key, params)

    def body(state, t):
        state, info = alg.step(jax.random.fold_in(root, t), state, params, t, None)
        return state, (info.state, info.actions, info.next_state)

    final, draws = jax.jit(lambda s: jax.lax.scan(body, s, jnp.arange(num_steps)))(state0)
    draws = tuple(np.asarray(x) for x in draws)
    initial = (np.asarray(state0.critic), np.asarray(state0.team_reward),
               np.asarray(state0.policy), int(state0.s))
    return draws, initial, (np.asarray(final.critic), np.asarray(final.team_reward),
                            np.asarray(final.policy))


def _rel_diff(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def bench_linear_updates(*, S: int = 64, N: int = 5, d: int = 8, T: int = 10_000,
                         states: int = 10, loop_steps: tuple[int, int] = (200, 1000),
                         check_steps: int = 50, repeats: int = 3,
                         tolerance: float = 1e-4) -> list[BenchResult]:
    """Rows ``resilient_ac.linear_updates``: decentral (runner, vmapped over seeds) against
    the numpy loop, including compilation and compiled (module docstring)."""
    mdp = make_problem(N, d, states)
    params = linear_params(mdp, discount=DISCOUNT)
    seeds = list(range(S))

    # agreement on a short run: numpy replays the JAX draws of two seeds
    diffs = []
    for seed in (0, 1):
        draws, initial, (v, lam, th) = jax_replay_draws(mdp, check_steps, seed)
        ref = numpy_loop(mdp, check_steps, replay=draws, initial=initial)
        diffs += [_rel_diff(v, ref[0]), _rel_diff(lam, ref[1]), _rel_diff(th, ref[2])]
    diff = max(diffs)

    def decentral():
        out = run(_algorithm(N), params, seeds, T, record_every=T, record_fn=_final_critic)
        return out.records

    start = time.perf_counter()
    jax.block_until_ready(decentral())            # a fresh algorithm: compiles
    t_first = time.perf_counter() - start
    alg = _algorithm(N)

    def compiled():
        return run(alg, params, seeds, T, record_every=T, record_fn=_final_critic).records

    t_dec, _ = measure(compiled, repeats)
    small, large = int(loop_steps[0]), int(loop_steps[1])
    t_small, _ = measure(lambda: numpy_loop(mdp, small, seed=0), 1)
    t_large, _ = measure(lambda: numpy_loop(mdp, large, seed=0), 1)
    per_small, per_large = t_small.median_s / small, t_large.median_s / large
    t_ref = per_large * T * S
    size = dict(S=S, N=N, d=d, T=T, states=states, joint_actions=2 ** N, H=H,
                devices=len(jax.devices()))
    how = (f"numpy, Python loops over seeds, time and agents, the same rules; timed on 1 seed "
           f"x {small} and {large} steps ({per_small * 1e6:.0f} / {per_large * 1e6:.0f} us per "
           f"step), extrapolated to {S} seeds x {T} steps")
    common: dict[str, Any] = dict(
        name="resilient_ac.linear_updates", dtype=str(jnp.result_type(float)), size=size,
        metric="time_s", reference=how, reference_label="numpy triple loop",
        reference_value=t_ref, reference_times_s=[t_ref],
        max_abs_diff=diff, agree=bool(diff <= tolerance), tolerance=tolerance,
        prng_impl=str(jax.config.jax_default_prng_impl),
        enable_x64=bool(jax.config.jax_enable_x64))
    updates = S * T
    extra = dict(updates_per_s_compiled=updates / t_dec.median_s,
                 updates_per_s_with_compilation=updates / t_first,
                 reference_updates_per_s=updates / t_ref, first_call_s=t_first,
                 agreement_steps=check_steps, agreement_seeds=2,
                 linearity_gap=abs(per_small / per_large - 1.0))
    return [
        BenchResult(variant="including compilation, vs numpy loop over seeds, time, agents",
                    value=t_first, ratio=ratio(t_ref, t_first),
                    compile_s=max(t_first - t_dec.median_s, 0.0), times_s=[t_first], repeats=1,
                    target_ratio=10.0,
                    notes=f"target >= 10x; agreement on {check_steps} replayed steps x 2 seeds "
                          "(relative max diff of v, lambda, theta)", extra=extra, **common),
        BenchResult(variant="compiled, vs numpy loop over seeds, time, agents",
                    value=t_dec.median_s, ratio=ratio(t_ref, t_dec.median_s),
                    compile_s=t_dec.compile_s, times_s=t_dec.times_s, repeats=repeats,
                    target_ratio=10.0,
                    notes=f"target >= 10x; {updates / t_dec.median_s:.3g} seed-updates/s "
                          f"(numpy {updates / t_ref:.3g})", extra=extra, **common),
    ]


def _final_critic(state):
    return state.critic
