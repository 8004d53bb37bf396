"""The static configuration of the grid-world learners: agent types, the variants (the
authors' code forms of the resilient step and their corrections, :data:`VARIANTS`) and the
per-update protocols of the authors' two code versions (:data:`PROTOCOLS`); the table of
variants and what each flag means are in :mod:`decentral.resilient_ac.learning.mlp`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..aggregators import AGGREGATOR_ALIASES, AGGREGATORS

__all__ = ["COOPERATIVE", "GREEDY", "FAULTY", "MALICIOUS", "AGENT_TYPES", "Variant",
           "VARIANTS", "get_variant", "LearningProtocol", "Protocol", "PROTOCOLS", "get_protocol"]

COOPERATIVE, GREEDY, FAULTY, MALICIOUS = 0, 1, 2, 3
#: Agent type codes by name (the values of the ``agent_type`` arrays).
AGENT_TYPES: dict[str, int] = {"cooperative": COOPERATIVE, "greedy": GREEDY,
                               "faulty": FAULTY, "malicious": MALICIOUS}

_TRIM_LAYOUTS = ("flatten_v1", "per_sample")
#: Every aggregator name a :class:`Variant` accepts: the family's one registry
#: (:data:`~decentral.resilient_ac.AGGREGATORS`) and its aliases (``"trimmed"``, ``"clipped"``).
_AGGREGATOR_NAMES = (*AGGREGATORS, *AGGREGATOR_ALIASES)
_PROJ_NORMS = ("batch_frobenius", "per_sample")
_COLLISIONS = ("as_coded", "fixed")


# ------------------------------------------------------------------------------------------
# variants and protocols (static configuration)
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """A bundle of flags (module docstring); frozen and hashable (a static jit argument).

    Attributes:
        name: the label in tables and figures.
        trim_layout: ``"per_sample"`` (W-MSR per sample along the in-node axis) or
            ``"flatten_v1"`` (the ``[K, B]`` errors raveled into one vector, one scalar out;
            W-MSR only).
        aggregator: the rule on predictions / errors, a name of the family's one registry
            :data:`~decentral.resilient_ac.AGGREGATORS` (``"wmsr"``, ``"trimmed_mean"``,
            ``"clipped_mean"``, ``"mean"``) or an alias of
            :data:`~decentral.resilient_ac.AGGREGATOR_ALIASES` (``"trimmed"``, ``"clipped"``,
            the short names the labelled variants use).
        hidden_aggregator: the element-wise rule on hidden-layer parameters (same names).
        proj_norm: ``"per_sample"`` (``||phi'_b||^2 + 1`` of the new features, messages'
            output layers on the own new hidden layers) or ``"batch_frobenius"`` (the v1
            code's whole-network predictions and whole-batch Frobenius norm, team reward
            with ``lr`` instead of ``2 lr``).
        collision: the v2 grid world's occupancy rule, ``"fixed"`` or ``"as_coded"`` (v1's
            dynamics are the same under both).
    """

    name: str = "custom"
    trim_layout: str = "per_sample"
    aggregator: str = "wmsr"
    hidden_aggregator: str = "wmsr"
    proj_norm: str = "per_sample"
    collision: str = "fixed"

    def __post_init__(self):
        for field, value, allowed in (("trim_layout", self.trim_layout, _TRIM_LAYOUTS),
                                      ("aggregator", self.aggregator, _AGGREGATOR_NAMES),
                                      ("hidden_aggregator", self.hidden_aggregator,
                                       _AGGREGATOR_NAMES),
                                      ("proj_norm", self.proj_norm, _PROJ_NORMS),
                                      ("collision", self.collision, _COLLISIONS)):
            if value not in allowed:
                raise ValueError(f"Variant.{field} = {value!r} is unknown; use one of "
                                 f"{', '.join(repr(a) for a in allowed)}.")
        if self.trim_layout == "flatten_v1" and self.aggregator not in ("wmsr", "mean"):
            raise ValueError("trim_layout='flatten_v1' (the v1 code's raveled errors) is only "
                             f"defined with aggregator 'wmsr' or 'mean'; got "
                             f"{self.aggregator!r}.")


#: The labelled variants (module docstring).
VARIANTS: dict[str, Variant] = {
    "v1-faithful": Variant("v1-faithful", "flatten_v1", "wmsr", "trimmed", "batch_frobenius",
                           "fixed"),
    "v1-corrected": Variant("v1-corrected", "per_sample", "wmsr", "wmsr", "per_sample",
                            "fixed"),
    "v2-faithful": Variant("v2-faithful", "per_sample", "clipped", "clipped", "per_sample",
                           "as_coded"),
    "v2-corrected": Variant("v2-corrected", "per_sample", "wmsr", "wmsr", "per_sample",
                            "fixed"),
}


def get_variant(version: str, variant: str | Variant) -> Variant:
    """The :class:`Variant` for ``version`` (``"v1"``/``"v2"``) and ``variant``
    (``"faithful"``, ``"corrected"``, a full label, or a :class:`Variant`)."""
    if isinstance(variant, Variant):
        return variant
    if not isinstance(variant, str):
        raise ValueError(f"variant must be a str or a Variant; got {type(variant).__name__}.")
    label = variant if variant in VARIANTS else f"{version}-{variant}"
    if label not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r} for version {version!r}; use "
                         "'faithful' or 'corrected' (or one of "
                         f"{', '.join(sorted(VARIANTS))}, or a Variant).")
    return VARIANTS[label]


@dataclass(frozen=True)
class LearningProtocol:
    """The per-update schedule of one code version (as in the authors' code; arXiv:2111.06776).

    One *update* (one runner step of :func:`~decentral.resilient_ac.learning.learner`):
    collect ``episodes_per_update`` episodes with the current policies; then ``epochs``
    consensus epochs on the batch (v2: the replay buffer of the last ``buffer_collections``
    collections); then one actor step per agent.

    Formerly ``Protocol`` (still exported under that name); renamed so it no longer shadows
    :class:`typing.Protocol`.

    Attributes:
        version: the code version, ``"v1"`` or ``"v2"`` (also readable as
            :attr:`code_version`; not :attr:`decentral.runner.Algorithm.version`).
        width: hidden units per layer (30 / 20).
        episodes_per_update: ``n_ep_fixed`` (100 / 50).
        epochs: consensus epochs per update (20 / 10).
        message_steps: full-batch SGD steps of a cooperative agent's local fit (1 / 5: v2's
            ``fit`` of 5 epochs on the full batch).
        adversary_epochs, adversary_batch: the greedy / malicious fit per consensus epoch:
            v1 one full-batch step (``adversary_batch = 0``), v2 ``fit`` of 10 epochs with
            minibatches of 32.
        adversary_actor_batch: minibatch of the adversaries' actor epoch (0: one full-batch
            step, v1; 200 in v2, one epoch over the fresh transitions).
        buffer_collections: collections kept in the replay buffer (1: none, v1; 2: the last
            2000 transitions of v2).
        shared_templates: all critics (and the malicious private critic) start from one
            template and all team-reward networks from another (v1 code).
    """

    version: str
    width: int
    episodes_per_update: int
    epochs: int
    message_steps: int
    adversary_epochs: int
    adversary_batch: int
    adversary_actor_batch: int
    buffer_collections: int
    shared_templates: bool

    @property
    def code_version(self) -> str:
        """The authors' code version this protocol follows (``"v1"`` / ``"v2"``)."""
        return self.version


#: The older name of :class:`LearningProtocol` (kept for user code; it shadowed
#: :class:`typing.Protocol` in ``from ... import *``).
Protocol = LearningProtocol

#: The two protocols of the authors' code (v1: commit 61b07cf; v2: commit f10f863).
PROTOCOLS: dict[str, LearningProtocol] = {
    "v1": LearningProtocol("v1", 30, 100, 20, 1, 1, 0, 0, 1, True),
    "v2": LearningProtocol("v2", 20, 50, 10, 5, 10, 32, 200, 2, False),
}


def get_protocol(code_version: str | LearningProtocol) -> LearningProtocol:
    """The :class:`LearningProtocol` of code version ``"v1"`` or ``"v2"`` (or a protocol
    itself)."""
    if isinstance(code_version, LearningProtocol):
        return code_version
    if code_version not in PROTOCOLS:
        raise ValueError(f"unknown version {code_version!r}; use 'v1' (6x6 grid, arXiv v1 "
                         "code) or 'v2' (5x5 grid, the later code).")
    return PROTOCOLS[code_version]
