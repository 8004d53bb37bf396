"""Broken theorem hypotheses are warnings, not errors.

An experiment may break a hypothesis on purpose (a graph that is not B-connected, more than H
Byzantine in-neighbours, a step size outside the theorem's computable condition): the run
proceeds, a :class:`HypothesisWarning` is raised, and ``proofs_checks`` records its message in
the claim's "hypotheses failed" list.

Example:
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_hypothesis("graph is not (2H+1)-robust: r = 2 < 3")
    >>> caught[0].category.__name__, str(caught[0].message)
    ('HypothesisWarning', 'graph is not (2H+1)-robust: r = 2 < 3')
"""

from __future__ import annotations

import warnings

__all__ = ["HypothesisWarning", "warn_hypothesis"]


class HypothesisWarning(UserWarning):
    """A hypothesis of the theorem being exercised does not hold for this input."""


def warn_hypothesis(message: str, *, stacklevel: int = 2) -> None:
    """Raise a :class:`HypothesisWarning` with ``message`` (what fails, with numbers)."""
    warnings.warn(message, HypothesisWarning, stacklevel=stacklevel + 1)
