"""Claims, verdicts and outcomes: the vocabulary of the verification harness.

A *claim* is one checkable statement of a paper (an exact identity, a statistical bound or a rate),
with a function that runs it and returns an :class:`Outcome`. A harness (such as
``python -m proofs_checks``) calls :func:`run_claim`, which times the call and turns an exception
into an ``ERROR`` verdict so the run goes on.

Verdicts:

* ``PASS`` — the measured numbers support the claim at the threshold fixed before running;
* ``FAIL`` — the measured numbers contradict it (a finding, not a crash);
* ``INCONCLUSIVE`` — not enough power at the size run (say which size would decide);
* ``ERROR`` — the check itself raised.

A bound that is *vacuous* at the sizes run (a contraction factor indistinguishable from 1, a
constant that dominates every reachable horizon) is flagged with ``Outcome.vacuous`` and counts as
no evidence whatever its verdict.

This module is generic: a claim id is any ``"<group>.<name>"`` string, and which groups exist
(and where reports go) is the harness's business (``proofs_checks.registry``).

Example:
    >>> ctx = CheckContext()
    >>> c = Claim("demo.arithmetic", "1 + 1 = 2", "arithmetic", Kind.EXACT,
    ...           lambda ctx: Outcome(Verdict.PASS, {"residual": 0.0}, "residual == 0",
    ...                               descriptions={"residual": "1 + 1 - 2, exact"}))
    >>> run_claim(c, ctx).verdict
    <Verdict.PASS: 'PASS'>
"""

from __future__ import annotations

import enum
import math
import pathlib
import time
import traceback
import warnings
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from decentral._checks import check_int
from decentral.hypotheses import HypothesisWarning
from decentral.results import to_jsonable

__all__ = [
    "Verdict",
    "Kind",
    "CheckContext",
    "Outcome",
    "Claim",
    "ClaimResult",
    "run_claim",
    "judge_tolerance",
    "judge_upper_bound",
    "judge_lower_bound",
    "judge_interval",
    "combine_verdicts",
]


class Verdict(enum.StrEnum):
    """The verdict of one claim check (a ``str``: ``Verdict.PASS == "PASS"``)."""

    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"
    ERROR = "ERROR"


class Kind(enum.StrEnum):
    """How a claim is checked: exact identity, statistical comparison, or rate / shape fit."""

    EXACT = "exact"
    STATISTICAL = "statistical"
    RATE = "rate"


@dataclass(frozen=True)
class CheckContext:
    """What a claim is run with.

    Attributes:
        full: paper scale (``--full``) instead of the quick default size.
        seeds: ``--seeds`` override; ``None`` lets the claim choose (e.g. from a concentration
            inequality, :func:`decentral.verify.stats.hoeffding_num_seeds`).
        out_dir: where figures go (None: nowhere; :meth:`figure_path` then raises). The
            harness sets it to its output folder.
        base_seed: added to every claim's seeds so a whole run can be replayed with other draws.
        budget: factor on every sequential claim's maximum seed count (``--budget``; default
            1.0). A sequential claim stops earlier when its rule decides; ``seeds`` (a fixed
            count) takes precedence.

    Example:
        >>> ctx = CheckContext(full=False, seeds=None)
        >>> ctx.seed_count(quick=50, full=400)
        50
    """

    full: bool = False
    seeds: int | None = None
    out_dir: pathlib.Path | None = None
    base_seed: int = 0
    budget: float = 1.0

    def __post_init__(self) -> None:
        b = self.budget
        if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(b)) or float(b) <= 0:
            raise ValueError(f"CheckContext.budget must be a finite number > 0 (a factor on "
                             f"every claim's maximum seed count); got {b!r}.")
        object.__setattr__(self, "budget", float(b))
        if self.seeds is not None:
            object.__setattr__(self, "seeds", check_int(self.seeds, "CheckContext.seeds"))
        object.__setattr__(self, "base_seed",
                           check_int(self.base_seed, "CheckContext.base_seed", minimum=None))
        if self.out_dir is not None:
            object.__setattr__(self, "out_dir", Path(self.out_dir))

    @property
    def mode(self) -> str:
        """``"full"`` or ``"quick"``."""
        return "full" if self.full else "quick"

    def figure_path(self, claim_id: str, name: str) -> Path:
        """Path ``out_dir/figures/<claim_id>-<name>.png``, creating the folder.

        Args:
            claim_id: the claim's id (``"graphs.ring_is_strong"``).
            name: a short file-name-safe tag for the figure (``"residuals"``).
        """
        if not name or any(c in name for c in "/\\") or name.startswith("."):
            raise ValueError(f"figure name {name!r} must be a non-empty file name without "
                             "slashes, not starting with '.'.")
        if self.out_dir is None:
            raise ValueError("CheckContext.out_dir is None, so there is nowhere to put figures; "
                             "pass CheckContext(out_dir=...).")
        folder = self.out_dir / "figures"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{claim_id}-{name}.png"

    def seed_count(self, quick: int, full: int | None = None) -> int:
        """Number of seeds to run: the ``--seeds`` override, else ``full`` / ``quick``.

        A claim whose seed count comes from a concentration inequality should compute it itself
        and may report INCONCLUSIVE when an override is below what the inequality needs.
        """
        if self.seeds is not None:
            return int(self.seeds)
        if self.full and full is not None:
            return int(full)
        return int(quick)

    def seed_budget(self, quick: int, full: int | None = None, *, batch: int = 1) -> int:
        """Maximum seeds of a sequential claim: ``full`` / ``quick`` times ``budget``, rounded
        up to a whole number of batches of ``batch`` (at least one batch).

        Example:
            >>> CheckContext(budget=0.5).seed_budget(2048, 8192, batch=64)
            1024
        """
        base = full if (self.full and full is not None) else quick
        batch = check_int(batch, "batch")
        return max(1, math.ceil(float(base) * self.budget / batch)) * batch

    def batch_seeds(self, k: int, batch: int) -> list[int]:
        """Seeds of batch ``k`` of a sequential claim: ``base_seed + k * batch`` onwards, so
        batch ``k`` holds the same seeds in every run.

        Example:
            >>> CheckContext(base_seed=5).batch_seeds(2, 3)
            [11, 12, 13]
        """
        k = check_int(k, "k (the batch index)", minimum=0)
        batch = check_int(batch, "batch")
        start = int(self.base_seed) + k * batch
        return list(range(start, start + batch))

    def seed_for(self, claim_id: str, offset: int = 0) -> int:
        """A deterministic integer seed for ``claim_id``: stable across runs and Python versions.

        ``crc32(claim_id) + base_seed + offset``, so two claims never share draws by accident and
        ``--base-seed`` replays a run with fresh ones.
        """
        return (zlib.crc32(claim_id.encode("utf-8")) + int(self.base_seed) + int(offset)) % (2**31)

    def rng(self, claim_id: str, offset: int = 0) -> np.random.Generator:
        """A numpy Generator seeded by :meth:`seed_for`."""
        return np.random.default_rng(self.seed_for(claim_id, offset))


@dataclass
class Outcome:
    """What a claim's function returns.

    Attributes:
        verdict: PASS / FAIL / INCONCLUSIVE (ERROR is set by the harness when the check raises).
        measured: the numbers, JSON-serialisable (numpy scalars and arrays are converted by the
            report writer).
        threshold: the verdict rule, fixed before running, e.g. ``"max residual <= 1e-12"``.
        details: free text: what was seen, which size would decide an INCONCLUSIVE.
        vacuous: the bound is vacuous at the sizes run, so the verdict counts as no evidence.
        figures: paths of figures written (use :meth:`CheckContext.figure_path`).
        hypotheses_failed: theorem hypotheses that did not hold in the run (a broken
            hypothesis is recorded, not an error: experiments break them on purpose).
        size: what was run, e.g. ``"N=6, T=2000, seeds=200"``.
        headline: keys of ``measured`` to show in the printed table (default: the first three).
        descriptions: ``measured`` key -> what the number is and its unit, in a phrase (``"max
            over seeds and agents of |x_i(T) - c|, in units of x"``); the report prints it
            beside the value. Keys must be keys of ``measured``.
        reason: one line saying what decided the verdict (``"95 % interval [0.06, 1.25] above
            0 after 1100 seeds"``; a size rule that forced INCONCLUSIVE says so here). The
            report's summary shows it; empty, the threshold is shown instead.
        findings: what the run showed against the paper although the verdict stands (a
            stated rate violated where it is only reported, a hypothesis failing in a contrast
            run). A PASS with findings reads ``PASS, with finding`` in the report.
    """

    verdict: Verdict
    measured: dict[str, Any]
    threshold: str
    details: str = ""
    vacuous: bool = False
    figures: list[str] = field(default_factory=list)
    hypotheses_failed: list[str] = field(default_factory=list)
    size: str = ""
    headline: list[str] = field(default_factory=list)
    descriptions: dict[str, str] = field(default_factory=dict)
    reason: str = ""
    findings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        try:
            self.verdict = Verdict(self.verdict)
        except ValueError:
            raise ValueError(f"Outcome.verdict must be one of {[v.value for v in Verdict]}; got "
                             f"{self.verdict!r}.") from None
        if not isinstance(self.measured, dict):
            raise ValueError(f"Outcome.measured must be a dict of named numbers; got "
                             f"{type(self.measured).__name__}.")
        if not isinstance(self.threshold, str) or not self.threshold.strip():
            raise ValueError("Outcome.threshold must state the verdict rule fixed before running, "
                             "e.g. 'max residual <= 1e-12'; got an empty value.")
        self.figures = [str(f) for f in self.figures]
        if not isinstance(self.reason, str):
            raise ValueError(f"Outcome.reason must be a one-line string; got "
                             f"{type(self.reason).__name__}.")
        self.reason = " ".join(self.reason.split())
        if isinstance(self.findings, str):
            raise ValueError("Outcome.findings must be a list of sentences, not one string.")
        self.findings = [" ".join(str(f).split()) for f in self.findings]
        self.hypotheses_failed = [str(h) for h in self.hypotheses_failed]
        self.headline = [str(k) for k in self.headline]
        missing = [k for k in self.headline if k not in self.measured]
        if missing:
            raise ValueError(f"Outcome.headline names {missing} which are not keys of measured "
                             f"({list(self.measured)}).")
        if not isinstance(self.descriptions, dict):
            raise ValueError(f"Outcome.descriptions must be a dict measured key -> text; got "
                             f"{type(self.descriptions).__name__}.")
        self.descriptions = {str(k): str(v) for k, v in self.descriptions.items()}
        unknown = [k for k in self.descriptions if k not in self.measured]
        if unknown:
            raise ValueError(f"Outcome.descriptions names {unknown} which are not keys of "
                             f"measured ({list(self.measured)}).")


@dataclass
class Claim:
    """One checkable statement of a paper.

    Attributes:
        id: a non-empty string without white space, conventionally ``"<group>.<name>"``
            (a harness may impose more: ``proofs_checks`` requires a known family).
        statement: the claim in words (with the equation where it helps).
        source: paper, theorem / lemma / equation number.
        kind: :class:`Kind`.
        run: ``fn(ctx: CheckContext) -> Outcome``.
    """

    id: str
    statement: str
    source: str
    kind: Kind
    run: Callable[[CheckContext], Outcome]

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id or any(c.isspace() for c in self.id):
            raise ValueError(f"claim id must be a non-empty string without white space, like "
                             f"'graphs.ring_is_strong'; got {self.id!r}.")
        try:
            self.kind = Kind(self.kind)
        except ValueError:
            raise ValueError(f"claim {self.id}: kind must be one of {[k.value for k in Kind]}; got "
                             f"{self.kind!r}.") from None
        if not callable(self.run):
            raise ValueError(f"claim {self.id}: run must be a callable fn(ctx) -> Outcome.")
        for attr in ("statement", "source"):
            if not isinstance(getattr(self, attr), str) or not getattr(self, attr).strip():
                raise ValueError(f"claim {self.id}: {attr} must be a non-empty string.")

    @property
    def family(self) -> str:
        """The part of the id before the first dot (``"bandits"`` for
        ``"bandits.star_hub_slope"``; the whole id if it has no dot)."""
        return self.id.partition(".")[0]


@dataclass
class ClaimResult:
    """A claim, its outcome, how long it took, and the traceback if it raised.

    Attributes:
        claim: the :class:`Claim`.
        outcome: its :class:`Outcome` (for ERROR, one built by the harness).
        seconds: wall-clock time of the check.
        error: the traceback text when the check raised, else ``None``.
        warnings: warnings raised during the check (e.g. broken theorem hypotheses), as text.
    """

    claim: Claim
    outcome: Outcome
    seconds: float
    error: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.claim.id

    @property
    def verdict(self) -> Verdict:
        return self.outcome.verdict

    @property
    def vacuous(self) -> bool:
        return bool(self.outcome.vacuous)

    def to_dict(self) -> dict[str, Any]:
        """A plain dict; :func:`decentral.results.to_jsonable` makes it JSON-safe."""
        o = self.outcome
        return {
            "id": self.claim.id,
            "family": self.claim.family,
            "statement": self.claim.statement,
            "source": self.claim.source,
            "kind": self.claim.kind.value,
            "verdict": o.verdict.value,
            "vacuous": bool(o.vacuous),
            "size": o.size,
            "threshold": o.threshold,
            "measured": o.measured,
            "descriptions": dict(o.descriptions),
            "headline": list(o.headline),
            "reason": o.reason,
            "findings": list(o.findings),
            "details": o.details,
            "hypotheses_failed": list(o.hypotheses_failed),
            "figures": list(o.figures),
            "seconds": float(self.seconds),
            "error": self.error,
            "warnings": list(self.warnings),
        }


def run_claim(claim: Claim, ctx: CheckContext) -> ClaimResult:
    """Run one claim, timing it; an exception becomes an ``ERROR`` result, never a crash.

    Warnings raised during the check (except deprecation warnings) are recorded in
    ``ClaimResult.warnings`` instead of being printed; messages of
    :class:`decentral.hypotheses.HypothesisWarning` (a broken theorem hypothesis) are also
    appended to ``outcome.hypotheses_failed`` when the claim did not list them.

    Args:
        claim: the claim.
        ctx: the run's context.

    Returns:
        A :class:`ClaimResult`. A claim that returns something other than an :class:`Outcome`,
        or measured values with no JSON form (:func:`decentral.results.to_jsonable`), is an
        ERROR too, so the report can always be written.
    """
    start = time.perf_counter()
    error: str | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", DeprecationWarning)  # library internals, not findings
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        try:
            outcome = claim.run(ctx)
            if not isinstance(outcome, Outcome):
                raise TypeError(f"claim {claim.id} returned {type(outcome).__name__}, not an "
                                "Outcome; the claim function must return Outcome(...).")
            to_jsonable(outcome.measured, where=f"claim {claim.id}: measured")  # report-safe
        except Exception as exc:  # noqa: BLE001 - the harness must survive any failing claim
            error = traceback.format_exc()
            outcome = Outcome(
                verdict=Verdict.ERROR,
                measured={},
                threshold="(check raised before a verdict)",
                details=f"{type(exc).__name__}: {exc}",
            )
    seconds = time.perf_counter() - start
    texts: list[str] = []
    for w in caught:
        text = f"{w.category.__name__}: {w.message}"
        if text not in texts:
            texts.append(text)
        if issubclass(w.category, HypothesisWarning):
            msg = str(w.message)
            if msg not in outcome.hypotheses_failed:
                outcome.hypotheses_failed.append(msg)
    return ClaimResult(claim=claim, outcome=outcome, seconds=seconds, error=error, warnings=texts)


# --------------------------------------------------------------------------------------------
# Verdict helpers
# --------------------------------------------------------------------------------------------


def _finite_number(x: Any, what: str, name: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: {name} must be a real number; got {x!r}.") from None
    return v


def judge_tolerance(value: Any, tol: float, *, what: str = "value") -> Verdict:
    """PASS if ``|value| <= tol`` (for every entry of an array), else FAIL.

    For exact identities checked in float64: ``value`` is a residual. A NaN or infinite residual
    is a FAIL (the identity did not hold; a diverged computation is not evidence for it).

    Args:
        value: a residual (scalar or array).
        tol: the tolerance fixed before running, e.g. ``1e-12``.
        what: what the value is, for error messages.

    Raises:
        ValueError: if ``tol`` is negative or not finite, or ``value`` is empty.

    Example:
        >>> judge_tolerance(3e-15, 1e-12, what="mass residual")
        <Verdict.PASS: 'PASS'>
    """
    t = _finite_number(tol, what, "tol")
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"{what}: tolerance must be finite and >= 0; got {tol!r}.")
    arr = np.asarray(value, dtype=np.float64)
    if arr.size == 0:
        raise ValueError(f"{what}: got an empty array; nothing was measured.")
    if not np.all(np.isfinite(arr)):
        return Verdict.FAIL
    return Verdict.PASS if float(np.max(np.abs(arr))) <= t else Verdict.FAIL


def judge_upper_bound(lo: float, hi: float, bound: float, *, what: str = "estimate") -> Verdict:
    """Judge the claim "quantity <= bound" from a confidence interval ``[lo, hi]``.

    PASS if ``hi <= bound`` (the whole interval is below), FAIL if ``lo > bound`` (the whole
    interval is above: the data contradict the bound), INCONCLUSIVE otherwise or when the
    interval is NaN (no evidence).
    """
    if math.isnan(_finite_number(bound, what, "bound")):
        raise ValueError(f"{what}: the bound is NaN; compute a real bound before judging.")
    return judge_interval(lo, hi, -math.inf, bound, what=what)


def judge_lower_bound(lo: float, hi: float, bound: float, *, what: str = "estimate") -> Verdict:
    """Judge "quantity >= bound" from ``[lo, hi]``: PASS if ``lo >= bound``, FAIL if ``hi < bound``.

    INCONCLUSIVE when the interval straddles the bound or is NaN.
    """
    if math.isnan(_finite_number(bound, what, "bound")):
        raise ValueError(f"{what}: the bound is NaN; compute a real bound before judging.")
    return judge_interval(lo, hi, bound, math.inf, what=what)


def judge_interval(
    lo: float, hi: float, accept_lo: float, accept_hi: float, *, what: str = "estimate"
) -> Verdict:
    """Judge "quantity lies in [accept_lo, accept_hi]" from a confidence interval ``[lo, hi]``.

    PASS if ``[lo, hi]`` lies inside the accepted range, FAIL if it is disjoint from it,
    INCONCLUSIVE if it straddles an end (not enough power) or is NaN. Typical use: a fitted slope
    with a bootstrap interval against the theory's exponent ± a stated margin.

    Example:
        >>> judge_interval(-1.05, -0.97, -1.1, -0.9, what="log-log slope")
        <Verdict.PASS: 'PASS'>
    """
    vals = [_finite_number(x, what, n) for x, n in
            ((lo, "lo"), (hi, "hi"), (accept_lo, "accept_lo"), (accept_hi, "accept_hi"))]
    lo_, hi_, a, b = vals
    if math.isnan(a) or math.isnan(b) or a > b:
        raise ValueError(f"{what}: accepted range [{accept_lo}, {accept_hi}] must be ordered "
                         "real numbers.")
    if math.isnan(lo_) or math.isnan(hi_):
        return Verdict.INCONCLUSIVE
    if lo_ > hi_:
        raise ValueError(f"{what}: interval lower end {lo_} exceeds upper end {hi_}.")
    if a <= lo_ and hi_ <= b:
        return Verdict.PASS
    if hi_ < a or lo_ > b:
        return Verdict.FAIL
    return Verdict.INCONCLUSIVE


def combine_verdicts(verdicts: Iterable[Verdict | str]) -> Verdict:
    """Verdict of a claim made of several sub-checks: the worst one wins.

    Order: ERROR > FAIL > INCONCLUSIVE > PASS. An empty list raises ``ValueError``.
    """
    vs = [Verdict(v) for v in verdicts]
    if not vs:
        raise ValueError("combine_verdicts needs at least one verdict.")
    for worst in (Verdict.ERROR, Verdict.FAIL, Verdict.INCONCLUSIVE):
        if worst in vs:
            return worst
    return Verdict.PASS

