"""Regret references and the constants of Dec_UCB's regret bounds, as plain numpy functions.

**Single-agent references** (functions of the true means):

* :func:`lai_robbins_constant` — ``sum_{k: Delta_k > 0} Delta_k / kl(mu_k, mu*)`` (Lai &
  Robbins 1985): for Bernoulli arms, every consistent policy has ``liminf R(T) / ln T`` at least
  this; for other laws on ``[0, 1]`` with these means it is KL-UCB's asymptotic constant
  (Garivier & Cappé 2011, Theorem 1), an upper bound on their Lai–Robbins constant (the
  Bernoulli law with a given mean is the hardest on ``[0, 1]``).
* :func:`ucb1_regret_bound` — Auer, Cesa-Bianchi, Fischer (2002), Theorem 1:
  ``sum_{Delta_k > 0} 8 ln T / Delta_k + (1 + pi^2 / 3) sum_k Delta_k``, with ``T`` the total
  number of plays.
* :func:`bernoulli_kl_np` — the Bernoulli KL divergence in float64.

**Dec_UCB's bounds** (Zhu, Mulle, Smith, Liu, arXiv 2111.10933 v1, Theorems 1 and 2). For every
agent ``i`` and every horizon ``T``,

    ``R_i(T) <= sum_{k: Delta_k > 0} Delta_k [max{a_{i,k} ln T, 2(M^2 + 2 M d + d), L}
    + 2 pi^2 / 3 + M^2 + (2 M - 1) d]``

with ``a_{i,k} = 16 / (3 Delta_k^2)`` (Theorem 1: strongly connected graph, flocking weights
``w_ij = 1/|N_i|``, width ``sqrt(4 ln t / (3 n))``) or ``a_{i,k} = 12 / (|N_i| Delta_k^2)``
(Theorem 2: undirected connected graph, Metropolis weights, width
``sqrt(3 ln t / (|N_i| n))``). The graph enters through (:func:`graph_constants`):

* ``d`` — the diameter, the longest shortest directed path;
* ``|N_i|`` — agent i's neighbourhood size, in-degree + 1 (the agent itself counts);
* ``pi`` — the left Perron vector of ``W`` (``pi^T W = pi^T``), so that ``W^t -> 1 pi^T``;
* ``rho2`` — the second-largest eigenvalue modulus of ``W`` (the eigenvalue may be complex);
* ``c`` — a constant with ``|[W^t]_ij - [1 pi^T]_ij| <= c rho2^t`` for all ``t``;
* ``L`` — the smallest ``t0`` with ``72 N ceil(c) t rho2^(t / (12 N ceil(c)) - 1) < 1`` for
  every ``t >= t0``.

:func:`theorem_bound` evaluates the bound per agent over an array of horizons, says which of
the three terms inside the max is the largest for each arm, and gives the ``ln T`` coefficient
``sum_k a_{i,k} Delta_k``; it warns (:class:`~decentral.hypotheses.HypothesisWarning`) when
the graph or the weights are not the theorem's. At the horizons of the paper's experiments the
``L`` term is the largest for every arm whose gap is not small, so a regret below the bound is
weak evidence there; the ``ln T`` coefficients are the informative comparison.

**ln T coefficients of the other algorithms' bounds** (compare with :func:`theorem_bound`'s
``log_coefficient``): :func:`ucb1_log_coefficient` (``sum 8 / Delta_k``, Auer et al. 2002),
:func:`kl_ucb_log_coefficient` (``sum Delta_k / kl(mu_k, mu*)``), and, derived here from the
indices of the journal version's Dec-UCB1 and Dec-KL-UCB (not published constants),
:func:`dec_ucb1_log_coefficient` and :func:`dec_kl_ucb_log_coefficient`.

Example:
    >>> round(lai_robbins_constant([0.9, 0.8]), 4)
    2.2521
    >>> round(ucb1_regret_bound([0.9, 0.8], 1000), 2)
    553.05
    >>> from decentral.graphs import metropolis, star
    >>> k = graph_constants(metropolis(star(10)))
    >>> k.diameter, round(k.mixing_rate, 12), k.mixing_constant_ceil, k.burn_in
    (2, 0.9, 1, 18824)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import networkx as nx
import numpy as np
import scipy.linalg
from scipy.special import lambertw

import decentral.graphs as g
from decentral._checks import sum_tolerance
from decentral.graphs import GraphSequence
from decentral.graphs.perron import closed_classes
from decentral.graphs.weights import effective_tolerance, metropolis_rule, row_rule
from decentral.hypotheses import warn_hypothesis

from .arms import Arms
from .policy import Policy

__all__ = ["lai_robbins_constant", "ucb1_regret_bound", "bernoulli_kl_np", "gaps_of",
           "GraphConstants", "graph_constants", "burn_in_time", "TheoremBound",
           "theorem_bound", "theorem_log_coefficient", "ucb1_log_coefficient",
           "kl_ucb_log_coefficient", "dec_ucb1_log_coefficient", "dec_kl_ucb_log_coefficient",
           "BOUND_TERMS"]


def gaps_of(means) -> np.ndarray:
    """``Delta_k = max_l mu_l - mu_k`` of means ``[M]`` (or of an :class:`Arms` shared by every
    agent, from its true means).

    Raises:
        ValueError: NaN, means outside ``[0, 1]``, fewer than two arms, per-agent arms.
    """
    mu = _means(means)
    return mu.max() - mu


def _means(means) -> np.ndarray:
    if isinstance(means, Arms):
        if means.num_agents is not None:
            raise ValueError("per-agent arms have a bound per agent; pass arms.true_means(N)[i]"
                             " for agent i.")
        return np.asarray(means.means[0], np.float64)
    mu = np.asarray(means, np.float64)
    if mu.ndim != 1 or mu.shape[0] < 2:
        raise ValueError(f"means must be a vector [M] with M >= 2; got shape {list(mu.shape)}.")
    if not np.all(np.isfinite(mu)) or np.any(mu < 0) or np.any(mu > 1):
        raise ValueError(f"means must be finite and in [0, 1]; got {mu.tolist()}.")
    return mu


def bernoulli_kl_np(p, q) -> np.ndarray:
    """``kl(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q))`` in float64, ``0 ln 0 = 0``; infinite
    where ``q`` is 0 or 1 and differs from ``p``.

    Example:
        >>> float(bernoulli_kl_np(0.5, 0.5)), bool(np.isinf(bernoulli_kl_np(0.5, 1.0)))
        (0.0, True)
    """
    from scipy.special import xlogy

    p = np.asarray(p, np.float64)
    q = np.asarray(q, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (xlogy(p, p) - xlogy(p, q)) + (xlogy(1 - p, 1 - p) - xlogy(1 - p, 1 - q))


def lai_robbins_constant(means) -> float:
    """``sum_{Delta_k > 0} Delta_k / kl(mu_k, mu*)`` (the ``ln T`` coefficient of the Lai–Robbins
    lower bound for Bernoulli arms; KL-UCB's asymptotic constant on ``[0, 1]``).

    Args:
        means: ``[M]`` means in ``[0, 1]`` or an :class:`Arms` (its true means).

    Returns:
        The constant; an arm against ``mu* = 1`` has ``kl = inf`` and contributes 0.

    Example:
        >>> lai_robbins_constant([0.5, 0.5])
        0.0
    """
    mu = _means(means)
    best = mu.max()
    gap = best - mu
    sub = gap > 0
    if not np.any(sub):
        return 0.0
    kl = bernoulli_kl_np(mu[sub], best)
    return float(np.sum(np.where(np.isinf(kl), 0.0, gap[sub] / kl)))


def ucb1_regret_bound(means, horizon) -> float | np.ndarray:
    """Auer et al. (2002), Theorem 1: ``sum_{Delta_k > 0} 8 ln T / Delta_k +
    (1 + pi^2 / 3) sum_k Delta_k`` after ``T`` plays.

    Args:
        means: ``[M]`` means in ``[0, 1]`` or an :class:`Arms`.
        horizon: ``T >= 1``, a number or an array (the bound at each).

    Raises:
        ValueError: bad means, a horizon below 1 or NaN.

    Example:
        >>> ucb1_regret_bound([0.5, 0.5], 100)
        0.0
    """
    gap = gaps_of(means)
    t = np.asarray(horizon, np.float64)
    if not np.all(np.isfinite(t)) or np.any(t < 1):
        raise ValueError(f"horizon must be >= 1; got {t.tolist()}.")
    sub = gap[gap > 0]
    out = 8 * np.log(t) * np.sum(1 / sub) + (1 + np.pi ** 2 / 3) * np.sum(gap)
    return float(out) if out.ndim == 0 else out


# --------------------------------------------------------------------------------------------
# Graph constants of Theorems 1 and 2
# --------------------------------------------------------------------------------------------

#: The terms inside the bound's max, in the order :attr:`TheoremBound.dominant` names them:
#: ``"log"`` (``a_k ln T``), ``"graph"`` (``2(M^2 + 2 M d + d)``) and ``"L"``.
BOUND_TERMS = ("log", "graph", "L")

_ZERO_RATE = 1e-12      # a second eigenvalue modulus below this is rho2 = 0
_ONE_RATE = 1e-12       # rho2 within this of 1: W^t has no rank-one limit
_DEPENDENT = 1e-6       # eigenvectors of the top cluster with sigma_min below: defective
_WEIGHT_TOL = 1e-9      # tolerance of the weight-rule comparison


class GraphConstants(NamedTuple):
    """The graph quantities of Theorems 1 and 2 for one weight matrix ``W`` (module docstring).

    Attributes:
        num_agents: ``N``.
        diameter: ``d``, the longest shortest directed path in hops (``math.inf`` if the graph
            is not strongly connected).
        neighbourhood_sizes: int ``[N]``, ``|N_i|`` = number of in-neighbours + 1.
        perron_vector: float ``[N]`` ``pi`` with ``pi^T W = pi^T``, ``sum pi = 1``; None when
            ``W`` has several closed classes (no unique limit ``1 pi^T``).
        second_eigenvalue: the eigenvalue of ``W`` of second-largest modulus (complex for
            non-symmetric W; 0 for ``N = 1``).
        mixing_rate: ``rho2 = |second_eigenvalue|``, the geometric rate of ``W^t -> 1 pi^T``
            (0.0 when below 1e-12).
        mixing_constant: ``c = max_t max_ij |W^t - 1 pi^T|_ij / rho2^t`` over the ``t >= 0``
            with ``rho2^t >= 1e-9`` (see ``powers_examined``); None when no such constant
            exists (``note`` says why).
        mixing_constant_ceil: ``ceil(c)`` (computed as ``ceil(c - 1e-9)`` so that round-off
            cannot lift an integer c), or None.
        burn_in: ``L`` (:func:`burn_in_time`); ``math.inf`` when ``rho2 = 1``; None when c
            does not exist.
        powers_examined: the number of powers ``W^0 ... W^(k-1)`` over which c's max was taken.
        note: empty, or why c / L are missing or approximate.

    The paper's letters are available as properties: ``d``, ``rho2``, ``c``, ``c_ceil``, ``L``.
    """

    num_agents: int
    diameter: int | float
    neighbourhood_sizes: np.ndarray
    perron_vector: np.ndarray | None
    second_eigenvalue: complex
    mixing_rate: float
    mixing_constant: float | None
    mixing_constant_ceil: int | None
    burn_in: int | float | None
    powers_examined: int
    note: str = ""

    @property
    def d(self) -> int | float:
        """The diameter ``d``."""
        return self.diameter

    @property
    def rho2(self) -> float:
        """``rho2``, the second-largest eigenvalue modulus."""
        return self.mixing_rate

    @property
    def c(self) -> float | None:
        """The constant ``c``."""
        return self.mixing_constant

    @property
    def c_ceil(self) -> int | None:
        """``ceil(c)``."""
        return self.mixing_constant_ceil

    @property
    def L(self) -> int | float | None:  # noqa: N802 - the paper's letter
        """The constant ``L``."""
        return self.burn_in


def _check_rule(rule) -> str:
    if rule not in ("row", "metropolis"):
        raise ValueError(f"rule must be 'row' (flocking weights 1/|N_i|, Theorem 1) or "
                         f"'metropolis' (Theorem 2) for a boolean adjacency; got {rule!r}.")
    return rule


def _static_weights(seq: GraphSequence, what: str) -> np.ndarray:
    if seq.form == "static" or (seq.form == "periodic" and seq.period == 1):
        return np.asarray(seq.weights_host(1)[0])       # its own dtype (checked by the caller)
    raise ValueError(f"{what} communicates over a time-varying graph sequence (form "
                     f"{seq.form!r}); Theorems 1 and 2 and their constants are stated for one "
                     "fixed graph. Pass one step's weights, e.g. "
                     "graph_constants(seq.weights_host(1, start=t)[0]), to study a single step.")


def _as_weight_matrix(graph, rule: str | None) -> np.ndarray:
    """Row-stochastic ``W`` from a weight matrix, a boolean adjacency with ``rule``, a static
    :class:`~decentral.graphs.GraphSequence` or a policy communicating over one, in its own
    float dtype: its row sums are checked with that dtype's tolerance (callers compute in
    float64 with ``np.asarray(W, np.float64)`` and take tolerances from
    :func:`_source_tolerance`)."""
    if isinstance(graph, Policy):
        if graph.graphs is None:
            raise ValueError(f"policy {graph.name!r} does not communicate over a graph; the "
                             "bounds of Theorems 1 and 2 need the graph of a decentralized "
                             "policy such as dec_ucb(graph).")
        return g.require_stochastic(_static_weights(graph.graphs, f"policy {graph.name!r}"),
                                    "row", name="the policy's W")
    if isinstance(graph, GraphSequence):
        return g.require_stochastic(_static_weights(graph, "this graph sequence"), "row",
                                    name="the sequence's W")
    if isinstance(graph, (list, tuple)):
        raise ValueError("a list of graphs is a time-varying (periodic) sequence; Theorems 1 "
                         "and 2 and their constants are stated for one fixed graph.")
    mat = np.asarray(graph)
    if mat.dtype == bool:
        if mat.ndim != 2 or mat.shape[0] != mat.shape[1] or mat.shape[0] < 1:
            raise ValueError(f"an adjacency must be a square [N, N] array; got shape "
                             f"{mat.shape}.")
        pattern = mat | np.eye(mat.shape[0], dtype=bool)
        rule_fn = row_rule if _check_rule(rule) == "row" else metropolis_rule
        return rule_fn(pattern)
    return g.require_stochastic(mat, "row", name="W")


def _source_tolerance(W_given: np.ndarray) -> float:
    """The row-sum tolerance of W's own dtype (1e-10 for float64, ``64 n eps`` below)."""
    return effective_tolerance(W_given)


def _sizes_of(W: np.ndarray) -> np.ndarray:
    off = (W > 0) & ~np.eye(W.shape[0], dtype=bool)
    return off.sum(axis=1) + 1


def _spectrum(W: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Eigenvalues sorted by decreasing modulus and, for non-symmetric W, the matching unit
    right eigenvectors (None for symmetric W: never defective)."""
    if np.allclose(W, W.T, rtol=0, atol=1e-14):
        ev = np.linalg.eigvalsh((W + W.T) / 2).astype(complex)
        return ev[np.argsort(-np.abs(ev), kind="stable")], None
    ev, vecs = scipy.linalg.eig(W)
    order = np.argsort(-np.abs(ev), kind="stable")
    return ev[order], vecs[:, order]


def _defective_at_top(ev: np.ndarray, vecs: np.ndarray | None, rate: float) -> float | None:
    """Smallest singular value of the unit eigenvectors of the eigenvalues clustered around
    those of modulus ``rate`` (excluding the Perron eigenvalue) when they are numerically
    dependent (a Jordan block: W is not diagonalizable there), else None."""
    if vecs is None or ev.size < 2:
        return None
    rest = ev[1:]
    top = rest[np.abs(rest) >= rate * (1 - 1e-9) - 1e-15]
    tol = 1e-2 * rate + 1e-12
    near = [k + 1 for k, lam in enumerate(rest) if np.min(np.abs(lam - top)) <= tol]
    sigma = np.linalg.svd(vecs[:, near], compute_uv=False)
    smallest = float(sigma.min()) if sigma.size else 1.0
    return smallest if smallest < _DEPENDENT else None


def burn_in_time(num_agents: int, c_ceil: int, rho2: float) -> int | float:
    """``L``: the smallest ``t0`` with ``f(t) = 72 N C t rho2^(t / (12 N C) - 1) < 1`` for all
    ``t >= t0`` (``C = ceil(c)``), over the integers ``t >= 0``.

    ``ln f(t) = ln(72 N C) + ln t + (t / (12 N C) - 1) ln rho2`` is concave, so
    ``{t : f(t) >= 1}`` is an interval and ``L`` is one past its right end. The end solves
    ``t e^(a t) = rho2 / (72 N C)`` with ``a = ln(rho2) / (12 N C)``, i.e.
    ``t = W_{-1}(a rho2 / (72 N C)) / a`` (Lambert W, lower branch); the integers next to it are
    then checked with ``ln f`` directly. No real root (argument below ``-1/e``) means
    ``f < 1`` everywhere and ``L = 0``.

    Conventions: ``L = 0`` when ``rho2 = 0`` (``W = 1 pi^T`` after one step; the formula has
    ``0^(-1)`` there, and its limit as ``rho2 -> 0`` is not 0) or ``C = 0``; ``L = inf``
    when ``rho2 >= 1``.

    Example:
        >>> burn_in_time(6, 3, 0.25), burn_in_time(50, 1, 0.98)
        (2556, 640890)
    """
    from decentral._checks import check_int

    n = check_int(num_agents, "num_agents", minimum=1)
    cc = check_int(c_ceil, "c_ceil", minimum=0)
    rho = float(rho2)
    if not (math.isfinite(rho) and rho >= 0):
        raise ValueError(f"rho2 must be a finite number >= 0; got {rho2!r}.")
    if rho == 0 or cc == 0:
        return 0
    if rho >= 1:
        return math.inf
    span = 12 * n * cc
    scale = 72 * n * cc
    log_rho = math.log(rho)

    def log_f(t: int) -> float:
        return math.log(scale) + math.log(t) + (t / span - 1) * log_rho

    a = log_rho / span
    x = a * rho / scale
    if x < -1 / math.e:
        return 0
    right = float(lambertw(x, -1).real) / a
    top = math.floor(right)
    for t in range(top + 2, max(top - 3, 0), -1):
        if log_f(t) >= 0:
            return t + 1
    return 0


def graph_constants(graph, *, rule: str | None = None, max_powers: int = 100_000,
                    floor: float = 1e-9) -> GraphConstants:
    """``d``, ``|N_i|``, ``pi``, ``rho2``, ``c``, ``ceil(c)`` and ``L`` of Theorems 1 and 2.

    Args:
        graph: a row-stochastic weight matrix ``W [N, N]`` (``W[i, j] > 0``: i receives from
            j), a boolean adjacency together with ``rule``, a static
            :class:`~decentral.graphs.GraphSequence`, or a decentralized policy
            (e.g. :func:`~decentral.bandits.dec_ucb`) over a static graph. Weights below
            float64 (float32, bfloat16) are checked with their own dtype's tolerance and
            used as the nearest exactly row-stochastic matrix (rows renormalised in float64).
        rule: ``"row"`` (flocking weights ``1/|N_i|``) or ``"metropolis"`` for an adjacency
            (self-loops are added). Metropolis weights of a directed adjacency use the
            in-neighbourhood sizes; they are row- but not doubly stochastic.
        max_powers: the most powers ``W^t`` examined for ``c`` (``t < max_powers``); when
            ``rho2^t >= floor`` holds longer, c is the max over the powers examined and
            ``note`` says so.
        floor: c's max runs over the ``t`` with ``rho2^t >= floor`` (beyond it round-off in
            ``W^t - 1 pi^T`` would be divided by a tiny ``rho2^t``).

    Returns:
        :class:`GraphConstants`. ``c`` (and ``L``) is None when ``W`` has a defective
        eigenvalue of modulus ``rho2`` (a Jordan block: ``W^t - 1 pi^T`` then decays like
        ``t^(k-1) rho2^t`` and no constant c bounds it by ``c rho2^t``); ``L`` is inf when
        ``rho2 = 1`` (several closed classes, or a periodic W).

    Raises:
        ValueError: W (given, or the weights of a sequence or policy) not square, not
            finite, negative or not row-stochastic; an agent without a self-weight
            ``W[i, i] > 0``; an adjacency without a rule; a time-varying sequence. Several
            closed classes are not an error: ``perron_vector`` is then None and ``note`` says
            so (they are counted on the pattern ``W > 0``).

    Example:
        >>> from decentral.bandits import paper_graph
        >>> from decentral.graphs import row_stochastic
        >>> k = graph_constants(row_stochastic(paper_graph("strongly")))
        >>> k.neighbourhood_sizes.tolist(), k.diameter, round(k.mixing_rate, 6)
        ([4, 4, 4, 4, 6, 3], 3, 0.25)
        >>> round(k.mixing_constant, 2), k.mixing_constant_ceil, k.burn_in
        (2.2, 3, 2556)
        >>> graph_constants(paper_graph("weakly_path"), rule="row").mixing_constant is None
        True
    """
    from decentral._checks import check_int

    max_powers = check_int(max_powers, "max_powers", minimum=1)
    if not (isinstance(floor, (int, float)) and 0 < floor < 1):
        raise ValueError(f"floor must be a number in (0, 1); got {floor!r}.")
    W_given = _as_weight_matrix(graph, rule)
    W = np.asarray(W_given, np.float64)
    if W_given.dtype != np.float64:
        # stochastic only to its own precision (float32 rows sum to 1 +- n eps32): take the
        # nearest exactly stochastic matrix, else W^t drifts from 1 pi^T by ~t n eps32 and
        # that round-off, divided by rho2^t, would inflate c (and L) many times over
        W = W / W.sum(axis=1, keepdims=True)
    n = W.shape[0]
    sizes = _sizes_of(W)
    diameter = g.diameter(W)
    # pi is None only when there really are several closed classes (counted, never inferred
    # from an error: a float32 W cast to float64 is row-stochastic to its own dtype's
    # tolerance only, which perron_vector is told)
    if len(closed_classes(W > 0)) > 1:
        pi = None
    else:
        pi = np.asarray(g.perron_vector(W, tol=_source_tolerance(W_given)), np.float64)
    ev, vecs = _spectrum(W)
    second = complex(ev[1]) if n > 1 else 0j
    rate = abs(second)
    common = dict(num_agents=n, diameter=diameter, neighbourhood_sizes=sizes, perron_vector=pi,
                  second_eigenvalue=second)
    if pi is None or rate >= 1 - _ONE_RATE:
        why = ("W has several closed classes (no unique limit 1 pi^T)" if pi is None else
               "W has a second eigenvalue of modulus 1 (W^t does not converge)")
        return GraphConstants(**common, mixing_rate=min(rate, 1.0), mixing_constant=None,
                              mixing_constant_ceil=None, burn_in=math.inf, powers_examined=0,
                              note=f"rho2 = 1: {why}; c does not exist and L is infinite.")
    smallest = _defective_at_top(ev, vecs, rate)
    if rate < _ZERO_RATE:
        rate = 0.0
    if smallest is not None:
        return GraphConstants(**common, mixing_rate=rate, mixing_constant=None,
                              mixing_constant_ceil=None, burn_in=None, powers_examined=0,
                              note=f"W is not diagonalizable at modulus rho2 = {rate:.6g} (its "
                                   f"eigenvectors there are dependent: smallest singular value "
                                   f"{smallest:.2e}), so |W^t - 1 pi^T| decays slower than "
                                   "rho2^t: c does not exist and L is undefined.")
    limit = np.outer(np.ones(n), pi)
    steps = 1 if rate == 0 else int(math.floor(math.log(floor) / math.log(rate))) + 1
    note = ""
    if steps > max_powers:
        note = (f"c is the max over t < {max_powers} only (rho2^t >= {floor:g} holds for "
                f"t < {steps}); raise max_powers for the full range.")
        steps = max_powers
    power = np.eye(n)
    c = 0.0
    for t in range(steps):
        c = max(c, float(np.abs(power - limit).max()) / rate ** t)
        power = power @ W
    if rate == 0 and np.abs(power - limit).max() > 1e-12:
        return GraphConstants(**common, mixing_rate=0.0, mixing_constant=None,
                              mixing_constant_ceil=None, burn_in=None, powers_examined=steps,
                              note="rho2 = 0 but W != 1 pi^T: W - 1 pi^T is nilpotent of "
                                   "index > 1, so c does not exist and L is undefined.")
    c_ceil = max(math.ceil(c - 1e-9), 0)
    return GraphConstants(**common, mixing_rate=rate, mixing_constant=c,
                          mixing_constant_ceil=c_ceil, burn_in=burn_in_time(n, c_ceil, rate),
                          powers_examined=steps, note=note)


# --------------------------------------------------------------------------------------------
# Theorem 1 / Theorem 2 bounds
# --------------------------------------------------------------------------------------------

class TheoremBound(NamedTuple):
    """Theorem 1 or 2's regret bound per agent and horizon (:func:`theorem_bound`).

    Shapes: ``[N, *H, ...]`` over all agents (``H`` the shape of ``horizon``), without the
    leading ``N`` when one agent was asked for.

    Attributes:
        theorem: 1 or 2.
        horizon: float64 ``[*H]``, the horizons ``T``.
        bound: ``[N, *H]``, the right-hand side of the theorem (``inf`` when ``d`` or ``L`` is).
        per_arm: ``[N, *H, M]``, arm k's term ``Delta_k [max{...} + 2 pi^2/3 + M^2 +
            (2M - 1) d]`` (0 for ``Delta_k = 0``).
        dominant: str ``[N, *H, M]``, the largest term inside the max for each arm, one of
            :data:`BOUND_TERMS` (``"log"`` on ties); ``""`` for optimal arms.
        log_coefficient: ``[N]``, the ``ln T`` coefficient ``sum_{Delta_k > 0} a_{i,k}
            Delta_k`` (``sum 16 / (3 Delta_k)`` or ``sum 12 / (|N_i| Delta_k)``).
        log_gap_threshold: ``[N, *H]``, the gap below which the ``ln T`` term is the largest:
            arm k's is ``"log"`` iff ``Delta_k <= sqrt(a_i ln T / max{2(M^2 + 2Md + d), L})``
            with ``a_{i,k} = a_i / Delta_k^2``.
        gaps: ``[N, M]``, ``Delta_{i,k}`` used (the same rows when the agents share the means).
        constants: the :class:`GraphConstants` of the graph.
        hypotheses_failed: the hypotheses of the theorem that do not hold (also warned).
    """

    theorem: int
    horizon: np.ndarray
    bound: np.ndarray
    per_arm: np.ndarray
    dominant: np.ndarray
    log_coefficient: np.ndarray
    log_gap_threshold: np.ndarray
    gaps: np.ndarray
    constants: GraphConstants
    hypotheses_failed: tuple[str, ...] = ()

    def dominated_by(self, term: str) -> np.ndarray:
        """Bool ``[N, *H]``: every arm with ``Delta_k > 0`` has ``term`` as its largest term
        (e.g. ``"L"``: the bound is set by the graph's burn-in, near-vacuous as evidence)."""
        if term not in BOUND_TERMS:
            raise ValueError(f"term must be one of {BOUND_TERMS}; got {term!r}.")
        return np.all((self.dominant == term) | (self.dominant == ""), axis=-1)


def _agent_gaps(means, n: int) -> tuple[np.ndarray, float]:
    """``Delta [N, M]`` from means ``[M]``, ``[N, M]`` or an :class:`Arms`, and the largest
    spread of the agents' means."""
    if isinstance(means, Arms):
        mu = means.true_means(n) if means.per_agent else np.broadcast_to(means.means[0],
                                                                        (n, means.num_arms))
        if means.per_agent and mu.shape[0] != n:
            raise ValueError(f"the arms are per agent for {mu.shape[0]} agents; the graph has "
                             f"{n}.")
    else:
        mu = np.asarray(means, np.float64)
        if mu.ndim == 1:
            gaps_of(mu)                                   # the [M] checks and messages
            mu = np.broadcast_to(mu, (n, mu.shape[0]))
        elif mu.ndim != 2 or mu.shape[0] != n:
            raise ValueError(f"means must be [M] or one row per agent [N = {n}, M]; got shape "
                             f"{list(mu.shape)}.")
    mu = np.asarray(mu, np.float64)
    if mu.shape[1] < 2:
        raise ValueError(f"means need M >= 2 arms; got {mu.shape[1]}.")
    if not np.all(np.isfinite(mu)) or np.any(mu < 0) or np.any(mu > 1):
        raise ValueError(f"means must be finite and in [0, 1]; got {mu.tolist()}.")
    spread = float((mu.max(axis=0) - mu.min(axis=0)).max())
    return mu.max(axis=1, keepdims=True) - mu, spread


def _horizons(horizon) -> np.ndarray:
    try:
        t = np.asarray(horizon, np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"horizon must be a number or an array of numbers >= 1; got "
                         f"{horizon!r}.") from None
    if t.size == 0 or not np.all(np.isfinite(t)) or np.any(t < 1):
        raise ValueError(f"horizon must be >= 1 (finite); got {t.tolist()}.")
    return t


def _weights_rule_failure(W: np.ndarray, theorem: int, entry_tol: float = _WEIGHT_TOL
                          ) -> str | None:
    pattern = (W > 0) | np.eye(W.shape[0], dtype=bool)
    if theorem == 1:
        expected, name = row_rule(pattern), "flocking weights w_ij = 1/|N_i|"
    else:
        expected, name = metropolis_rule(pattern), "Metropolis weights 1/max(|N_i|, |N_j|)"
    dev = np.abs(W - expected)
    if dev.max() <= entry_tol and np.all(np.diag(W) > 0):
        return None
    i, j = np.unravel_index(np.argmax(dev), dev.shape)
    return (f"the weights are not the {name} (W[{i}, {j}] = {W[i, j]:.6g}, the rule gives "
            f"{expected[i, j]:.6g})")


def _graph_failures(W: np.ndarray, theorem: int, entry_tol: float = _WEIGHT_TOL
                    ) -> list[str]:
    fails = []
    pattern = (W > 0) | np.eye(W.shape[0], dtype=bool)
    strong = g.is_strongly_connected(pattern)
    if theorem == 1:
        if not strong:
            weak = nx.is_weakly_connected(g.to_networkx(pattern))
            fails.append("the graph is not strongly connected (it is "
                         f"{'weakly connected' if weak else 'not even weakly connected'})")
    else:
        if not np.array_equal(pattern, pattern.T):
            i, j = np.argwhere(pattern & ~pattern.T)[0]
            fails.append(f"the graph is directed (agent {i} hears {j} but {j} does not hear "
                         f"{i}), not undirected")
        elif not strong:
            fails.append("the undirected graph is not connected")
    rule = _weights_rule_failure(W, theorem, entry_tol)
    if rule is not None:
        fails.append(rule)
    return fails


def _policy_failures(policy: Policy, theorem: int) -> list[str]:
    config = dict(policy.config or {})
    if policy.name != "dec_ucb":
        return [f"policy {policy.name!r} is not Dec_UCB (Theorems 1 and 2 bound Dec_UCB's "
                "regret; see the *_log_coefficient functions for other policies)"]
    fails = []
    own = config.get("theorem")
    if own is not None and own != theorem:
        fails.append(f"the policy runs Theorem {own}'s width and weight rule, not Theorem "
                     f"{theorem}'s")
    expected = 4.0 / 3.0 if theorem == 1 else 3.0
    constant = np.asarray(getattr(policy.params, "exploration_constant", expected), np.float64)
    if constant.shape != () or not math.isclose(float(constant), expected, rel_tol=1e-12):
        fails.append(f"the policy's exploration constant is {constant.tolist()}, Theorem "
                     f"{theorem}'s is {expected:.6g}")
    if config.get("max_consensus", "paper") != "paper":
        fails.append(f"the policy's max-consensus is {config['max_consensus']!r}, not the "
                     "paper's max over all in-neighbours")
    return fails


def theorem_bound(graph, means, horizon, *, theorem: int | None = None,
                  agent: int | None = None) -> TheoremBound:
    """Theorem 1 or 2's upper bound on each agent's regret ``R_i(T)`` (module docstring).

    Args:
        graph: a row-stochastic ``W``, a boolean adjacency (the theorem's weight rule is
            applied: flocking for 1, Metropolis for 2, as :func:`~decentral.bandits.dec_ucb`
            does; a directed adjacency gets the Metropolis formula with in-neighbourhood
            sizes, and a warning), a static :class:`~decentral.graphs.GraphSequence`, or a
            :func:`~decentral.bandits.dec_ucb` policy (its graph; time-varying sequences are
            refused).
        means: the arm means ``[M]`` shared by the agents, one row per agent ``[N, M]``, or an
            :class:`~decentral.bandits.Arms` (its true means).
        horizon: ``T >= 1``, a number or an array of horizons.
        theorem: 1 or 2; default: the policy's theorem for a ``dec_ucb`` policy, else 1.
        agent: one agent's bound (drops the leading ``N`` axis); default all agents.

    Returns:
        :class:`TheoremBound`.

    Warns:
        HypothesisWarning: the theorem's hypotheses fail (Theorem 1: a strongly connected graph
            with flocking weights; Theorem 2: an undirected connected graph with Metropolis
            weights; for a policy: Dec_UCB with the theorem's width and the paper's
            max-consensus; agents sharing the means). The bound is computed anyway.

    Raises:
        ValueError: bad weights, means or horizons; ``c`` does not exist for the graph (a
            defective eigenvalue at modulus ``rho2``); an agent out of range; a time-varying
            graph.

    Example:
        >>> from decentral.bandits import paper_graph
        >>> b = theorem_bound(paper_graph("undirected"), [0.9, 0.8, 0.5], [1e3, 1e5],
        ...                   theorem=2, agent=2)                # |N_2| = 2
        >>> b.constants.burn_in, b.dominant.tolist()
        (5598, [['', 'L', 'L'], ['', 'log', 'L']])
        >>> round(float(b.log_coefficient), 2)                  # 12/2 (1/0.1 + 1/0.4)
        75.0
    """
    from decentral._checks import check_int

    policy = graph if isinstance(graph, Policy) else None
    if theorem is None:
        theorem = (policy.config or {}).get("theorem", 1) if policy is not None else 1
    if theorem not in (1, 2):
        raise ValueError(f"theorem must be 1 (strongly connected, flocking weights) or 2 "
                         f"(undirected connected, Metropolis weights); got {theorem!r}.")
    W_given = _as_weight_matrix(graph, "row" if theorem == 1 else "metropolis")
    W = np.asarray(W_given, np.float64)
    n = W.shape[0]
    gaps, spread = _agent_gaps(means, n)
    t = _horizons(horizon)
    if agent is not None:
        agent = check_int(agent, "agent", minimum=0, maximum=n - 1)

    # a float32 W equals the rule to its own precision only (~eps32 per entry)
    fails = _graph_failures(W, theorem, sum_tolerance(W_given.dtype, 1, _WEIGHT_TOL))
    if policy is not None:
        fails += _policy_failures(policy, theorem)
    if spread > 1e-12:
        fails.append(f"the agents' means differ (by up to {spread:.3g}); each agent's bound "
                     "uses its own gaps")
    constants = graph_constants(W_given)
    if constants.mixing_constant is None and constants.burn_in is None:
        raise ValueError(f"Theorem {theorem}'s L is undefined for this graph: "
                         f"{constants.note}"
                         + (f" (also: {'; '.join(fails)})" if fails else ""))
    if fails:
        warn_hypothesis(f"Theorem {theorem} does not apply: {'; '.join(fails)}. The bound is "
                        "computed anyway.")

    M = gaps.shape[1]
    d = float(constants.diameter)
    L = float(constants.burn_in)
    numerator = (np.full(n, 16.0 / 3.0) if theorem == 1 else
                 12.0 / constants.neighbourhood_sizes.astype(np.float64))      # a_i
    sub = gaps > 0
    safe = np.where(sub, gaps, 1.0)
    extra = (1,) * t.ndim
    log_t = np.log(t)
    with np.errstate(invalid="ignore"):
        graph_term = 2 * (M ** 2 + 2 * M * d + d)
        constant_term = 2 * np.pi ** 2 / 3 + M ** 2 + (2 * M - 1) * d
        log_term = (numerator.reshape((n,) + extra + (1,)) * log_t[None, ..., None]
                    / safe.reshape((n,) + extra + (M,)) ** 2)            # [N, *H, M]
        terms = np.stack(np.broadcast_arrays(log_term, graph_term, L), axis=-1)
        largest = terms.max(axis=-1)
        which = np.argmax(terms, axis=-1)
        sub_b = np.broadcast_to(sub.reshape((n,) + extra + (M,)), largest.shape)
        gap_b = np.broadcast_to(gaps.reshape((n,) + extra + (M,)), largest.shape)
        per_arm = np.where(sub_b, gap_b * (largest + constant_term), 0.0)
        other = max(graph_term, L)
        threshold = (np.sqrt(numerator.reshape((n,) + extra) * log_t[None] / other)
                     if other > 0 else np.full((n,) + t.shape, np.inf))
    dominant = np.where(sub_b, np.asarray(BOUND_TERMS)[which], "")
    coefficient = np.where(sub, numerator[:, None] / safe, 0.0).sum(axis=1)
    result = TheoremBound(theorem=theorem, horizon=t, bound=per_arm.sum(axis=-1),
                          per_arm=per_arm, dominant=dominant, log_coefficient=coefficient,
                          log_gap_threshold=threshold, gaps=np.array(gaps), constants=constants,
                          hypotheses_failed=tuple(fails))
    if agent is None:
        return result
    return result._replace(bound=result.bound[agent], per_arm=per_arm[agent],
                           dominant=dominant[agent], log_coefficient=coefficient[agent],
                           log_gap_threshold=threshold[agent], gaps=result.gaps[agent])


# --------------------------------------------------------------------------------------------
# ln T coefficients of the bounds
# --------------------------------------------------------------------------------------------

def _neighbourhood_sizes(sizes, name: str = "neighbourhood_sizes") -> np.ndarray:
    arr = np.asarray(sizes, np.float64) if sizes is not None else None
    if arr is None or arr.ndim > 1 or not np.all(np.isfinite(arr)) or np.any(arr < 1):
        raise ValueError(f"{name} must be a number or a vector [N] of |N_i| >= 1 (the agent "
                         f"counts itself); got {sizes!r}.")
    return arr


def _nonnegative(value, name: str) -> np.ndarray:
    arr = np.asarray(value, np.float64)
    if arr.ndim > 1 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be a finite number >= 0 (or one per agent); got "
                         f"{value!r}.")
    return arr


def _out(value: np.ndarray):
    return float(value) if np.ndim(value) == 0 else value


def ucb1_log_coefficient(means) -> float:
    """``sum_{Delta_k > 0} 8 / Delta_k``: the ``ln T`` coefficient of UCB1's bound
    (:func:`ucb1_regret_bound`, Auer et al. 2002, Theorem 1).

    Example:
        >>> round(ucb1_log_coefficient([0.9, 0.8, 0.5]), 9)            # 8 (1/0.1 + 1/0.4)
        100.0
    """
    gap = gaps_of(means)
    return float(np.sum(8.0 / gap[gap > 0]))


def kl_ucb_log_coefficient(means) -> float:
    """``sum_{Delta_k > 0} Delta_k / kl(mu_k, mu*)``: KL-UCB's asymptotic ``ln T`` coefficient
    (Garivier & Cappé 2011; equal to :func:`lai_robbins_constant`).

    Example:
        >>> kl_ucb_log_coefficient([0.9, 0.8]) == lai_robbins_constant([0.9, 0.8])
        True
    """
    return lai_robbins_constant(means)


def theorem_log_coefficient(means, *, theorem: int = 1, neighbourhood_sizes=None):
    """The ``ln T`` coefficient of Theorem 1 or 2's bound: ``sum_{Delta_k > 0} 16 / (3
    Delta_k)`` (Theorem 1) or ``sum 12 / (|N_i| Delta_k)`` (Theorem 2).

    Args:
        means: ``[M]`` means or an :class:`~decentral.bandits.Arms`.
        theorem: 1 or 2.
        neighbourhood_sizes: ``|N_i|``, a number or ``[N]`` (needed for Theorem 2; with
            Theorem 1 it only shapes the output).

    Returns:
        A float, or ``[N]`` for a vector of sizes.

    Example:
        >>> round(theorem_log_coefficient([0.9, 0.8], theorem=1), 6)     # 2/3 of UCB1's 80
        53.333333
        >>> theorem_log_coefficient([0.9, 0.8], theorem=2, neighbourhood_sizes=[2, 3]).round(9)
        array([60., 40.])
    """
    if theorem not in (1, 2):
        raise ValueError(f"theorem must be 1 or 2; got {theorem!r}.")
    gap = gaps_of(means)
    inverse = float(np.sum(1.0 / gap[gap > 0]))
    if theorem == 1:
        value = 16.0 / 3.0 * inverse
        if neighbourhood_sizes is None:
            return value
        return _out(np.full(_neighbourhood_sizes(neighbourhood_sizes).shape, value))
    if neighbourhood_sizes is None:
        raise ValueError("Theorem 2's coefficient depends on |N_i|: pass neighbourhood_sizes.")
    return _out(12.0 * inverse / _neighbourhood_sizes(neighbourhood_sizes))


def dec_ucb1_log_coefficient(means, neighbourhood_sizes, *, beta=0.01):
    """``sum_{Delta_k > 0} 12 (1 + beta)^2 / (|N_i| Delta_k)`` for Dec-UCB1 (the journal
    version), whose width is Theorem 2's inflated by ``1 + beta``.

    Derived here from the index by Theorem 2's argument (a width ``(1 + beta) C`` needs
    ``(1 + beta)^2`` times the pulls), not a published constant; it equals Theorem 2's
    coefficient at ``beta = 0``.

    Args:
        means: ``[M]`` means or an :class:`~decentral.bandits.Arms`.
        neighbourhood_sizes: ``|N_i|``, a number or ``[N]``.
        beta: ``beta >= 0``, a number or one per agent ``[N]``.

    Example:
        >>> round(dec_ucb1_log_coefficient([0.9, 0.8], 3, beta=0.0), 9)
        40.0
    """
    gap = gaps_of(means)
    inverse = float(np.sum(1.0 / gap[gap > 0]))
    sizes = _neighbourhood_sizes(neighbourhood_sizes)
    b = _nonnegative(beta, "beta")
    return _out(12.0 * (1 + b) ** 2 * inverse / sizes)


def dec_kl_ucb_log_coefficient(means, neighbourhood_sizes, *, varsigma=0.01):
    """``sum_{Delta_k > 0} 3 (1 + varsigma) Delta_k / (2 |N_i| kl(mu_k, mu*))`` for
    Dec-KL-UCB (the journal version), whose exploration budget is
    ``3 (1 + varsigma) (ln t + 3 ln ln t) / (2 |N_i|)``.

    Derived here from the index (the budget's ``ln t`` factor over ``kl``), not a published
    constant: it is :func:`kl_ucb_log_coefficient` times ``3 (1 + varsigma) / (2 |N_i|)``,
    smaller iff ``|N_i| > 1.5 (1 + varsigma)``. Arms with ``kl = inf`` (``mu* = 1``)
    contribute 0.

    Example:
        >>> k = dec_kl_ucb_log_coefficient([0.9, 0.8], 3, varsigma=1.0)
        >>> bool(abs(k - kl_ucb_log_coefficient([0.9, 0.8])) < 1e-12)   # 3 * 2 / (2 * 3) = 1
        True
    """
    sizes = _neighbourhood_sizes(neighbourhood_sizes)
    s = _nonnegative(varsigma, "varsigma")
    return _out(3.0 * (1 + s) * kl_ucb_log_coefficient(means) / (2.0 * sizes))
