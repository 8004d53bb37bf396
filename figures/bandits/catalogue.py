"""The bandit figures, as a table: one :class:`FigureSpec` per figure — its id, title, paper,
how its data are computed and how they are drawn — registered with
:func:`figures.registry.figure` in one loop.

A figure is ``draw(*compute(ctx))``: ``compute(ctx) -> (data, parameters)`` runs the
experiment at the size of ``ctx`` (figures sharing runs share a cache), ``draw(data,
parameters) -> (fig, axes)`` only draws, so a figure can be redrawn from its saved
``<id>.npz`` / ``<id>.json`` (:func:`redraw`). What each figure shows and how long it takes:
``docs/bandits_figures.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from figures.registry import FigureContext, FigureOutput, figure

from .common import TAC, V1
from .er50 import compute_er50, draw_er50
from .tac import (
    compute_small_graphs,
    compute_tac,
    draw_small_graphs,
    draw_tac_kl_vs_ucb1,
    draw_tac_sweep,
)
from .v1 import compute_v1_fixed, compute_v1_selected, draw_v1_fixed

__all__ = ["FigureSpec", "SPECS", "FIGURES", "redraw"]


@dataclasses.dataclass(frozen=True)
class FigureSpec:
    """One bandit figure.

    Attributes:
        id: the figure id (``"bandits.<name>"``), also the base name of its files.
        title: what it shows (``python -m figures --list``).
        paper: the paper and figure it reproduces.
        compute: ``compute(ctx) -> (data, parameters)``.
        draw: ``draw(data, parameters) -> (fig, axes)``.
    """

    id: str
    title: str
    paper: str
    compute: Callable[[FigureContext], tuple[dict[str, Any], dict[str, Any]]]
    draw: Callable[[Mapping[str, Any], Mapping[str, Any]], tuple[Any, Any]]

    def build(self, ctx: FigureContext) -> FigureOutput:
        """Compute at the size of ``ctx`` and draw."""
        data, parameters = self.compute(ctx)
        fig, _ = self.draw(data, parameters)
        return FigureOutput(fig, data, parameters)


_ER20 = "connected ER(20, 0.5) graphs"
_BETA = "Beta(mu_k, 1 - mu_k) rewards"
_BOTH = "vs the best UCB1 agent, both metrics"
_TRUNCNORM = partial(compute_tac, rewards="truncnorm")
_BETA_RUNS = partial(compute_tac, rewards="beta")
_DRAW_KL = partial(draw_tac_sweep, which="kl")
_DRAW_UCB1 = partial(draw_tac_sweep, which="ucb1")

SPECS: tuple[FigureSpec, ...] = (
    # the first version (NeurIPS 2021 submission)
    FigureSpec("bandits.v1_fig1_strongly",
               "Dec_UCB (Theorem 1, flocking weights) on the authors' 6-agent strongly connected "
               "graph vs the best UCB1 agent, standard pseudo-regret and paper parity metric",
               f"{V1}, Fig 1", partial(compute_v1_fixed, name="strongly"), draw_v1_fixed),
    FigureSpec("bandits.v1_fig2_undirected",
               "Dec_UCB (Theorem 2, Metropolis weights) on the authors' 6-agent undirected graph "
               "vs the best UCB1 agent, standard pseudo-regret and paper parity metric",
               f"{V1}, Fig 2", partial(compute_v1_fixed, name="undirected"), draw_v1_fixed),
    FigureSpec("bandits.v1_fig3_weakly",
               "Dec_UCB (flocking weights, Theorem-1 width) on the authors' 6-agent weakly "
               f"connected graph (agent 3 a sink) {_BOTH}",
               f"{V1}, Fig 3", partial(compute_v1_fixed, name="weakly"), draw_v1_fixed),
    FigureSpec("bandits.v1_fig4_er50",
               "Dec_UCB on ER(50, 0.5) strongly connected / undirected / weakly connected "
               "(substitute construction) graphs: worst Dec agent vs best UCB1 agent, means over "
               "agents, standard pseudo-regret and paper parity metric",
               f"{V1}, Fig 4 (a, b, c)", compute_er50, draw_er50),
    FigureSpec("bandits.v1_fig11_two_neighbors",
               "Dec_UCB (Theorem 2, Metropolis weights) on the authors' 6-cycle with the chord "
               f"0-2, fixed means, {_BOTH}",
               f"{V1}, appendix Fig 11",
               partial(compute_v1_selected, name="undirected_two_neighbors"), draw_v1_fixed),
    FigureSpec("bandits.v1_fig12_strongly_fixed_means",
               "Dec_UCB (Theorem 1, flocking weights) on the authors' strongly connected graph, "
               f"fixed means, {_BOTH}",
               f"{V1}, appendix Fig 12", partial(compute_v1_selected, name="strongly"),
               draw_v1_fixed),
    FigureSpec("bandits.v1_fig13_undirected_path",
               "Dec_UCB (Theorem 2, Metropolis weights) on the undirected path 0-1-2-3-4-5, "
               f"fixed means, {_BOTH}",
               f"{V1}, appendix Fig 13",
               partial(compute_v1_selected, name="undirected_path"), draw_v1_fixed),
    FigureSpec("bandits.v1_fig14_weakly_path",
               "Dec_UCB (flocking weights, Theorem-1 width) on the directed path 0->1->...->5, "
               f"random means, {_BOTH}",
               f"{V1}, appendix Fig 14",
               partial(compute_v1_selected, name="weakly_path"), draw_v1_fixed),
    # the journal version (IEEE TAC 2025)
    FigureSpec("bandits.tac_fig1_dec_kl_ucb",
               "Dec-KL-UCB (varsigma in {1, 0.1, 0.01}) vs single-agent KL-UCB on "
               f"{_ER20}, agent-averaged pseudo-regret",
               f"{TAC}, Fig 1", _TRUNCNORM, _DRAW_KL),
    FigureSpec("bandits.tac_fig2_dec_ucb1",
               "Dec-UCB1 (beta in {1, 0.1, 0.01}) vs single-agent UCB1 on connected ER(20, 0.5) "
               "graphs, agent-averaged pseudo-regret",
               f"{TAC}, Fig 2", _TRUNCNORM, _DRAW_UCB1),
    FigureSpec("bandits.tac_fig3_kl_vs_ucb1",
               "Dec-KL-UCB vs Dec-UCB1 at equal varsigma = beta in {1, 0.1, 0.01} (three panels) "
               f"on {_ER20}, agent-averaged pseudo-regret",
               f"{TAC}, Fig 3", _TRUNCNORM, draw_tac_kl_vs_ucb1),
    FigureSpec("bandits.tac_fig4_dec_kl_ucb_beta",
               "Dec-KL-UCB (varsigma in {1, 0.1, 0.01}) vs single-agent KL-UCB on "
               f"{_ER20}, {_BETA}, agent-averaged pseudo-regret",
               f"{TAC}, Fig 4", _BETA_RUNS, _DRAW_KL),
    FigureSpec("bandits.tac_fig5_dec_ucb1_beta",
               "Dec-UCB1 (beta in {1, 0.1, 0.01}) vs single-agent UCB1 on connected ER(20, 0.5) "
               f"graphs, {_BETA}, agent-averaged pseudo-regret",
               f"{TAC}, Fig 5", _BETA_RUNS, _DRAW_UCB1),
    FigureSpec("bandits.tac_fig6_kl_vs_ucb1_beta",
               "Dec-KL-UCB vs Dec-UCB1 at equal varsigma = beta in {1, 0.1, 0.01} (three panels) "
               f"on {_ER20}, {_BETA}",
               f"{TAC}, Fig 6", _BETA_RUNS, draw_tac_kl_vs_ucb1),
    FigureSpec("bandits.tac_figs8_9_k6_c6",
               "Dec-UCB1 and Dec-KL-UCB with per-agent beta / varsigma in {1, 0.01} on K6 + C6: "
               "mean regret of the four (component, constant) groups",
               f"{TAC}, Figs 8-9 (the authors' small-graph code)", compute_small_graphs,
               draw_small_graphs),
)


def _register(spec: FigureSpec) -> Callable[[FigureContext], FigureOutput]:
    """Register ``spec`` as a figure; the registered function is named after the id."""
    def run(ctx: FigureContext) -> FigureOutput:
        return spec.build(ctx)

    run.__name__ = run.__qualname__ = spec.id.split(".", 1)[1]
    run.__doc__ = f"{spec.title}.\n\nReproduces {spec.paper}."
    return figure(spec.id, title=spec.title, paper=spec.paper)(run)


FIGURES: dict[str, Callable[[FigureContext], FigureOutput]] = {
    spec.id: _register(spec) for spec in SPECS}
"""The registered figure functions, by id."""

_BY_ID = {spec.id: spec for spec in SPECS}


def redraw(figure_id: str, data: Mapping[str, Any], parameters: Mapping[str, Any]):
    """Draw figure ``figure_id`` again from its saved data and parameters (e.g.
    :func:`decentral.results.load_results` of ``<out>/<id>``: ``parameters`` is
    ``meta["config"]["parameters"]``); returns the matplotlib figure."""
    if figure_id not in _BY_ID:
        raise ValueError(f"{figure_id!r} is not a bandit figure; ids: {sorted(_BY_ID)}.")
    fig, _ = _BY_ID[figure_id].draw(data, parameters)
    return fig
