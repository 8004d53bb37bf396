"""Sequential statistical judges: draw seeds in batches, stop as soon as the verdict is decided.

:func:`sequential_mean` judges "the mean of a per-seed quantity lies in ``accept``" (an upper
bound, a lower bound or a range) from batches of seeds drawn by the caller, one batch per
look, until the interval decides or the seed budget is spent. Two rules, chosen by the kind of
quantity:

* ``method="clt"`` — for unbounded or wide-range quantities (a mean squared error, a regret
  whose only bound is ``T * gap_max``, a paired difference). A group-sequential design on the
  mean's ``t`` statistic: the looks are planned (``batch, 2 batch, ..., max_seeds`` seeds), the
  critical value of look ``k`` comes from an alpha-spending function
  (:func:`decentral.verify.boundaries.spending_bounds`, O'Brien–Fleming type by default), and
  the interval at look ``k`` is the *repeated confidence interval* ``mean ± c_k' s / sqrt(n_k)``
  (Jennison & Turnbull 2000, chapter 9), with ``c_k'`` the Student-t quantile of the same tail
  probability as ``c_k``. The intervals of all looks hold the mean together with probability
  about ``1 - alpha`` (asymptotically, like any CLT interval).
* ``method="confseq"`` — for quantities with a known range that is useful (pull counts,
  rewards in [0, 1], indicator rates): the empirical-Bernstein confidence sequence
  (:func:`decentral.verify.confseq.empirical_bernstein_cs`), valid at every sample size with
  no asymptotics.

A CLT interval assumes the sample mean is close to normal. For non-negative samples the judge
measures the share of the sum carried by the top 1 % of seeds
(:func:`decentral.verify.tails.top_share`) and compares it with what exponential samples of the
same count give (:func:`decentral.verify.tails.exponential_top_share`). Above twice that, the
right tail is heavy: the sample mean then usually falls *below* the mean and the interval's
upper end is too low. Below ``TAIL_MIN_SEEDS`` (300) seeds the top 1 % is under 3 seeds and a
tail of that probability has likely not been drawn at all. In both cases, when the claim's
bound is positive (the guard is for quantities such as squared errors, not for differences
that happen to be positive), the CLT interval is not used: the verdict rests on a lower end
that needs no tail assumption (the mean of ``min(X, c)``, which bounds ``E[X]`` from below, by
the confidence sequence of the truncated samples; ``c = ROBUST_TRUNCATION`` times the claim's
bound), and nothing is decided on the upper side. So a FAIL of an upper bound or a PASS of a
lower bound can still be decided; a PASS of an upper bound waits for enough seeds and a light
tail, or ends INCONCLUSIVE with the diagnostic.

Seeds are deterministic: ``draw(k)`` must return the same samples for batch ``k`` every time (e.g.
seeds ``k * batch ... (k + 1) * batch - 1``), so a rerun repeats the verdict, and one compiled
program of batch size serves every look. ``seeds=`` fixes the count instead (one look, no
stopping, the fixed-sample interval at level ``1 - alpha``).

Example:
    >>> import numpy as np
    >>> draw = lambda k: np.random.default_rng(k).normal(1.0, 1.0, size=32)
    >>> r = sequential_mean(draw, batch=32, max_seeds=512, accept=(-np.inf, 2.0))
    >>> r.verdict.value, r.seeds < 512
    ('PASS', True)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np
from scipy import special

from decentral._checks import check_int
from decentral.verify.boundaries import spending_bounds
from decentral.verify.claims import Verdict, judge_interval
from decentral.verify.confseq import empirical_bernstein_cs
from decentral.verify.stats import _as_samples, _open_unit, _real
from decentral.verify.tails import exponential_top_share, top_share

__all__ = ["SequentialResult", "sequential_mean", "sequential_means", "HEAVY_TAIL_RATIO",
           "TAIL_MIN_SEEDS", "ROBUST_TRUNCATION", "METHODS"]

METHODS = ("clt", "confseq")

# A top-1 % share above this multiple of the exponential reference flags a heavy right tail.
# (Squared Gaussian errors, chi-square with one degree of freedom, sit near 1.5x; the
# diminishing-step SA errors that motivated the check near 4.5x at 2000 seeds.)
HEAVY_TAIL_RATIO = 2.0
# Below this many seeds the top 1 % holds fewer than 3 seeds and a tail of probability 1 % has
# likely not been drawn at all, so the diagnostic cannot clear the upper end of the interval.
TAIL_MIN_SEEDS = 300
# Truncation level of the tail-robust lower end, as a multiple of the claim's bound.
ROBUST_TRUNCATION = 4.0


class SequentialResult(NamedTuple):
    """What :func:`sequential_mean` decided, and on how many seeds.

    Attributes:
        verdict: PASS (the interval lies within ``accept``), FAIL (disjoint from it) or
            INCONCLUSIVE (budget spent; ``reason`` says why).
        mean: the sample mean at the last look.
        lo, hi: the interval at the last look (the repeated confidence interval or the
            confidence sequence), in the samples' units.
        seeds: seeds used.
        max_seeds: the budget (planned last look).
        look, looks: looks made and planned.
        alpha: the error rate of the intervals of all looks together.
        method: ``"clt"``, ``"confseq"``, or either with ``"-fixed"`` when ``seeds=`` fixed the
            count.
        top_share: share of the sum carried by the top 1 % of seeds (None for samples with
            negative values or the ``confseq`` rule).
        tail_ratio: ``top_share`` over the exponential reference at the same count.
        heavy_tail: ``tail_ratio > HEAVY_TAIL_RATIO``.
        more_seeds: for INCONCLUSIVE, about how many more seeds the current width suggests
            would decide (None where no estimate is honest: heavy tail, or the mean on the
            bound).
        reason: one line saying what decided the verdict.
        samples: all samples drawn, in seed order.
        robust_lo: where the CLT interval was not trusted (non-negative samples with a heavy
            right tail, or fewer than ``TAIL_MIN_SEEDS``), the tail-robust lower end the
            verdict rested on instead; else None.
    """

    verdict: Verdict
    mean: float
    lo: float
    hi: float
    seeds: int
    max_seeds: int
    look: int
    looks: int
    alpha: float
    method: str
    top_share: float | None
    tail_ratio: float | None
    heavy_tail: bool
    more_seeds: int | None
    reason: str
    samples: np.ndarray
    robust_lo: float | None = None

    def measured(self, prefix: str = "") -> dict[str, Any]:
        """The numbers for an :class:`~decentral.verify.claims.Outcome`'s ``measured``."""
        keys = {"mean": self.mean, "ci": [self.lo, self.hi], "seeds_used": self.seeds,
                "max_seeds": self.max_seeds, "alpha": self.alpha, "rule": self.method}
        if self.top_share is not None:
            keys["top1pct_share"] = self.top_share
            keys["tail_ratio"] = self.tail_ratio
        if self.robust_lo is not None:
            keys["robust_lower_end"] = self.robust_lo
        if self.more_seeds is not None:
            keys["more_seeds_suggested"] = self.more_seeds
        return {prefix + k: v for k, v in keys.items()}

    def descriptions(self, prefix: str = "", what: str = "the per-seed quantity") -> dict[str, str]:
        """What each key of :meth:`measured` is, in a phrase."""
        level = f"{100 * (1 - self.alpha):g} %"
        text = {
            "mean": f"sample mean of {what} over the seeds used",
            "ci": (f"{level} interval for the mean at the last look ("
                   + ("repeated confidence interval of the group-sequential design"
                      if self.method == "clt" else
                      "empirical-Bernstein confidence sequence" if self.method == "confseq"
                      else "fixed seed count") + ")"),
            "seeds_used": f"seeds drawn before the rule stopped (looks {self.look} of "
                          f"{self.looks})",
            "max_seeds": "the claim's seed budget (the last planned look)",
            "alpha": "error rate of the intervals of all looks together",
            "rule": "clt: group-sequential CLT with alpha spending; confseq: anytime-valid "
                    "empirical-Bernstein sequence; -fixed: --seeds fixed the count",
            "top1pct_share": "share of the sum carried by the largest 1 % of seeds",
            "tail_ratio": "top1pct_share over its value for exponential samples of the same "
                          f"count (heavy right tail above {HEAVY_TAIL_RATIO:g})",
            "more_seeds_suggested": "about how many more seeds the current width suggests "
                                    "would decide",
            "robust_lower_end": f"tail-robust lower end of the mean ({level}): the "
                                "empirical-Bernstein sequence of the samples truncated at "
                                f"{ROBUST_TRUNCATION:g} x the bound; the verdict rested on it",
        }
        return {prefix + k: v for k, v in text.items()
                if prefix + k in self.measured(prefix)}

    def summary(self) -> str:
        """One line: verdict, interval, seeds, rule, error rate."""
        return (f"{self.verdict.value}: {100 * (1 - self.alpha):g} % interval "
                f"[{self.lo:.4g}, {self.hi:.4g}] on {self.seeds} of at most {self.max_seeds} "
                f"seeds ({self.method}); {self.reason}")


def _accept_arg(accept: Any) -> tuple[float, float]:
    try:
        a, b = accept
    except (TypeError, ValueError):
        raise ValueError(f"accept must be a pair (accept_lo, accept_hi), with -inf / inf for a "
                         f"one-sided claim; got {accept!r}.") from None
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b) or not a <= b or (math.isinf(a) and math.isinf(b)):
        raise ValueError(f"accept must be an ordered pair with at least one finite end; got "
                         f"{accept!r}.")
    return a, b


def _suggest(n: int, mean: float, lo: float, hi: float, accept: tuple[float, float]) -> int | None:
    # The end the interval straddles; seeds scale with the squared ratio of half-width to gap.
    half = max(mean - lo, hi - mean)
    ends = [e for e in accept if math.isfinite(e) and lo <= e <= hi]
    if not ends:
        return None
    gap = min(abs(mean - e) for e in ends)
    if gap <= 0 or half <= 0:
        return None
    return max(1, math.ceil(n * (half / gap) ** 2) - n)


def sequential_mean(draw: Callable[[int], Any], *, batch: int, max_seeds: int,
                    accept: tuple[float, float], method: str = "clt", alpha: float = 0.05,
                    value_range: tuple[float, float] | None = None,
                    spending: str = "obrien_fleming", seeds: int | None = None,
                    what: str = "the mean") -> SequentialResult:
    """Judge "the mean lies in ``accept``" from batches of seeds, stopping when decided.

    Args:
        draw: ``draw(k) -> samples`` of batch ``k`` (``k = 0, 1, ...``): a 1-D array of
            ``batch`` per-seed values, the same every time it is called with ``k``.
        batch: seeds per look (>= 2; 16 or more for the CLT rule's variance estimate).
        max_seeds: the budget, rounded up to a whole number of batches.
        accept: ``(accept_lo, accept_hi)``: the claim holds iff the mean lies there; use
            ``-inf`` / ``inf`` for a one-sided bound.
        method: ``"clt"`` (group-sequential, alpha spending) or ``"confseq"`` (anytime-valid,
            needs ``value_range``).
        alpha: error rate of all looks together, in (0, 1). Default 0.05.
        value_range: ``(lower, upper)`` no sample can leave; required by ``"confseq"``.
        spending: the spending function of the CLT rule, ``"obrien_fleming"`` (default) or
            ``"pocock"``.
        seeds: fixed seed count (``--seeds``): one look on exactly this many seeds, no
            stopping rule.
        what: what the mean is, for messages.

    Returns:
        A :class:`SequentialResult`.

    Raises:
        ValueError: bad arguments, or ``draw`` returning the wrong shape or non-finite values.
    """
    out = sequential_means(lambda k: {what: draw(k)}, batch=batch, max_seeds=max_seeds,
                           accepts={what: accept}, method=method, alpha=alpha,
                           value_range=value_range, spending=spending, seeds=seeds)
    return out[what]


def sequential_means(draw: Callable[[int], Mapping[str, Any]], *, batch: int, max_seeds: int,
                     accepts: Mapping[str, tuple[float, float]], method: str = "clt",
                     alpha: float = 0.05, value_range: tuple[float, float] | None = None,
                     spending: str = "obrien_fleming", seeds: int | None = None,
                     methods: Mapping[str, str] | None = None,
                     value_ranges: Mapping[str, tuple[float, float]] | None = None
                     ) -> dict[str, SequentialResult]:
    """Several comparisons judged on the same seeds, each stopping when it is decided.

    Each comparison ``name`` is "the mean of ``draw(k)[name]`` lies in ``accepts[name]``",
    judged as by :func:`sequential_mean` at level ``alpha / len(accepts)`` (Bonferroni), so all
    verdicts together are wrong with probability at most about ``alpha``. A comparison keeps
    the verdict of the look that decided it; drawing goes on until every comparison is decided
    or the budget is spent.

    Args:
        draw: ``draw(k) -> {name: samples}``, a 1-D array of ``batch`` per-seed values per
            comparison (the same seeds for all, deterministic in ``k``).
        accepts: ``{name: (accept_lo, accept_hi)}``, in the order to report them.
        batch, max_seeds, method, alpha, value_range, spending, seeds: as in
            :func:`sequential_mean` (``alpha`` is the family-wise rate).
        methods, value_ranges: per-comparison overrides of ``method`` and ``value_range``
            (``{name: "confseq"}`` for an indicator rate beside a CLT-judged mean).

    Returns:
        ``{name: SequentialResult}`` in the order of ``accepts``; each result's ``alpha`` is
        its share ``alpha / len(accepts)``.

    Example:
        >>> import numpy as np
        >>> draw = lambda k: {"a": np.random.default_rng(k).normal(0.0, 1.0, size=64),
        ...                   "b": np.random.default_rng(k + 99).normal(3.0, 1.0, size=64)}
        >>> r = sequential_means(draw, batch=64, max_seeds=640,
        ...                      accepts={"a": (-np.inf, 1.0), "b": (1.0, np.inf)})
        >>> [r[k].verdict.value for k in r]
        ['PASS', 'PASS']
    """
    if spending not in ("obrien_fleming", "pocock"):
        raise ValueError(f"spending must be 'obrien_fleming' or 'pocock'; got {spending!r}.")
    batch = check_int(batch, "batch (seeds per look)", minimum=2)
    max_seeds = check_int(max_seeds, "max_seeds (the seed budget)", minimum=2)
    alpha = _open_unit(alpha, "alpha")
    if not isinstance(accepts, Mapping) or not accepts:
        raise ValueError(f"accepts must be a non-empty dict name -> (accept_lo, accept_hi); "
                         f"got {accepts!r}.")
    acc = {str(k): _accept_arg(v) for k, v in accepts.items()}
    share = alpha / len(acc)
    for name, table in (("methods", methods), ("value_ranges", value_ranges)):
        extra = set(table or {}) - set(acc)
        if extra:
            raise ValueError(f"{name} names {sorted(extra)}, which are not comparisons of "
                             f"accepts ({sorted(acc)}).")
    how = {n: (methods or {}).get(n, method) for n in acc}
    ranges: dict[str, tuple[float, float] | None] = {}
    for n in acc:
        if how[n] not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {how[n]!r} ({n!r}).")
        vr = (value_ranges or {}).get(n, value_range)
        if how[n] == "confseq":
            if vr is None:
                raise ValueError(f"method='confseq' ({n!r}) needs value_range=(lower, upper), "
                                 "the interval no sample can leave; use method='clt' for "
                                 "unbounded quantities.")
            vr = (_real(vr[0], "value_range[0]"), _real(vr[1], "value_range[1]"))
        ranges[n] = vr

    def judge(name: str, x: np.ndarray, **kw: Any) -> SequentialResult:
        return _judge_at(x, acc[name], how[name], share, ranges[name], what=name, **kw)

    if seeds is not None:
        seeds = check_int(seeds, "seeds (a fixed seed count)", minimum=2)
        batches = [_draw_all(draw, k, batch, acc) for k in range(-(-seeds // batch))]
        return {n: judge(n, np.concatenate([b[n] for b in batches])[:seeds], crit=None,
                         look=1, looks=1, max_seeds=seeds, last=True, fixed=True)
                for n in acc}
    looks = -(-max_seeds // batch)
    max_seeds = looks * batch
    crit = _planned_bounds(looks, share, spending) if "clt" in how.values() else None
    parts: dict[str, list[np.ndarray]] = {n: [] for n in acc}
    decided: dict[str, SequentialResult] = {}
    latest: dict[str, SequentialResult] = {}
    for k in range(looks):
        values = _draw_all(draw, k, batch, acc)
        for n in acc:
            parts[n].append(values[n])
            if n in decided:
                continue
            r = judge(n, np.concatenate(parts[n]),
                      crit=None if crit is None or how[n] != "clt" else float(crit[k]),
                      look=k + 1, looks=looks, max_seeds=max_seeds, last=k == looks - 1,
                      fixed=False)
            latest[n] = r
            if r.verdict is not Verdict.INCONCLUSIVE:
                decided[n] = r
        if len(decided) == len(acc):
            break
    return {n: decided.get(n, latest[n]) for n in acc}


@functools.lru_cache(maxsize=64)
def _planned_bounds(looks: int, alpha: float, spending: str) -> np.ndarray:
    # Equally spaced looks; the same design recurs for every claim with the same budget.
    bounds = spending_bounds(np.arange(1, looks + 1) / looks, alpha, spending)
    bounds.setflags(write=False)
    return bounds


def _as_batch(values: Any, where: str, batch: int) -> np.ndarray:
    x = _as_samples(values, where)
    if x.ndim != 1 or x.shape[0] != batch:
        raise ValueError(f"{where} must be a 1-D array of batch = {batch} samples (one "
                         f"per seed); got shape {x.shape}.")
    return x


def _draw_all(draw: Callable[[int], Mapping[str, Any]], k: int, batch: int,
              acc: Mapping[str, Any]) -> dict[str, np.ndarray]:
    values = draw(k)
    if not isinstance(values, Mapping) or set(values) != set(acc):
        got = sorted(values) if isinstance(values, Mapping) else type(values).__name__
        raise ValueError(f"draw({k}) must return a dict with the keys {sorted(acc)}; got "
                         f"{got}.")
    return {n: _as_batch(values[n], f"draw({k})[{n!r}]", batch) for n in acc}


def _judge_at(x: np.ndarray, acc: tuple[float, float], method: str, alpha: float,
              value_range: tuple[float, float] | None, *, crit: float | None, look: int,
              looks: int, max_seeds: int, last: bool, fixed: bool, what: str
              ) -> SequentialResult:
    n = x.size
    mean = float(x.mean())
    share = ratio = None
    heavy = False
    if method == "clt":
        if n < 2:
            raise ValueError("the CLT rule needs at least 2 seeds per look.")
        # Same two-sided tail probability as the normal critical value, on n - 1 degrees of
        # freedom (the variance is estimated).
        tail = float(special.ndtr(-crit)) if crit is not None else alpha / 2.0
        q = math.inf if tail <= 0 else -float(special.stdtrit(n - 1, tail))
        sd = float(x.std(ddof=1))
        half = q * sd / math.sqrt(n) if sd > 0 else 0.0
        lo, hi = mean - half, mean + half
        if np.all(x >= 0) and x.sum() > 0:
            share = top_share(x, 0.01)
            ratio = share / exponential_top_share(n, 0.01)
            heavy = ratio > HEAVY_TAIL_RATIO
    else:
        assert value_range is not None
        los, his = empirical_bernstein_cs(x, value_range, alpha)
        lo, hi = float(los[-1]), float(his[-1])
    level = f"{100 * (1 - alpha):g} %"
    bound = (f"<= {acc[1]:.4g}" if math.isinf(acc[0]) else f">= {acc[0]:.4g}"
             if math.isinf(acc[1]) else f"in [{acc[0]:.4g}, {acc[1]:.4g}]")
    where = "fixed seed count" if fixed else f"look {look} of {looks}"
    # The guard applies to non-negative samples judged against a positive bound (a squared
    # error, a regret); a paired difference that happens to be positive is judged by the CLT.
    positive_bound = any(math.isfinite(e) and e > 0 for e in acc)
    guarded = share is not None and positive_bound and (heavy or n < TAIL_MIN_SEEDS)
    robust_lo = None
    if guarded:
        # The CLT interval is not trusted: decide on a valid lower end only (the truncated
        # mean's confidence sequence); the upper end decides nothing.
        robust_lo = _robust_lower(x, acc, alpha)
        verdict = judge_interval(robust_lo, math.inf, acc[0], acc[1], what=what) \
            if math.isfinite(robust_lo) else Verdict.INCONCLUSIVE
    else:
        verdict = judge_interval(lo, hi, acc[0], acc[1], what=what)
    if guarded and verdict is Verdict.INCONCLUSIVE:
        why = (f"heavy right tail (top 1 % of seeds carry {100 * share:.0f} % of the sum, "
               f"{ratio:.1f}x the exponential reference)" if heavy else
               f"fewer than {TAIL_MIN_SEEDS} seeds (have {n}), too few to see a right tail")
        reason = (f"{why}: the CLT interval's upper end is not trusted, and the tail-robust "
                  f"lower end {robust_lo:.4g} does not decide {bound}")
        more = None if heavy else TAIL_MIN_SEEDS - n
    elif verdict is Verdict.INCONCLUSIVE:
        more = _suggest(n, mean, lo, hi, acc) if last and math.isfinite(hi - lo) else None
        reason = (f"{level} interval straddles the bound {bound} after {n} seeds ({where})"
                  + ("" if more is None else f"; the width suggests ~{more} more seeds"))
    elif guarded:
        more = None
        reason = (f"tail-robust {level} lower end {robust_lo:.4g} "
                  f"{'satisfies' if verdict is Verdict.PASS else 'contradicts'} {bound} after "
                  f"{n} seeds ({where})")
    else:
        more = None
        reason = (f"{level} interval {'within' if verdict is Verdict.PASS else 'outside'} "
                  f"{bound.removeprefix('in ')} after {n} seeds ({where})")
    return SequentialResult(
        verdict=verdict, mean=mean, lo=float(lo), hi=float(hi), seeds=n, max_seeds=max_seeds,
        look=look, looks=looks, alpha=alpha, method=method + ("-fixed" if fixed else ""),
        top_share=share, tail_ratio=ratio, heavy_tail=heavy, more_seeds=more, reason=reason,
        samples=x, robust_lo=robust_lo)


def _robust_lower(x: np.ndarray, acc: tuple[float, float], alpha: float) -> float:
    """A lower confidence end for the mean of non-negative samples that needs no tail
    assumption: ``E[X] >= E[min(X, c)]``, and ``min(X, c)`` lies in ``[0, c]``, so the
    empirical-Bernstein confidence sequence of the truncated samples bounds it (valid at every
    sample size). ``c`` is fixed before looking: ``ROBUST_TRUNCATION`` times the largest finite
    positive end of ``accept``; ``-inf`` when there is none."""
    ends = [e for e in acc if math.isfinite(e) and e > 0]
    if not ends:
        return -math.inf
    c = ROBUST_TRUNCATION * max(ends)
    lo, _ = empirical_bernstein_cs(np.minimum(x, c), (0.0, c), alpha)
    return float(lo[-1])
