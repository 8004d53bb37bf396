"""Contract cases of the bandit algorithms: ``bandit_algorithm(policy, arms, ...)`` for every
policy factory (see tests/contract_cases.py), at N <= 5 agents and M = 3 arms.

The decentralized policies (and ``ucb1``, a policy without graphs) run with
``environment_in_params=True``: their params are ``BanditParams(policy params,
bandit_environment(...))``, with ``environment.graphs = None`` (the policy's own sequence,
closed over), and ``graph_swap`` puts another sequence of the same structure into
``environment.graphs``. The single-agent ``ucb``, ``kl_ucb`` and ``pooled_ucb`` run with
their plain params.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from contract_cases import Case

import decentral.graphs as g
from decentral.bandits import (
    BanditParams,
    CoopUCB2Params,
    DDUCBParams,
    KLUCBParams,
    UCBParams,
    bandit_algorithm,
    bandit_environment,
    bernoulli,
    coop_ucb2,
    dducb,
    dec_kl_ucb,
    dec_ucb,
    dec_ucb1,
    kl_ucb,
    pooled_ucb,
    ucb,
    ucb1,
)

ARMS = bernoulli([0.7, 0.5, 0.2])                    # M = 3
N = 4
UNDIRECTED = g.ring(N, directed=False)
#: the 4-cycle relabelled (0-2-1-3-0): another graph, the same table width and spectrum
RELABELLED = UNDIRECTED[np.ix_([0, 2, 1, 3], [0, 2, 1, 3])]


# ------------------------------------------------------------------------------------------
# single-agent policies: plain params
# ------------------------------------------------------------------------------------------

def _single_case(factory, params_type, field: str, bad_low: float) -> Case:
    pol = factory()
    alg = bandit_algorithm(pol, ARMS, num_agents=3)
    params = pol.params
    name = pol.name
    bad = [
        (params._replace(**{field: bad_low}), rf"{name}: params\.{field} must be >"),
        (params._replace(**{field: np.inf}), rf"params\.{field} must be finite"),
        # a vector [M] would be applied per arm without a sweep
        (params._replace(**{field: np.array([1.0, 2.0, 3.0])}),
         rf"params\.{field} must be one number"),
        (params._replace(**{field: np.ones((2, 3))}), rf"params\.{field} must be one number"),
        (("not", "params"), rf"params must be a {params_type.__name__}"),
    ]
    other = bandit_algorithm(factory(clock="plus_one"), ARMS, num_agents=3)
    return Case(alg, params, bad, other)


# ------------------------------------------------------------------------------------------
# environment in params
# ------------------------------------------------------------------------------------------

def _env_params(pol, arms=ARMS, num_agents=None) -> BanditParams:
    env = bandit_environment(pol, arms, num_agents)._replace(graphs=None)
    return BanditParams(pol.params, env)


def _environment_bad(params: BanditParams) -> list:
    env = params.environment
    gaps = np.asarray(env.gaps)
    family = np.asarray(env.arms["family"])
    return [
        (params._replace(environment=env._replace(gaps=gaps[:, :2])),
         r"params\.environment\.gaps has shapes"),
        (params._replace(environment=env._replace(gaps=-gaps)),
         r"params\.environment\.gaps must be >= 0"),
        (params._replace(environment=env._replace(best_means=np.full(gaps.shape[0], np.inf,
                                                                     gaps.dtype))),
         r"params\.environment\.best_means must be finite"),
        (params._replace(environment=env._replace(arms={**env.arms,
                                                        "family": np.full_like(family, 99)})),
         r"params\.environment\.arms\['family'\] must hold the family codes"),
        (params._replace(environment=("not", "an environment")),
         r"params\.environment must be a BanditEnvironment"),
    ]


def ucb1_environment_case() -> Case:
    pol = ucb1()
    alg = bandit_algorithm(pol, ARMS, num_agents=3, environment_in_params=True)
    params = _env_params(pol, num_agents=3)
    bad = [
        (params._replace(policy=UCBParams(np.array([1.0, 2.0, 3.0]))),
         r"params\.policy\.exploration_alpha must be one number"),
        (params._replace(policy=UCBParams(-1.0)), r"params\.policy\.exploration_alpha must be >="),
        (params._replace(environment=params.environment._replace(
            graphs=g.static(g.ring(3), rule="row"))),
         r"params\.environment\.graphs must be None"),
        (UCBParams(2.0), r"pass BanditParams"),
        *_environment_bad(params),
    ]
    other = bandit_algorithm(ucb1(clock="plus_one"), ARMS, num_agents=3,
                             environment_in_params=True)
    return Case(alg, params, bad, other)


def _graph_bad(params: BanditParams, pol, n: int) -> list:
    """Sequences in params.environment.graphs: another structure; the right structure with
    weights that are not row-stochastic (set leaf by leaf, as a sweep would)."""
    env = params.environment
    seq = pol.graphs
    out = [(params._replace(environment=env._replace(
        graphs=g.static(g.complete(n + 1), rule=seq.rule or "row", backend=seq.backend))),
        r"params\.environment\.graphs has another structure")]
    if seq.form == "static" and seq.backend == "dense":
        halves = np.full(np.shape(seq.leaves["weights"]), 0.5)
        out.append((params._replace(environment=env._replace(
            graphs=seq.replace(weights=halves))), r"params\.environment\.graphs.*stochastic"))
    return out


def _swap(pol, params: BanditParams, other_pol, arms=ARMS, num_agents=None):
    """(params with other_pol's sequence as data, the algorithm built on other_pol)."""
    swapped = params._replace(environment=params.environment._replace(graphs=other_pol.graphs))
    return swapped, bandit_algorithm(other_pol, arms, num_agents=num_agents,
                                     environment_in_params=True)


def _per_agent_bad(params: BanditParams, field: str, n: int, low) -> list:
    """A per-agent constant of the wrong length, a sweep-shaped value without a sweep, a value
    out of range, the wrong params type."""
    pp = params.policy
    return [
        (params._replace(policy=pp._replace(**{field: np.ones(n - 1)})),
         rf"params\.policy\.{field} must be a scalar or one value per agent \[N = {n}\]"),
        (params._replace(policy=pp._replace(**{field: np.ones(3 if n != 3 else 2)})),
         rf"params\.policy\.{field} must be a scalar or one value per agent"),
        (params._replace(policy=pp._replace(**{field: np.ones((2, n))})),
         rf"params\.policy\.{field} must be a scalar or one value per agent"),
        (params._replace(policy=pp._replace(**{field: low})), rf"params\.policy\.{field} must be"),
        (params._replace(policy=pp._replace(**{field: np.array([1.0] * (n - 1) + [np.inf])})),
         rf"params\.policy\.{field} must be finite"),
        (params._replace(policy=UCBParams(2.0)), r"params must be Dec"),
    ]


def dec_ucb_case(theorem: int = 1, backend: str = "dense") -> Case:
    base = g.ring(N) if theorem == 1 else UNDIRECTED
    pol = dec_ucb(base, theorem=theorem, backend=backend)
    alg = bandit_algorithm(pol, ARMS, environment_in_params=True)
    params = _env_params(pol)
    bad = (_per_agent_bad(params, "exploration_constant", N, -1.0)
           + _graph_bad(params, pol, N) + _environment_bad(params)[:2])
    other = bandit_algorithm(dec_ucb(base, theorem=theorem, clock="plus_one", backend=backend),
                             ARMS, environment_in_params=True)
    if backend == "sparse":
        # the sparse mix of weights passed as data and of the same weights closed over as
        # constants can differ in the last bit (XLA folds the constant tables); weights of
        # 1/2 are exact either way, as in the consensus cases
        swap_graph = g.ring(N).T.copy()
    else:
        swap_graph = g.complete(N) if theorem == 1 else g.star(N)
    swap = _swap(pol, params, dec_ucb(swap_graph, theorem=theorem, backend=backend))
    return Case(alg, params, bad, other, graph_swap=swap)


def dec_ucb_random_case() -> Case:
    """Random edge drops drawn per seed (the sequence decides to use each step's graph key)."""
    drops = g.random_edge_drops(g.complete(N), 0.3, rule="row", shared_across_seeds=False)
    pol = dec_ucb(drops, theorem=1)
    alg = bandit_algorithm(pol, ARMS, environment_in_params=True)
    params = _env_params(pol)
    bad = _per_agent_bad(params, "exploration_constant", N, -1.0)[:3] + _graph_bad(params, pol, N)
    other = bandit_algorithm(dec_ucb(g.random_edge_drops(g.complete(N), 0.3, rule="row",
                                                         shared_across_seeds=False),
                                     theorem=1, max_consensus="v1_code"),
                             ARMS, environment_in_params=True)
    more = dec_ucb(g.random_edge_drops(g.complete(N), 0.6, rule="row",
                                       shared_across_seeds=False), theorem=1)
    return Case(alg, params, bad, other, graph_swap=_swap(pol, params, more))


def dec_ucb1_case() -> Case:
    pol = dec_ucb1(UNDIRECTED)
    alg = bandit_algorithm(pol, ARMS, environment_in_params=True)
    params = _env_params(pol)
    bad = _per_agent_bad(params, "beta", N, 0.0) + _graph_bad(params, pol, N)
    other = bandit_algorithm(dec_ucb1(UNDIRECTED, max_consensus="v1_code"), ARMS,
                             environment_in_params=True)
    return Case(alg, params, bad, other, graph_swap=_swap(pol, params, dec_ucb1(g.star(N))))


def dec_kl_ucb_case() -> Case:
    pol = dec_kl_ucb(UNDIRECTED, bisection_steps=20)
    alg = bandit_algorithm(pol, ARMS, environment_in_params=True)
    params = _env_params(pol)
    bad = _per_agent_bad(params, "varsigma", N, -0.5) + _graph_bad(params, pol, N)
    other = bandit_algorithm(dec_kl_ucb(UNDIRECTED, bisection_steps=20, index_floor=0.1),
                             ARMS, environment_in_params=True)
    swap = _swap(pol, params, dec_kl_ucb(g.star(N), bisection_steps=20))
    return Case(alg, params, bad, other, graph_swap=swap)


def _scalar_bad(params: BanditParams, fields: dict) -> list:
    """Every constant: a vector [M] (would apply per arm), and an out-of-range value."""
    pp = params.policy
    out = []
    for field, (low, pattern) in fields.items():
        out.append((params._replace(policy=pp._replace(**{field: np.array([1.0, 1.5, 2.0])})),
                    rf"params\.policy\.{field} must be one number"))
        out.append((params._replace(policy=pp._replace(**{field: low})),
                    rf"params\.policy\.{field} must be {pattern}"))
    return out


def coop_ucb2_case() -> Case:
    pol = coop_ucb2(UNDIRECTED)
    alg = bandit_algorithm(pol, ARMS, environment_in_params=True)
    params = _env_params(pol)
    bad = _scalar_bad(params, {"exploration_gamma": (-1.0, ">="),
                               "concentration_eta": (4.0, "<"),
                               "reward_sd": (-1.0, ">="),
                               "consensus_kappa": (1.5, "<=")})
    bad += _graph_bad(params, pol, N)
    # row-stochastic, but not the H = I - L / (2 d_max) of an undirected graph
    rows = np.asarray(g.row_stochastic(g.ring(N)))[None]
    bad.append((params._replace(environment=params.environment._replace(
        graphs=pol.graphs.replace(weights=rows))), r"params\.environment\.graphs must hold H"))
    bad.append((params._replace(policy=DDUCBParams()), r"params must be CoopUCB2Params"))
    other = bandit_algorithm(coop_ucb2(UNDIRECTED, sublinear="log"), ARMS,
                             environment_in_params=True)
    return Case(alg, params, bad, other, graph_swap=_swap(pol, params, coop_ucb2(g.star(N))))


def dducb_case() -> Case:
    pol = dducb(UNDIRECTED)
    alg = bandit_algorithm(pol, ARMS, environment_in_params=True)
    params = _env_params(pol)
    bad = _scalar_bad(params, {"exploration_eta": (-1.0, ">="),
                               "reward_sd": (-1.0, ">="),
                               "consensus_precision": (1.0, "<")})
    bad += _graph_bad(params, pol, N)
    # symmetric and doubly stochastic, but another spectrum than the policy was built for
    bad.append((params._replace(environment=params.environment._replace(
        graphs=dducb(g.complete(N)).graphs)), r"params\.environment\.graphs has \|lambda_2\|"))
    bad.append((params._replace(policy=CoopUCB2Params()), r"params must be DDUCBParams"))
    other = bandit_algorithm(dducb(UNDIRECTED, accelerated=True), ARMS,
                             environment_in_params=True)
    return Case(alg, params, bad, other, graph_swap=_swap(pol, params, dducb(RELABELLED)))


def _dense_rounding(build: Callable) -> Callable:
    """The case of ``build``, declared batch-dependent: its dense mix of non-dyadic weights
    (Metropolis, 1/3) rounds by the seed batch (see ``Case.batch_invariant``), and the
    indices amplify a last-bit difference into another pulled arm."""
    return lambda: build()._replace(batch_invariant=False)


CASES: dict[str, Callable] = {
    "bandits.ucb": lambda: _single_case(ucb, UCBParams, "exploration_alpha", -1.0),
    "bandits.ucb1.environment": ucb1_environment_case,
    "bandits.kl_ucb": lambda: _single_case(kl_ucb, KLUCBParams, "log_log_coefficient", -1.0),
    "bandits.pooled_ucb": lambda: _single_case(pooled_ucb, UCBParams, "exploration_alpha",
                                               -1.0),
    "bandits.dec_ucb.theorem1": lambda: dec_ucb_case(1),
    "bandits.dec_ucb.theorem2": _dense_rounding(lambda: dec_ucb_case(2)),
    "bandits.dec_ucb.theorem1.sparse": lambda: dec_ucb_case(1, "sparse"),
    "bandits.dec_ucb.random_per_seed": dec_ucb_random_case,
    "bandits.dec_ucb1": _dense_rounding(dec_ucb1_case),
    "bandits.dec_kl_ucb": _dense_rounding(dec_kl_ucb_case),
    "bandits.coop_ucb2": _dense_rounding(coop_ucb2_case),
    "bandits.dducb": _dense_rounding(dducb_case),
}
