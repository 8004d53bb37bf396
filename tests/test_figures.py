"""``python -m figures``: discovery, the registry, the files each figure writes, exit codes.

The graph figure runs once at the tiny size (module fixture); the harness tests use a registry
of cheap stand-in figures, including one that raises (the negative control)."""

from __future__ import annotations

import json

import jax
import matplotlib.pyplot as plt
import numpy as np
import pytest

from decentral.results import load_results
from figures import __main__ as cli
from figures import graphs as fg
from figures.registry import FigureContext, FigureOutput, discover, figure

# one worker runs this module: its tests share module-level runs (pytest-xdist)
pytestmark = pytest.mark.xdist_group("figures")

GRAPH_FIGURE = "graphs.consensus_disagreement"


@pytest.fixture(scope="module")
def graph_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("figures")
    before = bool(jax.config.jax_enable_x64)
    code = cli.main(["--size", "tiny", "--out", str(out), "--quiet", "--only", "graphs."])
    return code, out, before, bool(jax.config.jax_enable_x64)


def test_graph_figure_writes_png_npz_json(graph_run):
    code, out, _, _ = graph_run
    assert code == 0
    for ext in (".png", ".npz", ".json"):
        path = out / f"{GRAPH_FIGURE}{ext}"
        assert path.is_file() and path.stat().st_size > 0, path
    assert (out / f"{GRAPH_FIGURE}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    arrays, meta = load_results(out / GRAPH_FIGURE)
    prov = meta["provenance"]
    assert prov["versions"]["jax"] and prov["jax"]["enable_x64"] is True
    assert meta["config"]["figure"] == GRAPH_FIGURE and meta["config"]["size"] == "tiny"
    params = meta["config"]["parameters"]
    assert meta["seeds"] == params["seeds"] == list(range(params["num_seeds"]))
    assert set(params["cases"]) == {"static", "periodic", "b_connected", "random_drops"}
    index = json.loads((out / "index.json").read_text())
    assert [e["id"] for e in index["figures"]] == [GRAPH_FIGURE]
    assert index["figures"][0]["status"] == "ok" and "provenance" in index


def test_graph_figure_data_is_the_consensus_disagreement(graph_run):
    _, out, _, _ = graph_run
    arrays, meta = load_results(out / GRAPH_FIGURE)
    params = meta["config"]["parameters"]
    t = arrays["t"]
    assert t[0] == 0 and t[-1] == params["num_steps"] and len(t) == params["num_steps"] + 1
    for key, case in params["cases"].items():
        err, pi0 = arrays[f"{key}_error"], arrays[f"{key}_pi0"]
        assert err.shape == (params["num_seeds"], len(t))
        assert np.all(np.isfinite(err)) and np.all(err >= 0)
        assert pi0.shape == (case["n"],) and abs(pi0.sum() - 1) < 1e-12 and np.all(pi0 >= 0)
        assert np.all(err[:, -1] < 0.1 * err[:, 0]), key          # consensus contracts
        assert case["dtype"] == "float64"
    np.testing.assert_allclose(arrays["b_connected_pi0"], fg.PRESCRIBED_PI, atol=1e-12)
    np.testing.assert_allclose(arrays["periodic_pi0"], np.full(6, 1 / 6), atol=1e-12)
    assert params["cases"]["b_connected"]["connectivity_window"] == 2


def test_x64_restored_after_main(graph_run):
    _, _, before, after = graph_run
    assert before == after


def test_disagreement_against_a_hand_computed_value():
    x = np.array([[[1.0, 3.0], [2.0, 2.5]]])              # S=1, T+1=2, N=2
    err = fg.disagreement(x, np.array([0.5, 0.5]))         # target 2.0
    np.testing.assert_allclose(err, [[1.0, 0.5]])
    # a wrong pi (planted) gives another target and another error curve
    assert not np.allclose(fg.disagreement(x, np.array([1.0, 0.0])), err)


def test_list_and_usage_errors(capsys, tmp_path):
    assert cli.main(["--list"]) == 0
    assert GRAPH_FIGURE in capsys.readouterr().out
    assert cli.main(["--only", "nomatch", "--out", str(tmp_path)]) == 2
    assert "matches no figure id" in capsys.readouterr().err
    assert cli.main(["--size", "huge"]) == 2
    assert not any(tmp_path.iterdir())
    assert GRAPH_FIGURE in discover()


def _good(ctx: FigureContext) -> FigureOutput:
    n = ctx.pick(tiny=3, quick=10, full=100)
    fig, ax = plt.subplots()
    ax.plot(np.arange(n), np.arange(n))
    return FigureOutput(fig, {"t": np.arange(n)}, {"n": n, "seeds": [ctx.base_seed]})


def _raises(ctx: FigureContext) -> FigureOutput:
    raise RuntimeError("planted failure")


def _returns_nothing(ctx: FigureContext):
    return None


def test_a_raising_figure_exits_1_and_the_others_are_still_written(tmp_path, capsys):
    reg: dict = {}
    figure("demo.a_raises", title="raises", paper="test", registry=reg)(_raises)
    figure("demo.b_good", title="good", paper="test", registry=reg)(_good)
    figure("demo.c_no_output", title="returns None", paper="test", registry=reg)(
        _returns_nothing)
    code = cli.main(["--size", "tiny", "--out", str(tmp_path), "--quiet", "--base-seed", "7"],
                    registry=reg)
    assert code == 1
    captured = capsys.readouterr()
    assert "planted failure" in captured.err and "FigureOutput" in captured.err
    arrays, meta = load_results(tmp_path / "demo.b_good")
    assert list(arrays["t"]) == [0, 1, 2] and meta["seeds"] == [7]
    assert (tmp_path / "demo.b_good.png").stat().st_size > 0
    assert not (tmp_path / "demo.a_raises.png").exists()
    status = {e["id"]: e["status"] for e in
              json.loads((tmp_path / "index.json").read_text())["figures"]}
    assert status == {"demo.a_raises": "ERROR", "demo.b_good": "ok", "demo.c_no_output": "ERROR"}
    assert cli.main(["--size", "tiny", "--out", str(tmp_path), "--quiet", "--only", "b_good"],
                    registry=reg) == 0


def test_registry_refuses_bad_and_duplicate_ids():
    reg: dict = {}
    with pytest.raises(ValueError, match="must look like"):
        figure("NoFamily", title="t", paper="p", registry=reg)
    figure("demo.same", title="t", paper="p", registry=reg)(_good)
    figure("demo.same", title="t", paper="p", registry=reg)(_good)      # same function: fine
    with pytest.raises(ValueError, match="already registered"):
        figure("demo.same", title="t", paper="p", registry=reg)(_raises)
    with pytest.raises(ValueError, match="size"):
        FigureContext(size="huge")
    assert FigureContext("full").pick(quick=1, full=2) == 2
    assert FigureContext("tiny").pick(quick=1, full=2) == 1


SA_FIGURES = ["consensus_sa.a_limit_depends_on_pi", "consensus_sa.b_constant_step",
              "consensus_sa.c_diminishing_step", "consensus_sa.d_time_varying_shared_pi",
              "consensus_sa.e_a6_violated", "consensus_sa.f_push_sa",
              "consensus_sa.g_consensus_diagnostics"]


@pytest.fixture(scope="module")
def sa_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("sa_figures")
    code = cli.main(["--size", "tiny", "--out", str(out), "--quiet", "--only", "consensus_sa."])
    return code, out


def test_consensus_sa_figures_a_to_g_write_their_data(sa_run):
    code, out = sa_run
    assert code == 0
    index = json.loads((out / "index.json").read_text())
    assert sorted(e["id"] for e in index["figures"]) == SA_FIGURES
    for fid in SA_FIGURES:
        assert (out / f"{fid}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        arrays, meta = load_results(out / fid)
        assert arrays and all(np.all(np.isfinite(a)) for a in arrays.values()), fid
        assert "seeds" in meta["config"]["parameters"], fid
    arrays, _ = load_results(out / "consensus_sa.a_limit_depends_on_pi")
    # the Monte-Carlo and exact errors to theta*_pi agree within the seed band's scale
    mc = arrays["error_to_pi"].mean(axis=0)
    np.testing.assert_allclose(mc, arrays["exact_error_to_pi"], rtol=0.5)


RESILIENT_FIGURE = "resilient_ac.hull_under_attack"


@pytest.fixture(scope="module")
def resilient_run(tmp_path_factory):
    import warnings

    out = tmp_path_factory.mktemp("resilient_figures")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = cli.main(["--size", "tiny", "--out", str(out), "--quiet", "--only",
                         "resilient_ac."])
    return code, out, caught


def test_resilient_figure_keeps_wmsr_in_the_hull_and_plain_averaging_captured(resilient_run):
    from decentral.hypotheses import HypothesisWarning

    code, out, caught = resilient_run
    assert code == 0
    assert (out / f"{RESILIENT_FIGURE}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [w for w in caught if issubclass(w.category, HypothesisWarning)]
    arrays, meta = load_results(out / RESILIENT_FIGURE)
    params = meta["config"]["parameters"]
    assert meta["seeds"] == params["seeds"] == list(range(params["num_seeds"]))
    S, T = params["num_seeds"], params["num_steps"]
    assert arrays["x0"].shape == (S, 5) and len(arrays["t"]) == T + 1
    # the experiment graph is 2-robust < 3 (warning caught and kept); K5 is 3-robust
    exp, k5 = params["graphs"]["experiment"], params["graphs"]["complete"]
    assert (exp["robustness"], k5["robustness"]) == (2, 3)
    assert exp["hypothesis_warnings"] and "2-robust" in exp["hypothesis_warnings"][0]
    assert k5["hypothesis_warnings"] == []
    for gk in ("experiment", "complete"):
        for ak in ("constant", "huge", "random", "just_inside", "split_brain"):
            x = arrays[f"{gk}__{ak}__wmsr"]
            assert x.shape == (S, T + 1, 5) and np.all(np.isfinite(x))
            np.testing.assert_array_equal(x[:, 0], arrays["x0"])
            assert np.all(arrays[f"{gk}__{ak}__wmsr_violation"] <= 1e-12), (gk, ak)
        for ak in ("constant", "huge", "random"):        # plain averaging leaves the hull
            assert arrays[f"{gk}__{ak}__mean_violation"].max() > 1.0, (gk, ak)
        assert arrays[f"{gk}__huge__mean_violation"].max() > 1e4


def test_resilient_figure_switch_attacker_sends_what_the_attack_alone_sends(resilient_run,
                                                                           x64):
    import warnings

    import decentral.graphs as g
    from decentral.resilient_ac import resilient_consensus, resilient_consensus_params, values_of
    from decentral.runner import run
    from figures import resilient_ac as fr

    _, out, _ = resilient_run
    arrays, meta = load_results(out / RESILIENT_FIGURE)
    seed = meta["seeds"][-1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alg = resilient_consensus(g.circulant(5, [-1, -2, -3]), 1, [4],
                                  fr.attacks()["huge"]["attacker"])
    num_steps = meta["config"]["parameters"]["num_steps"]
    res = run(alg, resilient_consensus_params(arrays["x0"][-1]), [seed], num_steps,
              record_fn=values_of, record_initial=True, progress=False)
    np.testing.assert_array_equal(np.asarray(res.records[0]),
                                  arrays["experiment__huge__wmsr"][-1])


BANDIT_FIGURES = ["bandits.tac_fig1_dec_kl_ucb", "bandits.tac_fig2_dec_ucb1",
                  "bandits.tac_fig3_kl_vs_ucb1", "bandits.tac_fig4_dec_kl_ucb_beta",
                  "bandits.tac_fig5_dec_ucb1_beta", "bandits.tac_fig6_kl_vs_ucb1_beta",
                  "bandits.tac_figs8_9_k6_c6",
                  "bandits.v1_fig11_two_neighbors", "bandits.v1_fig12_strongly_fixed_means",
                  "bandits.v1_fig13_undirected_path", "bandits.v1_fig14_weakly_path",
                  "bandits.v1_fig1_strongly", "bandits.v1_fig2_undirected",
                  "bandits.v1_fig3_weakly", "bandits.v1_fig4_er50"]


@pytest.fixture(scope="module")
def bandits_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bandit_figures")
    code = cli.main(["--size", "tiny", "--out", str(out), "--quiet", "--only", "bandits."])
    return code, out


def test_bandit_figures_write_png_and_finite_data(bandits_run):
    code, out = bandits_run
    assert code == 0
    index = json.loads((out / "index.json").read_text())
    assert sorted(e["id"] for e in index["figures"]) == BANDIT_FIGURES
    for fid in BANDIT_FIGURES:
        assert (out / f"{fid}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        arrays, meta = load_results(out / fid)
        assert arrays and all(np.all(np.isfinite(a)) for a in arrays.values()), fid
        assert meta["seeds"] == meta["config"]["parameters"]["seeds"], fid
        assert meta["config"]["size"] == "tiny"


def test_bandit_v1_fixed_graph_figures_hold_both_metrics_per_agent(bandits_run):
    from decentral.datasets.zhu2021 import paper_graph

    _, out = bandits_run
    for fid, name in (("bandits.v1_fig1_strongly", "strongly"),
                      ("bandits.v1_fig2_undirected", "undirected"),
                      ("bandits.v1_fig3_weakly", "weakly")):
        arrays, meta = load_results(out / fid)
        params = meta["config"]["parameters"]
        S, T, t = params["num_seeds"], params["horizon"], arrays["t"]
        assert t[-1] == T and np.all(np.diff(t) > 0)
        for key in ("dec_regret", "dec_parity", "ucb1_regret", "ucb1_parity"):
            assert arrays[key].shape == (S, len(t), 6), (fid, key)
        # pseudo-regret is a cumulative sum of gaps: >= 0 and non-decreasing in t
        for key in ("dec_regret", "ucb1_regret"):
            assert np.all(arrays[key] >= -1e-12)
            assert np.all(np.diff(arrays[key], axis=1) >= -1e-12), (fid, key)
        assert not np.allclose(arrays["dec_parity"], arrays["dec_regret"])  # another metric
        np.testing.assert_array_equal(arrays["adjacency"].astype(bool), paper_graph(name))
        assert params["theorem"] == (2 if name == "undirected" else 1)
        assert arrays["family_choice"].shape == (6, 6) and arrays["means"].shape == (6,)
    # one draw of means and families, shared by the three figures and their UCB1 baseline
    first, _ = load_results(out / "bandits.v1_fig1_strongly")
    third, _ = load_results(out / "bandits.v1_fig3_weakly")
    np.testing.assert_array_equal(first["ucb1_regret"], third["ucb1_regret"])
    np.testing.assert_array_equal(first["family_choice"], third["family_choice"])


def test_bandit_v1_selected_graph_figures(bandits_run):
    from decentral.datasets.zhu2021 import paper_graph

    _, out = bandits_run
    figs = {"bandits.v1_fig11_two_neighbors": ("undirected_two_neighbors", 2, True),
            "bandits.v1_fig12_strongly_fixed_means": ("strongly", 1, True),
            "bandits.v1_fig13_undirected_path": ("undirected_path", 2, True),
            "bandits.v1_fig14_weakly_path": ("weakly_path", 1, False)}
    for fid, (name, theorem, fixed) in figs.items():
        arrays, meta = load_results(out / fid)
        params = meta["config"]["parameters"]
        runs, t = params["runs"], arrays["t"]
        assert runs == params["copies"] * params["num_seeds"] and t[-1] == params["horizon"]
        for key in ("dec_regret", "dec_parity", "ucb1_regret", "ucb1_parity"):
            assert arrays[key].shape == (runs, len(t), 6), (fid, key)
        assert np.all(np.diff(arrays["dec_regret"], axis=1) >= -1e-12)
        np.testing.assert_array_equal(arrays["adjacency"].astype(bool), paper_graph(name))
        assert params["theorem"] == theorem and params["fixed_means"] == fixed
        if fixed:
            np.testing.assert_allclose(arrays["means"], [0.10, 0.25, 0.45, 0.65, 0.75, 0.90])
    # Figs 11-13 share one system: one draw of families and one UCB1 baseline
    a, _ = load_results(out / "bandits.v1_fig11_two_neighbors")
    b, _ = load_results(out / "bandits.v1_fig13_undirected_path")
    np.testing.assert_array_equal(a["ucb1_regret"], b["ucb1_regret"])
    # the weakly connected path: only agent 0 hears nobody else
    c, _ = load_results(out / "bandits.v1_fig14_weakly_path")
    assert c["adjacency"].sum(axis=1).tolist() == [1, 2, 2, 2, 2, 2]


def test_bandit_er50_figure_uses_the_documented_weak_substitute(bandits_run):
    import decentral.graphs as g

    _, out = bandits_run
    arrays, meta = load_results(out / "bandits.v1_fig4_er50")
    params = meta["config"]["parameters"]
    runs, R = params["runs"], len(arrays["t"])
    assert runs == params["num_graphs"] * params["seeds_per_graph"]
    for kind in ("strong", "undirected", "weak"):
        for metric in ("regret", "parity"):
            for part in ("dec_worst", "dec_agent_mean", "ucb1_best", "ucb1_agent_mean"):
                assert arrays[f"{kind}_{metric}_{part}"].shape == (runs, R), (kind, part)
            final = arrays[f"{kind}_{metric}_dec_final"]
            assert final.shape == (runs, 50)
            # the drawn "worst" agent is the one with the highest mean final value
            worst = params["kinds"][kind]["selected_agents"][metric]["worst_dec_agent"]
            assert worst == int(np.argmax(final.mean(axis=0)))
            np.testing.assert_allclose(arrays[f"{kind}_{metric}_dec_worst"][:, -1],
                                       final[:, worst])
    for adj in arrays["strong_adjacency"].astype(bool):
        assert g.is_strongly_connected(adj)
    for adj in arrays["undirected_adjacency"].astype(bool):
        assert np.array_equal(adj, adj.T) and g.is_strongly_connected(adj)
    for adj, info in zip(arrays["weak_adjacency"].astype(bool),
                         params["kinds"]["weak"]["graphs"], strict=True):
        assert not g.is_strongly_connected(adj) and g.is_strongly_connected(adj | adj.T)
        silent = np.flatnonzero((adj & ~np.eye(50, dtype=bool)).sum(axis=0) == 0).tolist()
        assert len(silent) == 1 and info["agents_nobody_hears"] == silent
    assert "substitute" in params["kinds"]["weak"]["construction"]


def test_bandit_journal_figures_dec_ucb1_beats_ucb1_and_share_their_runs(bandits_run):
    _, out = bandits_run
    fig1, meta = load_results(out / "bandits.tac_fig1_dec_kl_ucb")
    fig2, _ = load_results(out / "bandits.tac_fig2_dec_ucb1")
    fig3, _ = load_results(out / "bandits.tac_fig3_kl_vs_ucb1")
    params = meta["config"]["parameters"]
    runs, R = params["runs"], len(fig1["t"])
    assert fig2["dec_ucb1"].shape == fig2["dec_kl_ucb"].shape == (3, runs, R)
    assert fig2["ucb1"].shape == fig2["kl_ucb"].shape == (runs, R)
    for key in ("dec_ucb1", "dec_kl_ucb", "ucb1", "kl_ucb"):         # one set of runs
        np.testing.assert_array_equal(fig1[key], fig2[key])
        np.testing.assert_array_equal(fig1[key], fig3[key])
    # Dec-UCB1 with beta = 0.01 below UCB1 in every run, already at the tiny size (T = 200:
    # about 11 against 25, agent-averaged, with a spread below 1 over runs)
    p = int(np.flatnonzero(np.isclose(fig2["sweep"], 0.01))[0])
    assert fig2["dec_ucb1"][p, :, -1].max() < fig2["ucb1"][:, -1].min()
    # Figs 4-6: the same comparisons with Beta(mu_k, 1 - mu_k) rewards, one set of runs
    fig4, meta4 = load_results(out / "bandits.tac_fig4_dec_kl_ucb_beta")
    fig6, _ = load_results(out / "bandits.tac_fig6_kl_vs_ucb1_beta")
    beta = meta4["config"]["parameters"]
    assert beta["rewards"] == "beta" and beta["figures"] == {"kl": 4, "ucb1": 5,
                                                               "kl_vs_ucb1": 6}
    np.testing.assert_allclose(beta["arms_parameters"]["first"], beta["means"])
    np.testing.assert_allclose(beta["arms_parameters"]["second"], 1 - np.array(beta["means"]))
    for key in ("dec_ucb1", "dec_kl_ucb", "ucb1", "kl_ucb"):
        assert fig4[key].shape == fig1[key].shape
        np.testing.assert_array_equal(fig4[key], fig6[key])
        assert not np.array_equal(fig4[key], fig1[key])              # other rewards
    small, meta = load_results(out / "bandits.tac_figs8_9_k6_c6")
    S = meta["config"]["parameters"]["num_seeds"]
    for key in ("dec_ucb1", "dec_kl_ucb"):
        assert small[key].shape == (S, len(small["t"]), 12)
    np.testing.assert_array_equal(small["per_agent_constant"], [1, 1, 1, 0.01, 0.01, 0.01] * 2)


def test_bandit_figures_are_one_table_and_redraw_from_their_saved_data(bandits_run):
    from figures.bandits import catalogue
    from figures.registry import REGISTRY

    _, out = bandits_run
    assert sorted(spec.id for spec in catalogue.SPECS) == BANDIT_FIGURES
    for spec in catalogue.SPECS:
        entry = REGISTRY[spec.id]
        assert (entry.title, entry.paper) == (spec.title, spec.paper)
        arrays, meta = load_results(out / spec.id)
        fig = catalogue.redraw(spec.id, arrays, meta["config"]["parameters"])
        try:
            drawn = [ax for ax in fig.axes if ax.axison]
            assert drawn and all(ax.get_xlabel() and ax.get_ylabel() for ax in drawn), spec.id
        finally:
            plt.close(fig)
    with pytest.raises(ValueError, match="not a bandit figure"):
        catalogue.redraw("bandits.nope", {}, {})


def test_bandit_block_system_runs_each_block_as_its_own_policy(x64):
    from decentral.bandits import DecUCBParams, bernoulli, dec_ucb, evaluate, ucb1
    from decentral.datasets.zhu2021 import paper_graph
    from figures import bandits as fb

    arms, adj, T, seeds = bernoulli([0.7, 0.5, 0.4]), paper_graph("undirected"), 60, [0, 1]

    def pulls(policy, params=None, n=None):
        return evaluate(policy, arms, T, seeds, num_agents=n, params=params, record_every=T,
                        progress=False).pulls

    # Theorem 2 (Metropolis, sqrt(3 ln t / (|N_i| n))) as per-agent constants 3 / |N_i|
    W, c, _ = fb.block_system([fb.dec_ucb_block(adj, 2)])
    theorem2 = pulls(dec_ucb(adj, theorem=2))
    np.testing.assert_array_equal(pulls(dec_ucb(W, theorem=1), DecUCBParams(c)), theorem2)
    # negative control: the Theorem-1 block on the same graph is another policy
    W1, c1, _ = fb.block_system([fb.dec_ucb_block(adj, 1)])
    assert not np.array_equal(pulls(dec_ucb(W1, theorem=1), DecUCBParams(c1)), theorem2)
    # isolated agents with c = 2 beside a graph block are UCB1, pull for pull
    W, c, where = fb.block_system([fb.dec_ucb_block(adj, 2), fb.ucb1_block(6)])
    blocks = pulls(dec_ucb(W, theorem=1), DecUCBParams(c))
    np.testing.assert_array_equal(blocks[:, where[1]], pulls(ucb1(), n=12)[:, where[1]])


def test_resilient_example1_figure_projection_inside_trimmed_outside(resilient_run):
    _, out, _ = resilient_run
    fid = "resilient_ac.example1_estimates"
    assert (out / f"{fid}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    arrays, meta = load_results(out / fid)
    params = meta["config"]["parameters"]
    S, R = len(params["seeds"]), len(arrays["steps"])
    hull, avg = arrays["hull"], arrays["team_average"]
    assert np.all(hull[0] <= avg) and np.all(avg <= hull[1])
    excess = {}
    for v in ("projection", "trimmed", "mean"):
        est = arrays[f"estimates/{v}"]
        assert est.shape == (S, R, 4, 2) and np.all(np.isfinite(est))
        excess[v] = float(np.maximum(est[:, -1] - hull[1], hull[0] - est[:, -1]).max())
    # even at the tiny size the projection keeps every final estimate in the cooperative
    # hull while the element-wise trimmed mean is pushed out of it
    assert excess["projection"] <= 1e-9 and excess["trimmed"] > 0.05, excess


def test_learning_figures_reuse_exactly_matching_saved_claim_runs(tmp_path):
    """The paper-scale learning figures read the arrays the claims saved, only when the file
    holds exactly the runs asked for (version, variant, seeds, episodes, every spec)."""
    from decentral.results import save_results
    from proofs_checks.resilient_ac import setups as fr

    specs = [("cooperative", 0, False), ("greedy", 1, False), ("cooperative", 0, True)]
    S, E = 2, 30
    coop = np.arange(len(specs) * S * E, dtype=float).reshape(len(specs), S, E)
    cfg = {"version": "v1", "variant": "v1-corrected", "graph": "paper",
           "scenarios": [s for s, _, _ in specs], "H": [h for _, h, _ in specs],
           "oracle": [o for _, _, o in specs], "seeds": [50, 100],
           "episodes_per_phase": E, "phases": 1, "grid": False, "adversary_slots": [4],
           "collision": "fixed", "hyperparams": {"critic_lr": 0.01, "actor_lr": 0.002,
                                                 "gamma": 0.9, "epsilon": 0.05}}
    save_results(tmp_path / "resilient_learning-v1-corrected-paper",
                 {"coop_return": coop, "adversary_return": -coop, "estimate": coop + 1}, cfg)
    got = fr.saved_learning_runs("v1", "corrected", (50, 100), E, specs[1::-1], out=tmp_path)
    np.testing.assert_array_equal(got.coop_return, coop[[1, 0]])
    np.testing.assert_array_equal(got.estimate, coop[[1, 0]] + 1)
    assert got.config["scenarios"] == ["greedy", "cooperative"]
    assert got.config["from_saved"].endswith("resilient_learning-v1-corrected-paper")
    for args in [("v1", "corrected", (50, 200), E, specs),         # other seeds
                 ("v1", "corrected", (50, 100), 2 * E, specs),     # other length
                 ("v1", "faithful", (50, 100), E, specs),          # no such file
                 ("v1", "corrected", (50, 100), E, [("malicious", 1, False)])]:   # missing
        assert fr.saved_learning_runs(*args, out=tmp_path) is None
    for other in ({"attacker": "echo"}, {"phases": 2}, {"grid": True},
                  {"hyperparams": {**cfg["hyperparams"], "gamma": 0.95}},
                  {"adversary_slots": [3]}, {"graph": [[0, 1, 2, 3]] * 5}):
        save_results(tmp_path / "resilient_learning-v1-corrected-paper",
                     {"coop_return": coop, "adversary_return": -coop, "estimate": coop},
                     {**cfg, **other})
        assert fr.saved_learning_runs("v1", "corrected", (50, 100), E, specs,
                                      out=tmp_path) is None, other
    (tmp_path / "resilient_learning-v1-corrected-paper.json").unlink()  # interrupted save
    assert fr.saved_learning_runs("v1", "corrected", (50, 100), E, specs, out=tmp_path) is None


def test_gallery_command_copies_the_pngs_and_lists_every_registered_figure(tmp_path):
    from figures import gallery

    reg: dict = {}
    figure("demo.a_raises", title="raises", paper="test", registry=reg)(_raises)
    figure("demo.b_good", title="good, with theta*_pi", paper="test", registry=reg)(_good)
    docs = tmp_path / "docs"
    code = cli.main(["--size", "tiny", "--out", str(tmp_path / "out"), "--quiet", "--gallery",
                     "--docs", str(docs), "--only", "b_good"], registry=reg)
    assert code == 0
    assert gallery.image_path("demo.b_good", docs).read_bytes()[:4] == b"\x89PNG"
    assert not gallery.image_path("demo.a_raises", docs).exists()      # not selected
    page = (docs / gallery.PAGE).read_text()
    assert gallery.page_entries(page) == ["demo.a_raises", "demo.b_good"]   # every figure
    assert "img/gallery/demo.b_good.png" in page and r"theta\*\_pi" in page
    assert gallery.COMMAND in page


def _gallery_page() -> str:
    from figures import gallery

    path = gallery.DOCS / gallery.PAGE
    return path.read_text(encoding="utf-8") if path.is_file() else ""


@pytest.mark.parametrize("fid", sorted(discover()))
def test_gallery_has_an_entry_and_an_image_for_every_registered_figure(fid):
    """Regenerate with ``python -m figures --gallery --only <family>`` when this fails."""
    from figures import gallery

    page = _gallery_page()
    assert fid in gallery.page_entries(page), f"docs/gallery.md has no entry for {fid}"
    assert f"]({gallery.IMAGES.as_posix()}/{fid}.png)" in page
    image = gallery.image_path(fid)
    assert image.is_file() and image.read_bytes()[:4] == b"\x89PNG", f"no image {image}"


def test_gallery_lists_only_registered_figures():
    from figures import gallery

    listed = gallery.page_entries(_gallery_page())
    assert listed, "docs/gallery.md is missing or lists no figure"
    assert not set(listed) - set(discover()), "gallery entries without a registered figure"
    assert len(listed) == len(set(listed))
    stray = {p.stem for p in (gallery.DOCS / gallery.IMAGES).glob("*.png")} - set(discover())
    assert not stray, f"images of no registered figure in docs/img/gallery: {sorted(stray)}"
