"""Figures of the decentralized-bandit paper: Zhu, Mulle, Smith, Liu, arXiv 2111.10933 — the first
version (v1, NeurIPS 2021 submission: Dec_UCB, Theorems 1-2) and the journal version (IEEE TAC
70(7) 2025, arXiv v4: Dec-UCB1(beta), Dec-KL-UCB(varsigma)).

Modules: :mod:`~figures.bandits.catalogue` (the table of figures, registered on import),
:mod:`~figures.bandits.v1` (v1 Figs 1-3 and 11-14), :mod:`~figures.bandits.er50` (v1 Fig 4),
:mod:`~figures.bandits.tac` (journal Figs 1-6 and 8-9), :mod:`~figures.bandits.batching` (how
several systems share one compiled program) and :mod:`~figures.bandits.common`. The setups come
from :mod:`proofs_checks.bandits.setups`. What each figure shows, its sizes and run times:
``docs/bandits_figures.md``.
"""

from __future__ import annotations

from . import batching, catalogue, common, er50, tac, v1
from .batching import block_system, dec_ucb_block, run_blocks, ucb1_block, with_shared_sampler
from .catalogue import FIGURES, SPECS, FigureSpec
from .er50 import draw_er50, er50_data
from .tac import draw_small_graphs, draw_tac_kl_vs_ucb1, draw_tac_sweep, small_graph_data, tac_data
from .v1 import draw_v1_fixed, v1_fixed_data, v1_selected_data

__all__ = [
    "batching", "catalogue", "common", "er50", "tac", "v1",
    "FigureSpec", "SPECS", "FIGURES",
    "dec_ucb_block", "ucb1_block", "block_system", "run_blocks", "with_shared_sampler",
    "v1_fixed_data", "v1_selected_data", "draw_v1_fixed", "er50_data", "draw_er50",
    "tac_data", "draw_tac_sweep", "draw_tac_kl_vs_ucb1", "small_graph_data", "draw_small_graphs",
]
