"""Loading a test's child-process script (``tests/_*_child.py``) as a module in the test's own
process, to compute the child's cases in-process for comparison."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load_child(path: Path) -> ModuleType:
    """The script at ``path`` imported as a module named after its file."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
