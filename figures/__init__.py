"""Figures of the papers, one module per paper; draw them with ``python -m figures``.

Each module (``graphs``, later ``consensus_sa``, ``push_sum``, ``bandits``, ``resilient_ac``)
registers its figures with :func:`figures.registry.figure`; the command discovers them, draws the
ones selected by ``--only`` (substring of the id) at the quick size (``--full``: paper scale) and
writes, per figure, ``<id>.png`` plus the ``<id>.npz`` and ``<id>.json`` (data, parameters,
provenance) it was drawn from, into ``figures/out`` (``--out DIR``).

Example:
    python -m figures --list
    python -m figures --only graphs
    python -m figures --full --only graphs.consensus_disagreement --out /tmp/figs
"""

from figures.registry import REGISTRY, FigureContext, FigureOutput, discover, figure, select

__all__ = ["REGISTRY", "FigureContext", "FigureOutput", "discover", "figure", "select"]
