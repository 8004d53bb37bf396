"""Graph sequences: one protocol, several forms, two backends.

A :class:`GraphSequence` answers ``seq.at(t, key=None)`` with the mixing graph of step ``t`` —
a dense ``W [N, N]`` (``backend="dense"``) or a :class:`~decentral.graphs.tables.NeighborTable`
(``backend="sparse"``); both give the same :func:`~decentral.graphs.tables.mix` result. ``t``
may be a traced integer, so the call lives inside ``jit`` / ``lax.scan`` / ``vmap``.

Forms:

* :func:`static` — one graph for all t;
* :func:`periodic` — ``W[t % P]`` over a stack of P graphs;
* :func:`explicit` — a stack ``[T, N, N]`` built offline; runs longer than T are refused
  before anything is compiled (``seq.length``; the runner checks it);
* :func:`random_edge_drops` — each non-self edge of a base graph dropped independently with
  probability ``drop_prob`` at every step, from ``fold_in(key, t)`` (one uniform draw per base
  edge, O(edges) per step, the same draws on both backends); self-loops always kept;
  undirected bases drop symmetrically (an undirected edge is one draw); then re-weighted by
  the rule. ``shared_across_seeds`` says whether every Monte-Carlo seed sees the same draw
  (the sequence's own key) or its own (the caller passes a per-seed key to ``at``);
* :func:`one_peer_exponential` — the time-varying one-peer exponential graph of decentralized
  training: at step t agent i hears only itself and ``i − 2^(t mod ⌈log₂ n⌉)``.

Example:
    >>> from decentral.graphs import ring, periodic, row_stochastic
    >>> seq = periodic([ring(4), ring(4, directed=False)], rule="row", backend="sparse")
    >>> seq.at(3).idx.shape        # NeighborTable of step 3 (= graph 1)
    (4, 3)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ._validate import as_adjacency, as_weights
from .tables import (
    NeighborTable,
    _table_layout,
    table_rule_weights,
    table_to_dense,
)
from .weights import WEIGHT_RULES, metropolis

__all__ = [
    "GraphSequence",
    "static",
    "periodic",
    "explicit",
    "random_edge_drops",
    "one_peer_exponential",
]

_BACKENDS = ("dense", "sparse")


def _check_backend(backend: str) -> str:
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be 'dense' or 'sparse', got {backend!r}.")
    return backend


def _check_rule(rule: str) -> str:
    if rule not in WEIGHT_RULES:
        raise ValueError(f"unknown weight rule {rule!r}; use one of {sorted(WEIGHT_RULES)}.")
    return rule


def _weights_from(graph, rule: str | None, name: str) -> np.ndarray:
    """Weight matrix from a boolean adjacency + rule, or a given weight matrix (no rule)."""
    g = np.asarray(graph)
    if g.dtype == np.bool_:
        if rule is None:
            raise ValueError(f"{name} is a boolean adjacency: pass rule='row', 'column' or "
                             "'metropolis' to turn it into weights (or pass weight matrices).")
        a = as_adjacency(g, name=name)
        if rule == "metropolis":
            return metropolis(a)
        return WEIGHT_RULES[_check_rule(rule)](a)
    if rule is not None:
        raise ValueError(f"{name} is already a weight matrix; rule={rule!r} applies to boolean "
                         "adjacencies only. Drop `rule` or pass the adjacency.")
    w = as_weights(g, name=name)
    if np.any(np.diag(w) <= 0):
        bad = np.flatnonzero(np.diag(w) <= 0).tolist()
        raise ValueError(f"{name} has no self-loop weight at agents {bad}: every agent must "
                         "keep a positive weight on itself (W[i, i] > 0).")
    return w


def _stack_weights(graphs, rule: str | None) -> np.ndarray:
    if isinstance(graphs, np.ndarray) and graphs.ndim == 3 or (
            isinstance(graphs, Sequence) and not isinstance(graphs, np.ndarray)):
        items = list(graphs)
    else:
        raise ValueError("expected a stack [P, N, N] or a list of [N, N] graphs; got "
                         f"{type(graphs).__name__} with shape {np.shape(graphs)}.")
    if not items:
        raise ValueError("the graph stack is empty; give at least one graph.")
    ws = [_weights_from(g, rule, f"graph {k}") for k, g in enumerate(items)]
    shapes = {w.shape for w in ws}
    if len(shapes) != 1:
        raise ValueError(f"all graphs of a sequence need the same shape; got {sorted(shapes)}.")
    return np.stack(ws)


class GraphSequence:
    """A sequence of mixing graphs ``t -> W_t`` (see module docstring for the forms).

    Attributes:
        n: number of agents.
        backend: ``"dense"`` or ``"sparse"``.
        form: ``"static"``, ``"periodic"``, ``"explicit"``, ``"random"`` or
            ``"one_peer_exponential"``.
        period: P for static (1), periodic and one-peer forms; None otherwise.
        length: number of steps an explicit stack supplies; None for unbounded forms.
        shared_across_seeds: for random forms, whether all seeds see one draw.
    """

    def __init__(self, *, form: str, n: int, backend: str, weights: np.ndarray | None = None,
                 base_adjacency: np.ndarray | None = None, drop_prob: float = 0.0,
                 rule: str | None = None, key=None, shared_across_seeds: bool = True,
                 symmetric_drops: bool = False, width: int | None = None):
        self.form = form
        self.n = int(n)
        self.backend = _check_backend(backend)
        self.rule = rule
        self.shared_across_seeds = bool(shared_across_seeds)
        self.period = None
        self.length = None
        if form == "random":
            self._base = np.asarray(base_adjacency, dtype=bool)
            self._symmetric = bool(symmetric_drops)
            self.drop_prob = float(drop_prob)
            self._key = key
            idx, mask = _table_layout(self._base, width)
            self._base_idx = jnp.asarray(idx)
            self._base_mask = jnp.asarray(mask)
            # One uniform draw per edge of the base graph (an undirected edge is one edge): the
            # off-diagonal entries (receiver, sender) and the edge each belongs to.
            recv, send = np.nonzero(self._base & ~np.eye(self.n, dtype=bool))
            lo, hi = np.minimum(recv, send), np.maximum(recv, send)
            key_of = lo * self.n + hi if self._symmetric else recv * self.n + send
            uniq, edge_of_entry = np.unique(key_of, return_inverse=True)
            self.num_edges = int(uniq.size)
            self._entries = (jnp.asarray(recv), jnp.asarray(send), jnp.asarray(edge_of_entry))
            rows = np.broadcast_to(np.arange(self.n)[:, None], idx.shape)
            a, b = (np.minimum(rows, idx), np.maximum(rows, idx)) if self._symmetric else \
                (rows, idx)
            real = mask.copy()
            real[:, 0] = False                               # k = 0 (self) and padding: no edge
            edge_table = np.where(real, np.searchsorted(uniq, a * self.n + b), self.num_edges)
            self._edge_table = jnp.asarray(edge_table.astype(np.int32))
        else:
            self._weights_host = weights
            self.period = weights.shape[0] if form != "explicit" else None
            self.length = weights.shape[0] if form == "explicit" else None
            self._dense = jnp.asarray(weights)
            if backend == "sparse":
                pattern = np.any(weights > 0, axis=0) | np.eye(self.n, dtype=bool)
                k = int((pattern & ~np.eye(self.n, dtype=bool)).sum(axis=1).max(initial=0)) + 1
                tables = []
                for w in weights:
                    idx, mask = _table_layout((w > 0) | np.eye(self.n, dtype=bool),
                                              width if width is not None else k)
                    weight = np.where(mask, w[np.arange(self.n)[:, None], idx], 0.0)
                    tables.append((idx, weight, mask))
                self._table = NeighborTable(*(jnp.asarray(np.stack(part))
                                              for part in zip(*tables, strict=True)))

    # -- the protocol -----------------------------------------------------------------------

    def _index(self, t):
        if self.form == "explicit":
            return jnp.clip(t, 0, self.length - 1)
        return t % self.period

    def _draw_key(self, key):
        """The key the random draws come from: the sequence's own when shared across seeds
        (a per-seed key is refused, so nobody believes they get per-seed graphs), else the
        caller's."""
        if self.shared_across_seeds:
            if key is not None:
                raise ValueError("this random sequence is shared across seeds and has its own "
                                 "key; call at(t) without a key, or build it with "
                                 "shared_across_seeds=False to draw per seed.")
            return self._key
        if key is None:
            raise ValueError("this random sequence draws per seed (shared_across_seeds=False): "
                             "pass the seed's key to at(t, key).")
        return _as_key(key)

    def _edge_keep(self, t, draw_key):
        """``[num_edges + 1]`` booleans of step t: edge e kept with probability 1 − drop_prob
        (one uniform draw per base edge from ``fold_in(key, t)``); the last entry (self-loops,
        padding) is always True."""
        u = jax.random.uniform(jax.random.fold_in(draw_key, t), (self.num_edges,),
                               dtype=jnp.float32)     # same graphs with or without x64
        return jnp.concatenate([u >= self.drop_prob, jnp.ones((1,), bool)])

    def at(self, t, key=None):
        """Mixing graph of step ``t``: dense ``W [N, N]`` or a ``NeighborTable``.

        Args:
            t: step index (int or traced int32).
            key: per-seed PRNG key; needed only by random sequences with
                ``shared_across_seeds=False``.

        An explicit stack cannot raise inside jit: past its end it returns NaN weights (the
        runner then reports divergence at that chunk). Check a horizon first with
        :meth:`check_horizon`; the runner refuses ``num_steps > Algorithm.max_horizon`` before
        compiling, so factories should set ``max_horizon=seq.length``.
        """
        if self.form != "random":
            i = self._index(t)
            if self.backend == "dense":
                w = self._dense[i]
            else:
                w = self._table.weight[i]
            if self.form == "explicit":          # past the end: NaN weights, never a silent reuse
                w = jnp.where(t < self.length, w, jnp.nan)
            if self.backend == "dense":
                return w
            return NeighborTable(self._table.idx[i], w, self._table.mask[i])
        return self._random_at(t, self._draw_key(key))

    def _random_at(self, t, draw_key):
        keep = self._edge_keep(t, draw_key)
        if self.backend == "dense":
            recv, send, edge = self._entries
            adj = jnp.eye(self.n, dtype=bool).at[recv, send].set(keep[edge])
            return WEIGHT_RULES[self.rule](adj, jnp)
        mask = self._base_mask & keep[self._edge_table]
        table = NeighborTable(self._base_idx, jnp.zeros(mask.shape), mask)
        return table._replace(weight=table_rule_weights(table, self.rule))

    def dense_at(self, t, key=None):
        """Dense ``W_t`` whatever the backend (jit-able)."""
        g = self.at(t, key)
        return table_to_dense(g) if isinstance(g, NeighborTable) else g

    def weights_host(self, num_steps: int, *, start: int = 0, key=None) -> np.ndarray:
        """Host numpy stack ``[num_steps, N, N]`` of ``W_start … W_{start+num_steps-1}``.

        For validators and the absolute probability sequence (outside jit).
        """
        if num_steps < 0:
            raise ValueError(f"num_steps must be >= 0, got {num_steps}.")
        if self.form == "explicit" and start + num_steps > self.length:
            raise ValueError(f"this explicit sequence supplies {self.length} steps; asked for "
                             f"steps {start}..{start + num_steps - 1}.")
        if self.form != "random":
            idx = np.arange(start, start + num_steps)
            idx = idx % self.period if self.period is not None else idx
            return np.asarray(self._weights_host[idx])
        if num_steps == 0:
            return np.zeros((0, self.n, self.n))
        draw_key = self._draw_key(key)
        if not hasattr(self, "_dense_batch"):
            # compiled once per sequence; lengths are padded to powers of two to limit retraces
            def dense(t, k):
                g = self._random_at(t, k)
                return table_to_dense(g) if isinstance(g, NeighborTable) else g
            self._dense_batch = jax.jit(jax.vmap(dense, in_axes=(0, None)))
        padded = 1 << (num_steps - 1).bit_length()
        ts = jnp.arange(start, start + padded)
        return np.asarray(self._dense_batch(ts, draw_key))[:num_steps]

    def check_horizon(self, num_steps: int) -> None:
        """Raise ValueError if this sequence cannot supply ``num_steps`` steps."""
        if self.length is not None and num_steps > self.length:
            raise ValueError(f"the explicit graph stack holds {self.length} steps but the run "
                             f"needs {num_steps}; build a longer stack or use periodic().")

    def __repr__(self) -> str:
        extra = (f", period={self.period}" if self.period is not None else
                 f", length={self.length}" if self.length is not None else
                 f", drop_prob={self.drop_prob}, rule={self.rule!r}")
        return f"GraphSequence(form={self.form!r}, n={self.n}, backend={self.backend!r}{extra})"


def static(graph, *, rule: str | None = None, backend: str = "dense") -> GraphSequence:
    """The same graph at every step.

    Args:
        graph: a weight matrix ``W [N, N]``, or a boolean adjacency together with ``rule``.
        rule: ``"row"``, ``"column"`` or ``"metropolis"`` when ``graph`` is an adjacency.
        backend: ``"dense"`` or ``"sparse"``.

    Example:
        >>> seq = static(ring(5), rule="row")
        >>> seq.at(7).shape
        (5, 5)
    """
    w = _weights_from(graph, rule, "graph")
    return GraphSequence(form="static", n=w.shape[0], backend=backend, weights=w[None], rule=rule)


def periodic(graphs, *, rule: str | None = None, backend: str = "dense") -> GraphSequence:
    """``W_t = graphs[t % P]`` over a stack (or list) of P weight matrices / adjacencies."""
    w = _stack_weights(graphs, rule)
    return GraphSequence(form="periodic", n=w.shape[1], backend=backend, weights=w, rule=rule)


def explicit(graphs, *, rule: str | None = None, backend: str = "dense") -> GraphSequence:
    """``W_t = graphs[t]`` for t < T over a stack built offline; longer runs are refused."""
    w = _stack_weights(graphs, rule)
    return GraphSequence(form="explicit", n=w.shape[1], backend=backend, weights=w, rule=rule)


def random_edge_drops(base, drop_prob: float, *, rule: str = "row", key=None,
                      shared_across_seeds: bool = True, symmetric_drops: bool | None = None,
                      backend: str = "dense") -> GraphSequence:
    """Random sequence: every non-self edge of ``base`` is dropped with probability
    ``drop_prob`` independently at each step (from ``fold_in(key, t)``), then re-weighted.

    Args:
        base: boolean base adjacency with self-loops (symmetric bases drop symmetrically).
        drop_prob: per-step drop probability in [0, 1).
        rule: weight rule applied to each step's graph (``"metropolis"`` needs a symmetric base).
        key: the sequence's own PRNG key (or an int seed), used when ``shared_across_seeds``.
        shared_across_seeds: True — every seed sees the same graphs (``at(t)``); False — the
            caller passes each seed's key (``at(t, key)``).
        symmetric_drops: drop both directions of an undirected edge together (one draw per
            edge). Default: True iff ``base`` is symmetric; False on a symmetric base drops
            the two directions independently; True needs a symmetric base.
        backend: ``"dense"`` or ``"sparse"``.

    The draws are float32 uniforms whatever the global precision, so one key gives the same
    graphs with and without ``jax_enable_x64``.
    """
    a = as_adjacency(base, name="base")
    _check_rule(rule)
    if not (np.isfinite(drop_prob) and 0.0 <= drop_prob < 1.0):
        raise ValueError(f"drop_prob must be in [0, 1), got {drop_prob!r}.")
    if rule == "metropolis" and not np.array_equal(a, a.T):
        raise ValueError("rule='metropolis' needs an undirected (symmetric) base graph.")
    symmetric = bool(np.array_equal(a, a.T))
    if symmetric_drops is None:
        symmetric_drops = symmetric
    if symmetric_drops and not symmetric:
        raise ValueError("symmetric_drops=True needs a symmetric (undirected) base graph.")
    if rule == "metropolis" and not symmetric_drops:
        raise ValueError("rule='metropolis' needs symmetric drops (each step undirected).")
    if shared_across_seeds:
        if key is None:
            raise ValueError("a shared random sequence needs its own key: pass key=jax.random."
                             "key(seed) or an integer seed.")
        key = _as_key(key)
    elif key is not None:
        raise ValueError("shared_across_seeds=False draws from each seed's key (at(t, key)); "
                         "the sequence takes no key of its own: drop key=.")
    return GraphSequence(form="random", n=a.shape[0], backend=backend, base_adjacency=a,
                         drop_prob=drop_prob, rule=rule, key=key,
                         shared_across_seeds=shared_across_seeds,
                         symmetric_drops=bool(symmetric_drops))


def _as_key(key):
    """A typed PRNG key from a key or an integer seed."""
    if isinstance(key, bool):
        raise ValueError(f"expected a PRNG key or an integer seed, got {key!r}.")
    if isinstance(key, (int, np.integer)):
        return jax.random.key(int(key))
    return key


def one_peer_exponential(n: int, *, rule: str = "row", backend: str = "dense") -> GraphSequence:
    """One-peer exponential graphs: at step t agent i hears itself and ``i − 2^(t mod τ)``,
    ``τ = ⌈log₂ n⌉`` (period τ; for n = 1 the single graph is the self-loop).

    With ``rule="row"`` (or ``"column"``) every weight is 1/2: the sequence is doubly
    stochastic.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}.")
    tau = max(1, math.ceil(math.log2(n))) if n > 1 else 1
    i = np.arange(n)
    adjs = []
    for k in range(tau):
        a = np.eye(n, dtype=bool)
        if n > 1:
            a[i, (i - 2**k) % n] = True
        adjs.append(a)
    seq = periodic(adjs, rule=rule, backend=backend)
    seq.form = "one_peer_exponential"
    return seq
