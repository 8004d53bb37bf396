"""DGD against a plain-numpy loop reference (float64, every iterate), its exact identities,
params checks and bad input."""

from __future__ import annotations

import numpy as np
import pytest

import decentral.graphs as g
from decentral.optimization import (
    DGDState,
    dgd,
    estimate_of,
    optimization_params,
    random_quadratic,
)
from decentral.runner import run
from decentral.schedules import harmonic, stack_schedules

pytestmark = pytest.mark.usefixtures("x64_module")

N, D, T = 8, 3, 200


def _ring_chords():
    return g.add_self_loops(g.from_edges(N, [(i, (i + 1) % N) for i in range(N)]
                                         + [(0, 3), (2, 6), (5, 1)]))


FIXTURES = {
    "G1 static ring + chords, row": lambda: g.static(_ring_chords(), rule="row"),
    "G2 periodic ring / chords, row": lambda: g.periodic(
        [g.ring(N), g.add_self_loops(g.from_edges(N, [(0, 3), (2, 6), (5, 1)]))], rule="row"),
    "G4 undirected ring, Metropolis": lambda: g.static(
        g.add_self_loops(g.ring(N) | g.ring(N).T), rule="metropolis"),
}


def _reference(problem, seq, x0, schedule, grad_at="own"):
    """x(t+1) = W(t) x(t) - alpha_t grad F(x(t) or W(t) x(t)), in numpy loops over t."""
    A, b = problem.hessians, problem.linear
    Ws = np.asarray(seq.weights_host64(T))                               # [T, N, N]
    xs = [np.array(x0, np.float64)]
    for t in range(T):
        W = Ws[t]
        x = xs[-1]
        m = W @ x
        point = x if grad_at == "own" else m
        grad = np.einsum("nde,ne->nd", A, point) - b
        xs.append(m - float(schedule(t)) * grad)
    return np.stack(xs)


def _record_x(state):
    return state.x


@pytest.mark.parametrize("name", list(FIXTURES))
@pytest.mark.parametrize("grad_at", ["own", "mixed"])
def test_dgd_matches_the_numpy_loop(name, grad_at):
    problem = random_quadratic(N, D, heterogeneity=2.0, seed=1)
    seq = FIXTURES[name]()
    x0 = np.random.default_rng(0).standard_normal((N, D))
    schedule = harmonic(0.5, 5.0)
    res = run(dgd(problem, seq, grad_at=grad_at), optimization_params(schedule, x0),
              seeds=[0, 1], num_steps=T, record_every=1, record_initial=True,
              record_fn=_record_x, progress=False)
    got = np.asarray(res.records)                                        # [S, T+1, N, D]
    want = _reference(problem, seq, x0, schedule, grad_at)
    scale = max(1.0, float(np.abs(want).max()))
    for s in range(2):
        np.testing.assert_allclose(got[s], want, rtol=0, atol=1e-12 * scale)


def test_exact_identities_of_the_averages():
    problem = random_quadratic(N, D, heterogeneity=2.0, seed=2)
    x0 = np.random.default_rng(1).standard_normal((N, D))
    alpha = 0.05

    def states(seq):
        res = run(dgd(problem, seq), optimization_params(alpha, x0), seeds=[0], num_steps=50,
                  record_every=1, record_initial=True, record_fn=_record_x, progress=False)
        return np.asarray(res.records)[0]                                 # [T+1, N, D]

    # doubly stochastic: the plain mean does gradient descent with the mean gradient
    X = states(FIXTURES["G4 undirected ring, Metropolis"]())
    for t in range(50):
        G = np.asarray(problem.gradient(X[t]))
        np.testing.assert_allclose(X[t + 1].mean(0), X[t].mean(0) - alpha * G.mean(0),
                                   atol=1e-13)
    # static row-stochastic: the pi-weighted average does
    seq = FIXTURES["G1 static ring + chords, row"]()
    pi = g.perron_vector(np.asarray(seq.weights_host64(1)[0]))
    assert np.abs(pi - 1 / N).max() > 1e-3                                # not uniform
    X = states(seq)
    for t in range(50):
        G = np.asarray(problem.gradient(X[t]))
        np.testing.assert_allclose(pi @ X[t + 1], pi @ X[t] - alpha * pi @ G, atol=1e-13)


def test_converges_to_the_optimum_on_doubly_stochastic_graphs_and_estimate_of():
    problem = random_quadratic(N, D, heterogeneity=1.0, seed=3)
    res = run(dgd(problem, FIXTURES["G4 undirected ring, Metropolis"]()),
              optimization_params(harmonic(0.5, 10.0)), seeds=[0], num_steps=20_000,
              progress=False)
    state = DGDState(res.final_state.x[0])
    assert np.abs(np.asarray(estimate_of(state)) - problem.optimum).max() < 0.02
    with pytest.raises(ValueError, match="estimate_of"):
        estimate_of(np.zeros(3))


def test_gradient_noise_and_sweeps():
    problem = random_quadratic(N, D, seed=4)
    alg = dgd(problem, FIXTURES["G4 undirected ring, Metropolis"]())
    clean = run(alg, optimization_params(0.05), seeds=[0, 1], num_steps=30, progress=False)
    noisy = run(alg, optimization_params(0.05, gradient_noise=0.3), seeds=[0, 1],
                num_steps=30, progress=False)
    assert np.abs(np.asarray(noisy.final_state.x - clean.final_state.x)).max() > 1e-3
    again = run(alg, optimization_params(0.05, gradient_noise=0.3), seeds=[0, 1],
                num_steps=30, progress=False)
    np.testing.assert_array_equal(noisy.final_state.x, again.final_state.x)
    # a sweep over the noise: its sigma = 0 member is the clean run
    swept = run(alg, optimization_params(stack_schedules([harmonic(0.05, 1.0)] * 2),
                                         gradient_noise=np.array([0.0, 0.3])),
                seeds=[0, 1], num_steps=30, sweep=True, progress=False)
    ref = run(alg, optimization_params(harmonic(0.05, 1.0)), seeds=[0, 1], num_steps=30,
              progress=False)
    np.testing.assert_allclose(swept.final_state.x[0], ref.final_state.x, atol=1e-12)


def test_bad_input():
    problem = random_quadratic(N, D, seed=5)
    seq = FIXTURES["G4 undirected ring, Metropolis"]()
    with pytest.raises(ValueError, match="grad_at"):
        dgd(problem, seq, grad_at="later")
    with pytest.raises(ValueError, match="problem must be"):
        dgd(np.eye(3), seq)
    with pytest.raises(ValueError, match="graphs has 4 agents"):
        dgd(problem, g.static(g.complete(4), rule="row"))
    with pytest.raises(ValueError, match="row-stochastic"):
        dgd(problem, g.static(_ring_chords(), rule="column"))
    with pytest.raises(ValueError, match="gradient_noise"):
        optimization_params(0.1, gradient_noise=-1.0)
    with pytest.raises(ValueError, match="step_size"):
        optimization_params("0.1")
    with pytest.raises(ValueError, match="alpha0"):
        optimization_params(0.0)
    with pytest.raises(ValueError, match=r"params.x0 must be \[N, d\]"):
        run(dgd(problem, seq), optimization_params(0.1, np.zeros((N, D + 1))), seeds=[0],
            num_steps=2, progress=False)
    with pytest.raises(ValueError, match="finite"):
        optimization_params(0.1, np.full((N, D), np.nan))
