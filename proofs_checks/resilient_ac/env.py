"""Claims about the grid world of the resilient actor-critic experiments (Figura, Lin, Liu,
Gupta, "Resilient Consensus-based Multi-agent Reinforcement Learning with Function
Approximation", arXiv:2111.06776; dynamics as in the authors' code,
``mfigura/Resilient-consensus-based-MARL``, v1 commit 61b07cf, v2 commit f10f863).

One claim, ``resilient_ac.environment_facts``: the facts of the environment that the paper's
numbers rest on — the v2 code's reward never takes its "moved to a free cell" branch (its
occupancy test counts the agent itself), the corrected v2 rule and v1 penalise agents whose
cells coincide, v1 rewards lie in [-1.1, 0], the standardized coordinates have mean 0 and
standard deviation 1 under uniform positions, and the action encodings are as documented in
:mod:`decentral.resilient_ac.learning.gridworld`.

The judge (:func:`check_environment_facts`) takes the environments to judge as arguments, so a
test can hand it a deliberately wrong variant and see it FAIL. It compares every environment
with a reference written here from the documented rules (numpy, no code shared with the
library), on an exhaustive enumeration of one agent's (cell, target, action) for every agent
index, each once with another agent planted on the cell it moves to and once with the others
random, plus fully random joint configurations.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from decentral.resilient_ac.learning.gridworld import GridParams, GridState, GridWorld, grid_world
from decentral.verify import CheckContext, Kind, Outcome, Verdict, combine_verdicts
from proofs_checks.registry import claim

__all__ = ["DOCUMENTED", "CHUNK", "default_envs", "reference_step", "run_cases",
           "check_environment_facts"]

FLL = "Figura, Lin, Liu, Gupta, arXiv:2111.06776"

#: The documented rules each environment is judged against, by label: grid side, reward
#: divisor, (d_row, d_col) of actions 0..4, the stay action, the reward rule.
DOCUMENTED: dict[str, dict[str, Any]] = {
    "v1": dict(size=6, scale=10, stay=4, rule="v1",
               # LEFT, DOWN, RIGHT, UP, STAY
               deltas=((0, -1), (-1, 0), (0, 1), (1, 0), (0, 0))),
    "v2_as_coded": dict(size=5, scale=5, stay=0, rule="as_coded",
                        deltas=((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1))),
    "v2_fixed": dict(size=5, scale=5, stay=0, rule="fixed",
                     deltas=((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1))),
}

NUM_AGENTS = 5


def default_envs() -> dict[str, GridWorld]:
    """The library's three environments, by the labels of :data:`DOCUMENTED`."""
    return {"v1": grid_world("v1"), "v2_as_coded": grid_world("v2", collision="as_coded"),
            "v2_fixed": grid_world("v2", collision="fixed")}


def reference_step(label: str, pos: np.ndarray, actions: np.ndarray, targets: np.ndarray
                   ) -> dict[str, np.ndarray]:
    """The documented dynamics in numpy, batched: ``pos [B, N, 2]``, ``actions [B, N]``,
    ``targets [B, N, 2]``. Returns ``new_pos``, ``raw`` (integer rewards before scaling),
    ``occupied`` (another agent on the agent's new cell when it is judged: all agents' new
    cells in v1; in v2, lower-index agents' new and higher-index agents' old cells),
    ``dist`` / ``dist_next`` (L1 distance to the target before / after the move) and
    ``stayed_on_target``, each ``[B, N]``."""
    doc = DOCUMENTED[label]
    deltas = np.asarray(doc["deltas"], np.int64)
    size, n = doc["size"], pos.shape[1]
    pos = np.asarray(pos, np.int64)
    actions = np.asarray(actions, np.int64)
    targets = np.asarray(targets, np.int64)
    dist = np.abs(pos - targets).sum(-1)
    stayed = (dist == 0) & (actions == doc["stay"])
    moved = np.clip(pos + deltas[actions], 0, size - 1)
    if doc["rule"] == "v1":
        same = (moved[:, :, None, :] == moved[:, None, :, :]).all(-1)
        occupied = (same & ~np.eye(n, dtype=bool)).any(-1)
        dist_next = np.abs(moved - targets).sum(-1)
        raw = -(dist_next + occupied)
        return dict(new_pos=moved, raw=raw, occupied=occupied, dist=dist,
                    dist_next=dist_next, stayed_on_target=stayed)
    cur = pos.copy()
    occupied = np.zeros(actions.shape, bool)
    for i in range(n):
        cur[:, i] = moved[:, i]
        others = np.arange(n) != i
        occupied[:, i] = (cur[:, others] == cur[:, i:i + 1]).all(-1).any(-1)
    dist_next = np.abs(cur - targets).sum(-1)
    fallback = np.where(stayed, 0, -dist - 1)
    free_value = -dist_next
    raw = fallback if doc["rule"] == "as_coded" else np.where(occupied, fallback, free_value)
    return dict(new_pos=cur, raw=raw, occupied=occupied, dist=dist, dist_next=dist_next,
                stayed_on_target=stayed)


def _cases(label: str, num_random: int, rng: np.random.Generator
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(pos [B, N, 2], actions [B, N], targets [B, N, 2])``: for every agent index k and
    every (cell, target, action) of agent k, (a) the other agents stay, one of them (random)
    on the cell agent k moves to, and (b) the others random; then ``num_random`` fully random
    joint configurations."""
    doc = DOCUMENTED[label]
    size, n, stay = doc["size"], NUM_AGENTS, doc["stay"]
    deltas = np.asarray(doc["deltas"])
    cells = list(itertools.product(range(size), repeat=2))
    focal = np.array([(k, *p, *g, a) for k in range(n) for p in cells for g in cells
                      for a in range(len(deltas))])
    m = focal.shape[0]
    k, p, g, a = focal[:, 0], focal[:, 1:3], focal[:, 3:5], focal[:, 5]
    rows = np.arange(m)
    blocks = []
    for planted in (True, False):
        pos = rng.integers(0, size, (m, n, 2))
        targets = rng.integers(0, size, (m, n, 2))
        actions = rng.integers(0, len(deltas), (m, n))
        pos[rows, k], targets[rows, k], actions[rows, k] = p, g, a
        if planted:
            actions[:] = stay
            actions[rows, k] = a
            other = (k + rng.integers(1, n, m)) % n
            pos[rows, other] = np.clip(p + deltas[a], 0, size - 1)
        blocks.append((pos, actions, targets))
    blocks.append((rng.integers(0, size, (num_random, n, 2)),
                   rng.integers(0, len(deltas), (num_random, n)),
                   rng.integers(0, size, (num_random, n, 2))))
    return tuple(np.concatenate([b[j] for b in blocks]) for j in range(3))


#: Cases per compiled call of :func:`run_cases` (one compile per environment, whatever the
#: number of cases).
CHUNK = 4096


@functools.lru_cache(maxsize=16)
def _env_step(env: GridWorld):
    """The env's step, vmapped over cases and jitted (cached per environment: a
    :class:`GridWorld` is hashable, and a subclass never equals its base)."""
    def one(pos, actions, targets):
        state = GridState(pos=pos, t=jnp.zeros((), jnp.int32))
        _, new_state, rewards, _ = env.step(jax.random.key(0), state, actions,
                                            GridParams(targets))
        return new_state.pos, rewards
    return jax.jit(jax.vmap(one))


def run_cases(env: GridWorld, pos: np.ndarray, actions: np.ndarray, targets: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """``env.step`` on a batch of joint configurations (``pos [B, N, 2]``, ``actions [B, N]``,
    ``targets [B, N, 2]``), in chunks of :data:`CHUNK` (the last one padded), so every batch
    size shares one compilation. Returns ``(new_pos [B, N, 2], rewards [B, N])`` as numpy."""
    f = _env_step(env)
    pos, actions, targets = (np.asarray(x, np.int32) for x in (pos, actions, targets))
    b = pos.shape[0]
    pad = (-b) % CHUNK
    if pad:
        pos, actions, targets = (np.concatenate([x, np.repeat(x[:1], pad, axis=0)])
                                 for x in (pos, actions, targets))
    outs = [f(pos[k:k + CHUNK], actions[k:k + CHUNK], targets[k:k + CHUNK])
            for k in range(0, pos.shape[0], CHUNK)]
    new_pos = np.concatenate([np.asarray(o[0]) for o in outs])[:b]
    rewards = np.concatenate([np.asarray(o[1]) for o in outs])[:b]
    return new_pos, rewards


def _normalization(env: GridWorld, size: int) -> dict[str, Any]:
    """Observation of every cell (all agents on it): per observation entry, the mean and the
    population standard deviation over the ``size**2`` equally likely cells."""
    cells = np.array(list(itertools.product(range(size), repeat=2)), np.int32)
    pos = np.repeat(cells[:, None, :], NUM_AGENTS, axis=1)
    obs = np.asarray(jax.vmap(lambda q: env.observation(GridState(q, jnp.zeros((), jnp.int32))))(
        jnp.asarray(pos)), np.float64)
    return dict(max_abs_mean=float(np.abs(obs.mean(0)).max()),
                max_abs_std_minus_1=float(np.abs(obs.std(0) - 1.0).max()))


def check_environment_facts(envs: Mapping[str, GridWorld] | None = None, *,
                            num_random: int = 20_000, seed: int = 0,
                            ulps: float = 64.0) -> Outcome:
    """Judge the grid-world facts on ``envs`` (default :func:`default_envs`), each against the
    documented rules of its label in :data:`DOCUMENTED` (``"v1"``, ``"v2_as_coded"``,
    ``"v2_fixed"``; a mapping may hold a subset):

    * action encodings: every agent's new cell is its cell plus the documented (d_row, d_col)
      of its action, clipped to the grid;
    * rewards: every reward equals the documented rule (raw integer / divisor, to ``ulps``
      units in the last place of the reward dtype); in particular v2 as coded never takes the
      free-cell branch (counted where that branch's value -d_next differs from the fallback
      0 / -(d+1)), its rewards lie in {0} U {-(d+1)/5}; corrected v2 and v1 give the collision
      penalty whenever another agent is on the new cell (v2: unless the agent stayed on its
      target); v1 rewards lie in [-1.1, 0] with both ends reached;
    * normalization: over all cells (uniform positions) each observation entry has mean 0 and
      population standard deviation 1 (to ``ulps`` units in the last place).

    Cases: exhaustive over agent index x cell x target x action (v1: 5 x 36 x 36 x 5 = 32 400,
    v2: 5 x 25 x 25 x 5 = 15 625), each with a planted collision and with random others, plus
    ``num_random`` random joint configurations. A needed case that never occurs (no collision,
    no distinguishable free cell) makes the verdict INCONCLUSIVE.
    """
    envs = default_envs() if envs is None else dict(envs)
    unknown = sorted(set(envs) - set(DOCUMENTED))
    if unknown or not envs:
        raise ValueError(f"envs must be keyed by labels among {sorted(DOCUMENTED)}; got "
                         f"{sorted(envs)}.")
    rng = np.random.default_rng(seed)
    measured: dict[str, Any] = {}
    failures: list[str] = []
    verdicts: list[Verdict] = []
    problems: dict[str, list[str]] = {}     # label -> what broke, for the reason
    unpowered: dict[str, str] = {}          # label -> the needed case that never occurred
    steps = 0
    for label, env in envs.items():
        doc = DOCUMENTED[label]
        pos, actions, targets = _cases(label, int(num_random), rng)
        steps += pos.shape[0]
        new_pos, rewards = run_cases(env, pos, actions, targets)
        dtype = rewards.dtype
        tol = ulps * float(np.finfo(dtype).eps)
        rewards = rewards.astype(np.float64)
        ref = reference_step(label, pos, actions, targets)
        expected = ref["raw"] / doc["scale"]
        deltas = np.asarray(doc["deltas"])
        moved = np.clip(pos + deltas[actions], 0, doc["size"] - 1)
        row: dict[str, Any] = {
            "cases": int(pos.shape[0]), "reward_dtype": str(dtype),
            "encoding_mismatches": int((new_pos != moved).any(-1).sum()),
            "reward_mismatches": int((np.abs(rewards - expected) > tol).sum()),
            "collisions": int(ref["occupied"].sum()),
            "reward_min": float(rewards.min()), "reward_max": float(rewards.max()),
        }
        bad = row["encoding_mismatches"] + row["reward_mismatches"]
        what = [f"{row[k]} {k.replace('_', ' ')}" for k in ("encoding_mismatches",
                                                             "reward_mismatches") if row[k]]
        occupied, stayed = ref["occupied"], ref["stayed_on_target"]
        dist, dist_next = ref["dist"], ref["dist_next"]
        if doc["rule"] == "v1":
            hit = occupied
            penalised = np.abs(rewards - (-(dist_next + 1) / doc["scale"])) <= tol
            row["collisions_penalised"] = int((hit & penalised).sum())
            lo, hi = -1.1, 0.0
            row["range_violations"] = int(((rewards < lo - tol) | (rewards > hi + tol)).sum())
            row["ends_reached"] = bool(np.isclose(rewards.min(), lo, atol=tol, rtol=0)
                                       and np.isclose(rewards.max(), hi, atol=tol, rtol=0))
            bad += row["range_violations"]
            bad += int(row["collisions_penalised"] != row["collisions"])
            bad += int(not row["ends_reached"])
            power = row["collisions"] > 0
            if row["range_violations"]:
                what.append(f"{row['range_violations']} rewards outside [-1.1, 0]")
            if row["collisions_penalised"] != row["collisions"]:
                what.append(f"{row['collisions'] - row['collisions_penalised']} of "
                            f"{row['collisions']} collisions unpenalised")
            if not row["ends_reached"]:
                what.append(f"reward range [{row['reward_min']:.3g}, {row['reward_max']:.3g}] "
                            "misses an end of [-1.1, 0]")
            if not power:
                unpowered[label] = "no collision occurred"
        else:
            fallback = np.where(stayed, 0, -dist - 1) / doc["scale"]
            free_value = -dist_next / doc["scale"]
            distinguishable = ~occupied & (np.abs(free_value - fallback) > tol)
            took_free = distinguishable & (np.abs(rewards - free_value) <= tol)
            row["free_cell_distinguishable"] = int(distinguishable.sum())
            row["free_branch_taken"] = int(took_free.sum())
            penalty_cases = occupied & ~stayed
            row["collisions_penalised"] = int(
                (penalty_cases & (np.abs(rewards - fallback) <= tol)).sum())
            row["collision_penalty_cases"] = int(penalty_cases.sum())
            if doc["rule"] == "as_coded":
                in_set = np.isclose(rewards, 0.0, atol=tol, rtol=0) | \
                    (np.abs(rewards + (dist + 1) / doc["scale"]) <= tol)
                row["outside_set"] = int((~in_set).sum())
                bad += row["free_branch_taken"] + row["outside_set"]
                if row["free_branch_taken"]:
                    what.append(f"free-cell branch taken {row['free_branch_taken']} of "
                                f"{row['free_cell_distinguishable']} times")
                if row["outside_set"]:
                    what.append(f"{row['outside_set']} rewards outside {{0}} U {{-(d+1)/5}}")
            else:
                bad += row["free_cell_distinguishable"] - row["free_branch_taken"]
                bad += row["collision_penalty_cases"] - row["collisions_penalised"]
                if row["free_cell_distinguishable"] != row["free_branch_taken"]:
                    what.append(f"free-cell branch missed "
                                f"{row['free_cell_distinguishable'] - row['free_branch_taken']} "
                                f"of {row['free_cell_distinguishable']} times")
                if row["collision_penalty_cases"] != row["collisions_penalised"]:
                    what.append(f"{row['collision_penalty_cases'] - row['collisions_penalised']} "
                                f"of {row['collision_penalty_cases']} collisions unpenalised")
            power = row["free_cell_distinguishable"] > 0 and row["collision_penalty_cases"] > 0
            if not power:
                unpowered[label] = ("no distinguishable free cell"
                                    if not row["free_cell_distinguishable"] else
                                    "no collision to penalise")
        norm = _normalization(env, doc["size"])
        row["norm_max_abs_mean"] = norm["max_abs_mean"]
        row["norm_max_abs_std_minus_1"] = norm["max_abs_std_minus_1"]
        norm_err = max(norm["max_abs_mean"], norm["max_abs_std_minus_1"])
        norm_bad = norm_err > tol
        bad += int(norm_bad)
        if norm_bad:
            what.append(f"normalization off by {norm_err:.2g} (> {tol:.2g})")
        problems[label] = what
        row["tolerance"] = tol
        measured[label] = row
        if bad:
            failures.append(label)
            verdicts.append(Verdict.FAIL)
        elif not power:
            verdicts.append(Verdict.INCONCLUSIVE)
        else:
            verdicts.append(Verdict.PASS)
    verdict = combine_verdicts(verdicts)
    summary = {
        "labels_failed": len(failures),
        "v2_as_coded_free_branch_taken": measured.get("v2_as_coded", {}).get("free_branch_taken"),
        "v1_reward_range": ([measured["v1"]["reward_min"], measured["v1"]["reward_max"]]
                            if "v1" in measured else None),
        "env_steps": steps,
    }
    if verdict is Verdict.FAIL:
        reason = "; ".join(f"{label}: " + (", ".join(problems[label][:3]) or "facts violated")
                           for label in failures)
    elif verdict is Verdict.INCONCLUSIVE:
        reason = "no mismatch, but " + "; ".join(f"{label}: {why}"
                                                 for label, why in unpowered.items())
    else:
        reason = f"{len(envs)} environments match the documented rules in {steps} joint steps"
        if "v2_as_coded" in measured:
            row = measured["v2_as_coded"]
            reason += (f"; v2 as coded: free-cell branch {row['free_branch_taken']} of "
                       f"{row['free_cell_distinguishable']} times")
        if "v1" in measured:
            reason += (f"; v1 rewards in [{measured['v1']['reward_min']:.3g}, "
                       f"{measured['v1']['reward_max']:.3g}]")
    return Outcome(
        verdict=verdict, reason=reason,
        measured={**summary, "failed": failures, "per_env": measured},
        headline=["labels_failed", "v2_as_coded_free_branch_taken", "v1_reward_range"],
        descriptions={
            "labels_failed": "environments (v1, v2 as coded, v2 fixed) with any fact violated",
            "v2_as_coded_free_branch_taken": "v2 as-coded rewards equal to the free-cell value "
                                             "-d_next/5 where it differs from the fallback "
                                             "(0 expected)",
            "v1_reward_range": "[min, max] of the v1 rewards seen (the claim: [-1.1, 0])",
            "env_steps": "joint steps judged, all environments together",
            "failed": "labels of the environments that violated a fact",
            "per_env": "per environment: case count, mismatches of encodings and rewards, "
                       "collision and free-cell counts, reward range, normalization errors",
        },
        threshold=f"no mismatch: encodings and integer rules exact, rewards and normalization "
                  f"to {ulps:g} ulp of the dtype; v2 as coded takes the free-cell branch 0 "
                  "times; v1 in [-1.1, 0] with both ends reached; INCONCLUSIVE if no "
                  "collision or no distinguishable free cell occurs",
        details="As coded, the v2 reward depends only on the agent's own distance and "
                "action: every agent but one that stays on its target gets -(d+1)/5, whatever "
                "cell it reaches; the corrected rule gives -d_next/5 on a free cell (-(d-1)/5 "
                "after a step towards the target, -d/5 when staying or hitting a wall).",
        size=f"{steps} joint steps over {len(envs)} environments: exhaustive agent x cell x "
             f"target x action, each with a planted collision and with random others, plus "
             f"{num_random} random joint configurations per environment; normalization over "
             f"all cells",
    )


@claim("resilient_ac.environment_facts",
       statement="v2 as coded never yields the free-cell branch (rewards in {0} U "
                 "{-(d+1)/5}); corrected v2 and v1 yield collision penalties when cells "
                 "coincide; v1 reward in [-1.1, 0]; normalized coordinates have mean 0 and "
                 "std 1 under uniform positions; action encodings as documented",
       source=f"{FLL}, the experiments' grid world (as in the authors' code, "
              "mfigura/Resilient-consensus-based-MARL v1 61b07cf, v2 f10f863); "
              "docs/resilient_learning.md#environment",
       kind=Kind.EXACT)
def _environment_facts(ctx: CheckContext) -> Outcome:
    return check_environment_facts(num_random=200_000 if ctx.full else 20_000,
                                   seed=ctx.seed_for("resilient_ac.environment_facts"))
