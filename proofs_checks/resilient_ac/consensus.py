"""Claims about resilient aggregation and resilient consensus (Figura, Lin, Liu, Gupta,
arXiv:2111.06776; W-MSR and r-robustness of LeBlanc, Zhang, Koutsoukos, Sundaram, IEEE JSAC
31(4) 2013): the experiment graph's robustness, the aggregators' identities and hull property,
the projection identities, the batch output step, W-MSR invariance under every attacker, plain
averaging captured by one attacker, and the necessity example.

Every judge (``check_*``) takes explicit inputs — the graphs, the aggregator or step function,
the expected values — so the tests can plant a violation and see it FAIL. The environment facts
of the paper (its grid world's rewards and encodings) are checked with the actor-critic family,
not here. Definitions, derived values and derivations: ``docs/resilient.md``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np

import decentral.graphs as g
from decentral.resilient_ac import (
    AGGREGATORS,
    ResilientParams,
    constant,
    cooperative_spread,
    coordinate_extreme,
    huge,
    hull_violation,
    just_inside,
    projection_step,
    random_values,
    resilient_consensus,
    resilient_consensus_params,
    split_brain,
    switch_attacker,
    values_of,
    weighted_output_step,
)
from decentral.runner import run
from decentral.verify import (
    CheckContext,
    Kind,
    Outcome,
    Verdict,
    combine_verdicts,
    geometric_rate,
)
from proofs_checks.registry import claim

DOCS = "docs/resilient.md"
FLL = "Figura, Lin, Liu, Gupta, arXiv:2111.06776"
LEBLANC = "LeBlanc, Zhang, Koutsoukos, Sundaram, IEEE JSAC 31(4) 2013"

#: Relative tolerance of the exact checks (float64).
TOL = 1e-12


def experiment_graph() -> np.ndarray:
    """The paper's 5-agent experiment graph: agent i hears i+1, i+2, i+3 (mod 5)."""
    return g.circulant(5, [-1, -2, -3])


def _outside_count(adj: np.ndarray, S) -> list[int]:
    """For each i in S, |N_i \\ S| (in-neighbours outside S, self excluded) by direct count."""
    S = set(int(i) for i in S)
    return [sum(1 for j in range(adj.shape[0]) if j != i and adj[i, j] and j not in S)
            for i in sorted(S)]


def _is_witness(adj: np.ndarray, S1, S2, r: int) -> bool:
    """(S1, S2) disjoint, nonempty, neither r-reachable: a certificate of 'not r-robust'."""
    S1, S2 = set(S1), set(S2)
    return (bool(S1) and bool(S2) and not (S1 & S2)
            and max(_outside_count(adj, S1)) < r and max(_outside_count(adj, S2)) < r)


# ---------------------------------------------------------------------------------------------
# 1. the experiment graph's robustness
# ---------------------------------------------------------------------------------------------

def graph_fact_cases() -> list[tuple[str, str, np.ndarray, object]]:
    """``(name, property, adjacency, expected)``; property one of ``"r"`` (the largest r),
    ``"rs:r,s"`` ((r, s)-robust?), ``"witness:r"`` (a pair of sets, checked by direct count)."""
    E = experiment_graph()
    coop = E[:4, :4]
    K5 = g.complete(5)
    K5m = K5.copy()
    K5m[0, 1] = K5m[1, 0] = False
    cases: list[tuple[str, str, np.ndarray, object]] = [
        ("experiment graph: max r", "r", E, 2),
        ("experiment graph: {1,3},{2,4} witness not 3-robust", "witness:3", E,
         ({1, 3}, {2, 4})),
        ("experiment graph: not (3,1)-robust", "rs:3,1", E, False),
        ("experiment graph: (2,2)-robust = (F+1,F+1), F=1", "rs:2,2", E, True),
        ("cooperative subgraph (agent 4 removed): max r", "r", coop, 2),
        ("cooperative subgraph: not (2,2)-robust", "rs:2,2", coop, False),
        ("K5: max r", "r", K5, 3),
        ("K5 minus 0->1 and 1->0: max r", "r", K5m, 3),
    ]
    cases += [(f"experiment graph: (2,{s})-robust", f"rs:2,{s}", E, True) for s in range(1, 6)]
    return cases


def _fact(prop: str, adj: np.ndarray):
    if prop == "r":
        return g.r_robustness(adj)
    if prop.startswith("rs:"):
        r, s = (int(v) for v in prop[3:].split(","))
        return bool(g.is_rs_robust(adj, r, s))
    raise ValueError(f"unknown property {prop!r}")


def _in_degree_digraphs(n: int, d: int):
    """Every n-node digraph in which each agent hears exactly d of the others."""
    others = [[j for j in range(n) if j != i] for i in range(n)]
    for choice in itertools.product(*[list(itertools.combinations(o, d)) for o in others]):
        adj = np.eye(n, dtype=bool)
        for i, nbrs in enumerate(choice):
            adj[i, list(nbrs)] = True
        yield adj


def _k5_minus(edges) -> np.ndarray:
    adj = g.complete(5)
    for i, j in edges:
        adj[i, j] = False
    return adj


def check_graph_facts(cases, *, random_graphs: int = 60, seed: int = 0) -> Outcome:
    """Judge the listed facts (each computed by the library and compared with ``expected``;
    a witness pair is checked by counting in-neighbours directly), plus three families:

    * every 5-agent digraph with all in-degrees 3 (4^5 = 1024 of them) is exactly 2-robust,
      and no 5-agent digraph missing 4 of the 20 edges is 3-robust (so 3-robust 5-agent
      digraphs miss at most 3 edges), while some missing 3 are (K5 minus a directed 3-cycle);
    * on ``random_graphs`` random digraphs: r-robust with r >= 2 implies min in-degree >= r,
      and r <= ceil(n/2).
    """
    failures, table = [], {}
    for name, prop, adj, expected in cases:
        if prop.startswith("witness:"):
            r = int(prop.split(":")[1])
            S1, S2 = expected
            ok = _is_witness(adj, S1, S2, r)
            table[name] = {"outside_in_neighbours": [_outside_count(adj, S1),
                                                     _outside_count(adj, S2)],
                           "r": r, "certifies": ok}
        else:
            got = _fact(prop, adj)
            ok = got == expected
            table[name] = {"computed": got, "expected": expected}
        if not ok:
            failures.append(name)
    deg3 = [g.r_robustness(a) for a in _in_degree_digraphs(5, 3)]
    deg3_values = sorted(set(deg3))
    if deg3_values != [2]:
        failures.append(f"5-agent in-degree-3 digraphs have robustness {deg3_values}, not [2]")
    pairs = [(i, j) for i in range(5) for j in range(5) if i != j]
    missing4_robust = sum(g.is_r_robust(_k5_minus(e), 3) for e in itertools.combinations(pairs, 4))
    if missing4_robust:
        failures.append(f"{missing4_robust} 5-agent digraphs missing 4 edges are 3-robust")
    missing3_robust = sum(g.is_r_robust(_k5_minus(e), 3)
                          for e in itertools.combinations(pairs, 3))
    cycle = g.r_robustness(_k5_minus([(0, 1), (1, 2), (2, 0)]))
    if not missing3_robust or cycle != 3:
        failures.append(f"K5 minus the 3-cycle 0<-1<-2<-0 is {cycle}-robust, not 3 "
                        f"({missing3_robust} digraphs missing 3 edges are 3-robust)")
    rng = np.random.default_rng(seed)
    degree_violations, half_violations, seen = 0, 0, {}
    for _ in range(random_graphs):
        n = int(rng.integers(3, 11))
        adj = (rng.random((n, n)) < rng.uniform(0.3, 0.95)) | np.eye(n, dtype=bool)
        r = g.r_robustness(adj)
        seen[r] = seen.get(r, 0) + 1
        min_in = int((adj & ~np.eye(n, dtype=bool)).sum(axis=1).min())
        degree_violations += int(r >= 2 and min_in < r)
        half_violations += int(r > math.ceil(n / 2))
    if degree_violations or half_violations:
        failures.append(f"random graphs: {degree_violations} with min in-degree < r (r >= 2), "
                        f"{half_violations} with r > ceil(n/2)")
    checked = len(cases) + 4
    if failures:
        first, row = failures[0], table.get(failures[0], {})
        if "computed" in row:
            first += f" (computed {row['computed']}, expected {row['expected']})"
        elif "outside_in_neighbours" in row:
            first += (f" (outside in-neighbours {row['outside_in_neighbours']}, "
                      f"need all < {row['r']})")
        reason = f"{len(failures)} of {checked} facts failed; first: {first}"
    else:
        exp_r = table.get("experiment graph: max r", {}).get("computed")
        reason = (f"all {checked} facts hold exactly ({len(cases)} listed, 4 digraph families)"
                  + (f"; experiment graph max r = {exp_r}" if exp_r is not None else ""))
    return Outcome(
        verdict=Verdict.FAIL if failures else Verdict.PASS, reason=reason,
        measured={"facts_failed": len(failures), "facts_checked": len(cases) + 4,
                  "experiment_graph_r": table.get("experiment graph: max r", {}).get("computed"),
                  "cases": table, "in_degree_3_robustness": deg3_values,
                  "digraphs_missing_4_edges_3_robust": int(missing4_robust),
                  "digraphs_missing_3_edges_3_robust": int(missing3_robust),
                  "random_graph_robustness_counts": {str(k): v for k, v in sorted(seen.items())},
                  "failures": failures},
        headline=["facts_failed", "facts_checked", "experiment_graph_r"],
        descriptions={
            "facts_failed": "listed facts that did not hold (0 expected)",
            "facts_checked": "listed facts plus the four family checks",
            "experiment_graph_r": "largest r for which the experiment graph is r-robust",
            "in_degree_3_robustness": "distinct robustness values over the 1024 5-agent "
                                      "digraphs with every in-degree 3",
            "digraphs_missing_4_edges_3_robust": "of the C(20,4) = 4845 digraphs K5 minus 4 "
                                                 "edges, how many are 3-robust",
            "digraphs_missing_3_edges_3_robust": "of the C(20,3) = 1140 digraphs K5 minus 3 "
                                                 "edges, how many are 3-robust",
            "random_graph_robustness_counts": "robustness values seen on the random digraphs"},
        threshold="every fact exactly as stated (integers and booleans, no tolerance)",
        details="The experiment graph is 2-robust: below the (2H+1) = 3-robust hypothesis of "
                "the paper's theorem for H = 1; its cooperative subgraph is (H+1) = 2-robust, "
                "the weaker W-MSR condition for Byzantine agents.",
        size=f"{len(cases)} listed facts, 1024 + 4845 + 1140 small digraphs, "
             f"{random_graphs} random")


@claim("resilient_ac.experiment_graph_robustness",
       statement="the 5-agent experiment graph (i hears i+1, i+2, i+3) is 2-robust and not "
                 "3-robust (witness {1,3}, {2,4}), (2,s)-robust for s <= 5, not (3,1); its "
                 "cooperative subgraph is 2-robust, not (2,2); K5 is 3-robust, K5 minus "
                 "0<->1 too; r-robust (r >= 2) implies min in-degree >= r; r <= ceil(n/2)",
       source=f"{FLL}, experiment graph; definitions of {LEBLANC}; derived in "
              f"{DOCS}#experiment-graph",
       kind=Kind.EXACT)
def _experiment_graph_robustness(ctx: CheckContext) -> Outcome:
    return check_graph_facts(graph_fact_cases(), random_graphs=200 if ctx.full else 60,
                             seed=ctx.base_seed)


# ---------------------------------------------------------------------------------------------
# 2-3. aggregator identities and the hull property
# ---------------------------------------------------------------------------------------------

def reference_aggregate(name: str, values: np.ndarray, H: int) -> float:
    """Sort-based reference of one scalar aggregation; ``values`` are the real entries only,
    own value first."""
    v = np.asarray(values, np.float64)
    x0, nb = v[0], v[1:]
    K = v.size
    if name == "mean":
        return float(v.mean())
    if name == "wmsr":
        above = np.sort(nb[nb > x0])[::-1][H:]
        below = np.sort(nb[nb < x0])[H:]
        kept = np.concatenate([[x0], above, below, nb[nb == x0]])
        return float(kept.mean())
    if K < 2 * H + 1:
        return float(x0)
    s = np.sort(v)
    if name == "trimmed_mean":
        return float(s[H:K - H].mean())
    if name == "clipped_mean":
        lo, hi = min(s[H], x0), max(s[K - H - 1], x0)
        return float(np.clip(v, lo, hi).mean())
    raise ValueError(f"no reference for {name!r}")


#: Width of the gathered values in the random aggregator cases (real entries vary by mask).
K_CASES = 12


def _jitted(f: Callable) -> Callable:
    """``f(values, mask, H)`` compiled once per (shape, H): the cases share one width."""
    return jax.jit(f, static_argnums=2)


def _random_case(rng, K: int = K_CASES):
    """Gathered values [K] (own first) with ties and ±1e6 entries mixed in, and a mask with a
    random number of real entries (padding repeats the own value, as in a neighbour table)."""
    vals = rng.normal(size=K) * rng.choice([1.0, 100.0])
    pool = np.concatenate([vals, [1e6, -1e6]])
    vals = np.where(rng.random(K) < 0.25, rng.choice(pool, K), vals)   # ties and extremes
    mask = rng.random(K) < rng.uniform(0.05, 1.0)
    mask[0] = True
    vals = np.where(mask, vals, vals[0])                                # padding = own value
    return vals, mask


def check_aggregator_identities(aggregators: Mapping[str, Callable], *, num_cases: int = 400,
                                seed: int = 0, tol: float = TOL) -> Outcome:
    """Judge each aggregator ``f(values [K, ...], mask [K], H)`` against the sort-based
    reference (random scalar cases with ties, padding and ±1e6, H in 0..3), and the
    identities: H = 0 gives the mean of the real entries; permuting the neighbour entries
    (k >= 1) changes nothing; agg(a + c x) = a + c agg(x) for c > 0; element-wise over a
    trailing axis equals one coordinate at a time; W-MSR keeps the own value (all neighbours
    dropped gives x0; x0 always counts once in the average)."""
    rng = np.random.default_rng(seed)
    errs = {name: {"reference": 0.0, "h0_mean": 0.0, "permutation": 0.0, "affine": 0.0,
                   "elementwise": 0.0} for name in aggregators}
    compiled = {name: _jitted(f) for name, f in aggregators.items()}
    K = K_CASES
    for _ in range(num_cases):
        H = int(rng.integers(0, 4))
        vals, mask = _random_case(rng)
        scale = max(1.0, float(np.abs(vals[mask]).max()))
        perm = np.concatenate([[0], 1 + rng.permutation(K - 1)])
        a, c = rng.normal() * 10, float(rng.uniform(0.1, 10.0))
        other, _ = _random_case(rng)
        other = np.where(mask, other, other[0])
        stacked = np.stack([vals, other], axis=-1)
        for name, f in compiled.items():
            def agg(v, m, h, f=f):
                return np.asarray(f(jnp.asarray(v), jnp.asarray(m), h), np.float64)
            ref_name = name if name in AGGREGATORS else "wmsr"
            out = float(agg(vals, mask, H))
            e = errs[name]
            e["reference"] = max(e["reference"], abs(out - reference_aggregate(
                ref_name, vals[mask], H)) / scale)
            e["h0_mean"] = max(e["h0_mean"], abs(float(agg(vals, mask, 0)) -
                                                  vals[mask].mean()) / scale)
            e["permutation"] = max(e["permutation"],
                                   abs(float(agg(vals[perm], mask[perm], H)) - out) / scale)
            e["affine"] = max(e["affine"], abs(float(agg(a + c * vals, mask, H)) - (a + c * out))
                              / (abs(a) + c * scale))
            both = agg(stacked, mask, H)
            scale2 = max(scale, float(np.abs(other[mask]).max()))
            e["elementwise"] = max(e["elementwise"], float(np.abs(
                both - [out, float(agg(other, mask, H))]).max()) / scale2)
    own = {}
    if "wmsr" in aggregators:
        f = aggregators["wmsr"]
        # every neighbour strictly above x0 and H >= their count: all dropped, x0 returned
        v = jnp.array([0.25, 1.0, 2.0, 3.0])
        own["all_dropped"] = abs(float(f(v, None, 3)) - 0.25)
        # ties with x0 are never dropped: (x0 + x0 + 1) / 3 with one value above dropped
        v = jnp.array([0.5, 0.5, 1.0, 9.0])
        own["ties_kept"] = abs(float(f(v, None, 1)) - (0.5 + 0.5 + 1.0) / 3)
    worst = {name: max(e.values()) for name, e in errs.items()}
    bad = [n for n, w in worst.items() if not w <= tol] + \
        [k for k, w in own.items() if not w <= tol]
    overall = max(list(worst.values()) + list(own.values()))
    if bad:
        parts = [f"{n} ({max(errs[n], key=errs[n].get)} off by {worst[n]:.2g})" if n in errs
                 else f"W-MSR hand case {n} (off by {own[n]:.2g})" for n in bad]
        more = f" and {len(parts) - 2} more" if len(parts) > 2 else ""
        reason = (f"{len(bad)} of {len(worst) + len(own)} checks off by more than {tol:g}: "
                  f"{'; '.join(parts[:2])}{more}")
    else:
        reason = (f"all {len(worst)} aggregators match the reference and identities in "
                  f"{num_cases} cases (largest deviation {overall:.2g} <= {tol:g})")
    return Outcome(
        verdict=Verdict.FAIL if bad else Verdict.PASS, reason=reason,
        measured={"worst_relative_error": overall,
                  "aggregators": sorted(aggregators), "cases": num_cases,
                  "per_aggregator": errs, "own_value_cases": own, "failed": bad},
        headline=["worst_relative_error", "cases", "failed"],
        descriptions={
            "worst_relative_error": "largest deviation over every identity and aggregator, "
                                    "relative to max(1, max |value|)",
            "per_aggregator": "per identity: max relative deviation (reference: vs the "
                              "sort-based reference; h0_mean: H = 0 vs the mean; permutation "
                              "of neighbours; affine: a + c x; elementwise: two coordinates "
                              "at once vs one at a time)",
            "own_value_cases": "W-MSR hand cases: all neighbours dropped gives x0; ties with "
                               "x0 kept"},
        threshold=f"every deviation <= {tol:g} (float64 rounding)",
        size=f"{num_cases} random cases, {K_CASES} slots with 1..{K_CASES} real entries, "
             "H in 0..3, ties, padding and ±1e6")


@claim("resilient_ac.aggregator_identities",
       statement="H = 0 gives the mean for every aggregator; W-MSR keeps the own value; "
                 "permutation and tie-break invariance; agg(a + c x) = a + c agg(x) for c > 0; "
                 "the masked JAX aggregators equal a sort-based reference",
       source=f"W-MSR of {LEBLANC}; aggregation of {FLL}; rules in {DOCS}#aggregation-rules",
       kind=Kind.EXACT)
def _aggregator_identities(ctx: CheckContext) -> Outcome:
    aggs = {k: v for k, v in AGGREGATORS.items() if k != "mean"}
    return check_aggregator_identities(aggs, num_cases=2000 if ctx.full else 400,
                                       seed=ctx.base_seed)


def check_hull_property(aggregators: Mapping[str, Callable], *, num_adversarial: int | None = None,
                        num_cases: int = 400, seed: int = 0, tol: float = TOL) -> Outcome:
    """Judge: with at most H adversarial neighbour values (anything: ±1e6, random, just
    outside the honest range), the aggregate lies in [min, max] of the own value and the
    cooperative neighbour values. W-MSR for any number of neighbours; the others when the
    receiver holds at least 2H + 1 real values. ``num_adversarial`` (default: H, drawn per
    case) lets a test give H + 1 and see the rule break."""
    rng = np.random.default_rng(seed)
    worst = {name: 0.0 for name in aggregators}
    tried = {name: 0 for name in aggregators}
    outside = {name: 0 for name in aggregators}
    compiled = {name: _jitted(f) for name, f in aggregators.items()}
    for _ in range(num_cases):
        H = int(rng.integers(1, 4))
        K = int(rng.integers(2, K_CASES))
        vals = rng.normal(size=K)
        nadv = min(K - 1, H if num_adversarial is None else num_adversarial)
        adv = 1 + rng.choice(K - 1, size=nadv, replace=False)
        coop = np.ones(K, bool)
        coop[adv] = False
        lo, hi = vals[coop].min(), vals[coop].max()
        kind = rng.integers(0, 3)
        spread = hi - lo + 1.0
        attack = np.where(rng.random(nadv) < 0.5, 1.0, -1.0)
        vals[adv] = {0: attack * 1e6,
                     1: rng.uniform(-10, 10, nadv),
                     2: np.where(attack > 0, hi + 1e-3 * spread, lo - 1e-3 * spread)}[int(kind)]
        padded = np.concatenate([vals, np.full(K_CASES - K, vals[0])])
        mask = np.arange(K_CASES) < K
        for name, f in compiled.items():
            if name != "wmsr" and K < 2 * H + 1:
                continue
            out = float(f(jnp.asarray(padded), jnp.asarray(mask), H))
            tried[name] += 1
            viol = max(lo - out, out - hi, 0.0) / max(1.0, hi - lo)
            worst[name] = max(worst[name], viol)
            outside[name] += int(not viol <= tol)
    bad = [n for n, w in worst.items() if not w <= tol]
    if bad:
        reason = (", ".join(f"{n} outside the hull in {outside[n]} of {tried[n]} cases"
                            for n in bad)
                  + f" (worst {max(worst[n] for n in bad):.2g} > {tol:g}, relative to the range)")
    else:
        reason = (f"all {sum(tried.values())} aggregates (over {len(worst)} aggregators) inside "
                  f"the cooperative hull (largest violation {max(worst.values()):.2g} <= {tol:g})")
    return Outcome(
        verdict=Verdict.FAIL if bad else Verdict.PASS, reason=reason,
        measured={"worst_hull_violation": max(worst.values()), "per_aggregator": worst,
                  "cases_per_aggregator": tried, "cases_outside_hull": outside, "failed": bad},
        headline=["worst_hull_violation", "cases_per_aggregator", "failed"],
        descriptions={
            "worst_hull_violation": "largest distance of an aggregate outside [min, max] of the "
                                    "own and cooperative neighbour values, relative to "
                                    "max(1, range)",
            "cases_per_aggregator": "cases judged (trimmed and clipped means only with at "
                                    "least 2H + 1 values)",
            "cases_outside_hull": "cases whose aggregate left the hull by more than the "
                                  "tolerance (0 expected)"},
        threshold=f"violation <= {tol:g} for every aggregator and case",
        size=f"{num_cases} cases, H in 1..3, K in 2..11, "
             f"{'H' if num_adversarial is None else num_adversarial} adversarial values")


@claim("resilient_ac.hull_property",
       statement="with at most H adversarial neighbour values the W-MSR output lies in "
                 "[min, max] of the own and cooperative neighbour values; the same for the "
                 "trimmed and clipped means when at least 2H + 1 values are held",
       source=f"{LEBLANC} (W-MSR); for the trimmed and clipped means derived in "
              f"{DOCS}#hull-property",
       kind=Kind.EXACT)
def _hull_property(ctx: CheckContext) -> Outcome:
    aggs = {k: v for k, v in AGGREGATORS.items() if k != "mean"}
    return check_hull_property(aggs, num_cases=5000 if ctx.full else 1000, seed=ctx.base_seed)


# ---------------------------------------------------------------------------------------------
# 4-5. projection identities and the batch output step
# ---------------------------------------------------------------------------------------------

def check_projection_identities(step: Callable, *, num_cases: int = 200, seed: int = 0,
                                tol: float = TOL) -> Outcome:
    """Judge a projection step ``step(v_own, received [K, d], mask, phi, beta, H)`` on random
    cases: (a) v_new - v is parallel to phi; (b) phi^T v_new = W-MSR_H(phi^T v~^j) (reference
    aggregation); (c) H = 0 gives the mean of phi^T v~^j; (d) with v~^j = v^j + beta delta^j
    phi, the projected error of a cooperative j is delta^j + (v^j - v)^T phi / (beta ||phi||^2);
    (e) aggregating errors and aggregating predicted values give the same parameter."""
    rng = np.random.default_rng(seed)
    step = jax.jit(step, static_argnums=5)
    worst = {"parallel": 0.0, "prediction_is_wmsr": 0.0, "h0_average": 0.0,
             "error_form": 0.0, "error_vs_value_aggregation": 0.0}
    for _ in range(num_cases):
        d, K, H = int(rng.choice([2, 5])), int(rng.choice([3, 8])), int(rng.integers(0, 3))
        v = rng.normal(size=d)
        phi = rng.normal(size=d)
        beta = float(rng.uniform(0.01, 1.0))
        vj = v + rng.normal(size=(K, d))
        vj[0] = v
        delta = rng.normal(size=K)
        received = vj + beta * delta[:, None] * phi
        nbyz = min(H, K - 1)
        if nbyz:
            received[K - nbyz:] = rng.normal(size=(nbyz, d)) * 1e3
        new = np.asarray(step(jnp.asarray(v), jnp.asarray(received), None, jnp.asarray(phi),
                              beta, H), np.float64)
        scale = max(1.0, float(np.abs(received).max()) * float(np.abs(phi).max()))
        move = new - v
        resid = move - (move @ phi) / (phi @ phi) * phi
        worst["parallel"] = max(worst["parallel"], float(np.abs(resid).max()) / max(
            1.0, float(np.abs(move).max())))
        preds = received @ phi
        worst["prediction_is_wmsr"] = max(worst["prediction_is_wmsr"], abs(
            float(phi @ new) - reference_aggregate("wmsr", preds, H)) / scale)
        new0 = np.asarray(step(jnp.asarray(v), jnp.asarray(received), None, jnp.asarray(phi),
                               beta, 0), np.float64)
        worst["h0_average"] = max(worst["h0_average"], abs(float(phi @ new0) - preds.mean())
                                  / scale)
        e = (received - v) @ phi / (beta * (phi @ phi))
        e_form = delta + (vj - v) @ phi / (beta * (phi @ phi))
        coop = slice(0, K - nbyz)
        worst["error_form"] = max(worst["error_form"], float(np.abs(
            e[coop] - e_form[coop]).max()) / max(1.0, float(np.abs(e_form).max())))
        by_value = v + (reference_aggregate("wmsr", preds, H) - phi @ v) / (phi @ phi) * phi
        worst["error_vs_value_aggregation"] = max(worst["error_vs_value_aggregation"], float(
            np.abs(new - by_value).max()) / max(1.0, float(np.abs(by_value).max()),
                                                 scale / float(phi @ phi)))
    bad = [k for k, w in worst.items() if not w <= tol * 100]
    if bad:
        ranked = sorted(bad, key=lambda k: -worst[k] if worst[k] == worst[k] else -math.inf)
        more = f" and {len(ranked) - 3} more" if len(ranked) > 3 else ""
        reason = (f"{len(bad)} of {len(worst)} identities off by more than {tol * 100:g}: "
                  + ", ".join(f"{k} {worst[k]:.2g}" for k in ranked[:3]) + more)
    else:
        top = max(worst, key=worst.get)
        reason = (f"all {len(worst)} identities hold in {num_cases} cases (largest deviation "
                  f"{worst[top]:.2g} in {top}, <= {tol * 100:g})")
    return Outcome(
        verdict=Verdict.FAIL if bad else Verdict.PASS, reason=reason,
        measured={"worst": max(worst.values()), **worst, "failed": bad},
        headline=["worst", "prediction_is_wmsr", "parallel"],
        descriptions={
            "worst": "largest relative deviation over the five identities",
            "parallel": "component of v_new - v orthogonal to phi, relative to |v_new - v|",
            "prediction_is_wmsr": "|phi^T v_new - W-MSR_H(phi^T v~^j)| relative to the "
                                  "largest prediction",
            "h0_average": "H = 0: |phi^T v_new - mean_j phi^T v~^j| (relative)",
            "error_form": "cooperative j: |e^{ij} - delta^j - (v^j - v^i)^T phi / "
                          "(beta ||phi||^2)| (relative)",
            "error_vs_value_aggregation": "|v_new - (v + (W-MSR(phi^T v~) - phi^T v) phi / "
                                          "||phi||^2)| (relative)"},
        threshold=f"every deviation <= {tol * 100:g} (float64; divisions by ||phi||^2 and "
                  "beta amplify rounding, hence 100x the aggregators' tolerance)",
        size=f"{num_cases} random cases, d in {{2, 5}}, K in {{3, 8}}, H in 0..2 with H messages "
             "of size ~1e3 from Byzantine senders")


@claim("resilient_ac.projection_identities",
       statement="the projection-based step moves v along phi only; phi^T v_{t+1} = "
                 "W-MSR_H(phi^T v~^j); H = 0 gives the neighbour average; e^{ij} = delta^j + "
                 "(v^j - v^i)^T phi / (beta ||phi||^2) for cooperative j; aggregating errors "
                 "and aggregating values agree",
       source=f"{FLL}, resilient projection-based consensus (our reconstruction); derived in "
              f"{DOCS}#projection-based-step",
       kind=Kind.EXACT)
def _projection_identities(ctx: CheckContext) -> Outcome:
    return check_projection_identities(projection_step, num_cases=1000 if ctx.full else 200,
                                       seed=ctx.base_seed)


def check_batch_output_step(step: Callable, *, num_cases: int = 200, seed: int = 0,
                            tol: float = 1e-10) -> Outcome:
    """Judge ``step(w [d+1], features [B, d], targets [B], lr)``: with B = 1 the new
    prediction [phi; 1]^T w_new equals the target for any lr; with B > 1 the step equals
    (1/B) sum_b (y*_b - y_b) [phi_b; 1] / (||phi_b||^2 + 1)."""
    rng = np.random.default_rng(seed)
    single, batch = 0.0, 0.0
    step = jax.jit(step)
    for _ in range(num_cases):
        d = int(rng.choice([1, 3, 7]))
        w = rng.normal(size=d + 1)
        lr = float(10 ** rng.uniform(-4, 0))
        phi = rng.normal(size=(1, d)) * rng.choice([0.1, 1.0, 10.0])
        y = rng.normal(size=1) * 5
        new = np.asarray(step(jnp.asarray(w), jnp.asarray(phi), jnp.asarray(y), lr))
        pred = float(np.append(phi[0], 1.0) @ new)
        single = max(single, abs(pred - y[0]) / max(1.0, abs(y[0])))
        B = int(rng.choice([2, 5]))
        feats = rng.normal(size=(B, d))
        ys = rng.normal(size=B)
        aug = np.concatenate([feats, np.ones((B, 1))], axis=1)
        want = w + ((ys - aug @ w) / (aug * aug).sum(1)) @ aug / B
        got = np.asarray(step(jnp.asarray(w), jnp.asarray(feats), jnp.asarray(ys), lr))
        batch = max(batch, float(np.abs(got - want).max()) / max(1.0, float(np.abs(w).max())))
    ok = single <= tol and batch <= tol
    if ok:
        reason = (f"B = 1 prediction within {single:.2g} of the target and batch step within "
                  f"{batch:.2g} of the formula in {num_cases} cases (<= {tol:g})")
    else:
        parts = ([f"B = 1 prediction off the target by {single:.2g}"] if not single <= tol
                 else []) + ([f"batch step off the formula by {batch:.2g}"]
                             if not batch <= tol else [])
        reason = " and ".join(parts) + f" (relative; tolerance {tol:g}, {num_cases} cases)"
    return Outcome(
        verdict=Verdict.PASS if ok else Verdict.FAIL, reason=reason,
        measured={"single_sample_gap": single, "batch_formula_gap": batch},
        descriptions={
            "single_sample_gap": "B = 1: |prediction after the step - target|, relative to "
                                 "max(1, |target|)",
            "batch_formula_gap": "B > 1: max |w_new - (w + mean_b (y*_b - y_b) [phi_b; 1] / "
                                 "(||phi_b||^2 + 1))| relative to max(1, |w|)"},
        threshold=f"both gaps <= {tol:g} (float64; lr from 1e-4 to 1 enters as lr / lr)",
        size=f"{num_cases} random cases, d in {{1, 3, 7}}, B in {{2, 5}}")


@claim("resilient_ac.batch_output_step",
       statement="one SGD step on the output layer with per-sample weights "
                 "1 / (2 lr (||phi||^2 + 1)) and batch size 1 puts the prediction on the target",
       source=f"{FLL}, the experiments' batch critic / team-reward update (as in the authors' "
              f"code); derived in {DOCS}#batch-output-step",
       kind=Kind.EXACT)
def _batch_output_step(ctx: CheckContext) -> Outcome:
    return check_batch_output_step(weighted_output_step, num_cases=1000 if ctx.full else 200,
                                   seed=ctx.base_seed)


# ---------------------------------------------------------------------------------------------
# 6. W-MSR invariance under every attacker
# ---------------------------------------------------------------------------------------------

def attack_suite(vector: bool) -> dict:
    """The attackers the invariance claim runs (names as in the report)."""
    suite = {"constant_10": constant(10.0), "constant_minus_1e6": constant(-1e6),
             "huge_1e6": huge(1e6), "random_pm10": random_values(-10.0, 10.0),
             "just_inside_top": just_inside(1.0), "just_inside_bottom": just_inside(-1.0),
             "split_brain_1e6": split_brain(1e6), "split_brain_inside": split_brain(inside=True)}
    if vector:
        suite["coordinate_extreme"] = coordinate_extreme(jnp.array([1.0, -1.0, 1.0]))
    return suite


def invariance_cases() -> list[tuple[str, np.ndarray, int, list[int]]]:
    """``(name, adjacency, H, byzantine)``: graphs meeting the hypothesis (at most H Byzantine
    in-neighbours per cooperative agent, cooperative subgraph (H+1)-robust)."""
    return [("K5, H=1, Byzantine {4}", g.complete(5), 1, [4]),
            ("experiment graph, H=1, Byzantine {4}", experiment_graph(), 1, [4]),
            ("K9, H=2, Byzantine {7,8}", g.complete(9), 2, [7, 8])]


def _hypothesis_holds(adj, H, byz) -> tuple[bool, str]:
    n = adj.shape[0]
    coop = np.setdiff1d(np.arange(n), byz)
    off = adj & ~np.eye(n, dtype=bool)
    nbyz = int(off[np.ix_(coop, byz)].sum(axis=1).max()) if len(byz) else 0
    rc = g.r_robustness(adj[np.ix_(coop, coop)])
    ok = nbyz <= H and rc >= H + 1
    return ok, f"max Byzantine in-neighbours {nbyz} (H = {H}), cooperative subgraph {rc}-robust"


def _run_values(adj, H, byz, attacker, x0, seeds, T, aggregator="wmsr"):
    alg = resilient_consensus(adj, H, byz, attacker, aggregator=aggregator, check=False)
    res = run(alg, resilient_consensus_params(jnp.asarray(x0)), list(seeds), T, record_fn=values_of,
              record_initial=True, progress=False)
    return np.asarray(res.records, np.float64)                       # [S, T+1, N, ...]


def _leading_span(curve: np.ndarray, floor: float) -> int:
    """Length of the leading stretch of ``curve`` above ``floor`` (the window of a rate fit)."""
    below = np.flatnonzero(~(curve > floor))
    return int(below[0]) if below.size else int(curve.size)


def _run_attacks(adj, H, byz, attackers: Sequence, x0, seeds, T, aggregator="wmsr"):
    """``[A, S, T+1, N, ...]``: every attacker of the list from the same ``x0``, swept in one
    compile (:func:`~decentral.resilient_ac.switch_attacker`)."""
    sw = switch_attacker(list(attackers))
    A = len(attackers)
    alg = resilient_consensus(adj, H, byz, sw, aggregator=aggregator, check=False)
    x0 = jnp.asarray(x0)
    each = jax.tree_util.tree_map(lambda v: jnp.broadcast_to(v, (A,) + jnp.shape(v)),
                                  sw.params["each"])
    params = ResilientParams(jnp.broadcast_to(x0, (A,) + x0.shape),
                             {"which": jnp.arange(A, dtype=jnp.int32), "each": each})
    res = run(alg, params, list(seeds), T, record_fn=values_of, record_initial=True,
              sweep=True, progress=False)
    return np.asarray(res.records, np.float64)


def _invariance_reason(runs: Sequence[Mapping], contrast_viol: float | None, tol: float) -> str:
    """One line on the runs of :func:`check_wmsr_invariance` (rows without the contrast):
    what broke (hull, contraction, contrast), or the margins when nothing did."""
    n = len(runs)
    left = [r["hull_violation"] for r in runs if not r["hull_violation"] <= tol]
    kept = [r["final_spread_ratio"] for r in runs if not r["final_spread_ratio"] <= 1e-9]
    contrast_bad = contrast_viol is not None and not contrast_viol > 1.0
    parts = []
    if left:
        parts.append(f"{len(left)} of {n} runs leave the hull (by up to {max(left):.2g} > "
                     f"{tol:g})")
    if kept:
        parts.append(f"{len(kept)} of {n} runs keep spread(T)/spread(0) above 1e-9 (up to "
                     f"{max(kept):.2g})")
    if contrast_bad:
        parts.append(f"the contrast run stays within {contrast_viol:.2g} of the hull (needs > 1)")
    if parts:
        return "; ".join(parts)
    worst_v = max(r["hull_violation"] for r in runs)
    worst_f = max(r["final_spread_ratio"] for r in runs)
    return (f"all {n} runs inside the hull (max violation {worst_v:.2g}), spread(T)/spread(0) "
            f"<= {worst_f:.2g}" + ("" if contrast_viol is None else
                                   f"; the contrast leaves the hull by {contrast_viol:.2g}"))


def check_wmsr_invariance(cases, attackers: Mapping[str, object], *, seeds: Sequence[int],
                          num_steps: int, contrast=None, dim: int = 1, seed: int = 0,
                          tol: float = TOL, aggregator="wmsr") -> Outcome:
    """Judge: in every case (a graph that meets the hypothesis) and under every attacker, the
    cooperative values stay in [min, max] of the cooperative initial values at every step
    (per coordinate; relative tolerance ``tol``), and the cooperative spread at the horizon is
    below 1e-9 of the initial one (it contracts geometrically; the rate is reported).
    ``contrast`` = (name, adjacency, H, byzantine, attacker): a graph that breaks the
    hypothesis, where the same rule must leave the hull (the hypothesis is needed)."""
    rng = np.random.default_rng(seed)
    rows, bad, hyp_failed = {}, [], []
    for name, adj, H, byz in cases:
        ok, why = _hypothesis_holds(adj, H, byz)
        if not ok:
            hyp_failed.append(f"{name}: {why}")
        n = adj.shape[0]
        x0 = rng.uniform(-1.0, 1.0, size=(n, dim) if dim > 1 else n)
        coop = np.ones(n, bool)
        coop[byz] = False
        runs = _run_attacks(adj, H, byz, list(attackers.values()), x0, seeds, num_steps,
                            aggregator)
        for aname, xs in zip(attackers, runs, strict=True):
            viol = float(hull_violation(xs, x0, coop, agent_axis=2).max())
            sp = cooperative_spread(xs, coop, agent_axis=2)                # [S, T+1]
            final = float(sp[:, -1].max() / sp[:, 0].max())
            curve = sp.mean(axis=0)
            span = _leading_span(curve, 1e-13 * curve[0])
            rate = None
            if span >= 4:
                rate = geometric_rate(np.arange(span), curve[:span], n_boot=200).rate_per_step
            rows[f"{name} / {aname}"] = {"hull_violation": viol, "final_spread_ratio": final,
                                         "spread_rate": rate}
            if not (viol <= tol) or not (final <= 1e-9):
                bad.append(f"{name} / {aname}")
    contrast_viol = None
    if contrast is not None:
        cname, adj, H, byz, att = contrast
        n = adj.shape[0]
        x0 = rng.uniform(-1.0, 1.0, size=n)
        coop = np.ones(n, bool)
        coop[byz] = False
        xs = _run_values(adj, H, byz, att, x0, seeds, num_steps, aggregator)
        contrast_viol = float(hull_violation(xs, x0, coop, agent_axis=2).max())
        rows[f"contrast: {cname}"] = {"hull_violation": contrast_viol}
        if not contrast_viol > 1.0:
            bad.append(f"contrast {cname} stayed in the hull")
    worst_v = max(r["hull_violation"] for k, r in rows.items() if not k.startswith("contrast"))
    worst_f = max(r["final_spread_ratio"] for r in rows.values() if "final_spread_ratio" in r)
    rates = [r["spread_rate"] for r in rows.values() if r.get("spread_rate") is not None]
    reason = _invariance_reason([r for k, r in rows.items() if not k.startswith("contrast")],
                                contrast_viol, tol)
    return Outcome(
        verdict=Verdict.FAIL if bad else Verdict.PASS, reason=reason,
        measured={"worst_hull_violation": worst_v, "worst_final_spread_ratio": worst_f,
                  "contrast_hull_violation": contrast_viol,
                  "slowest_spread_rate": max(rates) if rates else None,
                  "runs": rows, "failed": bad},
        headline=["worst_hull_violation", "worst_final_spread_ratio", "contrast_hull_violation"],
        descriptions={
            "worst_hull_violation": "max over cases, attackers, seeds, steps, cooperative "
                                    "agents and coordinates of the distance outside the "
                                    "cooperative initial range (values in [-1, 1])",
            "worst_final_spread_ratio": "max over runs of the cooperative spread at T over "
                                        "the spread at t = 0",
            "contrast_hull_violation": "the same rule with more than H Byzantine "
                                       "in-neighbours: distance outside the hull (expected "
                                       "large)",
            "slowest_spread_rate": "largest fitted per-step contraction factor of the mean "
                                   "spread (down to 1e-13 of the initial one)"},
        threshold=f"hull violation <= {tol:g} at every step and spread(T) <= 1e-9 spread(0) "
                  "in every run; the contrast run must leave the hull by more than 1",
        hypotheses_failed=hyp_failed,
        size=f"{len(cases)} graphs x {len(attackers)} attackers, seeds={len(seeds)}, "
             f"T={num_steps}, values in R^{dim}")


@claim("resilient_ac.wmsr_invariance",
       statement="with at most H Byzantine in-neighbours per cooperative agent and an "
                 "(H+1)-robust cooperative subgraph, for any messages (constant, ±1e6, "
                 "random, just inside the range, equivocating, per-coordinate extremes) every "
                 "cooperative value stays in the cooperative initial range at every t and the "
                 "spread tends to 0; with two Byzantine in-neighbours and H = 1 it fails",
       source=f"{LEBLANC}, Theorems 1-2 (W-MSR under F-local Byzantine agents); {FLL}, "
              f"resilient consensus step; attackers in {DOCS}#attackers",
       kind=Kind.EXACT)
def _wmsr_invariance(ctx: CheckContext) -> Outcome:
    seeds = list(range(ctx.base_seed, ctx.base_seed + ctx.seed_count(4, 16)))
    T = 300 if ctx.full else 120
    contrast = ("K5, H=1, Byzantine {3,4} (two per agent), both send 1e6", g.complete(5), 1,
                [3, 4], constant(1e6))
    scalar = check_wmsr_invariance(invariance_cases(), attack_suite(False), seeds=seeds,
                                   num_steps=T, contrast=contrast, seed=ctx.base_seed)
    vector = check_wmsr_invariance(invariance_cases(), attack_suite(True), seeds=seeds,
                                   num_steps=T, dim=3, seed=ctx.base_seed + 1)
    verdict = combine_verdicts([scalar.verdict, vector.verdict])
    m = scalar.measured
    runs = [r for k, r in m["runs"].items() if not k.startswith("contrast")] + \
        list(vector.measured["runs"].values())
    return Outcome(
        verdict=verdict, reason=_invariance_reason(runs, m["contrast_hull_violation"], TOL),
        measured={"worst_hull_violation": max(m["worst_hull_violation"],
                                              vector.measured["worst_hull_violation"]),
                  "worst_final_spread_ratio": max(m["worst_final_spread_ratio"],
                                                  vector.measured["worst_final_spread_ratio"]),
                  "contrast_hull_violation": m["contrast_hull_violation"],
                  "slowest_spread_rate": max(r for r in (m["slowest_spread_rate"],
                                                         vector.measured["slowest_spread_rate"])
                                             if r is not None),
                  "scalar_runs": m["runs"], "vector_runs": vector.measured["runs"],
                  "failed": m["failed"] + vector.measured["failed"]},
        headline=["worst_hull_violation", "worst_final_spread_ratio", "contrast_hull_violation"],
        descriptions={**scalar.descriptions,
                      "scalar_runs": "per graph / attacker, scalar values",
                      "vector_runs": "per graph / attacker, values in R^3 (element-wise W-MSR; "
                                     "the per-coordinate-extreme attack added)"},
        threshold=scalar.threshold,
        hypotheses_failed=scalar.hypotheses_failed + vector.hypotheses_failed,
        details="The experiment graph is only 2-robust (not the 3-robust of the paper's "
                "hypothesis for H = 1) but its cooperative subgraph is 2-robust and each "
                "cooperative agent has at most one Byzantine in-neighbour, the W-MSR "
                "condition for Byzantine agents.",
        size=f"{scalar.size}; and values in R^3 with the per-coordinate attack")


# ---------------------------------------------------------------------------------------------
# 7. plain averaging is captured by one attacker
# ---------------------------------------------------------------------------------------------

def cooperative_block(adj: np.ndarray, byz: Sequence[int]) -> np.ndarray:
    """The cooperative block W_cc of plain averaging (each agent averages itself and its
    in-neighbours uniformly): x_c(t+1) - c 1 = W_cc (x_c(t) - c 1) when the Byzantine agents
    always send c."""
    W = g.row_stochastic(adj)
    coop = np.setdiff1d(np.arange(adj.shape[0]), byz)
    return W[np.ix_(coop, coop)]


def check_average_captured(adj, byz, value: float, *, seeds, num_steps: int, seed: int = 0,
                           aggregator="mean", H: int = 0, tol: float = 1e-9) -> Outcome:
    """Judge: plain averaging with one Byzantine agent always sending ``value`` drives every
    cooperative value to ``value``: max |x_i(T) - value| / |value| <= ``tol``, and the fitted
    per-step rate of the error agrees with the spectral radius of W_cc to 1e-3."""
    n = adj.shape[0]
    coop = np.ones(n, bool)
    coop[list(byz)] = False
    x0 = np.random.default_rng(seed).uniform(-1.0, 1.0, n)
    xs = _run_values(adj, H, list(byz), constant(value), x0, seeds, num_steps, aggregator)
    err = np.abs(xs[:, :, coop] - value).max(axis=2) / abs(value)          # [S, T+1]
    final = float(err[:, -1].max())
    rho = float(np.abs(np.linalg.eigvals(cooperative_block(adj, byz))).max())
    curve = err.mean(axis=0)
    span = _leading_span(curve, max(1e-13, 1e-12 * curve[0]))
    if span >= 8:
        half = span // 2
        rate = geometric_rate(np.arange(half, span), curve[half:span], n_boot=200).rate_per_step
    else:
        rate = None
    rate_ok = rate is not None and abs(rate - rho) <= 1e-3
    captured = final <= tol
    verdict = Verdict.PASS if captured and rate_ok else Verdict.FAIL if not captured else \
        Verdict.INCONCLUSIVE
    if not captured:
        reason = (f"not captured: cooperative values still {final:.2g} (relative) from c = "
                  f"{value:.3g} at T (tolerance {tol:g})")
    elif rate is None:
        reason = (f"captured (relative error {final:.2g} <= {tol:g}) but only {span} steps above "
                  "the floor: too few to fit the rate")
    elif rate_ok:
        reason = (f"captured: relative error {final:.2g} <= {tol:g} at T; fitted rate "
                  f"{rate:.4g} matches rho(W_cc) = {rho:.4g} (gap {abs(rate - rho):.2g} <= 1e-3)")
    else:
        reason = (f"captured (relative error {final:.2g} <= {tol:g}) but fitted rate {rate:.4g} "
                  f"differs from rho(W_cc) = {rho:.4g} by {abs(rate - rho):.2g} > 1e-3")
    return Outcome(
        verdict=verdict, reason=reason,
        measured={"final_relative_error": final, "fitted_rate": rate, "rho_W_cc": rho,
                  "attack_value": value},
        descriptions={
            "final_relative_error": "max over seeds and cooperative agents of |x_i(T) - c| / "
                                    "|c|",
            "fitted_rate": "per-step geometric rate of the mean error (second half of the "
                           "window above 1e-12)",
            "rho_W_cc": "spectral radius of the cooperative block of plain averaging (the "
                        "predicted rate)",
            "attack_value": "c, what the Byzantine agent always sends"},
        threshold=f"relative error <= {tol:g} at T and |fitted rate - rho(W_cc)| <= 1e-3 "
                  "(INCONCLUSIVE when captured but the rate cannot be fitted)",
        size=f"N={n}, Byzantine {list(byz)}, T={num_steps}, seeds={len(list(seeds))}")


@claim("resilient_ac.plain_average_captured",
       statement="without trimming (H = 0, plain averaging) one Byzantine agent always "
                 "sending c = 1e6 on the experiment graph drives every cooperative value to c "
                 "(geometrically, at the rate rho(W_cc))",
       source=f"{FLL}, motivation of resilient consensus; rate derived in "
              f"{DOCS}#plain-averaging-captured",
       kind=Kind.EXACT)
def _plain_average_captured(ctx: CheckContext) -> Outcome:
    seeds = list(range(ctx.base_seed, ctx.base_seed + ctx.seed_count(2, 8)))
    return check_average_captured(experiment_graph(), [4], 1e6, seeds=seeds,
                                  num_steps=250 if ctx.full else 150, seed=ctx.base_seed)


# ---------------------------------------------------------------------------------------------
# 8. necessity: two clusters that never agree
# ---------------------------------------------------------------------------------------------

def two_clusters() -> np.ndarray:
    """Two 3-cliques {0,1,2} and {3,4,5}; agent i < 3 also hears i + 3, agent j >= 3 hears
    j - 3: each agent has exactly one in-neighbour in the other cluster."""
    adj = np.zeros((6, 6), bool)
    adj[:3, :3] = True
    adj[3:, 3:] = True
    for i in range(3):
        adj[i, i + 3] = adj[i + 3, i] = True
    return adj


def check_necessity(adj, x0, H: int, *, num_steps: int, consensus_graphs, seeds,
                    seed: int = 0) -> Outcome:
    """Judge: on ``adj`` (not 2-robust) W-MSR with ``H`` and no adversary never changes the
    values ``x0`` (max change 0 exactly), while on each of ``consensus_graphs`` (name ->
    adjacency, 2-robust or more) the same rule reaches consensus from random values (spread
    at T below 1e-9 of the initial one)."""
    r = g.r_robustness(adj)
    xs = _run_values(adj, H, [], None, np.asarray(x0, np.float64), seeds[:1], num_steps)
    change = float(np.abs(xs - np.asarray(x0)).max())
    rng = np.random.default_rng(seed)
    spreads = {}
    for name, other in consensus_graphs.items():
        n = other.shape[0]
        y0 = rng.uniform(0.0, 1.0, n)
        ys = _run_values(other, H, [], None, y0, seeds, num_steps)
        sp = cooperative_spread(ys, np.ones(n, bool), agent_axis=2)
        spreads[name] = {"final_spread_ratio": float(sp[:, -1].max() / sp[:, 0].max()),
                         "robustness": g.r_robustness(other)}
    frozen = change == 0.0
    agree = all(s["final_spread_ratio"] <= 1e-9 for s in spreads.values())
    worst = max(s["final_spread_ratio"] for s in spreads.values())
    if frozen and agree and r < 2:
        names = list(spreads)
        names = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
        reason = (f"the {r}-robust two-cluster graph never moves (max change {change:g}); "
                  f"on {names} spread(T)/spread(0) <= {worst:.2g}")
    else:
        apart = sum(not s["final_spread_ratio"] <= 1e-9 for s in spreads.values())
        parts = ([] if r < 2 else [f"the test graph is {r}-robust (needs < 2)"]) + \
            ([] if frozen else [f"values moved by up to {change:.2g} (0 expected)"]) + \
            ([] if agree else [f"{apart} of {len(spreads)} robust graphs keep spread(T)/"
                               f"spread(0) above 1e-9 (worst {worst:.2g})"])
        reason = "; ".join(parts)
    return Outcome(
        verdict=Verdict.PASS if frozen and agree and r < 2 else Verdict.FAIL, reason=reason,
        measured={"max_change": change, "two_cluster_robustness": r,
                  "worst_consensus_spread_ratio": worst,
                  "consensus_graphs": spreads},
        headline=["max_change", "two_cluster_robustness", "worst_consensus_spread_ratio"],
        descriptions={
            "max_change": "two clusters: max over steps and agents of |x_i(t) - x_i(0)| "
                          "(0 expected exactly)",
            "two_cluster_robustness": "largest r for which the two-cluster graph is r-robust",
            "worst_consensus_spread_ratio": "on the robust graphs: max spread(T) / spread(0)"},
        threshold="the two-cluster graph is not 2-robust and its values never change (exactly); "
                  "spread(T) <= 1e-9 spread(0) on each robust graph",
        size=f"T={num_steps}, H={H}, no adversary, seeds={len(seeds)}")


@claim("resilient_ac.necessity_two_clusters",
       statement="two cooperative 3-cliques where each agent has one in-neighbour in the other "
                 "clique (not 2-robust), values 0 and 1: W-MSR with H = 1 and no adversary "
                 "never changes a value; on K5 and the experiment graph it reaches consensus",
       source=f"{LEBLANC} (necessity of robustness); example derived in "
              f"{DOCS}#necessity-example",
       kind=Kind.EXACT)
def _necessity(ctx: CheckContext) -> Outcome:
    seeds = list(range(ctx.base_seed, ctx.base_seed + ctx.seed_count(2, 8)))
    return check_necessity(two_clusters(), [0, 0, 0, 1, 1, 1], 1,
                           num_steps=200 if ctx.full else 100,
                           consensus_graphs={"K5": g.complete(5),
                                             "experiment graph": experiment_graph()},
                           seeds=seeds, seed=ctx.base_seed)


__all__ = ["experiment_graph", "graph_fact_cases", "check_graph_facts", "reference_aggregate",
           "check_aggregator_identities", "check_hull_property", "check_projection_identities",
           "check_batch_output_step", "attack_suite", "invariance_cases",
           "check_wmsr_invariance", "cooperative_block", "check_average_captured",
           "two_clusters", "check_necessity"]
