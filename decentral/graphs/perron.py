"""Perron vectors and absolute probability sequences (host, numpy/scipy).

An absolute probability sequence of row-stochastic ``W_0, W_1, …`` is a sequence of stochastic
vectors with ``π_tᵀ = π_{t+1}ᵀ W_t`` for every t (Lin–Gupta–Liu Definition 2; Kolmogorov,
Blackwell). Under Assumption 1 and uniform strong connectivity it is unique (Lemma 1), and the
π-weighted average ``⟨θ⟩_t = Σ_i π_t^i θ_t^i`` is what consensus-type SA tracks. π_t depends
on the *future* matrices: it is a backward object.

Example:
    >>> from decentral.graphs import ring, row_stochastic, static, absolute_probability_sequence
    >>> pis = absolute_probability_sequence(static(row_stochastic(ring(4))), 10)
    >>> pis.shape
    (11, 4)
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import scipy.linalg

from .sequences import GraphSequence
from .weights import require_stochastic

__all__ = ["perron_vector", "absolute_probability_sequence", "APSResult"]


def perron_vector(W, *, tol: float = 1e-9) -> np.ndarray:
    """Normalised left Perron vector π of a row-stochastic W: ``πᵀ W = πᵀ``, ``Σ π = 1``.

    For an irreducible W (strongly connected graph) π is unique and positive. If W has several
    closed classes (eigenvalue 1 with multiplicity > 1) π is not unique and a ValueError says
    so. With a single closed class π is unique and zero outside it.

    Example:
        >>> W = np.array([[0.5, 0.5], [0.25, 0.75]])
        >>> perron_vector(W)          # (1/3, 2/3)
        array([0.33333333, 0.66666667])
    """
    w = require_stochastic(W, "row", name="W")
    n = w.shape[0]
    basis = scipy.linalg.null_space((w - np.eye(n)).T, rcond=tol)
    if basis.shape[1] != 1:
        raise ValueError(
            f"W has {basis.shape[1]} independent left eigenvectors for eigenvalue 1 (several "
            "closed classes: the graph has more than one group of agents that hears nobody "
            "outside it), so its Perron vector is not unique. Check is_strongly_connected(W)."
        )
    v = basis[:, 0]
    v = v / v.sum()
    v = np.where(np.abs(v) < 1e-15, 0.0, v)
    if np.any(v < -1e-10):
        raise ValueError("numerical failure: the eigen-solver returned a vector with mixed "
                         "signs; W may be badly conditioned.")
    v = np.clip(v, 0.0, None)
    return v / v.sum()


class APSResult(NamedTuple):
    """Absolute probability sequence with its accuracy.

    Attributes:
        pi: ``[T + 1, N]`` stochastic vectors π_0 … π_T.
        error: estimated max-abs error of ``pi`` (0 for the exact static/periodic forms; for
            backward recursions, the change of π_0…π_T when the horizon was doubled last).
        horizon: the backward horizon H used (π_H uniform); None for exact forms.
        exact: True for static and periodic sequences (Perron vector of the period product).
    """

    pi: np.ndarray
    error: float
    horizon: int | None
    exact: bool


def _backward(ws: np.ndarray, num_points: int, start: np.ndarray | None = None) -> np.ndarray:
    """π_0…π_{num_points-1} by π_t = W_tᵀ π_{t+1} from π_H = ``start`` (uniform by default),
    H = len(ws); points at or beyond H are π_H."""
    n = ws.shape[1]
    pi = np.full(n, 1.0 / n) if start is None else start
    out = np.empty((num_points, n))
    out[ws.shape[0]:] = pi
    for t in range(ws.shape[0] - 1, -1, -1):      # host recursion over the horizon (outside jit)
        pi = ws[t].T @ pi
        pi = pi / pi.sum()
        if t < num_points:
            out[t] = pi
    return out


def _checked(ws: np.ndarray, start: int = 0) -> np.ndarray:
    for k, w in enumerate(ws, start=start):
        require_stochastic(w, "row", name=f"W_{k}")
    return ws


def absolute_probability_sequence(seq, num_steps: int, *, key=None, tol: float = 1e-13,
                                  max_horizon: int | None = None,
                                  return_info: bool = False):
    """π_0 … π_T of a row-stochastic graph sequence (``T = num_steps``).

    * **static** W: π_t = Perron vector of W for every t (exact);
    * **periodic** with period P (incl. one-peer exponential): π_0 is the Perron vector of the
      period product ``W_{P-1} ⋯ W_1 W_0`` and π_P = π_0; π_t = W_tᵀ π_{t+1} backwards inside
      the period; then tiled (exact, to solver precision);
    * **other sequences** (explicit stacks, random draws, a plain ``[T', N, N]`` array): the
      backward recursion π_tᵀ = π_{t+1}ᵀ W_t from π_H uniform at a horizon H beyond T. The
      sequence supplies W_t for t up to H. Starting with H = 2T + 64 (or the stack's length),
      H − T is doubled until π_0…π_T change by less than ``tol`` (max-abs); the last change is
      the reported ``error``. Under uniform strong connectivity the error decays geometrically
      in H − t, so a few doublings suffice; an explicit stack that ends before convergence
      gives a warning and its best estimate.

    Args:
        seq: a :class:`GraphSequence`, a weight matrix (static), or a stack ``[T', N, N]``
            (explicit; needs ``T' >= T``).
        num_steps: T; returns T + 1 vectors.
        key: per-seed key for random sequences drawn per seed.
        tol: accuracy target of the backward recursion.
        max_horizon: cap on H (default ``64 * (T + 64)``).
        return_info: return an :class:`APSResult` (pi, error, horizon, exact) instead of pi.

    Returns:
        ``[T + 1, N]`` array (or :class:`APSResult`).
    """
    if isinstance(num_steps, bool) or not isinstance(num_steps, (int, np.integer)) \
            or num_steps < 0:
        raise ValueError(f"num_steps must be a non-negative integer, got {num_steps!r}.")
    T = int(num_steps)
    if isinstance(seq, GraphSequence):
        form = "periodic" if seq.period is not None else seq.form
        length, period = seq.length, seq.period

        def supply(start: int, stop: int) -> np.ndarray:
            return seq.weights_host(stop - start, start=start, key=key)
    else:
        arr = np.asarray(seq)
        if arr.ndim not in (2, 3):
            raise ValueError(f"seq must be a GraphSequence, a [N, N] matrix or a [T, N, N] stack;"
                             f" got shape {arr.shape}.")
        form = "periodic" if arr.ndim == 2 else "explicit"     # a single W: period 1
        stack = arr[None] if arr.ndim == 2 else arr
        length = None if arr.ndim == 2 else stack.shape[0]
        period = 1

        def supply(start: int, stop: int) -> np.ndarray:
            return stack[start:stop]

    if form == "periodic":                    # static (P = 1), periodic, one-peer exponential
        period_ws = _checked(supply(0, period))
        product = np.eye(period_ws.shape[1])
        for w in period_ws:                   # product W_{P-1} ⋯ W_0 (host, once)
            product = w @ product
        pi0 = perron_vector(product)          # π_0 = π_P: one period backwards from π_0
        pis = _backward(period_ws, period, start=pi0)
        out = pis[np.arange(T + 1) % period]
        result = APSResult(out, 0.0, None, True)
        return result if return_info else out

    if length is not None and length < T + 1:
        if length < T:
            raise ValueError(f"the sequence supplies {length} matrices but π_0…π_{T} needs at "
                             f"least W_0…W_{T - 1}.")
    if max_horizon is not None and max_horizon < T:
        raise ValueError(f"max_horizon={max_horizon} is below num_steps={T}: the backward "
                         "recursion needs W_0 … W_{T-1} at least.")
    cap = max_horizon if max_horizon is not None else 64 * (T + 64)
    horizon = 2 * T + 64
    if length is not None:
        cap = min(cap, length)
    horizon = min(horizon, cap)
    ws = _checked(supply(0, horizon))
    prev = _backward(ws, T + 1)
    error = np.inf
    while horizon < cap:
        new_h = min(cap, T + 2 * (horizon - T))
        ws = np.concatenate([ws, _checked(supply(horizon, new_h), start=horizon)])
        cur = _backward(ws, T + 1)
        error = float(np.max(np.abs(cur - prev)))
        prev, horizon = cur, new_h
        if error < tol:
            break
    if not error < tol:
        warnings.warn(
            f"absolute_probability_sequence: the backward recursion did not reach tol={tol:g} "
            f"by horizon {horizon} (last change {error:.3g}); the sequence may not be uniformly "
            "strongly connected, or an explicit stack is too short beyond T.",
            RuntimeWarning, stacklevel=2)
    result = APSResult(prev, error, horizon, False)
    return result if return_info else prev
