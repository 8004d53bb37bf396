"""Learning claims of resilient projection-based consensus actor-critic in the grid world (Figura,
Lin, Liu, Gupta, arXiv:2111.06776, the experiments): with one adversary (greedy, faulty,
malicious) the resilient aggregation (H = 1) ends with better cooperative returns than plain
averaging (H = 0); with H = 0 a malicious or faulty agent stalls the cooperative agents while
it improves itself and biases their critic (Est) optimistically; with H = 1 Est tracks the true
return; without adversary H = 1 costs little; the oracle run (cooperative agents given the team
reward) is an upper reference.

All five claims read one set of learning runs (computed once per process and size, shared):

* **quick** (default): ``v1-corrected`` (the library default) on the experiment graph,
  2 seeds x 200 episodes (2 updates), the 8 (scenario, H) runs plus the cooperative oracle at
  H = 0 — about 35 s in all on 2 CPU cores, most of it compiling. The
  authors' curves separate only after thousands of episodes, so at this size every claim is
  INCONCLUSIVE (the numbers are reported) and says the size it needs;
* **--full** (paper scale): v1 (5 seeds x 10 000 episodes, its 8 runs + 1 oracle run) and v2
  (3 seeds x 2 phases x 4000 episodes, 8 runs + 8 oracle runs), each in ``faithful`` and
  ``corrected`` on the experiment graph, and ``corrected`` on K5: about 5.5 hours on 2 CPU
  cores (measured, configuration by configuration, in the docs page). The experiment graph
  is only 2-robust, below the 3-robust (2H + 1) hypothesis of the paper; K5 is 3-robust.

Every judge (``judge_*``) takes the per-seed window means explicitly, so tests plant
reversed orderings and see FAIL. Each ordering or threshold is one check judged from a 95 %
Student-t interval over seeds (differences of two runs paired by seed: the runs of one
configuration share seeds, environment streams and targets): PASS when the interval lies in
the claimed (closed) range, FAIL when it lies wholly outside, INCONCLUSIVE when it straddles an
end; a claim is the worst of its checks. In v1 the oracle is judged non-inferior (within
:data:`ORACLE_TIE_MARGIN`) to the all-cooperative H = 0 run, which learns from the same team
average. Faithful variants must also land within 0.5 of
the authors' logged levels (:data:`~proofs_checks.resilient_ac.setups.V1_LOGGED`,
:data:`~proofs_checks.resilient_ac.setups.V2_LOGGED`), judged the same way (the interval of
the seed mean inside logged ± 0.5); corrected variants report levels and orderings only.
Windows: v1 first 500 / last 1000 episodes, v2 first 200 / last 500 of the
second phase (as the logged tables); shorter runs use a third of the run for each window.
Details and the logged numbers: ``docs/resilient_learning.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from decentral.resilient_ac.learning import SCENARIOS, default_phases, run_runs
from decentral.verify import (
    CheckContext,
    Kind,
    Outcome,
    Verdict,
    clt_ci,
    combine_verdicts,
    judge_interval,
)
from proofs_checks.registry import claim
from proofs_checks.resilient_ac.setups import V1_LOGGED, V2_LOGGED, summary_levels

DOCS = "docs/resilient_learning.md"
FLL = "Figura, Lin, Liu, Gupta, arXiv:2111.06776"
ADVERSARIES = ("greedy", "faulty", "malicious")

#: Tolerance of the faithful variants' levels against the logged ones.
LEVEL_TOL = 0.5
#: learning_h0_stalls: "no improvement" means coop(last) - coop(first) <= this; the
#: adversary improves by at least ADVERSARY_GAIN.
COOP_NO_GAIN = 0.1
ADVERSARY_GAIN = 0.5
#: learning_estimate_bias: Est - True >= EST_GAP for the malicious H = 0 run (and Est > 0);
#: |Est - True| < EST_TRACK for every H = 1 run.
EST_GAP = 1.0
EST_TRACK = 0.8
#: learning_cooperative_cost: |coop(H = 1) - coop(H = 0)| <= COOP_COST without adversary.
COOP_COST = 0.15

#: learning_oracle_upper, v1 only: the oracle may trail the all-cooperative H = 0 run by at
#: most this (non-inferiority). In v1 both runs learn from the same team average (every agent
#: cooperates and plain averaging keeps the consensus on it), so that pair can only tie and a
#: strict "oracle >= run" could never PASS; the margin is the "costs little" of COOP_COST.
#: In v2 the authors' logs show the oracle 0.65 above that run, so v2 keeps oracle >= run.
ORACLE_TIE_MARGIN = COOP_COST
#: The private runs judged for non-inferiority to the oracle, per version.
ORACLE_TIES = {"v1": ("cooperative H=0",), "v2": ()}

#: Every check of the learning claims is judged from a Student-t interval over seeds at this
#: level (paired by seed for differences of two runs): PASS when the interval lies in the
#: claimed (closed) range, FAIL when it lies wholly outside, INCONCLUSIVE when it straddles
#: an end. Per check, not corrected for the several checks of a claim: when a check's claim
#: holds (true mean in the range, normal seed noise), a one-sided check (a threshold) FAILs
#: falsely with probability at most 2.5 %, a two-sided one (a band) at most 5 %; a claim's
#: bound is the sum over its checks (union bound; the per-claim counts are in the docs page).
CONFIDENCE = 0.95
_RULE = (f" [each check: {CONFIDENCE:.0%} Student-t interval over seeds, paired by seed; "
         "PASS inside, FAIL wholly outside, INCONCLUSIVE when it straddles]")

#: (first, last) window lengths per version, as the logged tables.
WINDOWS = {"v1": (500, 1000), "v2": (200, 500)}
#: The size each verdict needs (seeds, episodes per phase): the paper's.
NEEDED = {"v1": (5, 10_000), "v2": (3, 4000)}

SPECS_V1 = [(s, h, False) for s in SCENARIOS for h in (0, 1)] + [("cooperative", 0, True)]
SPECS_V2 = [(s, h, o) for s in SCENARIOS for h in (0, 1) for o in (False, True)]

QUICK = [dict(version="v1", variant="corrected", graph="paper", seeds=(50, 100), episodes=200)]
FULL = [dict(version=v, variant=var, graph=g, seeds=None, episodes=None)
        for v in ("v1", "v2") for var, g in (("faithful", "paper"), ("corrected", "paper"),
                                             ("corrected", "k5"))]

_CACHE: dict = {}


# ---------------------------------------------------------------------------------------------
# judges
# ---------------------------------------------------------------------------------------------

def _gate(seeds, min_seeds, episodes, min_episodes) -> str | None:
    if seeds < min_seeds or (episodes is not None and min_episodes is not None
                             and episodes < min_episodes):
        need = f"{min_seeds} seeds" + ("" if min_episodes is None
                                       else f" x {min_episodes} episodes per phase")
        have = f"{seeds} seeds" + ("" if episodes is None else f" x {episodes} episodes")
        return f"too small to decide: ran {have}, needs {need} (run with --full)"
    return None


def _seeds(x, what: str) -> np.ndarray:
    """Per-seed values as a 1-D float array; a clear error otherwise."""
    arr = np.asarray(x, np.float64)
    if arr.ndim != 1 or arr.size < 1:
        raise ValueError(f"{what}: expected per-seed values (a 1-D array, one window mean "
                         f"per seed), got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: per-seed values must be finite, got {arr.tolist()}.")
    return arr


def interval_check(values, accept_lo: float = -math.inf, accept_hi: float = math.inf, *,
                   what: str = "value") -> dict:
    """One check of a learning claim: "the seed mean of ``values`` lies in [accept_lo,
    accept_hi]", judged from the Student-t interval at :data:`CONFIDENCE` over seeds.

    ``values`` holds one number per seed: a window mean, or a paired difference of two runs
    with the same seed (same environment streams and targets). PASS if the whole interval lies
    in the accepted range, FAIL if it lies wholly outside, INCONCLUSIVE if it straddles an end
    (the difference is inside the seed noise). One seed gives no interval: INCONCLUSIVE.
    The range is closed: a strict claim ("> 0") is judged as "interval inside [0, inf)", the
    same thing under continuous seed noise (the end point has probability zero).

    Raises:
        ValueError: ``values`` not 1-D or holding NaN / inf (a diverged run is an error of
            the run, reported as ERROR by the harness, never a verdict).

    Returns:
        ``{"verdict", "mean", "ci": [lo, hi], "seeds"}``.
    """
    arr = _seeds(values, what)
    if arr.size < 2:                     # one seed: no interval, no verdict
        return {"verdict": str(Verdict.INCONCLUSIVE), "mean": round(float(arr[0]), 4),
                "ci": None, "seeds": 1}
    mean, lo, hi = clt_ci(arr, CONFIDENCE)
    verdict = judge_interval(lo, hi, accept_lo, accept_hi, what=what)
    return {"verdict": str(verdict), "mean": round(float(mean), 4),
            "ci": [round(float(lo), 4), round(float(hi), 4)], "seeds": int(arr.size)}


def _level_checks(levels, logged, keys, tol: float = LEVEL_TOL) -> dict:
    """Faithful variants: ``"level scenario H=h quantity"`` -> the interval check of the seed
    mean against ``logged ± tol``, for the listed ((scenario, H), quantity, index in the
    logged tuple) whose logged value exists."""
    if logged is None:
        return {}
    out = {}
    for (s, h), q, idx in keys:
        ref = logged.get((s, h))
        if ref is None or ref[idx] is None:
            continue
        name = f"level {s} H={h} {q} (logged {ref[idx]:+.2f} ± {tol})"
        out[name] = interval_check(levels[(s, h)][q], ref[idx] - tol, ref[idx] + tol,
                                   what=name)
    return out


def _outcome(checks: dict, gate: str | None, measured: dict, descriptions: dict,
             threshold: str, size: str) -> Outcome:
    """Claim verdict from its interval checks: INCONCLUSIVE below the paper's size, otherwise
    the worst check (any FAIL -> FAIL, else any INCONCLUSIVE -> INCONCLUSIVE, else PASS)."""
    verdicts = [c["verdict"] for c in checks.values()]
    verdict = Verdict.INCONCLUSIVE if gate is not None else combine_verdicts(verdicts)
    measured = {**measured, "checks": checks,
                "failed": [k for k, c in checks.items() if c["verdict"] == "FAIL"],
                "undecided": [k for k, c in checks.items() if c["verdict"] == "INCONCLUSIVE"]}
    descriptions = {**descriptions,
                    "checks": f"each check: seed mean and {CONFIDENCE:.0%} Student-t interval "
                              "over seeds (paired by seed for differences) and its verdict",
                    "failed": "checks whose interval lies wholly on the wrong side",
                    "undecided": "checks whose interval straddles the threshold (inside the "
                                 "seed noise)"}
    seeds = max((c["seeds"] for c in checks.values()), default=0)
    measured["alpha_per_check"] = round(1.0 - CONFIDENCE, 6)
    descriptions["alpha_per_check"] = ("error rate of each check's interval (one look on a "
                                       "fixed seed count: the budget of these runs is episodes "
                                       "of an expensive training run, not cheap seeds)")
    stated = f"; {seeds} seeds, alpha {1.0 - CONFIDENCE:g} per check" if checks else ""
    if gate is not None:
        reading = combine_verdicts(verdicts).value if verdicts else "no check"
        reason = (f"size rule: {gate}; the checks alone would read {reading}, which this size "
                  "cannot support" + stated)
    else:
        n_fail, n_open = len(measured["failed"]), len(measured["undecided"])
        reason = (f"{len(checks)} interval checks: {n_fail} failed, {n_open} undecided"
                  if checks else "no check applies") + stated
    return Outcome(verdict, measured, threshold + _RULE, details=gate or "", size=size,
                   headline=list(measured)[:3], descriptions=descriptions, reason=reason)


def _diff(a, b, what):
    return _seeds(a, what) - _seeds(b, what)


def judge_h1_beats_h0(levels: Mapping, *, seeds: int, min_seeds: int, episodes=None,
                      min_episodes=None, logged=None, size: str = "") -> Outcome:
    """learning_h1_beats_h0: for every adversary, coop(last window, H = 1) > coop(last
    window, H = 0), judged on the paired per-seed differences (interval inside [0, inf)).

    ``levels``: ``(scenario, H) -> {"coop_last": per-seed values, ...}``; ``logged``: the
    authors' table (faithful variants: every coop_last within :data:`LEVEL_TOL`)."""
    checks, gains = {}, {}
    for s in ADVERSARIES:
        name = f"{s}: coop H=1 - H=0 > 0"
        checks[name] = interval_check(_diff(levels[(s, 1)]["coop_last"],
                                            levels[(s, 0)]["coop_last"], name), 0.0,
                                      what=name)
        gains[s] = checks[name]["mean"]
    checks.update(_level_checks(levels, logged, [((s, h), "coop_last", 1) for s in ADVERSARIES
                                                 for h in (0, 1)]))
    measured = {"min_gain_h1_minus_h0": min(gains.values()),
                **{f"{s}_coop_h0": _mean(levels[(s, 0)]["coop_last"]) for s in ADVERSARIES},
                **{f"{s}_coop_h1": _mean(levels[(s, 1)]["coop_last"]) for s in ADVERSARIES},
                "gain_h1_minus_h0": gains}
    desc = {"min_gain_h1_minus_h0": "min over adversaries of coop(H=1) - coop(H=0), last "
                                    "window, discounted return (seed mean)",
            "gain_h1_minus_h0": "per adversary (seed mean of the paired differences)"}
    for s in ADVERSARIES:
        desc[f"{s}_coop_h0"] = f"{s}: mean coop return, last window, H = 0"
        desc[f"{s}_coop_h1"] = f"{s}: mean coop return, last window, H = 1"
    return _outcome(checks, _gate(seeds, min_seeds, episodes, min_episodes), measured,
                    desc, "coop(H=1) - coop(H=0) > 0 for greedy, faulty and malicious (last "
                    f"window, paired by seed); faithful: levels within {LEVEL_TOL} of the logs",
                    size)


def judge_h0_stalls(levels: Mapping, *, seeds: int, min_seeds: int, episodes=None,
                    min_episodes=None, logged=None, logged_index=None, size: str = "") -> Outcome:
    """learning_h0_stalls: at H = 0 with a malicious or faulty agent, the per-seed coop gain
    coop(last) - coop(first) is <= :data:`COOP_NO_GAIN` and the adversary's gain is >=
    :data:`ADVERSARY_GAIN` (interval checks). ``logged_index``: positions of (coop first, coop
    last, adversary first, adversary last) in the logged tuples (v1 default)."""
    idx = logged_index or (0, 1, 2, 3)
    checks, measured, desc = {}, {}, {}
    for s in ("malicious", "faulty"):
        L = levels[(s, 0)]
        nc, na = f"{s}: coop gain <= {COOP_NO_GAIN}", f"{s}: adversary gain >= {ADVERSARY_GAIN}"
        checks[nc] = interval_check(_diff(L["coop_last"], L["coop_first"], nc),
                                    accept_hi=COOP_NO_GAIN, what=nc)
        checks[na] = interval_check(_diff(L["adversary_last"], L["adversary_first"], na),
                                    ADVERSARY_GAIN, what=na)
        measured[f"{s}_coop_gain"] = checks[nc]["mean"]
        measured[f"{s}_adversary_gain"] = checks[na]["mean"]
        desc[f"{s}_coop_gain"] = f"{s}, H = 0: coop return last window minus first window"
        desc[f"{s}_adversary_gain"] = f"{s}, H = 0: adversary return last minus first window"
    quantities = ("coop_first", "coop_last", "adversary_first", "adversary_last")
    checks.update(_level_checks(levels, logged, [((s, 0), q, i) for s in ("malicious", "faulty")
                                                 for q, i in zip(quantities, idx, strict=True)
                                                 if i is not None]))
    return _outcome(checks, _gate(seeds, min_seeds, episodes, min_episodes), measured,
                    desc, f"H = 0, malicious and faulty: coop gain <= {COOP_NO_GAIN} and "
                    f"adversary gain >= {ADVERSARY_GAIN}; faithful: levels within {LEVEL_TOL}",
                    size)


def judge_estimate(levels: Mapping, *, seeds: int, min_seeds: int, episodes=None,
                   min_episodes=None, logged=None, est_index: int = 4, size: str = "") -> Outcome:
    """learning_estimate_bias: malicious at H = 0: Est > 0 and Est - True >= :data:`EST_GAP`;
    every run at H = 1: |Est - True| < :data:`EST_TRACK` (last window; interval checks,
    Est - True paired within each seed)."""
    m = levels[("malicious", 0)]
    n_pos, n_gap = "malicious H=0: Est > 0", f"malicious H=0: Est - True >= {EST_GAP}"
    checks = {n_pos: interval_check(m["est_last"], 0.0, what=n_pos),
              n_gap: interval_check(_diff(m["est_last"], m["coop_last"], n_gap), EST_GAP,
                                    what=n_gap)}
    gaps = {}
    for s in SCENARIOS:
        L = levels[(s, 1)]
        name = f"{s} H=1: |Est - True| < {EST_TRACK}"
        checks[name] = interval_check(_diff(L["est_last"], L["coop_last"], name), -EST_TRACK,
                                      EST_TRACK, what=name)
        gaps[s] = checks[name]["mean"]
    checks.update(_level_checks(levels, logged, [(("malicious", 0), "est_last", est_index)]
                                + [((s, 1), "est_last", est_index) for s in SCENARIOS]))
    measured = {"malicious_h0_est": _mean(m["est_last"]),
                "malicious_h0_true": _mean(m["coop_last"]),
                "max_abs_gap_h1": max(abs(v) for v in gaps.values()), "gaps_h1": gaps}
    desc = {"malicious_h0_est": "malicious, H = 0: Est (mean cooperative V_i(s0)), last window",
            "malicious_h0_true": "malicious, H = 0: coop return, last window",
            "max_abs_gap_h1": "max over scenarios at H = 1 of |Est - True|, last window",
            "gaps_h1": "Est - True per scenario at H = 1 (seed mean)"}
    return _outcome(checks, _gate(seeds, min_seeds, episodes, min_episodes), measured,
                    desc, f"malicious H=0: Est > 0 and Est - True >= {EST_GAP}; H=1: "
                    f"|Est - True| < {EST_TRACK} everywhere; faithful: Est within {LEVEL_TOL}",
                    size)


def judge_cooperative_cost(levels: Mapping, *, seeds: int, min_seeds: int, episodes=None,
                           min_episodes=None, logged=None, size: str = "") -> Outcome:
    """learning_cooperative_cost: without adversary |coop(H = 1) - coop(H = 0)| <=
    :data:`COOP_COST`: the interval of the paired differences inside [-COOP_COST,
    COOP_COST]."""
    h0, h1 = levels[("cooperative", 0)]["coop_last"], levels[("cooperative", 1)]["coop_last"]
    name = f"|coop(H=1) - coop(H=0)| <= {COOP_COST}"
    checks = {name: interval_check(_diff(h1, h0, name), -COOP_COST, COOP_COST, what=name)}
    checks.update(_level_checks(levels, logged, [(("cooperative", h), "coop_last", 1)
                                                 for h in (0, 1)]))
    measured = {"cost_h0_minus_h1": -checks[name]["mean"], "coop_h0": _mean(h0),
                "coop_h1": _mean(h1)}
    desc = {"cost_h0_minus_h1": "all-cooperative: coop(H=0) - coop(H=1), last window",
            "coop_h0": "all-cooperative, H = 0: coop return, last window",
            "coop_h1": "all-cooperative, H = 1: coop return, last window"}
    return _outcome(checks, _gate(seeds, min_seeds, episodes, min_episodes), measured,
                    desc, f"|coop(H=1) - coop(H=0)| <= {COOP_COST} without adversary; "
                    f"faithful: levels within {LEVEL_TOL}", size)


def judge_oracle(oracle, private: Mapping, *, seeds: int, min_seeds: int, episodes=None,
                 min_episodes=None, logged_oracle=None, ties=ORACLE_TIES["v1"],
                 size: str = "") -> Outcome:
    """learning_oracle_upper: the oracle's coop return (cooperative agents given r_coop) is
    at least every listed private-reward run's (last window): per-seed paired differences
    oracle - private, each interval inside [0, inf) for PASS, wholly below 0 for FAIL.

    The runs named in ``ties`` learn from the same team average as the oracle (v1's
    all-cooperative H = 0 run: every agent cooperates and plain averaging keeps the consensus
    on the team mean), so they can only tie with it; for them the check is non-inferiority,
    oracle - run >= -:data:`ORACLE_TIE_MARGIN`, i.e. the interval inside
    [-margin, inf) (rule fixed on 2026-12-05, before the v2 runs at paper scale;
    :data:`ORACLE_TIES` per version).

    ``oracle``: per-seed last-window coop returns of the oracle run; ``private``: name ->
    per-seed values of the private-reward runs (same seeds)."""
    checks = {}
    for k, v in private.items():
        margin = ORACLE_TIE_MARGIN if k in ties else 0.0
        name = (f"oracle - {k} >= -{margin} (non-inferiority: same team average)" if margin
                else f"oracle - {k} >= 0")
        checks[name] = interval_check(_diff(oracle, v, name), -margin, what=name)
    if logged_oracle is not None:
        name = f"level oracle coop_last (logged {logged_oracle:+.2f} ± {LEVEL_TOL})"
        checks[name] = interval_check(oracle, logged_oracle - LEVEL_TOL,
                                      logged_oracle + LEVEL_TOL, what=name)
    measured = {"oracle_coop": _mean(oracle),
                "best_private": max(_mean(v) for v in private.values()),
                "private": {k: _mean(v) for k, v in private.items()}}
    desc = {"oracle_coop": "oracle run (cooperative scenario), coop return, last window",
            "best_private": "largest coop return of the private-reward runs compared",
            "private": "coop return, last window, per private-reward run"}
    return _outcome(checks, _gate(seeds, min_seeds, episodes, min_episodes), measured,
                    desc, "oracle - private >= 0 for every private-reward run (paired by "
                    "seed" + (f"; >= -{ORACLE_TIE_MARGIN} against {', '.join(ties)}, which "
                              "learns from the same team average" if ties else "")
                    + f"); faithful: oracle level within {LEVEL_TOL}", size)


def _mean(x) -> float:
    return round(float(np.mean(np.asarray(x, np.float64))), 4)


# ---------------------------------------------------------------------------------------------
# the shared runs
# ---------------------------------------------------------------------------------------------

def _label(cfg) -> str:
    return f"{cfg['version']}-{cfg['variant']}/{cfg['graph']}"


def experiment_runs(ctx: CheckContext) -> list[dict]:
    """Run (or fetch from this process's cache) the learning runs of ``ctx``'s size.

    Returns one dict per configuration: label, version, variant, graph, ``levels`` ((scenario,
    H) -> quantity -> per-seed window means of the private-reward runs), ``oracle`` (the same
    for the oracle runs), seeds, episodes, seconds. With ``ctx.out_dir`` the per-episode arrays
    are saved (``resilient_learning-<label>.npz`` / ``.json``, other sizes with a suffix:
    :func:`_size_suffix`) for the figures, and ``--full``
    runs are checkpointed in ``<out>/checkpoints/``: rerunning the same command after an
    interruption resumes them.
    """
    configs = FULL if ctx.full else QUICK
    out = []
    for cfg in configs:
        seeds = cfg["seeds"]
        if ctx.seeds is not None:
            base = (50, 100, 200, 500, 1000) if cfg["version"] == "v1" else (100, 200, 300)
            seeds = tuple(base[:ctx.seeds]) + tuple(range(2000, 2000 + max(0, ctx.seeds
                                                                            - len(base))))
        key = (_label(cfg), seeds, cfg["episodes"], ctx.base_seed)
        if key not in _CACHE:
            specs = SPECS_V1 if cfg["version"] == "v1" else SPECS_V2
            if seeds is not None and ctx.base_seed:
                seeds = tuple(s + ctx.base_seed for s in seeds)
            # --full runs take hours: they are checkpointed chunk by chunk under the output
            # folder, so an interrupted run resumes where it stopped (bit-identically)
            ckpt = None
            if ctx.full and ctx.out_dir is not None:
                tag = (f"resilient_learning-{_label(cfg).replace('/', '-')}"
                       f"-seeds{ctx.seeds or 'paper'}-base{ctx.base_seed}")
                ckpt = str(ctx.out_dir / "checkpoints" / tag)
            res = run_runs(specs, code_version=cfg["version"], variant=cfg["variant"],
                           graphs=cfg["graph"], seeds=seeds, episodes=cfg["episodes"],
                           progress=False, checkpoint_dir=ckpt)
            if ctx.out_dir is not None:
                from decentral.results import save_results
                name = _label(cfg).replace("/", "-") + _size_suffix(ctx)
                save_results(ctx.out_dir / f"resilient_learning-{name}",
                             {"coop_return": res.coop_return,
                              "adversary_return": res.adversary_return,
                              "estimate": res.estimate}, res.config)
            _CACHE[key] = _entry(res, cfg["variant"], cfg["graph"])
        out.append(_CACHE[key])
    return out


def _size_suffix(ctx: CheckContext) -> str:
    """The saved arrays of the paper-size runs are ``resilient_learning-<label>``; any other
    size gets a suffix, so a quick run never overwrites the hours-long ones."""
    return (("" if ctx.full else "-quick") + (f"-seeds{ctx.seeds}" if ctx.seeds else "")
            + (f"-base{ctx.base_seed}" if ctx.base_seed else ""))


def _entry(res, variant: str, graph: str) -> dict:
    """One configuration's result as the judges read it (see :func:`experiment_runs`)."""
    cfg = res.config
    version, E = cfg["version"], cfg["episodes_per_phase"]
    first, last = WINDOWS[version]
    lv = summary_levels(res, min(first, E // 3), min(last, E // 3))
    return {"label": f"{cfg['variant']}/{graph}", "version": version, "variant": variant,
            "graph": graph,
            "levels": {(s, h): v["per_seed"] for (s, h, o), v in lv.items() if not o},
            "oracle": {(s, h): v["per_seed"] for (s, h, o), v in lv.items() if o},
            "seeds": len(cfg["seeds"]), "episodes": E, "phases": cfg["phases"],
            "seconds": round(res.seconds, 1)}


def judge_saved(path) -> dict[str, Outcome]:
    """Re-judge the arrays a run saved (``<out>/resilient_learning-<label>`` without its
    ``.npz`` / ``.json`` suffix) with this module's rules, without rerunning: claim id ->
    :class:`~decentral.verify.Outcome` of that one configuration.

    Example: ``judge_saved("proofs_checks/out/resilient_learning-v1-corrected-paper")``.

    Raises:
        ValueError: not a saved learning run, a run with a custom attacker, or one lacking a
            (scenario, H, oracle) run of its version's experiment.
    """
    return _judge_runs([_load_saved(path)])


def _load_saved(path) -> dict:
    """The judges' view of a saved run (see :func:`judge_saved`), validated."""
    from decentral.resilient_ac.learning import ExperimentResult
    from decentral.results import load_results

    arrays, meta = load_results(path)
    cfg = meta.get("config", meta)
    missing = {"version", "variant", "graph", "seeds", "episodes_per_phase",
               "phases"} - set(cfg)
    if missing or set(ExperimentResult._fields[:3]) - set(arrays):
        raise ValueError(f"{path}: not a saved learning run of this module (config lacks "
                         f"{sorted(missing)} or arrays lack coop_return / adversary_return / "
                         "estimate).")
    if cfg.get("attacker") is not None:
        raise ValueError(f"{path}: run with the custom attacker {cfg['attacker']!r}; the "
                         "learning claims are about the paper's greedy, faulty and malicious "
                         "adversaries, so its numbers are not judged against them.")
    if cfg["version"] not in NEEDED:
        raise ValueError(f"{path}: unknown version {cfg['version']!r} (v1 or v2).")
    if cfg.get("grid"):
        raise ValueError(f"{path}: a run_grid result (one run per grid cell); the claims judge "
                         "run_runs results of the paper's experiment.")
    if int(cfg["phases"]) != default_phases(cfg["version"]):
        raise ValueError(f"{path}: {cfg['phases']} phase(s); the {cfg['version']} experiment "
                         f"has {default_phases(cfg['version'])}.")
    lacking = _lacking(cfg["version"], zip(map(str, cfg.get("scenarios", ())), cfg.get("H", ()),
                                           map(bool, cfg.get("oracle", ())), strict=False))
    if lacking:
        raise ValueError(f"{path}: the claims need every run of the {cfg['version']} "
                         f"experiment; this file lacks (scenario, H, oracle) {lacking}.")
    res = ExperimentResult(arrays["coop_return"], arrays["adversary_return"],
                           arrays["estimate"], config=cfg, seconds=0.0)
    variant = "faithful" if cfg["variant"].endswith("faithful") else "corrected"
    graph = cfg["graph"] if isinstance(cfg["graph"], str) else "custom"
    return _entry(res, variant, graph)


def _lacking(version: str, have) -> list[tuple]:
    """The (scenario, H, oracle) runs of ``version``'s experiment not among ``have``."""
    have = set(have)
    return [spec for spec in (SPECS_V1 if version == "v1" else SPECS_V2) if spec not in have]


def _judge_runs(runs: list[dict]) -> dict[str, Outcome]:
    return {f"resilient_ac.{name}": _combine(runs, judge) for name, judge in _JUDGES.items()}


_ENTRY_SCALARS = ("label", "version", "variant", "graph", "seeds", "episodes", "phases",
                  "seconds")


def export_levels(paths, out) -> None:
    """Write the per-seed window means the judges read, for the saved runs at ``paths`` (as
    :func:`judge_saved` takes them), to the small JSON file ``out``: the quoted verdicts of
    hours-long runs can then be re-derived with :func:`judge_levels` without the arrays."""
    import json

    records = []
    for path in paths:
        e = _load_saved(path)
        runs = [{"scenario": s, "H": h, "oracle": kind == "oracle",
                 **{q: [float(x) if np.isfinite(x) else None for x in np.asarray(v, float)]
                    for q, v in e[kind][(s, h)].items()}}
                for kind in ("levels", "oracle") for (s, h) in e[kind]]
        if any(r["label"] == e["label"] for r in records):
            raise ValueError(f"{path}: a second run of configuration {e['label']!r}; a levels "
                             "file holds each configuration once.")
        records.append({**{k: e[k] for k in _ENTRY_SCALARS}, "seconds": None, "runs": runs})
    with open(out, "w") as f:
        json.dump({"windows": WINDOWS, "configurations": records}, f, indent=1,
                  allow_nan=False)
        f.write("\n")


def judge_levels(path) -> dict[str, dict[str, Outcome]]:
    """Judge the per-seed window means written by :func:`export_levels`: configuration
    label (``"v1-corrected/paper"``) -> claim id -> :class:`~decentral.verify.Outcome`, with
    this module's rules."""
    import json

    with open(path) as f:
        data = json.load(f)
    windows = {k: tuple(v) for k, v in data.get("windows", {}).items()}
    if windows != WINDOWS:
        raise ValueError(f"{path}: window means over {windows}, but the claims use {WINDOWS}.")
    out = {}
    for rec in data["configurations"]:
        entry = {k: rec[k] for k in _ENTRY_SCALARS}
        entry["levels"], entry["oracle"] = {}, {}
        for run in rec["runs"]:
            vals = {q: np.asarray([np.nan if x is None else x for x in v], np.float64)
                    for q, v in run.items() if q not in ("scenario", "H", "oracle")}
            entry["oracle" if run["oracle"] else "levels"][(run["scenario"], run["H"])] = vals
        lacking = _lacking(rec["version"], [(s, h, False) for s, h in entry["levels"]]
                           + [(s, h, True) for s, h in entry["oracle"]])
        if lacking:
            raise ValueError(f"{path}: configuration {rec['label']!r} lacks (scenario, H, "
                             f"oracle) {lacking}.")
        out[rec["label"]] = _judge_runs([entry])
    return out


def _combine(runs: list[dict], judge) -> Outcome:
    """Judge every configuration with ``judge(run, logged, size kwargs)``; the claim's verdict
    is the worst of the configurations'."""
    parts = {}
    for r in runs:
        need_s, need_e = NEEDED[r["version"]]
        logged = (V1_LOGGED if r["version"] == "v1" else V2_LOGGED) \
            if r["variant"] == "faithful" else None
        size = (f"{r['label']}: {r['seeds']} seeds x {r['phases']} x {r['episodes']} "
                "episodes" + (f" ({r['seconds']} s)" if r["seconds"] else ""))
        parts[r["label"]] = judge(r, logged, dict(seeds=r["seeds"], min_seeds=need_s,
                                                 episodes=r["episodes"],
                                                 min_episodes=need_e, size=size))
    verdict = combine_verdicts([o.verdict for o in parts.values()])
    first = next(iter(parts.values()))
    measured = {f"{lab}: {k}": o.measured[k] for lab, o in parts.items()
                for k in o.headline}
    measured["per_configuration"] = {lab: {"verdict": str(o.verdict), **o.measured}
                                     for lab, o in parts.items()}
    desc = {f"{lab}: {k}": first.descriptions.get(k, k) for lab, o in parts.items()
            for k in o.headline}
    desc["per_configuration"] = "every configuration's verdict and numbers"
    details = " | ".join(f"{lab}: {o.verdict}" + (f" ({o.details})" if o.details else "")
                         for lab, o in parts.items())
    details += (" | The experiment graph is only 2-robust (not the 3-robust = 2H + 1 of the "
                "paper's hypothesis for H = 1); K5 (3-robust) runs under --full.")
    reason = " | ".join(f"{lab}: {o.verdict.value}, {o.reason}" for lab, o in parts.items())
    return Outcome(verdict, measured, first.threshold, details=details,
                   size="; ".join(o.size for o in parts.values()),
                   headline=list(measured)[:3], descriptions=desc, reason=reason)


def _v2_or_v1(r) -> tuple:
    return ("v2", (0, 1, None, None), 2) if r["version"] == "v2" else ("v1", (0, 1, 2, 3), 4)


def _run_h1_beats_h0(r, logged, kw):
    return judge_h1_beats_h0(r["levels"], logged=logged, **kw)


def _run_h0_stalls(r, logged, kw):
    _, idx, _ = _v2_or_v1(r)
    return judge_h0_stalls(r["levels"], logged=logged, logged_index=idx, **kw)


def _run_estimate(r, logged, kw):
    _, _, est_index = _v2_or_v1(r)
    return judge_estimate(r["levels"], logged=logged, est_index=est_index, **kw)


def _run_cooperative_cost(r, logged, kw):
    return judge_cooperative_cost(r["levels"], logged=logged, **kw)


def _run_oracle(r, logged, kw):
    L = r["levels"]
    private = {"cooperative H=0": L[("cooperative", 0)]["coop_last"],
               "cooperative H=1": L[("cooperative", 1)]["coop_last"],
               **{f"{s} H=1": L[(s, 1)]["coop_last"] for s in ADVERSARIES}}
    orc = r["oracle"][("cooperative", 0)]["coop_last"]
    ref = logged[("cooperative", 0)][3] if logged is V2_LOGGED else None
    return judge_oracle(orc, private, logged_oracle=ref, ties=ORACLE_TIES[r["version"]], **kw)


#: claim name -> judge of one configuration's runs
_JUDGES = {"learning_h1_beats_h0": _run_h1_beats_h0, "learning_h0_stalls": _run_h0_stalls,
           "learning_estimate_bias": _run_estimate,
           "learning_cooperative_cost": _run_cooperative_cost,
           "learning_oracle_upper": _run_oracle}


@claim("resilient_ac.learning_h1_beats_h0",
       statement="for every adversary type (greedy, faulty, malicious) the final cooperative "
                 "return with H = 1 exceeds that with H = 0 (plain averaging)",
       source=f"{FLL}, grid-world experiments (figures of returns per scenario and H); logged "
              f"levels in {DOCS}#logged-numbers",
       kind=Kind.STATISTICAL)
def _h1_beats_h0(ctx: CheckContext) -> Outcome:
    return _combine(experiment_runs(ctx), _run_h1_beats_h0)


@claim("resilient_ac.learning_h0_stalls",
       statement="with H = 0 and a malicious or faulty agent the cooperative returns do not "
                 "improve (or decline) while the adversary's return improves",
       source=f"{FLL}, grid-world experiments, H = 0 panels; {DOCS}#logged-numbers",
       kind=Kind.STATISTICAL)
def _h0_stalls(ctx: CheckContext) -> Outcome:
    return _combine(experiment_runs(ctx), _run_h0_stalls)


@claim("resilient_ac.learning_estimate_bias",
       statement="with H = 0 the cooperative critic's estimate Est diverges from the true "
                 "return (malicious: Est > 0 although every reward is <= 0); with H = 1 "
                 "|Est - True| < 0.8",
       source=f"{FLL}, grid-world experiments (Estimated vs True); {DOCS}#logged-numbers",
       kind=Kind.STATISTICAL)
def _estimate_bias(ctx: CheckContext) -> Outcome:
    return _combine(experiment_runs(ctx), _run_estimate)


@claim("resilient_ac.learning_cooperative_cost",
       statement="without adversary the resilient aggregation costs little: the final "
                 "cooperative return with H = 1 is within 0.15 of that with H = 0",
       source=f"{FLL}, grid-world experiments, all-cooperative panels; {DOCS}#logged-numbers",
       kind=Kind.STATISTICAL)
def _cooperative_cost(ctx: CheckContext) -> Outcome:
    return _combine(experiment_runs(ctx), _run_cooperative_cost)


@claim("resilient_ac.learning_oracle_upper",
       statement="the oracle run, whose cooperative agents receive the team reward r_coop "
                 "directly, is an upper reference: its final cooperative return is at least "
                 "that of the private-reward runs (cooperative at H = 0, 1; every adversary "
                 "at H = 1); in v1, where the all-cooperative H = 0 run learns from the same "
                 "team average, non-inferior to it (within 0.15)",
       source=f"{FLL}, grid-world experiments, 'True (global)' curves of the later code; "
              f"{DOCS}#logged-numbers",
       kind=Kind.STATISTICAL)
def _oracle_upper(ctx: CheckContext) -> Outcome:
    return _combine(experiment_runs(ctx), _run_oracle)


__all__ = ["interval_check", "judge_h1_beats_h0", "judge_h0_stalls", "judge_estimate",
           "judge_cooperative_cost", "judge_oracle", "experiment_runs", "judge_saved",
           "export_levels", "judge_levels",
           "SPECS_V1", "SPECS_V2", "QUICK", "FULL", "WINDOWS", "NEEDED", "CONFIDENCE"]
