"""Inputs that used to give a plausible wrong answer or an unclear crash (one class per defect
class of the issue):

* class 2 — a weight check that depended on the backend or the form of the sequence;
* class 4 — stochasticity tolerances that ignored the input's dtype, and a Perron computation
  that read any error as "several closed classes";
* class 5 — indices given as floats / bools truncated, out-of-range indices clamped;
* class 6 — a NaN message from one Byzantine sender poisoning the resilient aggregators;
* class 7 — metrics that guessed the agent axis when another axis had the same length.

Each test function fails on the code before the fix, except the ones named ``control``: those
pin what must stay as it was (valid inputs, the same numbers). (One parametrization, the
traced-H trimmed mean, happened to drop a NaN like +inf already; it stays as a guard.)
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import decentral.graphs as g
from decentral.hypotheses import HypothesisWarning

pytestmark = pytest.mark.usefixtures("x64_module")


def _random_row_stochastic(seed: int, n: int, dtype=np.float64) -> np.ndarray:
    """A dense, strongly connected row-stochastic ``[n, n]`` matrix (float64 rows, cast)."""
    rng = np.random.default_rng(seed)
    a = rng.random((n, n)) + np.eye(n)
    return (a / a.sum(axis=1, keepdims=True)).astype(dtype)


def _float32_off_in_float64(W32: np.ndarray, axis: int = 1) -> float:
    """How far the float32 rows (or columns) sum from 1 when added in float64."""
    return float(np.abs(W32.sum(axis=axis, dtype=np.float64) - 1.0).max())


# ------------------------------------------------------------------------------------------
# class 2: one stochasticity verdict whatever the backend and form
# ------------------------------------------------------------------------------------------

# a directed path 0 <- 1 <- 2 <- 3 (i hears i + 1): column rule weights, not row-stochastic
_PATH = g.path(4)
# a directed ring: in- and out-degree 2 everywhere, so every rule is doubly stochastic
_RING = g.ring(4)


def _forms(adj, rule):
    """The same matrix ``rule(adj)`` in every form and backend (random forms: no drop)."""
    W = g.weights.WEIGHT_RULES[rule](adj)
    out = []
    for backend in ("dense", "sparse"):
        out += [(f"static/{backend}", g.static(adj, rule=rule, backend=backend)),
                (f"static-matrix/{backend}", g.static(W, backend=backend)),
                (f"periodic/{backend}", g.periodic([adj, adj], rule=rule, backend=backend)),
                (f"explicit/{backend}", g.explicit([adj] * 3, rule=rule, backend=backend)),
                (f"random-p0/{backend}", g.random_edge_drops(adj, 0.0, rule=rule, key=0,
                                                             backend=backend))]
    return out


def _row_families(seq):
    """Every family factory that needs row-stochastic weights, built over ``seq``."""
    from decentral.bandits import dec_ucb
    from decentral.consensus import consensus
    from decentral.consensus_sa import consensus_sa, random_mrp, td0_problem
    from decentral.resilient_ac import linear_actor_critic

    prob = td0_problem(*random_mrp(0, 3, 2, seq.n), 0.8)
    return {"consensus": lambda: consensus(seq),
            "consensus_sa": lambda: consensus_sa(prob, seq),
            "dec_ucb": lambda: dec_ucb(seq),
            "linear_ac_mean": lambda: linear_actor_critic(seq, H=0, consensus="mean",
                                                          check=False)}


class TestWeightVerdictSameForEveryFormAndBackend:
    """Class 2: a matrix gets the same stochasticity verdict whatever the backend (dense /
    sparse) and the form (static, periodic, explicit, random_edge_drops, one-peer) carrying
    it, in every family factory that needs row- (or column-) stochastic weights."""

    @pytest.mark.parametrize("label,seq", _forms(_PATH, "column"), ids=lambda v: str(v)[:20])
    def test_column_weights_refused_by_every_row_family_in_every_form(self, label, seq):
        assert not g.is_row_stochastic(g.column_stochastic(_PATH))      # the planted defect
        for family, build in _row_families(seq).items():
            with pytest.raises(ValueError, match="row-stochastic"):
                build()
                pytest.fail(f"{family} accepted column weights ({label})")

    def test_doubly_stochastic_column_rule_accepted_in_every_form(self):
        # the column rule on a regular digraph is row-stochastic too: no family may refuse it,
        # whichever form carries it (the old code refused the zero-drop random sequence only)
        assert g.is_row_stochastic(g.column_stochastic(_RING))
        for label, seq in _forms(_RING, "column"):
            for family, build in _row_families(seq).items():
                assert build() is not None, (family, label)

    @pytest.mark.parametrize("backend", ["dense", "sparse"])
    def test_random_drops_judged_by_every_graph_they_can_draw(self, backend):
        from decentral.consensus import consensus

        ring = g.random_edge_drops(_RING, 0.5, rule="column", key=3, backend=backend)
        with pytest.raises(ValueError, match=r"row-stochastic.*only the edge"):
            consensus(ring)
        # the refusal is right: some drawn W(t) really is not row-stochastic
        drawn = ring.weights_host(64)
        assert any(not g.is_row_stochastic(w) for w in drawn)
        # a matching (no agent with two neighbours) keeps every rule doubly stochastic under
        # symmetric drops: accepted, and every draw is row-stochastic
        matching = g.from_edges(4, [(0, 1), (1, 0), (2, 3), (3, 2)])
        seq = g.random_edge_drops(matching, 0.5, rule="column", key=3, backend=backend)
        consensus(seq)
        assert all(g.is_row_stochastic(w) for w in seq.weights_host(64))

    def test_push_sum_accepts_doubly_stochastic_metropolis_in_every_form(self):
        from decentral.push_sum import push_sum

        und = g.ring(5, directed=False)
        for backend in ("dense", "sparse"):
            push_sum(g.static(und, rule="metropolis", backend=backend))
            push_sum(g.random_edge_drops(und, 0.0, rule="metropolis", key=1, backend=backend))
            push_sum(g.random_edge_drops(und, 0.4, rule="metropolis", key=1, backend=backend))
            with pytest.raises(ValueError, match="column-stochastic"):
                push_sum(g.random_edge_drops(und, 0.4, rule="row", key=1, backend=backend))

    def test_one_verdict_function_agrees_across_forms(self):
        for adj, rule in [(_PATH, "column"), (_RING, "column"), (_PATH, "row"),
                          (g.star(4), "row"), (g.star(4), "column")]:
            for kind in ("row", "column"):
                verdicts = {label: g.sequence_stochasticity_failure(seq, kind) is None
                            for label, seq in _forms(adj, rule)}
                truth = g.stochasticity_violations(g.weights.WEIGHT_RULES[rule](adj),
                                                   axis=1 if kind == "row" else 0) == []
                assert set(verdicts.values()) == {truth}, (rule, kind, verdicts)
        opx = g.one_peer_exponential(8, rule="column", backend="sparse")
        assert g.sequence_stochasticity_failure(opx, "doubly") is None


# ------------------------------------------------------------------------------------------
# class 4: tolerances follow the dtype; "several closed classes" only when there are
# ------------------------------------------------------------------------------------------

class TestToleranceFollowsDtype:
    """Class 4: float32 (and bfloat16) stochastic inputs are judged with their own dtype's
    tolerance everywhere (no float64 cast before a float64-sized check), and the Perron code
    reports several closed classes only when the graph has them."""

    W32 = _random_row_stochastic(0, 7, np.float32)

    def test_control_the_float32_matrix_is_off_by_more_than_float64_tolerances(self):
        assert _float32_off_in_float64(self.W32) > 1e-10      # the premise of this class
        assert g.is_row_stochastic(self.W32)

    def test_graph_constants_of_float32_weights(self):
        from decentral.bandits import graph_constants

        W64 = self.W32.astype(np.float64)
        W64 = W64 / W64.sum(axis=1, keepdims=True)
        ref = graph_constants(W64)
        for given in (self.W32, g.static(self.W32), g.static(self.W32, backend="sparse")):
            k = graph_constants(given)
            assert k.perron_vector is not None, k.note
            assert "closed classes" not in k.note
            np.testing.assert_allclose(k.perron_vector, ref.perron_vector, atol=1e-6)
            assert abs(k.mixing_rate - ref.mixing_rate) < 1e-5

    def test_several_closed_classes_only_when_there_are(self):
        from decentral.bandits import graph_constants

        two = np.eye(4)                                  # two closed pairs {0, 1}, {2, 3}
        two[:2, :2] = two[2:, 2:] = 0.5
        for W in (two, two.astype(np.float32)):
            k = graph_constants(W)
            assert k.perron_vector is None
            assert "several closed classes" in k.note
        # weights that are not row-stochastic are an error, never "several closed classes"
        col = g.static(g.column_stochastic(_PATH))
        with pytest.raises(ValueError, match="row-stochastic"):
            graph_constants(col)

    def test_theorem_bound_float32_flocking_weights_are_the_rule(self):
        from decentral.bandits import paper_graph, theorem_bound

        W64 = g.row_stochastic(paper_graph("strongly"))
        W32 = W64.astype(np.float32)
        assert np.abs(W32.astype(np.float64) - W64).max() > 1e-9      # rounded entries
        ref = theorem_bound(W64, [0.9, 0.8, 0.5], 1e4, theorem=1)
        with warnings.catch_warnings():
            warnings.simplefilter("error", HypothesisWarning)
            got = theorem_bound(W32, [0.9, 0.8, 0.5], 1e4, theorem=1)
        assert got.constants.burn_in == ref.constants.burn_in
        np.testing.assert_allclose(got.bound, ref.bound, rtol=1e-4)

    def test_consensus_sa_inputs_in_float32(self):
        from decentral.consensus_sa import limit, random_mrp, sa_params, td0_problem
        from decentral.schedules import constant

        mrp = random_mrp(0, 5, 2, 7)
        prob = td0_problem(*mrp, 0.8)
        pi32 = g.perron_vector(self.W32)
        assert pi32.dtype == np.float32 and abs(float(pi32.sum(dtype=np.float64)) - 1) > 1e-9
        pi64 = pi32.astype(np.float64) / pi32.sum(dtype=np.float64)
        np.testing.assert_allclose(limit(prob, pi32), limit(prob, pi64), rtol=1e-6, atol=1e-7)
        p0 = np.full(25, 1 / 25, np.float32)
        assert abs(float(p0.sum(dtype=np.float64)) - 1) > 1e-9
        out = sa_params(constant(0.1), initial_distribution=p0)
        assert out.initial_distribution.shape == (25,)
        # a float32 MRP transition (rows off by ~1e-8 in float64) builds the same problem
        P32 = mrp.transition.astype(np.float32)
        assert _float32_off_in_float64(P32) > 1e-10
        prob32 = td0_problem(P32, mrp.features, mrp.rewards, 0.8)
        np.testing.assert_allclose(prob32.stationary, prob.stationary, atol=1e-6)

    def test_markov_chain_and_prescribed_pi_in_float32(self):
        from decentral.markov import markov_chain, stationary_distribution

        P = _random_row_stochastic(2, 20, np.float32)
        assert _float32_off_in_float64(P) > 1e-10
        chain = markov_chain(P)
        assert chain.transition.shape == (20, 20)
        np.testing.assert_allclose(stationary_distribution(P),
                                   stationary_distribution(P.astype(np.float64) /
                                                           P.astype(np.float64).sum(1)[:, None]),
                                   atol=1e-6)
        pi = np.random.default_rng(3).random(7) + 0.1
        pi32 = (pi / pi.sum()).astype(np.float32)
        assert abs(float(pi32.sum(dtype=np.float64)) - 1) > 1e-12
        W = g.prescribed_pi_weights(g.ring(7), pi32)
        np.testing.assert_allclose(pi32 @ W, pi32, atol=1e-6)

    def test_bfloat16_weights_are_floats_with_their_own_tolerance(self):
        Wb = np.asarray(jnp.asarray(g.row_stochastic(g.ring(4)), jnp.bfloat16))
        assert g.is_row_stochastic(Wb)
        assert g.static(Wb).n == 4
        bad = np.asarray(jnp.asarray([[0.5, 0.25], [0.5, 0.5]], jnp.bfloat16))
        assert not g.is_row_stochastic(bad)                 # 0.75 is off at any precision

    def test_resilient_linear_mdp_and_graph_in_float32(self):
        from decentral.resilient_ac.linear import linear_params, random_mdp, validate_mdp

        mdp = random_mdp(jax.random.key(0), num_states=30, num_actions_per_agent=3,
                         num_agents=2, feature_dim=3)
        mdp32 = type(mdp)(*(np.asarray(a, np.float32) for a in mdp))
        assert _float32_off_in_float64(np.asarray(mdp32.transition).reshape(-1, 30)) > 1e-8
        validate_mdp(mdp32)
        W32 = np.array([[0.9, 0.1], [0.35, 0.65]], np.float32)
        assert _float32_off_in_float64(W32) > 1e-10
        params = linear_params(mdp, graphs=W32)
        np.testing.assert_allclose(np.asarray(params.graphs.at(0)), W32, rtol=1e-7)
        with pytest.raises(ValueError, match="neither row- nor column-stochastic"):
            linear_params(mdp, graphs=np.array([[0.7, 0.31], [0.4, 0.6]], np.float32))

    def test_dducb_float32_gossip_matrix(self):
        from decentral.bandits import dducb

        M32 = g.metropolis(g.ring(7, directed=False)).astype(np.float32)
        assert _float32_off_in_float64(M32) > 1e-10
        assert dducb(M32).name == "dducb"
        assert dducb(g.static(M32)).name == "dducb"
        with pytest.raises(ValueError, match="stochastic"):
            dducb((M32 * np.float32(1.001)).astype(np.float32))


# ------------------------------------------------------------------------------------------
# class 5: indices are integers in range, never truncated or clamped
# ------------------------------------------------------------------------------------------

class TestIndicesMustBeIntegersInRange:
    """Class 5: agent and chain-state indices given as floats or bools are refused (not
    truncated, 1.5 -> 1, True -> 1), and out-of-range ones are refused (not clamped)."""

    @pytest.mark.parametrize("bad", [[1.5], [True], [np.float64(4.0)], np.array([1.0, 2.0]),
                                     [np.bool_(True)]], ids=repr)
    def test_byzantine_indices(self, bad):
        from decentral.resilient_ac import check_hypotheses, constant, resilient_consensus, rpbcac

        k5 = g.complete(5)
        with pytest.raises(ValueError, match=r"byzantine\[\d\] must be an integer"):
            resilient_consensus(k5, 1, bad, constant(), check=False)
        with pytest.raises(ValueError, match="byzantine"):
            check_hypotheses(k5, 1, bad, warn=False)
        with pytest.raises(ValueError, match="byzantine"):
            rpbcac(k5, H=1, byzantine=bad, attacker=constant(), check=False)

    def test_control_byzantine_integer_types_still_accepted(self):
        from decentral.resilient_ac import constant, resilient_consensus

        for ok in ([4], (np.int64(4),), np.array([4], np.int32), jnp.array([4])):
            alg = resilient_consensus(g.complete(5), 1, ok, constant(), check=False)
            assert list(alg.config["byzantine"]) == [4]

    def test_grid_world_adversary_indices(self):
        from decentral.resilient_ac import learning as ex
        from decentral.resilient_ac.learning.experiments import _agent_types

        for bad in [(4.0,), (True,), (9,), (-1,)]:
            with pytest.raises(ValueError, match="adversary_slots"):
                ex.learner("v1", "corrected", adversary_slots=bad)
        for bad in (1.5, 9):
            with pytest.raises(ValueError, match="adversary"):
                ex.run_runs([("greedy", 1, False)], adversary=bad, seeds=[0], episodes=100)
        with pytest.raises(ValueError, match="adversary must be an integer"):
            _agent_types("greedy", 5, True)      # True used to make every agent greedy
        with pytest.raises(ValueError, match="agent type code"):
            _agent_types([0, 0, 0, 0, 1.0], 5, 4)
        with pytest.raises(ValueError, match="phases must be an integer"):
            ex.run_runs([("greedy", 1, False)], phases=0.5, seeds=[0], episodes=100)

    def test_float_H_is_refused_not_truncated(self):
        from decentral.resilient_ac import constant, mlp
        from decentral.resilient_ac.linear import linear_params, random_mdp, rpbcac
        from decentral.runner import run

        with pytest.raises(ValueError, match="H must be"):
            mlp.aggregate("wmsr", jnp.zeros((3, 2)), np.float64(1.0))
        mdp = random_mdp(jax.random.key(1), num_states=4, num_actions_per_agent=1,
                         num_agents=5, feature_dim=2)
        alg = rpbcac(g.complete(5), H=1, byzantine=[4], attacker=constant(), actor=False,
                     check=False)
        params = linear_params(mdp, H=1)._replace(H=jnp.asarray(1.5))   # traced in the run
        with pytest.raises(ValueError, match="params.H must be an integer"):
            run(alg, params, seeds=[0], num_steps=2)

    def test_grid_world_actions(self):
        from decentral.resilient_ac.learning.gridworld import grid_world

        env = grid_world("v1")
        n = env.num_agents
        pos = jnp.zeros((n, 2), jnp.int32)
        new, _ = env.transition(pos, np.zeros(n, np.int64), pos)          # valid: unchanged
        assert new.shape == (n, 2)
        for bad in (np.full(n, env.num_actions), np.full(n, -1), np.full(n, 1.5),
                    np.ones(n, bool)):
            with pytest.raises(ValueError, match="actions"):
                env.transition(pos, bad, pos)

    def test_mlp_consensus_epoch_slots(self):
        from decentral.resilient_ac.learning import mlp

        types = np.zeros(5, np.int32)
        with pytest.raises(ValueError, match="adversary_slots"):
            mlp._check_agent_types(types, (4.5,))
        with pytest.raises(ValueError, match="adversary_slots"):
            mlp._check_agent_types(types, (5,))

    @pytest.mark.parametrize("bad", [3, 7, -1, 1.5, True], ids=repr)
    def test_markov_states(self, bad):
        from decentral.markov import markov_chain, next_state, sample_path

        chain = markov_chain([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5]])
        key = jax.random.key(0)
        with pytest.raises(ValueError, match="initial_state"):
            sample_path(key, chain, bad, 4)
        with pytest.raises(ValueError, match="state"):
            next_state(key, chain, bad)

    def test_control_markov_valid_states_unchanged(self):
        from decentral.markov import markov_chain, sample_path

        chain = markov_chain([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5]])
        key = jax.random.key(0)
        ref = np.asarray(sample_path(key, chain, 2, 6))
        for same in (np.int64(2), np.array(2), jnp.int32(2)):
            np.testing.assert_array_equal(np.asarray(sample_path(key, chain, same, 6)), ref)
        # under jit the state is traced: still works
        out = jax.jit(lambda s: sample_path(key, chain, s, 6))(jnp.int32(2))
        np.testing.assert_array_equal(np.asarray(out), ref)

    def test_mixing_time_start_states(self):
        from decentral.markov import mixing_time

        P = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5]])
        f = np.arange(3.0)
        ref = mixing_time(P, [f], 1e-3, start_states=[1])
        assert mixing_time(P, [f], 1e-3, start_states=np.array([1])) == ref
        for bad in ([1.5], [True], [3], [-1]):
            with pytest.raises(ValueError, match=r"start_states\[0\]"):
                mixing_time(P, [f], 1e-3, start_states=bad)


# ------------------------------------------------------------------------------------------
# class 6: a NaN message is trimmed like +inf
# ------------------------------------------------------------------------------------------

_RESILIENT = ("wmsr", "trimmed_mean", "clipped_mean")


class TestNaNMessagesAreTrimmed:
    """Class 6: a NaN received value (k >= 1) is trimmed as +inf by every trimming aggregator
    (streaming and pairwise-rank paths), the projection consensus and the v1 flattened W-MSR:
    with at most H such senders the honest result is the one the +inf attack gives, inside
    the honest hull. An untrimmed NaN is never a finite number; a NaN own value is not a
    message and still propagates."""

    @pytest.mark.parametrize("name", _RESILIENT)
    @pytest.mark.parametrize("traced_H", [False, True])
    def test_aggregators_nan_equals_plus_inf(self, name, traced_H):
        from decentral.resilient_ac import AGGREGATORS

        fn = AGGREGATORS[name]
        jf = jax.jit(fn) if traced_H else jax.jit(fn, static_argnums=2)
        rng = np.random.default_rng(5)
        for case in range(20):
            K, H = 7, 1 + case % 3
            vals = rng.normal(size=(K, 3))
            bad = rng.choice(np.arange(1, K), size=H, replace=False)
            mask = jnp.ones(K, bool)
            with_nan, with_inf = vals.copy(), vals.copy()
            with_nan[bad] = np.nan                  # the Byzantine senders' whole messages
            with_inf[bad] = np.inf
            H_arg = jnp.asarray(H) if traced_H else H
            got = np.asarray(jf(jnp.asarray(with_nan), mask, H_arg))
            want = np.asarray(jf(jnp.asarray(with_inf), mask, H_arg))
            assert np.all(np.isfinite(got)), (name, case)
            np.testing.assert_array_equal(got, want)
            honest = np.delete(vals, bad, axis=0)
            assert np.all(got >= honest.min(axis=0) - 1e-12)
            assert np.all(got <= honest.max(axis=0) + 1e-12)

    def test_control_untrimmed_nan_is_never_finite_and_own_nan_propagates(self):
        from decentral.resilient_ac import AGGREGATORS

        vals = jnp.array([1.0, 5.0, -7.0, 2.0, 100.0])
        mask = jnp.ones(5, bool)
        assert float(AGGREGATORS["wmsr"](vals, None, 1)) == pytest.approx(8 / 3, rel=1e-15)
        # nothing trimmed (H = 0, the mean) or more NaN senders than H: never a finite number
        two_nan = vals.at[1].set(jnp.nan).at[2].set(jnp.nan)
        for name in _RESILIENT:
            fn = jax.jit(AGGREGATORS[name], static_argnums=2)
            assert not np.isfinite(float(fn(vals.at[2].set(jnp.nan), mask, 0))), name
            assert not np.isfinite(float(fn(two_nan, mask, 1))), name
        assert not np.isfinite(float(jax.jit(AGGREGATORS["mean"])(two_nan, None)))
        # a NaN own value is not a message: it is not read as +inf, it propagates
        own_nan = vals.at[0].set(jnp.nan)
        for name in _RESILIENT:
            out = jax.jit(AGGREGATORS[name], static_argnums=2)(own_nan, mask, 1)
            assert np.isnan(float(out)), name

    def test_resilient_consensus_nan_attacker(self):
        from decentral.resilient_ac import (
            constant,
            resilient_consensus,
            resilient_consensus_params,
            values_of,
        )
        from decentral.runner import run

        x0 = np.array([0.1, 0.9, 0.4, 0.6, 0.3])
        coop = np.ones(5, bool)
        coop[4] = False
        out = {}
        for label, value in (("nan", np.nan), ("inf", np.inf)):
            alg = resilient_consensus(g.complete(5), 1, [4], constant(value), check=False)
            res = run(alg, resilient_consensus_params(x0), seeds=[0], num_steps=30,
                      record_fn=values_of)
            out[label] = np.asarray(res.records)[0][:, coop]
        assert np.all(np.isfinite(out["nan"]))
        np.testing.assert_array_equal(out["nan"], out["inf"])
        assert out["nan"].min() >= x0[coop].min() and out["nan"].max() <= x0[coop].max()

    def test_projection_consensus_nan_message(self):
        from decentral.resilient_ac import projection_step

        v = jnp.zeros(2)
        phi = jnp.array([1.0, 2.0])
        msgs = jnp.array([[0.1, 0.2], [0.3, 0.6], [0.2, 0.4], [jnp.nan, 9.0]])
        infs = msgs.at[3].set(jnp.array([jnp.inf, 9.0]))
        step = jax.jit(lambda m: projection_step(v, m, None, phi, 0.1, 1))
        got, want = np.asarray(step(msgs)), np.asarray(step(infs))
        assert np.all(np.isfinite(got))
        np.testing.assert_array_equal(got, want)
        # an inf - inf projection (an attacker's +inf and -inf coordinates) is NaN: trimmed too
        mixed = msgs.at[3].set(jnp.array([jnp.inf, -jnp.inf]))
        assert np.all(np.isfinite(np.asarray(step(mixed))))

    def test_linear_actor_critic_nan_attacker(self):
        from decentral.resilient_ac import constant
        from decentral.resilient_ac.linear import linear_params, random_mdp, rpbcac
        from decentral.runner import run

        mdp = random_mdp(jax.random.key(1), num_states=4, num_actions_per_agent=1,
                         num_agents=5, feature_dim=2)
        # positive features: a +inf message then projects to +inf too (with mixed signs it
        # would be inf - inf = NaN, which is what the NaN attacker sends anyway)
        mdp = mdp._replace(state_features=np.abs(np.asarray(mdp.state_features)) + 0.1,
                           reward_features=np.abs(np.asarray(mdp.reward_features)) + 0.1)
        params = linear_params(mdp)
        finals = {}
        for label, value in (("nan", np.nan), ("inf", np.inf)):
            alg = rpbcac(g.complete(5), H=1, byzantine=[4], attacker=constant(value),
                         actor=False, check=False)
            res = run(alg, params, seeds=[0], num_steps=40)
            finals[label] = (np.asarray(res.final_state.critic)[0, :4],
                             np.asarray(res.final_state.team_reward)[0, :4])
        for got, want in zip(finals["nan"], finals["inf"], strict=True):
            assert np.all(np.isfinite(got))
            np.testing.assert_array_equal(got, want)

    def test_v1_flattened_wmsr(self):
        from decentral.resilient_ac.learning.mlp import flatten_v1_wmsr

        e = jnp.array([[0.5, 0.1], [0.2, jnp.nan], [0.3, 0.4]])
        f = jax.jit(flatten_v1_wmsr)
        got = float(f(e, 1))
        assert np.isfinite(got)
        assert got == float(f(e.at[1, 1].set(jnp.inf), 1))


# ------------------------------------------------------------------------------------------
# class 7: the agent axis is explicit
# ------------------------------------------------------------------------------------------

class TestAgentAxisIsExplicit:
    """Class 7: metrics never guess the agent axis among several axes of length N (d = N,
    T = N): they take a documented ``agent_axis`` (or the layout their other arguments fix)
    and refuse an ambiguous call, naming the argument."""

    coop = np.array([True, True, False])
    # [T = 2, N = 3, d = 3]: agent axis 1; the last axis (coordinates) also has length 3
    x = np.array([[[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [50.0, 50.0, 50.0]],
                  [[0.0, 5.0, 0.0], [0.5, 5.0, 1.0], [50.0, 50.0, 50.0]]])

    def test_cooperative_spread_refuses_to_guess(self):
        from decentral.resilient_ac import cooperative_spread

        with pytest.raises(ValueError, match="agent_axis"):
            cooperative_spread(self.x, self.coop)
        # by hand: per coordinate |x^0 - x^1|, max over coordinates
        np.testing.assert_allclose(cooperative_spread(self.x, self.coop, agent_axis=1),
                                   [3.0, 1.0])
        np.testing.assert_allclose(cooperative_spread(self.x, self.coop, agent_axis=-2),
                                   [3.0, 1.0])
        with pytest.raises(ValueError, match="agent_axis"):
            cooperative_spread(self.x, self.coop, agent_axis=1.0)

    def test_hull_violation_reads_the_layout_x0_fixes(self):
        from decentral.resilient_ac import hull_violation

        x0 = np.array([[0.0, 1.0, 0.0], [1.0, 2.0, 2.0], [9.0, 9.0, 9.0]])     # [N, d = N]
        # hull per coordinate: [0, 1], [1, 2], [0, 2]; step 0: agent 1 has 3.0 > 2 (+1.0),
        # step 1: agent 0 has 5.0 > 2 (+3.0)
        np.testing.assert_allclose(hull_violation(self.x, x0, self.coop), [1.0, 3.0])
        np.testing.assert_allclose(hull_violation(self.x, x0, self.coop, agent_axis=1),
                                   [1.0, 3.0])
        # values not in the documented [..., N] layout ([N, N, T] for x0 [N]): two axes could
        # hold the agents, so it must be said (the old code took the last one of length N)
        v = np.random.default_rng(4).uniform(-1.0, 2.0, size=(3, 3, 2))
        x0s = np.array([0.0, 1.0, 9.0])
        with pytest.raises(ValueError, match="agent_axis"):
            hull_violation(v, x0s, self.coop)
        by_hand = np.max(np.maximum(np.maximum(0.0 - v[:2], v[:2] - 1.0), 0.0), axis=0)
        np.testing.assert_allclose(hull_violation(v, x0s, self.coop, agent_axis=0), by_hand)

    def test_error_parts_agent_axis(self):
        from decentral.consensus_sa import error_parts

        rng = np.random.default_rng(0)
        theta = rng.normal(size=(4, 3, 3))            # [T, N, d], d = N
        pi = np.array([0.2, 0.3, 0.5])
        target = rng.normal(size=3)
        ref = error_parts(theta, pi, target)
        by_hand = [sum(pi[i] * np.sum((theta[t, i] - target) ** 2) for i in range(3))
                   for t in range(4)]
        np.testing.assert_allclose(ref["weighted"], by_hand, rtol=1e-13)
        agents_first = np.moveaxis(theta, 1, 0)       # [N, T, d]
        got = error_parts(agents_first, pi, target, agent_axis=0)
        for key in ref:
            np.testing.assert_allclose(got[key], ref[key], rtol=1e-13)
        # scalar values per agent given without their d axis ([T, N] with T = N): refused,
        # never read as N agents with d = N coordinates against a scalar target
        with pytest.raises(ValueError, match=r"target must be \[d\]"):
            error_parts(rng.normal(size=(3, 3)), pi, 0.0)
        with pytest.raises(ValueError, match="pi must be"):
            error_parts(theta, np.array([0.5, 0.5]), target)
        with pytest.raises(ValueError, match="agent_axis"):
            error_parts(theta, pi, target, agent_axis=-1)
