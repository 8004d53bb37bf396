"""Verification harness: claims and verdicts, statistics for judging them, report writing.

* :mod:`decentral.verify.claims` — :class:`Claim`, :class:`Outcome`, :class:`Verdict`,
  :class:`Kind`, :class:`CheckContext`, :func:`run_claim` and verdict helpers;
* :mod:`decentral.verify.stats` — confidence intervals (bootstrap, CLT, Hoeffding, empirical
  Bernstein), seed counts from concentration inequalities, slope / rate fits, envelope checks;
* :mod:`decentral.verify.tails` — :func:`top_share`, how much of a sample mean its largest seeds
  carry (a heavy-tail diagnostic for CLT intervals), and its exponential reference;
* :mod:`decentral.verify.boundaries` — alpha-spending functions and group-sequential critical
  values;
* :mod:`decentral.verify.confseq` — the anytime-valid empirical-Bernstein confidence sequence;
* :mod:`decentral.verify.sequential` — :func:`sequential_mean`, a statistical judge that draws
  seeds in batches and stops when its interval decides;
* :mod:`decentral.verify.report` — the verdict table and ``report.md`` / ``report.json``.

Nothing here imports JAX or changes global configuration; ``python -m proofs_checks`` is the entry
point that enables float64. The package is generic: which claim families exist, how claim ids are
validated and where reports go belong to the harness (``proofs_checks.registry``). JSON
conversion is :func:`decentral.results.to_jsonable`.

Example:
    >>> from decentral.verify import Verdict, judge_tolerance
    >>> judge_tolerance(1e-15, 1e-12, what="residual") is Verdict.PASS
    True
"""

from decentral.verify.boundaries import (
    crossing_probability,
    obrien_fleming_spending,
    pocock_spending,
    spending_bounds,
)
from decentral.verify.claims import (
    CheckContext,
    Claim,
    ClaimResult,
    Kind,
    Outcome,
    Verdict,
    combine_verdicts,
    judge_interval,
    judge_lower_bound,
    judge_tolerance,
    judge_upper_bound,
    run_claim,
)
from decentral.verify.confseq import empirical_bernstein_cs
from decentral.verify.report import LEGEND, format_summary, format_table, write_report
from decentral.verify.sequential import SequentialResult, sequential_mean, sequential_means
from decentral.verify.stats import (
    EnvelopeResult,
    RateFit,
    SlopeFit,
    bernstein_num_seeds,
    bootstrap_ci,
    clt_ci,
    clt_num_seeds,
    empirical_bernstein_ci,
    empirical_bernstein_num_seeds,
    envelope_check,
    geometric_rate,
    hoeffding_ci,
    hoeffding_num_seeds,
    loglog_slope,
    semilog_slope,
)
from decentral.verify.tails import exponential_top_share, top_share

__all__ = [
    "CheckContext",
    "Claim",
    "ClaimResult",
    "Kind",
    "Outcome",
    "Verdict",
    "combine_verdicts",
    "judge_interval",
    "judge_lower_bound",
    "judge_tolerance",
    "judge_upper_bound",
    "run_claim",
    "format_summary",
    "format_table",
    "LEGEND",
    "write_report",
    "EnvelopeResult",
    "RateFit",
    "SlopeFit",
    "bernstein_num_seeds",
    "bootstrap_ci",
    "clt_ci",
    "clt_num_seeds",
    "empirical_bernstein_ci",
    "empirical_bernstein_num_seeds",
    "envelope_check",
    "geometric_rate",
    "hoeffding_ci",
    "hoeffding_num_seeds",
    "loglog_slope",
    "semilog_slope",
    "top_share",
    "exponential_top_share",
    "spending_bounds",
    "crossing_probability",
    "obrien_fleming_spending",
    "pocock_spending",
    "empirical_bernstein_cs",
    "SequentialResult",
    "sequential_mean",
    "sequential_means",
]
