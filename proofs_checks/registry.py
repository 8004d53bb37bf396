"""The claim registry: ``@claim(...)`` registers a check, :func:`discover` imports every module
(the mechanism, shared with the figure registry, is :mod:`decentral.registry`).

A family's module or package (``proofs_checks/graphs.py``, ``proofs_checks/bandits/``, ...)
declares its claims with the decorator; ``python -m proofs_checks`` discovers and runs them.
This module owns the harness's conventions: the claim families (:data:`FAMILIES`), the claim-id rule
(:func:`validate_claim_id`: ``"<family>.<name>"``) and the default output folder
(:data:`DEFAULT_OUT_DIR`).

Example:
    >>> from decentral.verify import Kind, Outcome, Verdict
    >>> reg = {}
    >>> @claim("graphs.demo_identity", statement="x == x", source="logic", kind=Kind.EXACT,
    ...        registry=reg)
    ... def demo(ctx):
    ...     return Outcome(Verdict.PASS, {"residual": 0.0}, "residual == 0")
    >>> [c.id for c in select(reg, "demo")]
    ['graphs.demo_identity']
"""

from __future__ import annotations

import pathlib
import re
from collections.abc import Callable, Iterable, Mapping

from decentral import registry as _mechanism
from decentral.registry import split_patterns
from decentral.verify.claims import CheckContext, Claim, Kind, Outcome

__all__ = ["FAMILIES", "DEFAULT_OUT_DIR", "REGISTRY", "DISCOVERY_ERRORS", "validate_claim_id",
           "claim", "discover", "select", "split_patterns"]

#: The claim families, one per algorithm family of the library (and one per module here).
FAMILIES: tuple[str, ...] = ("graphs", "consensus_sa", "push_sum", "bandits", "resilient_ac",
                             "optimization")

#: Where ``python -m proofs_checks`` writes its report and figures unless ``--out`` says
#: otherwise (relative to the working directory).
DEFAULT_OUT_DIR = pathlib.Path("proofs_checks/out")

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")

#: Every registered claim, by id.
REGISTRY: dict[str, Claim] = {}

#: Modules of the package that failed to import during :func:`discover`: name -> traceback text.
DISCOVERY_ERRORS: dict[str, str] = {}



def validate_claim_id(claim_id: str) -> str:
    """Check that ``claim_id`` is ``"<family>.<name>"`` with a known family; return it.

    Args:
        claim_id: e.g. ``"bandits.star_hub_slope"``.

    Raises:
        ValueError: if the id is not a string of the form ``family.name``, the family is not one of
            :data:`FAMILIES`, or the name is not lower-case letters, digits and underscores.

    Example:
        >>> validate_claim_id("graphs.ring_is_strong")
        'graphs.ring_is_strong'
    """
    if not isinstance(claim_id, str):
        raise ValueError(
            f"claim id must be a string like 'graphs.ring_is_strong'; got {claim_id!r}."
        )
    family, dot, name = claim_id.partition(".")
    if not dot:
        raise ValueError(
            f"claim id {claim_id!r} has no family prefix; write it as '<family>.<name>' with "
            f"family one of {', '.join(FAMILIES)}."
        )
    if family not in FAMILIES:
        raise ValueError(
            f"claim id {claim_id!r} has unknown family {family!r}; use one of "
            f"{', '.join(FAMILIES)}."
        )
    if not _NAME_RE.match(name):
        raise ValueError(
            f"claim id {claim_id!r}: the name part {name!r} must be lower-case letters, digits and "
            "underscores, starting with a letter (e.g. 'star_hub_slope')."
        )
    return claim_id


def claim(
    id: str,
    *,
    statement: str,
    source: str,
    kind: Kind | str,
    registry: dict[str, Claim] | None = None,
) -> Callable[[Callable[[CheckContext], Outcome]], Callable[[CheckContext], Outcome]]:
    """Decorator registering ``fn(ctx) -> Outcome`` as the claim ``id``.

    The function is returned unchanged (so tests can call it directly, e.g. on a planted
    violation), with the :class:`Claim` attached as ``fn.claim``.

    Args:
        id: ``"<family>.<name>"``.
        statement: the claim in words.
        source: paper, theorem / equation.
        kind: :class:`Kind` or its value (``"exact"``, ``"statistical"``, ``"rate"``).
        registry: where to register (default :data:`REGISTRY`); tests pass their own dict.

    Raises:
        ValueError: a malformed id (see :func:`validate_claim_id`), or an id already registered
            by a different function (re-importing the same module re-registers the same
            function and is allowed).
    """
    validate_claim_id(id)
    target = REGISTRY if registry is None else registry

    def decorate(fn: Callable[[CheckContext], Outcome]) -> Callable[[CheckContext], Outcome]:
        c = Claim(id=id, statement=statement, source=source, kind=kind, run=fn)
        _mechanism.register(target, c, kind="claim")
        fn.claim = c  # type: ignore[attr-defined]
        return fn

    return decorate


def discover() -> dict[str, Claim]:
    """Import every module of the ``proofs_checks`` package and return :data:`REGISTRY`.

    Skips ``registry``, ``__main__`` and names starting with ``_``. A module that fails to import
    does not stop discovery: its traceback is stored in :data:`DISCOVERY_ERRORS` (the CLI reports
    it as an ERROR and exits non-zero).
    """
    return _mechanism.discover(REGISTRY, "proofs_checks", DISCOVERY_ERRORS)


def select(
    claims: Mapping[str, Claim] | Iterable[Claim], only: str | Iterable[str] | None
) -> list[Claim]:
    """Claims whose id contains any of the ``only`` patterns (substring match), sorted by id.

    Args:
        claims: a registry dict or an iterable of claims.
        only: ``None`` (all claims), one pattern, a comma-separated list, or a list of these.

    Returns:
        The matching claims in id order (possibly empty).
    """
    return _mechanism.select(claims, only)
