"""A griffe extension that lets the API reference read `decentral`'s docstrings as written.

The docstrings are Google style with a few reStructuredText habits. Before mkdocstrings parses
a docstring this extension rewrites, in the text griffe holds (never in the source files):

* ``Example:`` section headings to ``Examples:``, so their ``>>>`` lines render as code;
* Sphinx roles (``:func:`run```, ``:class:`~decentral.runner.Algorithm```) to optional
  cross-references: a link when the target is rendered somewhere in the site, plain code
  otherwise (an unresolved optional reference is not a warning in strict mode). A bare name is
  looked up in the enclosing class, then in the public package, then in the defining module;
* a paragraph ending in ``::`` (the reST marker of a literal block) to one ending in ``:``;
* a list of parameter names that ends in a comma and goes on on the next, deeper line (a group
  of parameters documented together) to one line, as the Google parser reads one name line.

Loaded by ``mkdocs.yml`` (``extensions: [docs/_ext/griffe_docstrings.py:DecentralDocstrings]``);
``exclude_docs`` keeps this folder out of the built site.
"""

from __future__ import annotations

import builtins
import re
from typing import Any

import griffe

_ROLE = re.compile(r":(func|class|meth|attr|data|mod|obj|exc):`(~?)\.?([\w.]+?)(?:\(\))?`")
_EXAMPLE_HEADING = re.compile(r"^(\s*)Example:\s*$", re.MULTILINE)
_SPLIT_NAME_LIST = re.compile(r"^( +)(\w+(?:, *\w+)*,)[ \t]*\n\1 +(?=\S)", re.MULTILINE)
_LITERAL_MARKER = re.compile(r"(\S)::\s*$", re.MULTILINE)
_LONE_LITERAL_MARKER = re.compile(r"^\s*::\s*$", re.MULTILINE)


def _lookup(obj: griffe.Object, path: str) -> griffe.Object | griffe.Alias | None:
    try:
        return obj.modules_collection[path]
    except Exception:      # KeyError, or an alias that does not resolve
        return None


def _candidates(obj: griffe.Object, target: str) -> list[str]:
    """Where a role's target may be documented, most specific first."""
    if target.startswith("decentral."):
        return [target]
    owner = obj if obj.is_class else obj.parent if obj.parent and obj.parent.is_class else None
    package = ".".join(obj.module.path.split(".")[:2])
    out = [f"{owner.path}.{target}"] if owner is not None else []
    return out + [f"{package}.{target}", f"{obj.module.path}.{target}"]


def resolve(obj: griffe.Object, kind: str, target: str) -> str | None:
    """The identifier to link a role to, or None for a Python builtin (shown as code only)."""
    if "." not in target and hasattr(builtins, target):
        return None
    candidates = _candidates(obj, target)
    for path in candidates:
        found = _lookup(obj, path)
        if found is None:
            continue
        last = path.rsplit(".", 1)[-1]
        if kind != "mod" and found.is_module and last in found.members:
            return f"{path}.{last}"          # a submodule hides the object of the same name
        return path
    return candidates[-2] if len(candidates) > 1 else candidates[0]


def rewrite(text: str, obj: griffe.Object) -> str:
    """The docstring ``text`` of ``obj`` with the rewrites above."""

    def role(match: re.Match) -> str:
        kind, short, target = match.groups()
        shown = target.rsplit(".", 1)[-1] if short else target
        identifier = resolve(obj, kind, target)
        if identifier is None:
            return f"`{shown}`"
        return f'<autoref identifier="{identifier}" optional><code>{shown}</code></autoref>'

    text = _EXAMPLE_HEADING.sub(r"\1Examples:", text)
    text = _SPLIT_NAME_LIST.sub(r"\1\2 ", text)
    text = _ROLE.sub(role, text)
    text = _LONE_LITERAL_MARKER.sub("", text)
    return _LITERAL_MARKER.sub(r"\1:", text)


class DecentralDocstrings(griffe.Extension):
    """Rewrite the docstring of every object once the object tree is complete."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and not obj.is_alias:
            obj.docstring.value = rewrite(obj.docstring.value, obj)
