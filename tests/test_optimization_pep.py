"""Worst-case certificates (decentral.optimization.pep): known values of the relaxation, bad
input, missing optional packages, and the certificate claims' judges on planted violations."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from decentral.verify import Verdict
from proofs_checks.optimization import certificates as cert

pytestmark = pytest.mark.usefixtures("x64_module")

CLASS = dict(strong_convexity=0.1, smoothness=1.0, lambda_min=-0.5, lambda_max=0.5)


def test_known_certificates():
    from decentral.optimization.pep import worst_case

    one = worst_case("dgd", num_agents=2, num_steps=1, step_size=1.0, **CLASS)
    assert one.value == pytest.approx(6.25, rel=1e-6)
    # the one-step closed form: (rho D + alpha E)^2 with rho = |lambda_min - alpha L| = 1.5
    assert cert.one_step_bound(1.0, 0.1, 1.0, -0.5, 1.0, 1.0) == (6.25, True)
    two = worst_case("dgd", num_agents=2, num_steps=2, step_size=1.0, **CLASS).value
    varying = worst_case("dgd", num_agents=2, num_steps=2, step_size=1.0, time_varying=True,
                         **CLASS).value
    assert two <= varying + 1e-7 and two > one.value
    extra2 = worst_case("extra", num_agents=2, num_steps=2, step_size=0.5, **CLASS).value
    dgd2 = worst_case("dgd", num_agents=2, num_steps=2, step_size=0.5, **CLASS).value
    assert extra2 < dgd2                              # EXTRA's correction already helps at K=2
    assert one.method == "dgd" and one.settings["step_size"] == 1.0


def test_simulated_instances_match_the_library_and_stay_below():
    import decentral.graphs as g
    from decentral.optimization import dgd, extra, optimization_params, quadratic
    from decentral.runner import run

    rng = np.random.default_rng(0)
    W, A, b, x0 = cert.random_instances(1, 3, 2, rng)
    # a non-negative W of the class for the library (it refuses negative weights)
    W[0] = np.full((3, 3), 1 / 3) + 0.4 * (np.array([[0.5, 0.5, 0], [0.5, 0, 0.5],
                                                     [0, 0.5, 0.5]]) - 1 / 3)
    problem = quadratic(A[0], b[0])
    for method, factory, alpha in (("dgd", dgd, 1.0), ("extra", extra, 0.5)):
        res = run(factory(problem, g.static(W[0])), optimization_params(alpha, x0[0]),
                  seeds=[0], num_steps=2, progress=False)
        lib = float((np.asarray(res.final_state.x[0]) ** 2).sum(-1).mean())
        sim = float(cert.simulate(method, W, A, b, x0, alpha, 2)[0])
        assert lib == pytest.approx(sim, rel=1e-12)


def test_bad_input_and_missing_packages(monkeypatch):
    from decentral.optimization.pep import worst_case

    base = dict(num_agents=2, num_steps=1, step_size=1.0, **CLASS)
    with pytest.raises(ValueError, match="method must be"):
        worst_case("admm", **base)
    with pytest.raises(ValueError, match="num_agents"):
        worst_case("dgd", **(base | {"num_agents": 1}))
    with pytest.raises(ValueError, match="lambda_min <= lambda_max"):
        worst_case("dgd", **(base | {"lambda_min": 0.6}))
    with pytest.raises(ValueError, match="step_size"):
        worst_case("dgd", **(base | {"step_size": 0.0}))
    with pytest.raises(ValueError, match="smoothness"):
        worst_case("dgd", **(base | {"smoothness": None}))
    with pytest.raises(ValueError, match="metric"):
        worst_case("dgd", metric="regret", **base)
    monkeypatch.setitem(sys.modules, "PEPit", None)
    with pytest.raises(ImportError, match=r"decentral\[pep\]"):
        worst_case("dgd", **base)
    from decentral.optimization import diabetes

    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(ImportError, match=r"decentral\[data\]"):
        diabetes(4)


def test_judges_fail_on_planted_violations():
    settings = [{"method": "dgd", "num_agents": 2, "num_steps": 1}]
    good = cert.check_soundness(settings, instances=50)
    assert good.verdict is Verdict.PASS
    low = cert.check_soundness(settings, instances=50,
                               certify=lambda m, **kw: 0.3 * cert.certify_class(m, **kw))
    assert low.verdict is Verdict.FAIL
    one = [(1.0, 0.1, 1.0, -0.5, 0.5)]
    assert cert.check_one_step(one).verdict is Verdict.PASS
    assert cert.check_one_step(one, certify=lambda m, **kw: 1.01 * cert.certify_class(m, **kw)
                               ).verdict is Verdict.FAIL
    assert cert.witness_value(1.0, 0.1, 1.0, -0.5, 1.0, 1.0) == pytest.approx(6.25)
    assert cert.check_agent_independence({"a": {2: 1.0, 3: 1.0 + 1e-7}}).verdict is Verdict.PASS
    assert cert.check_agent_independence({"a": {2: 1.0, 3: 1.01}}).verdict is Verdict.FAIL
    assert cert.published_dgd_guarantee(2, 0.5) == pytest.approx(3.5355, rel=1e-4)
    assert cert.check_published_bound({(2, 0.5): 0.63}).verdict is Verdict.PASS
    assert cert.check_published_bound({(2, 0.5): 4.0}).verdict is Verdict.INCONCLUSIVE
    assert cert.check_nesting(7.79, 7.84, [1.0, 2.0, 3.0]).verdict is Verdict.PASS
    assert cert.check_nesting(7.9, 7.84, [1.0, 2.0, 3.0]).verdict is Verdict.FAIL
    assert cert.check_nesting(7.79, 7.84, [1.0, 0.9]).verdict is Verdict.FAIL
