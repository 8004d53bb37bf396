"""MkDocs hook for the API pages: document the exports a submodule of the same name hides.

A package may export a function under the name of one of its own submodules
(``decentral.bandits`` exports the function ``evaluate`` from its submodule ``evaluate``).
Python resolves ``decentral.bandits.evaluate`` to the function, but griffe, which reads the code
for mkdocstrings, keeps the submodule under that name, so the function would be missing from
the package's page. This hook finds such exports by reading the package's ``__init__.py`` (no
import) and appends a directive for each, at the path where the object is defined, computed at
build time, so the pages never name a submodule themselves.

Loaded by ``mkdocs.yml`` (``hooks: [docs/_ext/api_hooks.py]``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

_PACKAGE_DIRECTIVE = re.compile(r"^::: (decentral\.\w+)\s*$", re.MULTILINE)


def _exports(tree: ast.Module) -> list[str]:
    """The names of a literal ``__all__ = [...]`` (empty if there is none)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                return [str(name) for name in ast.literal_eval(node.value)]
            except ValueError:
                return []
    return []


def shadowed_exports(package: str, root: Path) -> list[str]:
    """Paths ``package.module.name`` of the objects ``package`` exports under the name of one
    of its own submodules."""
    folder = root.joinpath(*package.split("."))
    init = folder / "__init__.py"
    if not init.is_file():
        return []
    tree = ast.parse(init.read_text(encoding="utf-8"))
    exported = set(_exports(tree))
    found = []
    for node in tree.body:
        if not (isinstance(node, ast.ImportFrom) and node.level == 1 and node.module):
            continue
        for alias in node.names:
            name = alias.asname or alias.name
            is_submodule = (folder / f"{name}.py").is_file() or (folder / name).is_dir()
            if name in exported and is_submodule:
                found.append(f"{package}.{node.module}.{alias.name}")
    return found


def on_page_markdown(markdown: str, page, config, files) -> str:
    if not page.file.src_uri.startswith("api/"):
        return markdown
    root = Path(config["config_file_path"]).parent
    extra = []
    for package in _PACKAGE_DIRECTIVE.findall(markdown):
        for path in shadowed_exports(package, root):
            extra.append(f"::: {path}\n    options:\n      show_root_heading: true\n"
                         f"      show_root_full_path: false\n")
    return markdown if not extra else markdown.rstrip("\n") + "\n\n" + "\n".join(extra)
