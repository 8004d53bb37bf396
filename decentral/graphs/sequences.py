"""Graph sequences: one protocol, several forms, two backends.

A :class:`GraphSequence` answers ``seq.at(t, key=None)`` with the mixing graph of step ``t`` —
a dense ``W [N, N]`` (``backend="dense"``) or a :class:`~decentral.graphs.tables.NeighborTable`
(``backend="sparse"``); both give the same :func:`~decentral.graphs.tables.mix` result. ``t``
may be a traced integer, so the call lives inside ``jit`` / ``lax.scan`` / ``vmap``.

A sequence is a JAX pytree: its arrays (weights or tables, the base graph of a random
sequence, ``drop_prob`` and the key) are leaves, its form, size, backend and rule are static.
It can therefore be passed *into* a jitted function, and sequences that differ only in their
numbers (weights of the same shape, drop probabilities, keys) share one compilation;
:meth:`GraphSequence.replace` swaps leaves for sweeps under ``vmap``.

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

Weights given as weight matrices (no ``rule``) must be row- or column-stochastic; a 0/1 array
is an adjacency and is passed as booleans together with a rule (``adj.astype(bool)``,
``rule="row"``).

Example:
    >>> from decentral.graphs import ring, periodic, mix
    >>> seq = periodic([ring(4), ring(4, directed=False)], rule="row", backend="sparse")
    >>> seq.at(3).idx.shape        # NeighborTable of step 3 (= graph 1): self + 2 neighbours
    (4, 3)
    >>> y = jax.jit(lambda s, x: mix(s.at(3), x))(seq, jnp.arange(4.0))   # agent 0: (3+0+1)/3
    >>> [round(float(v), 4) for v in y]
    [1.3333, 1.0, 2.0, 1.6667]
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from decentral._checks import check_int

from ._validate import as_adjacency, as_weights, require_self_weights
from .tables import NeighborTable, _table_layout, table_rule_weights, table_to_dense
from .weights import WEIGHT_RULES, effective_tolerance, metropolis, stochasticity_violations

__all__ = [
    "GraphSequence",
    "as_sequence",
    "static",
    "periodic",
    "explicit",
    "random_edge_drops",
    "one_peer_exponential",
]

_BACKENDS = ("dense", "sparse")
_DIGEST_VERSION = "graphs/1"

# Leaf names of each kind of sequence, in flattening order.
_DENSE_LEAVES = ("weights",)
_TABLE_LEAVES = ("idx", "weight", "mask")
_RANDOM_LEAVES = ("base", "drop_prob", "key", "recv", "send", "edge_of_entry", "base_idx",
                  "base_mask", "edge_table")


def _check_backend(backend: str) -> str:
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be 'dense' or 'sparse', got {backend!r}.")
    return backend


def _check_rule(rule: str) -> str:
    if rule not in WEIGHT_RULES:
        raise ValueError(f"unknown weight rule {rule!r}; use one of {sorted(WEIGHT_RULES)}.")
    return rule


def _weights_from(graph, rule: str | None, name: str) -> np.ndarray:
    """Weight matrix from a boolean adjacency + rule, or a given weight matrix (no rule).

    A given weight matrix must be row- or column-stochastic (which of the two a family needs
    is that family's check) with a positive diagonal; a 0/1 array is an adjacency and is
    refused with the conversion to use.
    """
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
        kind = "an integer array" if np.issubdtype(g.dtype, np.integer) else \
            f"already a weight matrix (dtype {g.dtype})"
        raise ValueError(f"{name} is {kind}, but rule={rule!r} turns a boolean adjacency into "
                         f"weights. If {name} is a 0/1 adjacency pass `{name}.astype(bool)` "
                         f"with rule={rule!r}; if it holds weights, drop `rule`.")
    w = require_self_weights(as_weights(g, name=name), name)
    rows = stochasticity_violations(w, axis=1)
    cols = stochasticity_violations(w, axis=0)
    if rows and cols:
        k, s = rows[0]
        if np.all((w == 0) | (w == 1)):
            raise ValueError(
                f"{name} holds only 0s and 1s: it is an adjacency, not weights (row {k} sums "
                f"to its in-degree {s:g}). Pass it as a boolean adjacency with a weight rule, "
                f"e.g. static({name}.astype(bool), rule='row').")
        c, cs = cols[0]
        raise ValueError(
            f"{name} is neither row- nor column-stochastic (row {k} sums to {s!r}, column {c} "
            f"to {cs!r}, tolerance {effective_tolerance(w):.1e}). Weights given as a matrix must "
            f"be stochastic; normalise them, or pass the boolean pattern `({name} > 0)` with "
            "rule='row', 'column' or 'metropolis'.")
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


def _is_traced(leaf) -> bool:
    return isinstance(leaf, jax.core.Tracer)


def _is_key(leaf) -> bool:
    return isinstance(leaf, jax.Array) and jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key)


@jax.tree_util.register_pytree_with_keys_class
class GraphSequence:
    """A sequence of mixing graphs ``t -> W_t`` (see module docstring for the forms).

    Build one with :func:`static`, :func:`periodic`, :func:`explicit`,
    :func:`random_edge_drops` or :func:`one_peer_exponential`, not with the constructor.

    Attributes:
        n: number of agents.
        backend: ``"dense"`` or ``"sparse"``.
        form: ``"static"``, ``"periodic"``, ``"explicit"``, ``"random"`` or
            ``"one_peer_exponential"``.
        rule: the weight rule (None for weights given as matrices).
        period: P for static (1), periodic and one-peer forms; None otherwise.
        length: number of steps an explicit stack supplies; None for unbounded forms.
        shared_across_seeds: for random forms, whether all seeds see one draw.
        leaves: the array leaves by name (``weights`` for dense fixed forms; ``idx``,
            ``weight``, ``mask`` stacks for sparse fixed forms; ``base``, ``drop_prob``,
            ``key`` and index arrays for random forms).

    Example:
        >>> from decentral.graphs import ring, static
        >>> seq = static(ring(4), rule="row")
        >>> seq.digest()[:9]
        'graphs/1:'
        >>> seq.digest() == static(ring(4), rule="row").digest()
        True
    """

    def __init__(self, *, form: str, n: int, backend: str, rule: str | None, leaves: dict,
                 period: int | None = None, length: int | None = None,
                 shared_across_seeds: bool = True, symmetric_drops: bool = False,
                 num_edges: int = 0):
        self.form = form
        self.n = int(n)
        self.backend = _check_backend(backend)
        self.rule = rule
        self.period = period
        self.length = length
        self.shared_across_seeds = bool(shared_across_seeds)
        self.symmetric_drops = bool(symmetric_drops)
        self.num_edges = int(num_edges)
        names = self._leaf_names()
        if set(leaves) != set(names):
            raise ValueError(f"a {form} sequence on the {backend} backend has leaves {names}; "
                             f"got {sorted(leaves)}.")
        self.leaves = {name: leaves[name] for name in names}

    # -- pytree ------------------------------------------------------------------------------

    def _leaf_names(self) -> tuple[str, ...]:
        if self.form == "random":
            return _RANDOM_LEAVES
        return _DENSE_LEAVES if self.backend == "dense" else _TABLE_LEAVES

    def _aux(self) -> tuple:
        return (self.form, self.n, self.backend, self.rule, self.period, self.length,
                self.shared_across_seeds, self.symmetric_drops, self.num_edges)

    def tree_flatten_with_keys(self):
        children = [(jax.tree_util.GetAttrKey(name), self.leaves[name])
                    for name in self._leaf_names()]
        return children, self._aux()

    @classmethod
    def tree_unflatten(cls, aux, children):
        form, n, backend, rule, period, length, shared, symmetric, num_edges = aux
        obj = object.__new__(cls)
        obj.form, obj.n, obj.backend, obj.rule = form, n, backend, rule
        obj.period, obj.length = period, length
        obj.shared_across_seeds, obj.symmetric_drops, obj.num_edges = shared, symmetric, \
            num_edges
        obj.leaves = dict(zip(obj._leaf_names(), children, strict=True))
        return obj

    def replace(self, **leaves) -> GraphSequence:
        """A copy with some leaves replaced (no validation: for sweeps under ``jit``/``vmap``).

        Example:
            >>> from decentral.graphs import ring, random_edge_drops
            >>> seq = random_edge_drops(ring(5, directed=False), 0.1, key=0)
            >>> ps = jnp.array([0.0, 0.5, 0.9])
            >>> kept = jax.vmap(lambda p: seq.replace(drop_prob=p).dense_at(2) > 0)(ps)
            >>> kept.sum(axis=(1, 2)).shape
            (3,)
        """
        unknown = sorted(set(leaves) - set(self._leaf_names()))
        if unknown:
            raise ValueError(f"unknown leaves {unknown}; this sequence has "
                             f"{list(self._leaf_names())}.")
        children = [leaves.get(name, self.leaves[name]) for name in self._leaf_names()]
        return GraphSequence.tree_unflatten(self._aux(), children)

    @property
    def drop_prob(self):
        """Per-step drop probability of a random sequence (None for other forms)."""
        return self.leaves["drop_prob"] if self.form == "random" else None

    # -- identity ----------------------------------------------------------------------------

    def digest(self) -> str:
        """Stable content hash ``"graphs/1:<sha256 hex>"`` of everything that determines
        :meth:`at`: form, size, backend, rule, flags, period / length, and every array leaf by
        dtype, shape and bytes (the key by its implementation and key data).

        Equal constructions give equal digests in every process (no ids or addresses); any
        change of graphs, weights, ``drop_prob``, key, backend or table width changes it.

        Raises:
            ValueError: when the leaves are traced (inside ``jit``/``vmap``): a digest needs
                concrete values; take it outside the transformation.
        """
        h = hashlib.sha256(_DIGEST_VERSION.encode())
        h.update(repr(self._aux()).encode())
        for name in self._leaf_names():
            leaf = self.leaves[name]
            if _is_traced(leaf):
                raise ValueError(f"GraphSequence.digest() needs concrete arrays but leaf "
                                 f"{name!r} is traced (inside jit/vmap); take the digest "
                                 "outside the transformation.")
            h.update(f"|{name}|".encode())
            if leaf is None:
                h.update(b"none")
                continue
            if _is_key(leaf):
                h.update(str(jax.random.key_impl(leaf)).encode())
                leaf = jax.random.key_data(leaf)
            arr = np.ascontiguousarray(np.asarray(leaf))
            h.update(f"{arr.dtype.str}{arr.shape}".encode())
            h.update(arr.tobytes())
        return f"{_DIGEST_VERSION}:{h.hexdigest()}"

    # -- the protocol ------------------------------------------------------------------------

    def _index(self, t):
        if self.form == "explicit":
            return jnp.clip(t, 0, self.length - 1)
        return t % self.period

    def _draw_key(self, key):
        """The key the random draws come from — decided here, for every family: the
        sequence's own key when it is shared across seeds (a key passed by the caller is then
        not used), the caller's per-seed key otherwise."""
        if self.shared_across_seeds:
            return self.leaves["key"]
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
        return jnp.concatenate([u >= self.leaves["drop_prob"], jnp.ones((1,), bool)])

    def at(self, t, key=None):
        """Mixing graph of step ``t``: dense ``W [N, N]`` or a ``NeighborTable``.

        Args:
            t: step index (int or traced int32).
            key: the seed's key for this step's graph draw. Families always pass it; whether
                it is used is decided here, once: a random sequence with
                ``shared_across_seeds=False`` draws from it (it is then required), a shared
                one draws from its own key and every other form ignores it.

        An explicit stack cannot raise inside jit: past its end it returns NaN weights (the
        runner then reports divergence at that chunk). Check a horizon first with
        :meth:`check_horizon`; the runner refuses ``num_steps > Algorithm.max_horizon`` before
        compiling, so factories should set ``max_horizon=seq.length``.
        """
        if self.form == "random":
            return self._random_at(t, self._draw_key(key))
        i = self._index(t)
        lv = self.leaves
        w = jnp.asarray(lv["weights"] if self.backend == "dense" else lv["weight"])[i]
        if self.form == "explicit":          # past the end: NaN weights, never a silent reuse
            w = jnp.where(t < self.length, w, jnp.nan)
        if self.backend == "dense":
            return w
        return NeighborTable(jnp.asarray(lv["idx"])[i], w, jnp.asarray(lv["mask"])[i])

    def _random_pattern(self, t, draw_key):
        """Dense boolean adjacency of step t of a random sequence (jit-able)."""
        keep = self._edge_keep(t, draw_key)
        lv = self.leaves
        return jnp.eye(self.n, dtype=bool).at[jnp.asarray(lv["recv"]), jnp.asarray(lv["send"])
                                              ].set(keep[jnp.asarray(lv["edge_of_entry"])])

    def _random_at(self, t, draw_key):
        if self.backend == "dense":
            return WEIGHT_RULES[self.rule](self._random_pattern(t, draw_key), jnp)
        keep = self._edge_keep(t, draw_key)
        lv = self.leaves
        mask = jnp.asarray(lv["base_mask"]) & keep[jnp.asarray(lv["edge_table"])]
        table = NeighborTable(jnp.asarray(lv["base_idx"]), jnp.zeros(mask.shape), mask)
        return table._replace(weight=table_rule_weights(table, self.rule))

    @property
    def draws_per_seed(self) -> bool:
        """True for a random sequence with ``shared_across_seeds=False`` (its graphs come from
        the key passed to :meth:`at`)."""
        return self.form == "random" and not self.shared_across_seeds

    def split_key(self, key):
        """``(graph_key, rest)`` of a step's key, for a family that draws its own randomness
        from the step key: a sequence drawing per seed gets ``jax.random.split(key)``; any
        other gets ``(None, key)``, so the family's own draws do not depend on whether its
        graphs are random. Decided here, for every family.

        Example:
            >>> from decentral.graphs import ring, static
            >>> k = jax.random.key(0)
            >>> graph_key, rest = static(ring(3), rule="row").split_key(k)
            >>> graph_key is None and rest is k
            True
        """
        if self.draws_per_seed:
            graph_key, rest = jax.random.split(key)
            return graph_key, rest
        return None, key

    # -- structure: what a compiled program depends on ---------------------------------------

    def structure(self) -> tuple:
        """Hashable description of everything but the array contents: form, size, backend,
        rule, period / length, flags, edge count and every leaf's shape and dtype. Two
        sequences of equal structure can replace each other as data in one compiled program
        (e.g. through an algorithm's ``params.graphs``)."""
        shapes = []
        for name in self._leaf_names():
            leaf = self.leaves[name]
            if _is_key(leaf):
                shapes.append((name, tuple(leaf.shape), str(leaf.dtype)))
            elif leaf is None:
                shapes.append((name, None, None))
            else:
                shapes.append((name, tuple(np.shape(leaf)), str(np.result_type(leaf))))
        return self._aux() + tuple(shapes)

    def require_same_structure(self, other, *, name: str = "params.graphs") -> None:
        """Refuse ``other`` unless it is a :class:`GraphSequence` of exactly this structure
        (:meth:`structure`), with a message naming ``name`` and the first difference."""
        if not isinstance(other, GraphSequence):
            raise ValueError(f"{name} must be a decentral.graphs.GraphSequence of the "
                             f"structure the algorithm was built with ({self.describe()}); got "
                             f"{type(other).__name__}.")
        mine, theirs = self.structure(), other.structure()
        if mine == theirs:
            return
        labels = ("form", "n", "backend", "rule", "period", "length", "shared_across_seeds",
                  "symmetric_drops", "num_edges")
        for k, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            if a != b:
                what = labels[k] if k < len(labels) else f"leaf {a[0]!r} (shape, dtype)"
                shown = (a, b) if k < len(labels) else (a[1:], b[1:])
                raise ValueError(
                    f"{name} has another structure than the algorithm's graphs: {what} is "
                    f"{shown[1]!r}, the algorithm was built with {shown[0]!r}. A run may pass "
                    "the arrays of a sequence of exactly the structure the factory fixed (N, "
                    "table width, backend, form, rule); for another structure build the "
                    "algorithm with that sequence.")

    def describe(self) -> str:
        """A short readable summary: form, N, backend, rule."""
        return (f"form={self.form!r}, n={self.n}, backend={self.backend!r}, "
                f"rule={self.rule!r}")

    def dense_at(self, t, key=None):
        """Dense ``W_t`` whatever the backend (jit-able)."""
        g = self.at(t, key)
        return table_to_dense(g) if isinstance(g, NeighborTable) else g

    # -- host views --------------------------------------------------------------------------

    def _require_concrete(self, what: str) -> None:
        for name, leaf in self.leaves.items():
            if _is_traced(leaf):
                raise ValueError(f"GraphSequence.{what} runs on the host but leaf {name!r} is "
                                 "traced (inside jit/vmap); call it outside the "
                                 "transformation.")

    def _steps(self, num_steps: int, start: int) -> np.ndarray:
        num_steps = check_int(num_steps, "num_steps", minimum=0)
        start = check_int(start, "start", minimum=0)
        if self.form == "explicit" and start + num_steps > self.length:
            raise ValueError(f"this explicit sequence supplies {self.length} steps; asked for "
                             f"steps {start}..{start + num_steps - 1}.")
        idx = np.arange(start, start + num_steps)
        return idx % self.period if self.period is not None else idx

    def _fixed_host(self) -> np.ndarray:
        """The stored ``[P, N, N]`` stack of a fixed form, as host numpy (dense rebuilt from
        the tables on the sparse backend; exact: the table holds copies of the weights)."""
        lv = self.leaves
        if self.backend == "dense":
            return np.asarray(lv["weights"])
        idx, weight, mask = (np.asarray(lv[k]) for k in _TABLE_LEAVES)
        out = np.zeros((idx.shape[0], self.n, self.n), dtype=weight.dtype)
        p, rows, _ = np.indices(idx.shape)
        np.add.at(out, (p, rows, idx), np.where(mask, weight, 0))
        return out

    def weights_host(self, num_steps: int, *, start: int = 0, key=None) -> np.ndarray:
        """Host numpy stack ``[num_steps, N, N]`` of ``W_start … W_{start+num_steps-1}``.

        For validators and the absolute probability sequence (outside jit). Fixed forms return
        the stored weights (float64 when built from float64 arrays); random forms return the
        weights :meth:`at` computes (in the default JAX precision).
        """
        self._require_concrete("weights_host")
        steps = self._steps(num_steps, start)
        if self.form != "random":
            return self._fixed_host()[steps]
        if steps.size == 0:
            return np.zeros((0, self.n, self.n))
        return np.asarray(_random_batch(self, start, steps.size, self._draw_key(key), False))

    def weights_host64(self, num_steps: int, *, start: int = 0, key=None) -> np.ndarray:
        """Like :meth:`weights_host` but random forms are re-weighted on the host in float64
        (the same drawn graphs; the rule's exact float64 weights whatever the JAX precision).
        """
        self._require_concrete("weights_host64")
        if self.form != "random":
            return self.weights_host(num_steps, start=start, key=key)
        steps = self._steps(num_steps, start)
        if steps.size == 0:
            return np.zeros((0, self.n, self.n))
        pats = np.asarray(_random_batch(self, start, steps.size, self._draw_key(key), True))
        return WEIGHT_RULES[self.rule](pats, np)

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


def _random_batch(seq: GraphSequence, start: int, count: int, draw_key, pattern: bool):
    """Dense weights (or boolean patterns) of ``count`` steps from ``start``; lengths are
    padded to powers of two so few shapes are compiled (one compile per sequence structure)."""
    padded = 1 << (count - 1).bit_length()
    ts = jnp.arange(start, start + padded)
    return _random_batch_jit(seq, ts, draw_key, pattern)[:count]


@jax.jit(static_argnums=3)
def _random_batch_jit(seq, ts, draw_key, pattern):
    def one(t):
        if pattern:
            return seq._random_pattern(t, draw_key)
        g = seq._random_at(t, draw_key)
        return table_to_dense(g) if isinstance(g, NeighborTable) else g
    return jax.vmap(one)(ts)


def _fixed(form: str, w: np.ndarray, rule: str | None, backend: str) -> GraphSequence:
    """A static / periodic / explicit / one-peer sequence over the weight stack ``w``."""
    _check_backend(backend)
    n = w.shape[1]
    period = w.shape[0] if form != "explicit" else None
    length = w.shape[0] if form == "explicit" else None
    if backend == "dense":
        leaves = {"weights": w}
    else:
        eye = np.eye(n, dtype=bool)
        pattern = np.any(w > 0, axis=0) | eye
        k = int((pattern & ~eye).sum(axis=1).max(initial=0)) + 1
        parts = []
        for wt in w:
            idx, mask = _table_layout((wt > 0) | eye, k)
            weight = np.where(mask, wt[np.arange(n)[:, None], idx], 0.0).astype(w.dtype)
            parts.append((idx, weight, mask))
        leaves = dict(zip(_TABLE_LEAVES, (np.stack(p) for p in zip(*parts, strict=True)),
                          strict=True))
    return GraphSequence(form=form, n=n, backend=backend, rule=rule, leaves=leaves,
                         period=period, length=length)


def static(graph, *, rule: str | None = None, backend: str = "dense") -> GraphSequence:
    """The same graph at every step.

    Args:
        graph: a row- or column-stochastic weight matrix ``W [N, N]``, or a boolean adjacency
            together with ``rule``.
        rule: ``"row"``, ``"column"`` or ``"metropolis"`` when ``graph`` is an adjacency.
        backend: ``"dense"`` or ``"sparse"``.

    Raises:
        ValueError: ``graph`` is a weight matrix that is neither row- nor column-stochastic
            (a 0/1 array is an adjacency: pass ``adj.astype(bool)`` with a rule), or a
            non-boolean array comes with a rule.

    Example:
        >>> from decentral.graphs import ring
        >>> seq = static(ring(5), rule="row")
        >>> seq.at(7).shape
        (5, 5)
    """
    w = _weights_from(graph, rule, "graph")
    return _fixed("static", w[None], rule, backend)


def periodic(graphs, *, rule: str | None = None, backend: str = "dense") -> GraphSequence:
    """``W_t = graphs[t % P]`` over a stack (or list) of P weight matrices / adjacencies.

    Example:
        >>> from decentral.graphs import complete, ring
        >>> seq = periodic([ring(3), complete(3)], rule="row")
        >>> seq.period, float(seq.at(5)[0, 1])        # step 5 is graph 1: K_3
        (2, 0.3333333432674408)
    """
    w = _stack_weights(graphs, rule)
    return _fixed("periodic", w, rule, backend)


def explicit(graphs, *, rule: str | None = None, backend: str = "dense") -> GraphSequence:
    """``W_t = graphs[t]`` for t < T over a stack built offline; longer runs are refused.

    Example:
        >>> from decentral.graphs import complete, ring
        >>> seq = explicit([ring(3), complete(3)], rule="row")
        >>> seq.length
        2
    """
    w = _stack_weights(graphs, rule)
    return _fixed("explicit", w, rule, backend)


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

    Example:
        >>> from decentral.graphs import complete
        >>> seq = random_edge_drops(complete(4), 0.5, key=0)
        >>> seq.num_edges                     # undirected K_4: 6 edges, one draw each
        6
        >>> bool((seq.weights_host(3).sum(axis=2) > 0.999).all())
        True
    """
    a = as_adjacency(base, name="base")
    _check_rule(rule)
    _check_backend(backend)
    if isinstance(drop_prob, bool) or not isinstance(drop_prob, (int, float, np.floating,
                                                                 np.integer)) \
            or not (np.isfinite(drop_prob) and 0.0 <= drop_prob < 1.0):
        raise ValueError(f"drop_prob must be a number in [0, 1), got {drop_prob!r}.")
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
    n = a.shape[0]
    idx, mask = _table_layout(a, None)
    # One uniform draw per edge of the base graph (an undirected edge is one edge): the
    # off-diagonal entries (receiver, sender) and the edge each belongs to.
    recv, send = np.nonzero(a & ~np.eye(n, dtype=bool))
    lo, hi = np.minimum(recv, send), np.maximum(recv, send)
    key_of = lo * n + hi if symmetric_drops else recv * n + send
    uniq, edge_of_entry = np.unique(key_of, return_inverse=True)
    rows = np.broadcast_to(np.arange(n)[:, None], idx.shape)
    ea, eb = (np.minimum(rows, idx), np.maximum(rows, idx)) if symmetric_drops else (rows, idx)
    real = mask.copy()
    real[:, 0] = False                               # k = 0 (self) and padding: no edge
    edge_table = np.where(real, np.searchsorted(uniq, ea * n + eb), uniq.size)
    leaves = {"base": a, "drop_prob": float(drop_prob), "key": key,
              "recv": recv.astype(np.int32), "send": send.astype(np.int32),
              "edge_of_entry": edge_of_entry.reshape(-1).astype(np.int32),
              "base_idx": idx, "base_mask": mask, "edge_table": edge_table.astype(np.int32)}
    return GraphSequence(form="random", n=n, backend=backend, rule=rule, leaves=leaves,
                         shared_across_seeds=shared_across_seeds,
                         symmetric_drops=bool(symmetric_drops), num_edges=int(uniq.size))


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

    Every agent has in-degree 2 (itself and one peer) and, as ``j ↦ j + 2^k`` is a bijection,
    out-degree 2 as well; so ``rule="row"`` (``1/|N_i|``) and ``rule="column"``
    (``1/|N_j^-|``) both put 1/2 on every edge, and each step is doubly stochastic.

    Example:
        >>> seq = one_peer_exponential(8)
        >>> seq.period, float(seq.at(2)[0, 4])        # step 2: agent 0 hears 0 − 4 = 4 (mod 8)
        (3, 0.5)
    """
    n = check_int(n, "n", minimum=1)
    tau = max(1, math.ceil(math.log2(n))) if n > 1 else 1
    i = np.arange(n)
    adjs = []
    for k in range(tau):
        a = np.eye(n, dtype=bool)
        if n > 1:
            a[i, (i - 2**k) % n] = True
        adjs.append(a)
    return _fixed("one_peer_exponential", _stack_weights(adjs, rule), rule, backend)


def as_sequence(graph, *, rule: str | None = None, backend: str | None = None,
                default_rule: str | None = None) -> GraphSequence:
    """The one graph convention of every algorithm factory: a sequence from what a user gives.

    Accepted, and nothing else:

    * a :class:`GraphSequence` (any form, any backend), returned as it is;
    * a weight matrix ``W [N, N]`` (row- or column-stochastic, positive diagonal): the static
      sequence of W;
    * a boolean adjacency ``adj [N, N]`` (``adj[i, j]``: i receives from j, self-loops
      included) together with a weight ``rule`` (``"row"``, ``"column"``, ``"metropolis"``):
      the static sequence of the rule's weights.

    Args:
        graph: see above.
        rule: the weight rule of an adjacency (None for a weight matrix or a sequence; a
            sequence built with another rule is refused).
        backend: ``"dense"`` or ``"sparse"`` for a sequence built here (default ``"dense"``);
            a given sequence must already be on it.
        default_rule: the rule an algorithm applies to an adjacency given without one (a
            factory's documented default, e.g. W-MSR, which reads only who hears whom); None:
            an adjacency needs ``rule``.

    Raises:
        ValueError: anything else (lists, stacks, other shapes and dtypes), with one message
            that names what is accepted; a sequence on another backend or with another rule.

    Example:
        >>> from decentral.graphs import ring, row_stochastic
        >>> as_sequence(ring(4), rule="row").describe()
        "form='static', n=4, backend='dense', rule='row'"
        >>> as_sequence(row_stochastic(ring(4)), backend="sparse").backend
        'sparse'
    """
    if backend is not None:
        _check_backend(backend)
    if isinstance(graph, GraphSequence):
        if backend is not None and graph.backend != backend:
            raise ValueError(f"graphs is a sequence on the {graph.backend!r} backend but "
                             f"backend={backend!r} was asked; build the sequence with "
                             f"backend={backend!r} (or drop backend=).")
        if rule is not None and graph.rule != rule:
            raise ValueError(f"graphs is a sequence built with rule={graph.rule!r}; rule="
                             f"{rule!r} applies to an adjacency only. Drop rule= or build the "
                             f"sequence with rule={rule!r}.")
        return graph
    accepted = ("graphs must be a decentral.graphs.GraphSequence (static, periodic, explicit, "
                "random_edge_drops, one_peer_exponential), a row- or column-stochastic weight "
                "matrix [N, N], or a boolean adjacency [N, N] with rule='row', 'column' or "
                "'metropolis'")
    if isinstance(graph, (list, tuple)) or isinstance(graph, (str, bytes, dict)) or \
            graph is None:
        hint = " (for a sequence of graphs use periodic(...) or explicit(...))" \
            if isinstance(graph, (list, tuple)) else ""
        raise ValueError(f"{accepted}; got {type(graph).__name__}{hint}.")
    try:
        arr = np.asarray(graph)
    except Exception:
        raise ValueError(f"{accepted}; got {type(graph).__name__}.") from None
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        hint = (" (a stack of graphs: use periodic(...) or explicit(...))" if arr.ndim == 3
                else "")
        raise ValueError(f"{accepted}; got an array of shape {arr.shape}{hint}.")
    if arr.dtype == np.bool_:
        use = rule if rule is not None else default_rule
        if use is None:
            raise ValueError(f"{accepted}; got a boolean adjacency without a rule: pass "
                             "rule='row', 'column' or 'metropolis'.")
        return static(arr, rule=use, backend=backend or "dense")
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"{accepted}; got an array of dtype {arr.dtype}.")
    return static(arr, rule=rule, backend=backend or "dense")
