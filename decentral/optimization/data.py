"""Real data split across agents: rows of a design matrix dealt out to N agents.

:func:`split_rows` deals the rows (shuffled, or sorted by target so that agents see different
parts of the data: heterogeneous objectives) and pads them into the ``[N, m, d]`` /
``[N, m]`` / mask arrays the problems of :mod:`decentral.optimization.problems` take. The
data sets are the ones bundled inside scikit-learn's wheel (no download at run time):
:func:`diabetes` (least squares, 442 x 10), :func:`breast_cancer` (logistic regression,
569 x 30) and :func:`digits` (logistic regression, digit < 5 against >= 5, 1797 x 64);
features standardized, an intercept column appended.

Example:
    >>> import numpy as np
    >>> A, y, mask = split_rows(np.arange(10.0).reshape(5, 2), np.arange(5.0), 2)
    >>> A.shape, mask.sum(axis=1).tolist()
    ((2, 3, 2), [3.0, 2.0])
"""

from __future__ import annotations

import numpy as np

from decentral._checks import check_int
from decentral.optimization.problems import (
    LogisticProblem,
    QuadraticProblem,
    least_squares,
    logistic_regression,
)

__all__ = ["split_rows", "standardize", "diabetes", "breast_cancer", "digits"]

PARTITIONS = ("shuffle", "sorted")


def split_rows(features, targets, num_agents: int, *, partition: str = "shuffle",
               seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Deal ``M`` rows to ``N`` agents as evenly as possible (sizes differ by at most one).

    Args:
        features: ``[M, d]``.
        targets: ``[M]`` (regression targets or labels).
        num_agents: ``N``, at most ``M``.
        partition: ``"shuffle"`` (a random permutation from ``seed``: statistically alike
            agents) or ``"sorted"`` (by target, agent 0 the smallest: heterogeneous agents).
        seed: the shuffle's seed.

    Returns:
        ``(features [N, m, d], targets [N, m], mask [N, m])``, ``m = ceil(M / N)``, padding
        rows zero with mask 0.
    """
    X = np.asarray(features, np.float64)
    y = np.asarray(targets, np.float64)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"features must be [M, d] and targets [M]; got shapes {X.shape} and "
                         f"{y.shape}.")
    M = X.shape[0]
    N = check_int(num_agents, "num_agents", maximum=M)
    if partition == "shuffle":
        order = np.random.default_rng(check_int(seed, "seed", minimum=0)).permutation(M)
    elif partition == "sorted":
        order = np.argsort(y, kind="stable")
    else:
        raise ValueError(f"partition must be one of {PARTITIONS}; got {partition!r}.")
    parts = np.array_split(order, N)
    m = max(len(p) for p in parts)
    A = np.zeros((N, m, X.shape[1]))
    t = np.zeros((N, m))
    mask = np.zeros((N, m))
    for i, p in enumerate(parts):        # host-side, once per data set: N small slices
        A[i, :len(p)], t[i, :len(p)], mask[i, :len(p)] = X[p], y[p], 1.0
    return A, t, mask


def standardize(features) -> np.ndarray:
    """Columns centred and scaled to unit standard deviation (constant columns left at 0), with
    an intercept column of ones appended: ``[M, d] -> [M, d + 1]``."""
    X = np.asarray(features, np.float64)
    sd = X.std(axis=0)
    Z = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return np.hstack([Z, np.ones((X.shape[0], 1))])


def _sklearn(loader: str):
    try:
        from sklearn import datasets
    except ImportError as err:
        raise ImportError("the bundled data sets need scikit-learn, an optional dependency: "
                          "pip install 'decentral[data]' (or scikit-learn)") from err
    return getattr(datasets, loader)()


def diabetes(num_agents: int, *, partition: str = "shuffle", seed: int = 0,
             regularization: float = 0.0) -> QuadraticProblem:
    """Least squares on scikit-learn's diabetes data (442 patients, 10 features + intercept;
    target: disease progression after one year, centred and divided by its standard
    deviation), rows split by :func:`split_rows`."""
    data = _sklearn("load_diabetes")
    y = np.asarray(data.target, np.float64)
    A, t, mask = split_rows(standardize(data.data), (y - y.mean()) / y.std(), num_agents,
                            partition=partition, seed=seed)
    return least_squares(A, t, mask, regularization=regularization,
                         name=f"diabetes(N={num_agents}, {partition}, seed={seed})")


def breast_cancer(num_agents: int, *, partition: str = "shuffle", seed: int = 0,
                  regularization: float = 1e-2) -> LogisticProblem:
    """l2-regularized logistic regression on scikit-learn's breast-cancer data (569 tumours,
    30 features + intercept; label +1 benign, -1 malignant), rows split by
    :func:`split_rows`."""
    data = _sklearn("load_breast_cancer")
    labels = np.where(np.asarray(data.target) == 1, 1.0, -1.0)
    A, t, mask = split_rows(standardize(data.data), labels, num_agents, partition=partition,
                            seed=seed)
    return logistic_regression(A, t, mask, regularization=regularization,
                               name=f"breast_cancer(N={num_agents}, {partition}, seed={seed})")


def digits(num_agents: int, *, partition: str = "shuffle", seed: int = 0,
           regularization: float = 1e-2) -> LogisticProblem:
    """l2-regularized logistic regression on scikit-learn's 8 x 8 digits (1797 images, 64
    pixel features + intercept; label +1 for digits 5-9, -1 for 0-4), rows split by
    :func:`split_rows`."""
    data = _sklearn("load_digits")
    labels = np.where(np.asarray(data.target) >= 5, 1.0, -1.0)
    A, t, mask = split_rows(standardize(data.data), labels, num_agents, partition=partition,
                            seed=seed)
    return logistic_regression(A, t, mask, regularization=regularization,
                               name=f"digits(N={num_agents}, {partition}, seed={seed})")
