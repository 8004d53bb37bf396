"""Resilient consensus under Byzantine senders (W-MSR; LeBlanc, Zhang, Koutsoukos, Sundaram,
IEEE JSAC 31(4) 2013), as a runner :class:`~decentral.runner.Algorithm`.

One step ``t``, in this order:

1. take the step's graph ``G_t`` (its in-neighbour table, own index at ``k = 0``);
2. every agent broadcasts its value: ``X[i, k] = x_{idx[i, k]}`` (:func:`decentral.graphs.gather`);
3. the attacker produces each Byzantine sender's per-receiver message ``[B, N, ...]``; they
   replace that sender's entries in the gathered values (own entries untouched);
4. every cooperative agent aggregates its gathered values: ``x^i_{t+1} = agg(X[i], mask_i, H)``
   (:func:`~decentral.resilient_ac.wmsr` by default), element-wise for vector values;
5. Byzantine agents' own values stay as they were (their messages are all that matters).

**Graphs.** The factory takes ``graphs`` as every factory of the library does
(:func:`decentral.graphs.as_sequence`: a ``GraphSequence`` of any form and backend, a weight
matrix, or a boolean adjacency with self-loops); W-MSR reads only who hears whom, so an
adjacency given without ``rule`` gets ``rule="row"`` and the weights are never used. The
params may carry another sequence of exactly the factory's structure
(:attr:`ResilientParams.graphs`), so one compiled program serves many graphs; random
edge-drop sequences draw per seed or shared, as the sequence says (``seq.at(t, key)``).

**Hypotheses** (checked when the algorithm is built, :func:`check_hypotheses`; each failure is a
:class:`~decentral.hypotheses.HypothesisWarning` with numbers): the graph is ``(2H+1)``-robust
(the sufficient condition for F-local adversaries, with ``F = H``), hence every cooperative agent
has at least ``2H + 1`` in-neighbours; no cooperative agent has more than ``H`` Byzantine
in-neighbours (H-local). When the graph is not ``(2H+1)``-robust the warning also reports
whether the cooperative subgraph is ``(H+1)``-robust, LeBlanc et al.'s condition for Byzantine
agents (under which W-MSR still succeeds). For a time-varying sequence the checks run on every
distinct graph the sequence can produce: the one graph of a static sequence, the ``P`` graphs of
a periodic or one-peer sequence, every graph of an explicit stack, and the *base* graph of a
random edge-drop sequence (a drop can break robustness at any step; the warning says so). A
sequence passed in the params is checked the same way when a run starts (``check_params``).
Robustness is computed exactly (:func:`decentral.graphs.r_robustness`: enumeration up to 16
agents, a MILP with a time limit above), by default for graphs up to
:data:`ROBUSTNESS_AUTO_MAX_N` agents; ``check_robustness=False`` skips it (e.g. for a benchmark
at 1000 agents). Above :data:`decentral.graphs.DENSE_LIMIT` agents (sparse graphs) the in-degree
and H-local checks run on the sparse patterns in O(edges), and robustness is not computed. The
in-degree check applies for ``H >= 1`` only: ``r``-robust implies
in-degree ``>= r`` only for ``r >= 2`` (a rooted out-branching is 1-robust with a root of
in-degree 0, and plain averaging still reaches consensus on it).

Guarantee when the hypotheses hold (LeBlanc et al., Theorems 1-2): every cooperative value stays
in ``[min, max]`` of the cooperative initial values for every ``t`` (per coordinate), and the
cooperative spread tends to 0 — geometrically on a static graph.

Example:
    >>> import jax.numpy as jnp
    >>> import decentral.graphs as g
    >>> from decentral.resilient_ac import huge, resilient_consensus, resilient_consensus_params
    >>> from decentral.runner import run
    >>> alg = resilient_consensus(g.complete(5), H=1, byzantine=[4], attacker=huge())
    >>> res = run(alg, resilient_consensus_params(jnp.arange(5.0)), seeds=[0, 1], num_steps=30)
    >>> x = res.final_state.x[:, :4]                 # the cooperative agents
    >>> spread = x.max(axis=1) - x.min(axis=1)       # per seed
    >>> bool(jnp.all((x >= 0.0) & (x <= 3.0))), bool(jnp.all(spread < 1e-6))
    (True, True)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

import decentral.graphs as g
from decentral._checks import check_indices
from decentral.graphs import GraphSequence, as_sequence, as_table, gather
from decentral.hypotheses import warn_hypothesis

from .aggregators import get_aggregator
from .attackers import AttackContext, Attacker, replace_byzantine_messages

__all__ = ["ResilientState", "ResilientParams", "resilient_consensus_params", "consensus_params",
           "resilient_consensus", "check_hypotheses", "values_of", "ROBUSTNESS_AUTO_MAX_N"]

#: ``check_robustness=None`` computes robustness for graphs up to this many agents.
ROBUSTNESS_AUTO_MAX_N = 20


class ResilientState(NamedTuple):
    """State of resilient consensus.

    Attributes:
        x: ``[N, ...]`` every agent's value (Byzantine rows keep their initial values).
        attacker: the attacker's state (``()`` for stateless attackers).
    """

    x: jax.Array
    attacker: Any


class ResilientParams(NamedTuple):
    """What a user sweeps.

    Attributes:
        x0: ``[N, ...]`` initial values (Byzantine agents' rows too): finite real numbers.
        attacker: the attacker's params, or None for the attacker's defaults (checked by
            :meth:`~decentral.resilient_ac.Attacker.validate_params`).
        graphs: None (the algorithm's own sequence), or another
            :class:`~decentral.graphs.GraphSequence` of exactly its structure (N, backend,
            form, rule, table width): the run reads who hears whom from this one, so one
            compiled program serves many graphs; the W-MSR hypotheses are checked on it (as
            warnings) when a run starts, as on the factory's graphs.
    """

    x0: jax.Array
    attacker: Any = None
    graphs: Any = None


def _check_x0(x0, n: int | None = None) -> np.ndarray:
    """``x0`` as a numpy array after checking it: real numbers, a leading agent axis (``N``
    agents when ``n`` is known), finite entries."""
    arr = np.asarray(x0)
    if arr.dtype == object or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number) \
            or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"params.x0 must be real numbers; got dtype {arr.dtype}.")
    if arr.ndim == 0:
        raise ValueError("params.x0 needs a leading agent axis [N, ...]; got a scalar.")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"params.x0 has {arr.shape[0]} agents; the graphs have N = {n} "
                         f"(x0 must be [N, ...]).")
    if not np.all(np.isfinite(arr)):
        raise ValueError("params.x0 has NaN or infinite entries; initial values must be "
                         "finite.")
    return arr


def resilient_consensus_params(x0, attacker: Any = None, *,
                               graphs: Any = None) -> ResilientParams:
    """Params of :func:`resilient_consensus`: initial values ``[N]`` or ``[N, ...]``, the
    attacker's params (None: its defaults) and optionally the graphs of this run (see
    :class:`ResilientParams`). Also exported under its older name ``consensus_params`` (of
    this family; :func:`decentral.consensus.consensus_params` is plain consensus's).

    Raises:
        ValueError: ``x0`` is not real numbers, has no agent axis, or holds NaN / infinite
            values (the check :func:`resilient_consensus`'s ``check_params`` applies to any
            params, which also checks ``N``, the attacker params and ``graphs``).

    Example:
        >>> resilient_consensus_params([0.0, 1.0]).x0.tolist()
        [0.0, 1.0]
    """
    if not isinstance(x0, jax.core.Tracer):
        _check_x0(x0)
    return ResilientParams(jnp.asarray(x0), attacker, graphs)


#: The older name of :func:`resilient_consensus_params` (kept: user code imports it from
#: :mod:`decentral.resilient_ac`; plain consensus has its own ``consensus_params``).
consensus_params = resilient_consensus_params


def values_of(state: ResilientState) -> jax.Array:
    """Record function: every agent's value ``[N, ...]``."""
    return state.x


def _patterns(seq: GraphSequence) -> tuple[list[np.ndarray], str]:
    """The distinct boolean patterns a sequence can produce, and what they cover."""
    if seq.form == "random":
        if seq.leaves["base"] is None:
            raise ValueError(
                f"graphs: a random edge-drop sequence of {seq.n} agents (above "
                "decentral.graphs.DENSE_LIMIT) holds no dense base graph, and W-MSR's "
                "hypotheses are checked on dense patterns: resilient consensus above "
                "DENSE_LIMIT agents is not supported yet.")
        return [np.asarray(seq.leaves["base"], bool)], \
            "the base graph of a random edge-drop sequence (a dropped edge can break it)"
    steps = seq.length if seq.length is not None else seq.period
    uniq: list = []
    if seq.backend == "sparse" and seq.n > g.DENSE_LIMIT:
        # above the dense limit: the stored steps' patterns as boolean CSR, O(P edges)
        for w in seq.fixed_csr():
            p = sp.csr_array(w != 0)
            if not any((p != q).nnz == 0 for q in uniq):
                uniq.append(p)
    else:
        for p in seq.weights_host(steps) > 0:
            if not any(np.array_equal(p, q) for q in uniq):
                uniq.append(p)
    what = {"static": "the static graph", "periodic": f"the {steps} graphs of one period",
            "explicit": f"all {steps} graphs of the explicit stack",
            "one_peer_exponential": f"the {steps} graphs of one period"}[seq.form]
    return uniq, what


def check_hypotheses(graphs, H: int, byzantine: Sequence[int], *,
                     check_robustness: bool | None = None, warn: bool = True,
                     time_limit: float = 60.0) -> list[str]:
    """The W-MSR hypotheses that fail, as messages (and warnings when ``warn``).

    Checked on every distinct graph the sequence can produce (see the module docstring):
    cooperative agents with fewer than ``2H + 1`` in-neighbours (self excluded); cooperative
    agents with more than ``H`` Byzantine in-neighbours; the graph's robustness ``r < 2H + 1``
    (with the robustness of the cooperative subgraph against ``H + 1``).

    Args:
        graphs: anything :func:`decentral.graphs.as_sequence` accepts (an adjacency without a
            rule is read with ``rule="row"``; only the patterns are used).
        H: the number of Byzantine in-neighbours to tolerate.
        byzantine: the Byzantine agents' indices.
        check_robustness: compute r-robustness (None: when ``N <= ROBUSTNESS_AUTO_MAX_N``).
        warn: raise a :class:`~decentral.hypotheses.HypothesisWarning` per failure.
        time_limit: seconds allowed to each MILP (graphs beyond 20 agents).

    Returns:
        The failure messages (empty when every hypothesis holds).

    Example:
        >>> import decentral.graphs as g
        >>> msgs = check_hypotheses(g.circulant(5, [-1, -2, -3]), 1, [4], warn=False)
        >>> msgs[0].split(";")[0]
        'graph 0 of the static graph is 2-robust < 2H + 1 = 3'
    """
    seq = as_sequence(graphs, default_rule="row")
    H = _check_H(H)
    byz = _check_byzantine(byzantine, seq.n)
    n = seq.n
    coop = np.ones(n, bool)
    coop[list(byz)] = False
    if check_robustness is None:
        check_robustness = n <= ROBUSTNESS_AUTO_MAX_N
    pats, what = _patterns(seq)
    if check_robustness and pats and sp.issparse(pats[0]):
        raise ValueError(
            f"check_robustness=True: r-robustness is computed on dense patterns (an exact "
            f"enumeration or MILP), and this graph has {n} agents, above "
            f"decentral.graphs.DENSE_LIMIT = {g.DENSE_LIMIT}. Leave check_robustness at None "
            f"(the in-degree and H-local checks still run) or pass False.")
    out: list[str] = []
    for k, pat in enumerate(pats):
        indeg, nbyz = _in_counts(pat, byz)
        few = [int(i) for i in np.flatnonzero(coop & (indeg < 2 * H + 1))] if H >= 1 else []
        if few:
            out.append(f"graph {k} of {what}: cooperative agents {few[:10]} have fewer than "
                       f"2H + 1 = {2 * H + 1} in-neighbours (in-degrees "
                       f"{[int(indeg[i]) for i in few[:10]]})")
        many = [int(i) for i in np.flatnonzero(coop & (nbyz > H))]
        if many:
            out.append(f"graph {k} of {what}: cooperative agents {many[:10]} have more than "
                       f"H = {H} Byzantine in-neighbours ({[int(nbyz[i]) for i in many[:10]]})")
        if check_robustness and n >= 2:
            r = g.r_robustness(pat, time_limit=time_limit)
            if r < 2 * H + 1:
                msg = f"graph {k} of {what} is {r}-robust < 2H + 1 = {2 * H + 1}"
                keep = np.flatnonzero(coop)
                if keep.size >= 2:
                    sub = pat[np.ix_(keep, keep)]
                    rc = g.r_robustness(sub, time_limit=time_limit)
                    verdict = "holds" if rc >= H + 1 else "fails too"
                    msg += (f"; its cooperative subgraph is {rc}-robust (LeBlanc et al.'s "
                            f"Byzantine condition, (H + 1) = {H + 1}-robust, {verdict})")
                out.append(msg)
    if warn:
        for m in out:
            warn_hypothesis(m, stacklevel=3)
        if not check_robustness and n >= 2:
            why = (f"N = {n} > {ROBUSTNESS_AUTO_MAX_N}" if n > ROBUSTNESS_AUTO_MAX_N
                   else "check_robustness=False")
            how = ("it is not computed above decentral.graphs.DENSE_LIMIT agents"
                   if pats and sp.issparse(pats[0]) else
                   "pass check_robustness=True to compute it")
            warnings.warn(f"r-robustness not checked ({why}); {how}.", UserWarning,
                          stacklevel=3)
    return out


def _in_counts(pat, byz) -> tuple[np.ndarray, np.ndarray]:
    """Per agent: in-neighbours other than itself, and how many of them are Byzantine, of a
    boolean pattern ``pat[i, j]`` (j -> i), dense or scipy sparse (then in O(edges))."""
    n = pat.shape[0]
    coo = sp.coo_array(pat)
    keep = (coo.row != coo.col) & coo.data.astype(bool)
    rows, cols = coo.row[keep], coo.col[keep]
    is_byz = np.zeros(n, bool)
    is_byz[list(byz)] = True
    return (np.bincount(rows, minlength=n), np.bincount(rows[is_byz[cols]], minlength=n))


def _check_H(H) -> int:
    if isinstance(H, bool) or not isinstance(H, (int, np.integer)) or H < 0:
        raise ValueError(f"H must be a non-negative int; got {H!r}.")
    return int(H)


def _byzantine_layout(n: int, byz) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(cooperative [N] bool, slot [N] int32, byzantine [B] int32)``: the cooperative mask,
    each agent's row in the attacker's ``[B, N, ...]`` messages (-1 for cooperative agents)
    and the Byzantine indices in message order."""
    coop = np.ones(n, bool)
    coop[list(byz)] = False
    slot = -np.ones(n, np.int32)
    slot[list(byz)] = np.arange(len(byz), dtype=np.int32)
    return (jnp.asarray(coop), jnp.asarray(slot),
            jnp.asarray(np.asarray(byz, np.int32).reshape(-1)))


def _check_byzantine(byzantine, n: int) -> tuple[int, ...]:
    """The Byzantine agents' indices, sorted: integers (Python or numpy, never a bool or a
    float, which would be truncated) in ``[0, n)``, no repeats, at least one agent left
    cooperative."""
    byz = check_indices(byzantine, "byzantine", n, unique=True, where="the graph's",
                        hint="byzantine lists the Byzantine agents' integer indices, e.g. "
                             "[0, 3].")
    if len(byz) >= n:
        raise ValueError("at least one agent must be cooperative.")
    return tuple(sorted(byz))


def resilient_consensus(graphs, H: int, byzantine: Sequence[int], attacker: Attacker | None,
                        *, aggregator: str | Callable = "wmsr", check: bool = True,
                        check_robustness: bool | None = None, rule: str | None = None,
                        backend: str | None = None):
    """Resilient consensus (module docstring) as a runner ``Algorithm``.

    Args:
        graphs: the sequence ``t -> G_t``: anything :func:`decentral.graphs.as_sequence`
            accepts (a ``GraphSequence`` of any form and backend, a weight matrix, or a boolean
            adjacency with self-loops, ``adj[i, j]``: i hears j). Only who hears whom is read
            (the weights are never used), so an adjacency given without ``rule`` gets
            ``rule="row"``.
        H: Byzantine in-neighbours tolerated by the aggregator.
        byzantine: indices of the Byzantine agents (may be empty).
        attacker: an :class:`~decentral.resilient_ac.Attacker` (None only when ``byzantine``
            is empty).
        aggregator: ``"wmsr"`` (default), ``"trimmed_mean"``, ``"clipped_mean"``, ``"mean"``
            (plain averaging; :data:`~decentral.resilient_ac.AGGREGATORS`, aliases accepted) or
            a callable ``(values [K, ...], mask [K], H) -> [...]``.
        check: check the hypotheses and warn (:func:`check_hypotheses`), on the factory's
            graphs here and on a params sequence when a run starts.
        check_robustness: as in :func:`check_hypotheses`.
        rule, backend: as in :func:`decentral.graphs.as_sequence`.

    Returns:
        An ``Algorithm``: state :class:`ResilientState`, params :class:`ResilientParams`
        (:func:`resilient_consensus_params`; checked by ``check_params`` wherever they arrive:
        ``x0`` ``[N, ...]`` finite numbers, the attacker params, ``graphs`` of the factory's
        structure), ``max_horizon`` from the sequence.

    Raises:
        ValueError: ``graphs`` not accepted by ``as_sequence``, bad ``H``, Byzantine indices
            outside the graph or repeated, a missing attacker, an unknown aggregator, attacker
            default params its own check refuses; at trace time, an attacker whose messages
            are not ``[B, N, ...]``.
    """
    from decentral.runner import Algorithm

    seq = as_sequence(graphs, rule=rule, backend=backend, default_rule="row")
    H = _check_H(H)
    byz = _check_byzantine(byzantine, seq.n)
    if byz and attacker is None:
        raise ValueError("byzantine agents need an attacker (e.g. resilient_ac.constant(1e6)).")
    if attacker is not None and not isinstance(attacker, Attacker):
        raise ValueError(f"attacker must be a resilient_ac.Attacker; got "
                         f"{type(attacker).__name__}.")
    agg = get_aggregator(aggregator)
    if check:
        check_hypotheses(seq, H, byz, check_robustness=check_robustness)
    n = seq.n
    coop, slot, byz_arr = _byzantine_layout(n, byz)
    no_attack = attacker is None or not byz
    if not no_attack:
        attacker.validate_params(None, name="attacker.params")

    def check_params(params) -> None:
        if not isinstance(params, ResilientParams):
            raise ValueError(f"params must be ResilientParams (resilient_consensus_params(x0)); "
                             f"got {type(params).__name__}.")
        _check_x0(params.x0, n)
        if not no_attack and params.attacker is not None:
            attacker.validate_params(params.attacker)
        if params.graphs is not None:
            seq.require_same_structure(params.graphs)
            if check:
                _hypotheses_once(params.graphs, H, byz, check_robustness)

    def _table(params, t, key):
        graphs_t = seq if params.graphs is None else params.graphs
        return as_table(graphs_t.at(t, key))         # the sequence decides whether key is used

    def init(key, params: ResilientParams) -> ResilientState:
        x = jnp.asarray(params.x0)
        if x.ndim < 1 or x.shape[0] != n:
            raise ValueError(f"params.x0 must be [N = {n}, ...]; got shape {x.shape}.")
        if not jnp.issubdtype(x.dtype, jnp.floating):
            x = x.astype(jnp.result_type(float))
        if no_attack:
            return ResilientState(x, ())
        ctx = AttackContext(_table(params, 0, key), byz_arr, coop)
        ap = attacker.params if params.attacker is None else params.attacker
        return ResilientState(x, attacker.init(key, ap, x, ctx))

    def step(key, state: ResilientState, params: ResilientParams, t, x_t):
        graph_key, attack_key = jax.random.split(key)
        table = _table(params, t, graph_key)
        x = state.x
        gathered = gather(table, x)                                  # [N, K, ...]
        astate = state.attacker
        if not no_attack:
            ctx = AttackContext(table, byz_arr, coop)
            ap = attacker.params if params.attacker is None else params.attacker
            astate, msgs = attacker.advance(attack_key, astate, ap, t, x, ctx)
            want = (len(byz),) + x.shape
            if tuple(msgs.shape) != want:
                raise ValueError(f"attacker {attacker.name!r} returned messages of shape "
                                 f"{tuple(msgs.shape)}; expected [B, N, ...] = {want}.")
            gathered = replace_byzantine_messages(table, gathered, slot, msgs.astype(x.dtype))
        out = jax.vmap(agg, in_axes=(0, 0, None))(gathered, table.mask, H)
        cm = coop.reshape((n,) + (1,) * (x.ndim - 1))
        return ResilientState(jnp.where(cm, out.astype(x.dtype), x), astate), None

    agg_name = aggregator if isinstance(aggregator, str) else getattr(aggregator, "__qualname__",
                                                                       "callable")
    config = _config(seq, H, byz, attacker, aggregator, agg_name)
    name = f"resilient_consensus.{agg_name}"
    return Algorithm(init=init, step=step, name=name, version="1", max_horizon=seq.length,
                     config=config, check_params=check_params)


_HYPOTHESES_SEEN: dict = {}


def _hypotheses_once(graphs: GraphSequence, H: int, byz: tuple, check_robustness,
                     where: str = "params.graphs") -> None:
    """:func:`check_hypotheses` (warnings, prefixed by ``where``) on the graphs a run's params
    give, computed once per distinct sequence, ``H``, Byzantine set and robustness flag (a
    sweep's entries share one verdict; robustness is exact and not free) and warned each time."""
    key = (graphs.digest(), H, tuple(byz), check_robustness, where)
    if key not in _HYPOTHESES_SEEN:
        if len(_HYPOTHESES_SEEN) > 256:
            _HYPOTHESES_SEEN.clear()
        _HYPOTHESES_SEEN[key] = [
            f"{where}: {m}"
            for m in check_hypotheses(graphs, H, byz, check_robustness=check_robustness,
                                      warn=False)]
    for m in _HYPOTHESES_SEEN[key]:
        warn_hypothesis(m, stacklevel=4)


def _config(seq, H, byz, attacker, aggregator, agg_name) -> dict:
    """A readable description of what the functions close over (the checkpoint fingerprint
    also holds the traced program, which sees the attacker's and aggregator's code)."""
    from decentral.runner.fingerprint import hash_tree

    att = None if attacker is None else {"name": attacker.name,
                                         "params": hash_tree(attacker.params)}
    return {"graphs": seq.digest(), "H": H, "byzantine": list(byz), "attacker": att,
            "aggregator": agg_name}
