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
  the rule. A scipy sparse base is read in O(n + edges) and, on the sparse backend, taken at
  any size (above :data:`~decentral.graphs.DENSE_LIMIT` the ``base`` leaf is None).
  ``shared_across_seeds`` says whether every Monte-Carlo seed sees the same draw (the
  sequence's own key) or its own (the caller passes a per-seed key to ``at``);
* :func:`one_peer_exponential` — the time-varying one-peer exponential graph of decentralized
  training: at step t agent i hears only itself and ``i − 2^(t mod ⌈log₂ n⌉)``.

Weights given as weight matrices (no ``rule``) must be row- or column-stochastic; a 0/1 array
is an adjacency and is passed as booleans together with a rule (``adj.astype(bool)``,
``rule="row"``).

Scipy sparse graphs (adjacencies with a rule, or weight matrices; same orientation: row i
lists agent i's in-neighbours) are taken by :func:`static`, :func:`periodic`, :func:`explicit`
and :func:`as_sequence`, whose ``backend`` then defaults to ``"sparse"``: the weights and the
neighbour tables are computed in O(n + edges) and the sequence holds only its tables, the
same arrays the dense input of the same graph gives. Methods that need ``[n, n]`` matrices
(:meth:`GraphSequence.dense_at`, :meth:`~GraphSequence.weights_host`) refuse a sparse-backend
sequence above :data:`~decentral.graphs.DENSE_LIMIT` agents; :meth:`~GraphSequence.fixed_csr`
gives its weights as scipy sparse matrices instead.

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

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

from decentral._checks import check_int

from .builders import DENSE_LIMIT
from .tables import (
    NeighborTable,
    table_rule_weights,
    table_to_dense,
)
from .weights import (
    WEIGHT_RULES,
)

__all__ = ["GraphSequence"]

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
            ``weight``, ``mask`` stacks for sparse fixed forms; ``base`` (None for a sparse
            base above the dense limit), ``drop_prob``, ``key`` and index arrays for random
            forms).

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
        """Dense ``W_t`` whatever the backend (jit-able).

        Raises:
            ValueError: a sparse-backend sequence of more than
                :data:`~decentral.graphs.DENSE_LIMIT` agents (use :meth:`at`'s table).
        """
        self._require_dense_fits("dense_at")
        g = self.at(t, key)
        return table_to_dense(g) if isinstance(g, NeighborTable) else g

    def _require_dense_fits(self, what: str) -> None:
        """Refuse to build ``[n, n]`` matrices from the tables of a sparse-backend sequence
        above :data:`~decentral.graphs.DENSE_LIMIT` agents (a dense-backend sequence already
        holds them)."""
        if self.backend == "sparse" and self.n > DENSE_LIMIT:
            raise ValueError(
                f"GraphSequence.{what} builds dense [n, n] weight matrices, but this "
                f"sparse-backend sequence has n = {self.n} agents > DENSE_LIMIT = "
                f"{DENSE_LIMIT} ({8 * self.n * self.n:,} bytes per matrix). Use seq.at(t), "
                "which gives the step's NeighborTable, or seq.fixed_csr() for the weights of a "
                "static / periodic / explicit sequence as scipy sparse matrices.")

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

    def fixed_csr(self) -> list[sp.csr_array]:
        """The weights of a fixed form (static, periodic, explicit, one-peer exponential) as
        P canonical ``scipy.sparse.csr_array`` matrices, ``W[i, j]`` agent i's weight on agent
        j (the table entries of the sparse backend, in O(P (n + edges)); the stored dense
        matrices on the dense backend). Exact: the tables hold copies of the weights.

        Raises:
            ValueError: a random sequence (its graphs are drawn per step), or traced leaves.

        Example:
            >>> from decentral.graphs import periodic, ring
            >>> [w.nnz for w in periodic([ring(4), ring(4, directed=False)],
            ...                          rule="row", backend="sparse").fixed_csr()]
            [8, 12]
        """
        self._require_concrete("fixed_csr")
        if self.form == "random":
            raise ValueError("GraphSequence.fixed_csr() needs a fixed form (static, periodic, "
                             "explicit, one_peer_exponential); this sequence is random: its "
                             "graphs are drawn per step.")
        lv = self.leaves
        if self.backend == "dense":
            out = []
            for w in np.asarray(lv["weights"]):
                c = sp.csr_array(w)
                c.eliminate_zeros()
                out.append(c)
            return out
        idx, weight, mask = (np.asarray(lv[k]) for k in _TABLE_LEAVES)
        n, width = idx.shape[1:]
        out = []
        for idx_t, w_t, m_t in zip(idx, weight, mask, strict=True):
            live = m_t & (w_t != 0)
            rows = np.repeat(np.arange(n, dtype=np.int32), width).reshape(n, width)
            c = sp.csr_array((w_t[live], (rows[live], idx_t[live])), shape=(n, n))
            c.sum_duplicates()
            out.append(c)
        return out

    def _fixed_host(self) -> np.ndarray:
        """The stored ``[P, N, N]`` stack of a fixed form, as host numpy (dense rebuilt from
        the tables on the sparse backend; exact: the table holds copies of the weights).

        Raises:
            ValueError: on the sparse backend above :data:`~decentral.graphs.DENSE_LIMIT`
                agents (use :meth:`fixed_csr`)."""
        lv = self.leaves
        if self.backend == "dense":
            return np.asarray(lv["weights"])
        if self.n > DENSE_LIMIT:
            raise ValueError(f"this sparse sequence has {self.n} agents, above DENSE_LIMIT = "
                             f"{DENSE_LIMIT}: its dense weight stack is not built; use "
                             "seq.fixed_csr().")
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

        Raises:
            ValueError: a sparse-backend sequence of more than
                :data:`~decentral.graphs.DENSE_LIMIT` agents (see :meth:`fixed_csr`).
        """
        self._require_concrete("weights_host")
        self._require_dense_fits("weights_host")
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
        self._require_dense_fits("weights_host64")
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


def _as_key(key):
    """A typed PRNG key from a key or an integer seed."""
    if isinstance(key, bool):
        raise ValueError(f"expected a PRNG key or an integer seed, got {key!r}.")
    if isinstance(key, (int, np.integer)):
        return jax.random.key(int(key))
    return key


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


