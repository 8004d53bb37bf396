"""The graph claims of proofs_checks: each judge PASSes on the real input and FAILs on a planted
violation (a check that cannot fail proves nothing)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import decentral.graphs as g
from decentral.verify import CheckContext, Verdict
from proofs_checks import graphs as pg


@pytest.fixture(autouse=True)
def _float64(x64):
    yield


def test_robustness_known_values_pass_and_planted_wrong_value_fails():
    cases = pg.robustness_cases()
    ok = pg.check_robustness(cases)
    assert ok.verdict == Verdict.PASS
    assert "\n" not in ok.reason, ok.reason
    assert f"all {len(cases)} graphs" in ok.reason, ok.reason
    two_cliques = np.zeros((8, 8), dtype=bool)
    two_cliques[:4, :4] = True
    two_cliques[4:, 4:] = True
    two_cliques[4, 3] = True                                  # one bridge edge 3 -> 4
    planted = [("two 4-cliques, one bridge (claimed 2-robust)", two_cliques, 2)]
    out = pg.check_robustness(planted)
    assert out.verdict == Verdict.FAIL
    assert out.measured["cases"][planted[0][0]]["computed"] == 1
    assert "\n" not in out.reason, out.reason
    assert "1 of 1 graphs" in out.reason, out.reason
    assert "r=1, stated 2" in out.reason, out.reason


def test_enumeration_milp_judge_fails_on_a_biased_solver(monkeypatch):
    adjs = [g.complete(5), g.ring(6), g.circulant(5, [-1, -2, -3])]
    ok = pg.check_enumeration_equals_milp(adjs)
    assert ok.verdict == Verdict.PASS
    assert "\n" not in ok.reason, ok.reason
    assert "all 3 digraphs" in ok.reason, ok.reason
    real = g.r_robustness

    def biased(adj, method="auto", **kw):
        r = real(adj, method=method, **kw)
        return r + 1 if method == "milp" else r

    monkeypatch.setattr(pg.g, "r_robustness", biased)
    bad = pg.check_enumeration_equals_milp(adjs)
    assert bad.verdict == Verdict.FAIL
    assert "\n" not in bad.reason, bad.reason
    assert "3 of 3 digraphs" in bad.reason, bad.reason
    assert "graph 0, r=3 vs MILP 4" in bad.reason, bad.reason


def test_aps_judge_recovers_prescribed_pi_and_fails_on_wrong_pi():
    stack = pg.prescribed_pi_stack(800, seed=3)
    seq = g.explicit(stack)
    ok = pg.check_aps_recovers(seq, 100, pg.PRESCRIBED_PI)
    assert ok.verdict == Verdict.PASS
    assert "\n" not in ok.reason, ok.reason
    assert f"{ok.measured['max_abs_error']:.2g} <= 1e-12" in ok.reason, ok.reason
    assert "t = 0..100" in ok.reason, ok.reason
    wrong = pg.check_aps_recovers(seq, 100, np.full(6, 1 / 6))
    assert wrong.verdict == Verdict.FAIL
    assert "\n" not in wrong.reason, wrong.reason
    assert f"{wrong.measured['max_abs_error']:.2g} > 1e-12" in wrong.reason, wrong.reason
    assert "101 of 101 steps" in wrong.reason, wrong.reason
    # planted: one step's matrix uses plain row weights, which do not keep pi
    broken = stack.copy()
    broken[50] = g.row_stochastic(pg.prescribed_pi_subcycles()[1])
    planted = pg.check_aps_recovers(g.explicit(broken), 100, pg.PRESCRIBED_PI)
    assert planted.verdict == Verdict.FAIL
    assert "\n" not in planted.reason, planted.reason
    assert f"{planted.measured['max_abs_error']:.2g} > 1e-12" in planted.reason, planted.reason
    assert "(first t=0)" in planted.reason, planted.reason


def test_perron_reference_judge_fails_on_reversed_orientation():
    ref = np.array([3, 4, 4, 4, 2, 2]) / 19
    ok = pg.check_perron_reference(g.row_stochastic(pg.ring_with_chord()), ref)
    assert ok.verdict == Verdict.PASS
    assert "\n" not in ok.reason, ok.reason
    assert f"within {ok.measured['max_abs_error']:.2g} of the reference" in ok.reason, ok.reason
    reversed_w = g.row_stochastic(pg.ring_with_chord().T)     # transposed graph
    bad = pg.check_perron_reference(reversed_w, ref)
    assert bad.verdict == Verdict.FAIL
    assert "\n" not in bad.reason, bad.reason
    assert f"is {bad.measured['max_abs_error']:.2g} from the reference" in bad.reason, bad.reason
    assert "worst agent" in bad.reason, bad.reason


def test_consensus_judge_pass_and_planted_violations():
    W = g.row_stochastic(pg.ring_with_chord())
    pi = g.perron_vector(W)
    ok = pg.check_consensus_limit(g.static(W), pi, num_seeds=8, num_steps=600)
    assert ok.verdict == Verdict.PASS, ok.measured
    assert ok.measured["rate_ci"][1] < 1.0
    # wrong target: the plain average of a non-doubly-stochastic W
    wrong = pg.check_consensus_limit(g.static(W), np.full(6, 1 / 6), num_seeds=8,
                                     num_steps=600)
    assert wrong.verdict == Verdict.FAIL
    # transposed W (column-stochastic): decentral.consensus refuses it before running
    with pytest.raises(ValueError, match="row-stochastic"):
        pg.check_consensus_limit(g.static(W.T.copy()), pi, num_seeds=8, num_steps=600)
    # not B-connected: two disjoint rings never agree
    two_rings = np.zeros((6, 6), dtype=bool)
    two_rings[:3, :3] = g.ring(3)
    two_rings[3:, 3:] = g.ring(3)
    split = pg.check_consensus_limit(g.static(two_rings, rule="row"), np.full(6, 1 / 6),
                                     num_seeds=8, num_steps=600)
    assert split.verdict == Verdict.FAIL


def test_consensus_judge_inconclusive_when_horizon_too_short():
    W = g.row_stochastic(pg.ring_with_chord())
    short = pg.check_consensus_limit(g.static(W), g.perron_vector(W), num_seeds=8,
                                     num_steps=20)
    assert short.verdict == Verdict.INCONCLUSIVE


PLANTED_TARGETS = {
    # claim id -> a wrong vector of limit weights (the planted violation)
    "graphs.consensus_static_perron": np.full(6, 1 / 6),       # plain average of non-doubly W
    "graphs.consensus_prescribed_pi": np.full(6, 1 / 6),       # ignores the prescribed pi
    "graphs.consensus_doubly_average": np.eye(6)[0],           # agent 0's value
    "graphs.consensus_random_aps": np.full(10, 1 / 10),        # forward/uniform guess, not pi_0
}


@pytest.mark.parametrize("claim_id", sorted(pg.CONSENSUS_SETUPS))
def test_each_consensus_claim_fails_on_its_planted_wrong_limit(claim_id, tmp_path):
    assert set(PLANTED_TARGETS) == set(pg.CONSENSUS_SETUPS)
    inputs = pg.CONSENSUS_SETUPS[claim_id](CheckContext(out_dir=tmp_path))
    inputs["target_weights"] = PLANTED_TARGETS[claim_id]
    out = pg.check_consensus_limit(**inputs, num_seeds=8)
    assert out.verdict == Verdict.FAIL, (claim_id, out.measured)


def test_consensus_judge_with_a_single_seed_still_decides():
    W = g.row_stochastic(pg.ring_with_chord())
    out = pg.check_consensus_limit(g.static(W), g.perron_vector(W), num_seeds=1, num_steps=600)
    assert out.verdict == Verdict.PASS
    assert out.measured["rate_ci"][0] == out.measured["rate_ci"][1]   # exact fit, no CI


@pytest.mark.parametrize("claim_id", [
    "graphs.robustness_known_values",
    "graphs.robustness_milp_agrees",
    "graphs.perron_ring_chord",
    "graphs.consensus_static_perron",
    "graphs.aps_prescribed_pi",
    "graphs.consensus_doubly_average",
    "graphs.consensus_random_aps",
])
def test_registered_graph_claims_pass_at_quick_size(claim_id, tmp_path):
    from proofs_checks.registry import discover
    claims = discover()
    out = claims[claim_id].run(CheckContext(out_dir=tmp_path, seeds=16))
    assert out.verdict == Verdict.PASS, (claim_id, out.measured)
    # every measured number says what it is (and its unit) in the report
    assert set(out.descriptions) == set(out.measured), (claim_id, set(out.measured) -
                                                        set(out.descriptions))
    assert all(text.strip() for text in out.descriptions.values())


def test_consensus_runs_the_library_algorithm(monkeypatch):
    import decentral.consensus

    calls = []
    real = decentral.consensus.consensus

    def spy(graphs, **kw):
        calls.append(kw)
        return real(graphs, **kw)

    monkeypatch.setattr(pg, "consensus", spy)
    W = g.row_stochastic(pg.ring_with_chord())
    out = pg.check_consensus_limit(g.static(W), g.perron_vector(W), num_seeds=2, num_steps=50)
    assert calls and out.measured["paths"] == 2


def test_claim_sources_cite_papers_or_the_docs_page():
    from pathlib import Path

    from proofs_checks.registry import discover

    docs = Path(__file__).resolve().parent.parent / "docs" / "graphs.md"
    text = docs.read_text()
    for c in discover().values():
        if c.family != "graphs":
            continue
        # the only section numbers cited are the docs page's (papers are cited by theorem)
        rest = re.sub(r"docs/graphs\.md §\d(, §\d)*", "", c.source)
        assert "§" not in rest, c.source
        for section in ("§1", "§2", "§3", "§4"):
            if f"docs/graphs.md {section}" in c.source:
                assert f"## {section[1:]}." in text, (c.id, section)


def test_consensus_judge_slow_but_geometric_convergence_is_inconclusive_not_fail():
    W = g.row_stochastic(g.ring(40))                      # contraction ~0.99 per step
    out = pg.check_consensus_limit(g.static(W), g.perron_vector(W), num_seeds=8,
                                   num_steps=150)
    assert out.verdict == Verdict.INCONCLUSIVE, out.measured
    assert out.measured["rate_ci"][1] < 1.0
