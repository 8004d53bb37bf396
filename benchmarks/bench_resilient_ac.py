"""Throughput of the W-MSR aggregation (:func:`decentral.resilient_ac.wmsr`) against numpy.

One aggregation step of resilient consensus, the part that is new in this family: every one of
N receivers holds ``K`` gathered values per coordinate (its own value at ``k = 0``, then up to
``K - 1`` in-neighbour values; entries past its in-degree are padding, ``mask`` False), and
applies W-MSR with parameter H element-wise over ``d`` coordinates, for S seeds, float32:
input ``values [S, N, K, d]`` and ``mask [N, K]`` (shared over seeds), output ``[S, N, d]``.
In-degrees vary between ``deg[0]`` and ``deg[1]``, padding sits at random positions and holds a
large value, so a side that counts padding cannot agree. Values are multiples of 1/4 (many ties
with the own value, which W-MSR never drops) with a few outliers of +-100 (the Byzantine-like
values the rule removes).

* decentral: ``jax.jit`` of :func:`~decentral.resilient_ac.wmsr` vmapped over agents and seeds,
  the seeds axis sharded over every device (as the runner shards seeds; padded to a multiple of
  the device count). The inputs are placed on the devices before the clock starts. The same
  function on one device is timed too (``extra["one_device_s"]``).
* (a) the way such code is usually written: a Python loop over seeds and receivers; per
  receiver the real entries, ``np.sort`` of the neighbour values along the neighbour axis, and
  the own-value rule vectorised over the ``d`` coordinates (counts above / below the own value,
  a kept-position mask over the sorted values). Timed on two seed counts (every receiver) and
  extrapolated linearly to S from the larger; when the larger is S nothing is extrapolated.
* (b) numpy vectorised over everything: padding pushed to ``+inf``, one ``np.sort`` along the
  neighbour axis (moved last, contiguous), counts above / below the own value, the kept
  positions as one broadcast mask.

All three compute the same rule; the rows report the max abs difference of decentral against
(b) over the whole output and against (a) over the seeds (a) computed.

Example:
    >>> rows = bench_resilient_ac(S=2, N=5, K=4, d=3, H=1, deg=(1, 3), loop_seeds=(1, 2),
    ...                           repeats=1)
    >>> [r.name for r in rows], all(r.agree for r in rows)
    (['resilient_ac.wmsr', 'resilient_ac.wmsr'], True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from benchmarks.harness import BenchResult, measure, ratio
from decentral.resilient_ac import wmsr

__all__ = ["make_inputs", "numpy_loop", "numpy_vectorised", "decentral_wmsr",
           "bench_resilient_ac"]

PADDING_VALUE = 1.0e4
"""What padding entries hold (never counted by a correct side)."""


def make_inputs(S: int, N: int, K: int, d: int, deg: tuple[int, int], seed: int = 0
                ) -> tuple[np.ndarray, np.ndarray]:
    """``values [S, N, K, d]`` float32 and ``mask [N, K]`` bool (see the module docstring).

    Receiver i has an in-degree drawn uniformly from ``deg[0]..deg[1]`` (at most ``K - 1``);
    ``mask[i, 0]`` is True (its own value), its real neighbour entries sit at random positions
    among ``1..K-1``, the rest is padding holding :data:`PADDING_VALUE`.
    """
    lo, hi = int(deg[0]), int(deg[1])
    if not 0 <= lo <= hi <= K - 1:
        raise ValueError(f"deg must satisfy 0 <= deg[0] <= deg[1] <= K - 1 = {K - 1}; got {deg}.")
    rng = np.random.default_rng(seed)
    values = np.round(rng.standard_normal((S, N, K, d)) * 4.0) / 4.0
    outlier = rng.random((S, N, K, d)) < 0.05
    values = np.where(outlier, np.sign(rng.standard_normal((S, N, K, d))) * 100.0, values)
    mask = np.zeros((N, K), bool)
    mask[:, 0] = True
    for i, k_i in enumerate(rng.integers(lo, hi + 1, size=N)):
        mask[i, 1 + rng.permutation(K - 1)[:k_i]] = True
    values = np.where(mask[None, :, :, None], values, PADDING_VALUE)
    return values.astype(np.float32), mask


def numpy_loop(values: np.ndarray, mask: np.ndarray, H: int, num_seeds: int | None = None
               ) -> np.ndarray:
    """Reference (a): loops over seeds and receivers, ``np.sort`` per receiver, the rule
    vectorised over coordinates; returns ``[num_seeds, N, d]`` (the first ``num_seeds`` seeds,
    all of them when None)."""
    S = values.shape[0] if num_seeds is None else int(num_seeds)
    N, _, d = values.shape[1:]
    out = np.empty((S, N, d), values.dtype)
    for s in range(S):
        for i in range(N):
            v = values[s, i][mask[i]]                      # [K_i, d], own value first
            x0, nb = v[0], np.sort(v[1:], axis=0)
            n = nb.shape[0]
            lo = np.minimum(np.count_nonzero(nb < x0, axis=0), H)    # dropped from below
            hi = np.minimum(np.count_nonzero(nb > x0, axis=0), H)    # dropped from above
            pos = np.arange(n)[:, None]
            keep = (pos >= lo) & (pos < n - hi)
            total = x0 + np.where(keep, nb, values.dtype.type(0)).sum(axis=0)
            out[s, i] = total / (1 + n - lo - hi).astype(values.dtype)
    return out


def numpy_vectorised(values: np.ndarray, mask: np.ndarray, H: int) -> np.ndarray:
    """Reference (b): every seed and receiver at once (padding pushed to ``+inf`` before one
    sort along the neighbour axis); returns ``[S, N, d]``."""
    zero = values.dtype.type(0)
    x0 = values[:, :, 0]                                   # [S, N, d]
    nb = values[:, :, 1:]                                  # [S, N, K-1, d]
    real = mask[None, :, 1:, None]
    below = np.minimum(np.count_nonzero(real & (nb < x0[:, :, None]), axis=2), H)
    above = np.minimum(np.count_nonzero(real & (nb > x0[:, :, None]), axis=2), H)
    pushed = np.swapaxes(np.where(real, nb, np.inf).astype(values.dtype), 2, 3)
    srt = np.sort(pushed, axis=3)                          # [S, N, d, K-1], real entries first
    n = mask[:, 1:].sum(axis=1)[None, :, None]             # [1, N, 1]
    pos = np.arange(nb.shape[2])
    keep = (pos >= below[..., None]) & (pos < (n - above)[..., None])
    total = x0 + np.where(keep, srt, zero).sum(axis=3)
    return total / (1 + n - below - above).astype(values.dtype)


def decentral_wmsr(H: int) -> Callable[[jax.Array, jax.Array], jax.Array]:
    """``jax.jit`` of :func:`~decentral.resilient_ac.wmsr` vmapped over receivers (values and
    mask) and then seeds (values only): ``f(values [S, N, K, d], mask [N, K]) -> [S, N, d]``.
    The input's sharding decides the devices."""
    per_agent = jax.vmap(lambda v, m: wmsr(v, m, H), in_axes=(0, 0))
    return jax.jit(jax.vmap(per_agent, in_axes=(0, None)))


def _place(values: np.ndarray, mask: np.ndarray, devices: Sequence[Any]
           ) -> tuple[jax.Array, jax.Array]:
    """Seeds padded (repeating seed 0) to a multiple of the device count and sharded over
    ``devices``; the mask replicated."""
    pad = (-values.shape[0]) % len(devices)
    if pad:
        values = np.concatenate([values, np.repeat(values[:1], pad, axis=0)])
    mesh = Mesh(np.asarray(list(devices), dtype=object), ("seeds",))
    return (jax.device_put(values, NamedSharding(mesh, P("seeds"))),
            jax.device_put(mask, NamedSharding(mesh, P())))


def _max_abs_diff(a: Any, b: Any) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        raise ValueError(f"compared outputs have shapes {a.shape} and {b.shape}.")
    diff = np.abs(a - b)
    return float(diff.max(initial=0.0)) if np.all(np.isfinite(diff)) else float("inf")


def bench_resilient_ac(*, S: int, N: int, K: int, d: int, H: int, deg: tuple[int, int],
                       loop_seeds: tuple[int, int], repeats: int = 3) -> list[BenchResult]:
    """The rows of ``resilient_ac.wmsr`` (see the module docstring): decentral against (a) and
    against (b), each row with the agreement of decentral with that reference."""
    small, large = (min(int(loop_seeds[0]), S), min(int(loop_seeds[1]), S))
    if not 1 <= small <= large:
        raise ValueError(f"loop_seeds must be 1 <= small <= large; got {loop_seeds}.")
    values, mask = make_inputs(S, N, K, d, deg)
    f = decentral_wmsr(H)
    devices = jax.devices()

    placed = _place(values, mask, devices)
    t_dec, out = measure(lambda: f(*placed), repeats)
    out = np.asarray(out)[:S]
    if len(devices) > 1:
        one = _place(values, mask, devices[:1])
        t_one, out_one = measure(lambda: f(*one), repeats)
        one_diff = _max_abs_diff(out_one, out)
    else:
        t_one, one_diff = t_dec, 0.0

    t_vec, out_vec = measure(lambda: numpy_vectorised(values, mask, H), max(1, repeats // 2))
    t_small, _ = measure(lambda: numpy_loop(values, mask, H, small), 1)
    t_large, out_loop = measure(lambda: numpy_loop(values, mask, H, large),
                                max(1, repeats // 2) if large == S else 1)
    per_small, per_large = t_small.median_s / small, t_large.median_s / large
    t_loop = per_large * S
    linear = abs(per_small / per_large - 1.0)

    tol = 1e-4
    diff_vec = _max_abs_diff(out, out_vec)
    diff_loop = _max_abs_diff(out[:large], out_loop)
    diff_refs = _max_abs_diff(out_vec[:large], out_loop)
    size = dict(S=S, N=N, K=K, d=d, H=H, in_degree=f"{deg[0]}-{deg[1]}",
                devices=len(devices))
    one_note = (f"1 device {t_one.median_s * 1e3:.1f} ms (x{t_one.median_s / t_dec.median_s:.2f})"
                if len(devices) > 1 else "1 device")
    common: dict[str, Any] = dict(
        name="resilient_ac.wmsr", dtype="float32", size=size, metric="time_s",
        value=t_dec.median_s, compile_s=t_dec.compile_s, times_s=t_dec.times_s,
        repeats=repeats, tolerance=tol, prng_impl=str(jax.config.jax_default_prng_impl),
        enable_x64=bool(jax.config.jax_enable_x64))
    extra = dict(one_device_s=t_one.median_s, one_device_times_s=t_one.times_s,
                 one_device_max_abs_diff=one_diff, references_max_abs_diff=diff_refs,
                 ns_per_element=t_dec.median_s / (S * N * d) * 1e9)
    if large == S:
        how = f"timed on all {S} seeds (and on {small} for the linearity check)"
    else:
        how = f"timed on {small} and {large} seeds, extrapolated linearly to {S}"
    rows = [
        BenchResult(
            variant="vs (a) numpy loop over seeds and receivers, np.sort per receiver",
            reference=f"numpy, Python loop over seeds and receivers, np.sort of the real "
                      f"neighbour values, the own-value rule vectorised over d; {how} "
                      f"(per seed {per_small * 1e3:.1f} / {per_large * 1e3:.1f} ms: "
                      f"{linear:.0%} apart)",
            reference_value=t_loop, ratio=ratio(t_loop, t_dec.median_s),
            reference_times_s=[t_loop] if large < S else t_large.times_s,
            max_abs_diff=diff_loop, agree=bool(diff_loop <= tol),
            target_ratio=10.0,
            notes=f"target >= 10x; {one_note}; compared on {large} seeds",
            extra=dict(extra, per_seed_s=[per_small, per_large], loop_seeds=[small, large],
                       linearity_gap=linear),
            reference_label="numpy loop + np.sort", **common),
        BenchResult(
            variant="vs (b) numpy vectorised over seeds and receivers",
            reference="numpy, no Python loops: padding pushed to +inf, one np.sort along the "
                      "neighbour axis (moved last), counts above / below the own value, the "
                      "kept positions as one mask",
            reference_value=t_vec.median_s, ratio=ratio(t_vec.median_s, t_dec.median_s),
            reference_times_s=t_vec.times_s, max_abs_diff=diff_vec,
            agree=bool(diff_vec <= tol),
            target_ratio=3.0,
            notes=f"target >= 3x; {one_note}; (a) vs (b) max|d| {diff_refs:.1e}",
            extra=extra, reference_label="numpy, vectorised", **common),
    ]
    return rows
