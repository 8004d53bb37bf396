"""Checks of the papers' claims, one module or package per family; run with
``python -m proofs_checks``.

Each family (``graphs``, ``consensus_sa``, ``push_sum``, ``bandits``, ``resilient_ac``; a
package holds its claims and the ``setups`` they share with the figures) registers its claims
with :func:`proofs_checks.registry.claim`; the command discovers them, runs the ones selected by
``--only`` (substring of the id, e.g. ``--only bandits``), prints a verdict table and writes
``proofs_checks/out/report.md`` and ``report.json`` (``report-only.md`` and ``report-only.json``
for an ``--only`` run, beside the full report). The harness's conventions (claim families,
claim-id rule, default output folder) live in :mod:`proofs_checks.registry`.

Example:
    python -m proofs_checks --list
    python -m proofs_checks --only graphs
    python -m proofs_checks --full --only bandits.star_hub_slope
"""

from proofs_checks.registry import REGISTRY, claim, discover, select

__all__ = ["REGISTRY", "claim", "discover", "select"]
