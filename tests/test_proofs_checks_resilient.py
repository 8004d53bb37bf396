"""The resilient-consensus claims of proofs_checks: each judge PASSes on the library at a tiny
size and FAILs on a planted violation (a wrong fact, a broken rule, a graph without the
hypothesis), so none of them can pass whatever the code does."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import decentral.graphs as g
from decentral.resilient_ac import (
    AGGREGATORS,
    constant,
    huge,
    projection_step,
    trimmed_mean,
    weighted_output_step,
    wmsr,
)
from decentral.verify import CheckContext, Verdict
from proofs_checks.resilient_ac import consensus as pr

pytestmark = pytest.mark.usefixtures("x64_module")

RESILIENT = {k: v for k, v in AGGREGATORS.items() if k != "mean"}


def assert_reason(out, *needles):
    """The outcome's reason is one non-empty line naming each of ``needles``."""
    assert out.reason and "\n" not in out.reason, out.reason
    for needle in needles:
        assert needle in out.reason, (needle, out.reason)


# 1. graph facts ------------------------------------------------------------------------------

def test_graph_facts_pass_and_planted_wrong_facts_fail():
    cases = pr.graph_fact_cases()
    out = pr.check_graph_facts(cases, random_graphs=4)
    assert out.verdict == Verdict.PASS
    assert_reason(out, f"all {len(cases) + 4} facts hold", "max r = 2")
    E = pr.experiment_graph()
    wrong_r = cases + [("experiment graph claimed 3-robust", "r", E, 3)]
    out = pr.check_graph_facts(wrong_r, random_graphs=0)
    assert out.verdict == Verdict.FAIL and out.measured["facts_failed"] == 1
    assert_reason(out, f"1 of {len(wrong_r) + 4} facts failed", "computed 2, expected 3")
    # {0, 1} and {2, 3}: agent 0 hears 1, 2, 3 -> two outside {0, 1}; 1 hears 2, 3, 4 -> three
    wrong_witness = [("not a witness", "witness:3", E, ({0, 1}, {2, 3}))]
    assert pr.check_graph_facts(wrong_witness, random_graphs=0).verdict == Verdict.FAIL
    wrong_rs = [("cooperative subgraph claimed (2,2)-robust", "rs:2,2", E[:4, :4], True)]
    assert pr.check_graph_facts(wrong_rs, random_graphs=0).verdict == Verdict.FAIL


def test_witness_counts_by_hand():
    E = pr.experiment_graph()                           # i hears i+1, i+2, i+3
    assert pr._outside_count(E, {1, 3}) == [2, 2]       # 1: {2, 4}; 3: {4, 0}
    assert pr._outside_count(E, {2, 4}) == [2, 2]       # 2: {3, 0}; 4: {0, 1}
    assert pr._is_witness(E, {1, 3}, {2, 4}, 3)
    assert not pr._is_witness(E, {1, 3}, {2, 4}, 2)
    assert not pr._is_witness(E, {1, 3}, {3, 4}, 3)     # not disjoint


# 2-3. aggregators ----------------------------------------------------------------------------

def test_reference_aggregate_hand_cases():
    assert pr.reference_aggregate("wmsr", [1.0, 5.0, -7.0, 2.0, 100.0], 1) == pytest.approx(8 / 3)
    assert pr.reference_aggregate("wmsr", [0.0, 1.0, 2.0], 1) == 0.5
    assert pr.reference_aggregate("wmsr", [0.5, 0.5, 1.0, 9.0], 1) == pytest.approx(2 / 3)
    assert pr.reference_aggregate("trimmed_mean", [1.0, 5.0, -7.0, 2.0, 100.0], 1) == \
        pytest.approx(8 / 3)
    assert pr.reference_aggregate("clipped_mean", [1.0, 5.0, -7.0, 2.0, 100.0], 1) == \
        pytest.approx(2.8)
    assert pr.reference_aggregate("trimmed_mean", [3.0, 1.0], 1) == 3.0     # < 2H+1: own value


def test_aggregator_identities_pass_and_planted_rules_fail():
    out = pr.check_aggregator_identities(RESILIENT, num_cases=30)
    assert out.verdict == Verdict.PASS
    assert_reason(out, "30 cases", f"{out.measured['worst_relative_error']:.2g}")

    def drops_one_too_many(values, mask, H):         # W-MSR with H + 1
        return wmsr(values, mask, H + 1)

    def median_centred(values, mask, H):             # trims around the median, not x0
        return trimmed_mean(values, mask, H)

    for planted in (drops_one_too_many, median_centred):
        out = pr.check_aggregator_identities({"wmsr": planted}, num_cases=30)
        assert out.verdict == Verdict.FAIL, planted.__name__
        assert_reason(out, f"{len(out.measured['failed'])} of 3 checks off",
                      f"{max(out.measured['per_aggregator']['wmsr'].values()):.2g}")


def test_hull_property_pass_and_fails_with_plain_mean_or_too_many_attackers():
    out = pr.check_hull_property(RESILIENT, num_cases=60)
    assert out.verdict == Verdict.PASS
    assert_reason(out, f"all {sum(out.measured['cases_per_aggregator'].values())} aggregates")
    assert pr.check_hull_property({"mean": AGGREGATORS["mean"]},
                                  num_cases=60).verdict == Verdict.FAIL
    out = pr.check_hull_property({"wmsr": wmsr}, num_adversarial=4, num_cases=60)
    assert out.verdict == Verdict.FAIL and out.measured["worst_hull_violation"] > 1.0
    assert_reason(out, f"wmsr outside the hull in {out.measured['cases_outside_hull']['wmsr']} "
                       "of 60 cases", f"{out.measured['worst_hull_violation']:.2g}")


# 4-5. projection and batch step ---------------------------------------------------------------

def test_projection_identities_pass_and_wrong_normalisation_fails():
    out = pr.check_projection_identities(projection_step, num_cases=20)
    assert out.verdict == Verdict.PASS
    assert_reason(out, "all 5 identities hold in 20 cases", f"{out.measured['worst']:.2g}")

    def wrong_norm(v, received, mask, phi, beta, H):       # divides by ||phi||, not ||phi||^2
        e = (received - v) @ phi / (beta * jnp.linalg.norm(phi))
        return v + beta * wmsr(e, mask, H) * phi

    out = pr.check_projection_identities(wrong_norm, num_cases=20)
    assert out.verdict == Verdict.FAIL
    assert_reason(out, f"{len(out.measured['failed'])} of 5 identities off",
                  f"{out.measured['worst']:.2g}")

    def coordinatewise(v, received, mask, phi, beta, H):   # element-wise trimming of params
        return wmsr(received, mask, H)

    assert pr.check_projection_identities(coordinatewise, num_cases=20).verdict == Verdict.FAIL


def test_batch_output_step_pass_and_unweighted_step_fails():
    out = pr.check_batch_output_step(weighted_output_step, num_cases=10)
    assert out.verdict == Verdict.PASS
    assert_reason(out, f"within {out.measured['single_sample_gap']:.2g} of the target")

    def unweighted(w, features, targets, lr):               # plain SGD on the squared error
        aug = jnp.concatenate([features, jnp.ones((features.shape[0], 1))], axis=1)
        return w + lr * jnp.mean((targets - aug @ w)[:, None] * aug, axis=0)

    out = pr.check_batch_output_step(unweighted, num_cases=10)
    assert out.verdict == Verdict.FAIL
    assert_reason(out, f"off the target by {out.measured['single_sample_gap']:.2g}")


# 6-8. runs -----------------------------------------------------------------------------------

TINY_CASES = [("K5, H=1, Byzantine {4}", g.complete(5), 1, [4])]


def test_invariance_pass_and_fails_with_plain_averaging():
    attackers = {"constant_10": constant(10.0), "huge": huge(1e6)}
    contrast = ("two Byzantine in-neighbours", g.complete(5), 1, [3, 4], constant(1e6))
    out = pr.check_wmsr_invariance(TINY_CASES, attackers, seeds=[0], num_steps=40,
                                   contrast=contrast)
    assert out.verdict == Verdict.PASS, out.measured["failed"]
    assert out.measured["contrast_hull_violation"] > 1e5
    assert_reason(out, "all 2 runs inside the hull",
                  f"leaves the hull by {out.measured['contrast_hull_violation']:.2g}")
    planted = pr.check_wmsr_invariance(TINY_CASES, attackers, seeds=[0], num_steps=40,
                                       aggregator="mean")
    assert planted.verdict == Verdict.FAIL
    assert planted.measured["worst_hull_violation"] > 1.0
    assert_reason(planted, "2 of 2 runs leave the hull",
                  f"{planted.measured['worst_hull_violation']:.2g}")


def test_invariance_contrast_that_stays_inside_fails_and_broken_hypothesis_is_recorded():
    # one Byzantine agent on K5 with H = 1 is not a contrast: W-MSR holds, the judge says FAIL
    contrast = ("not a contrast", g.complete(5), 1, [4], constant(1e6))
    out = pr.check_wmsr_invariance(TINY_CASES, {"c": constant(10.0)}, seeds=[0],
                                   num_steps=30, contrast=contrast)
    assert out.verdict == Verdict.FAIL
    assert_reason(out, "contrast run stays within 0 of the hull")
    ring = [("ring, H=1", g.ring(5), 1, [4])]
    out = pr.check_wmsr_invariance(ring, {"c": constant(10.0)}, seeds=[0], num_steps=30)
    assert out.hypotheses_failed and "ring" in out.hypotheses_failed[0]


def test_all_invariance_attackers_run_on_vectors():
    suite = pr.attack_suite(True)
    assert "coordinate_extreme" in suite and len(suite) == len(pr.attack_suite(False)) + 1
    out = pr.check_wmsr_invariance(TINY_CASES, suite, seeds=[0], num_steps=40, dim=3)
    assert out.verdict == Verdict.PASS, out.measured["failed"]


def test_average_captured_pass_and_not_captured_under_wmsr():
    out = pr.check_average_captured(pr.experiment_graph(), [4], 1e6, seeds=[0],
                                    num_steps=150)
    assert out.verdict == Verdict.PASS
    assert out.measured["fitted_rate"] == pytest.approx(out.measured["rho_W_cc"], abs=1e-3)
    assert_reason(out, "captured:", f"{out.measured['final_relative_error']:.2g}",
                  f"rho(W_cc) = {out.measured['rho_W_cc']:.4g}")
    resilient = pr.check_average_captured(pr.experiment_graph(), [4], 1e6, seeds=[0],
                                          num_steps=150, aggregator="wmsr", H=1)
    assert resilient.verdict == Verdict.FAIL
    assert resilient.measured["final_relative_error"] > 0.9
    assert_reason(resilient, "not captured",
                  f"still {resilient.measured['final_relative_error']:.2g}")


def test_cooperative_block_rate_by_hand():
    # K3, agent 2 Byzantine: plain averaging weights 1/3; W_cc = [[1/3, 1/3], [1/3, 1/3]]
    W = pr.cooperative_block(g.complete(3), [2])
    np.testing.assert_allclose(W, np.full((2, 2), 1 / 3))
    assert max(abs(np.linalg.eigvals(W))) == pytest.approx(2 / 3)


def test_necessity_pass_and_fails_without_trimming_or_on_a_robust_graph():
    robust = {"K5": g.complete(5)}
    x0 = [0, 0, 0, 1, 1, 1]
    ok = pr.check_necessity(pr.two_clusters(), x0, 1, num_steps=40, consensus_graphs=robust,
                            seeds=[0])
    assert ok.verdict == Verdict.PASS and ok.measured["two_cluster_robustness"] == 1
    assert_reason(ok, "1-robust", "max change 0")
    no_trim = pr.check_necessity(pr.two_clusters(), x0, 0, num_steps=40,
                                 consensus_graphs=robust, seeds=[0])
    assert no_trim.verdict == Verdict.FAIL and no_trim.measured["max_change"] > 0.1
    assert_reason(no_trim, f"moved by up to {no_trim.measured['max_change']:.2g}")
    # K6 is 3-robust: the values do change, so it is no necessity example
    k6 = pr.check_necessity(g.complete(6), x0, 1, num_steps=40, consensus_graphs=robust,
                            seeds=[0])
    assert k6.verdict == Verdict.FAIL
    assert_reason(k6, "3-robust (needs < 2)")


def test_claims_registered_with_docs_sources():
    import pathlib

    from proofs_checks.registry import REGISTRY, discover

    discover()
    ids = sorted(k for k in REGISTRY if k.startswith("resilient_ac."))
    assert ids == sorted(["resilient_ac.experiment_graph_robustness",
                          "resilient_ac.aggregator_identities", "resilient_ac.hull_property",
                          "resilient_ac.projection_identities",
                          "resilient_ac.batch_output_step", "resilient_ac.wmsr_invariance",
                          "resilient_ac.plain_average_captured",
                          "resilient_ac.necessity_two_clusters",
                          "resilient_ac.environment_facts",
                          "resilient_ac.linear_bounded_team_reward",
                          "resilient_ac.linear_bounded_critic",
                          "resilient_ac.linear_projection_beats_elementwise",
                          "resilient_ac.linear_two_time_scales",
                          "resilient_ac.learning_h1_beats_h0", "resilient_ac.learning_h0_stalls",
                          "resilient_ac.learning_estimate_bias",
                          "resilient_ac.learning_cooperative_cost",
                          "resilient_ac.learning_oracle_upper"])
    root = pathlib.Path(__file__).resolve().parents[1]
    pages = ("docs/resilient.md", "docs/resilient_linear.md", "docs/resilient_learning.md")
    for k in ids:
        cited = [p for p in pages if p in REGISTRY[k].source]
        assert cited, k
        for p in cited:                            # every cited anchor exists in its page
            text = (root / p).read_text()
            for anchor in REGISTRY[k].source.split(p + "#")[1:]:
                anchor = anchor.split()[0].rstrip(";,.)")
                heads = {"-".join("".join(c for c in line.lstrip("#").strip().lower()
                                          if c.isalnum() or c in " -").split())
                         for line in text.splitlines() if line.startswith("#")}
                assert anchor in heads, (k, p, anchor)


def test_quick_claim_runs_through_the_context():
    out = pr._plain_average_captured(CheckContext(seeds=1))
    assert out.verdict == Verdict.PASS
