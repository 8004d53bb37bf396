"""The documentation site: navigation, links, API pages, and the code on its pages.

The site itself is built by ``python -m mkdocs build --strict`` in CI; these tests catch the
common breakages in seconds without MkDocs: a page missing from the navigation or the disk, a
link to a file or anchor that does not exist, an API page that names a private module, and
Python blocks of the pages that no longer run. A block preceded by the line ``<!-- not run -->``
only illustrates and is skipped (docs/about_docs.md states the convention).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tempfile
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOT_RUN = "<!-- not run -->"
# Pages whose blocks run in their own test file (they build on the whole page, and time it).
RUN_ELSEWHERE = {"tutorials/add_algorithm.md"}
API_PACKAGES = ["graphs", "runner", "consensus", "consensus_sa", "push_sum", "bandits",
                "optimization", "resilient_ac", "resilient_ac.linear", "resilient_ac.learning",
                "schedules", "verify", "datasets", "results", "hypotheses", "markov", "devices"]

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HTML_SRC = re.compile(r"""<(?:img|a)\b[^>]*?\b(?:src|href)=["']([^"']+)["']""")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.MULTILINE)


def _nav_pages(nav) -> list[str]:
    """Every page path named in a MkDocs ``nav`` (nested lists and ``title: page`` dicts)."""
    if isinstance(nav, str):
        return [] if "://" in nav else [nav]
    if isinstance(nav, list):
        return [p for item in nav for p in _nav_pages(item)]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in _nav_pages(value)]
    return []


def _config() -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def _excluded(path: Path) -> bool:
    return path.relative_to(DOCS).parts[0] == "_ext"


def _pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if not _excluded(p))


def _without_code(text: str) -> str:
    """The page with fenced blocks and inline code removed (links there are not links)."""
    text = _FENCE.sub("", text)
    return re.sub(r"`[^`\n]*`", "", text)


def slugify(heading: str) -> str:
    """The anchor Python-Markdown's ``toc`` extension gives a heading (its default slugify)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)      # a link: its text
    text = re.sub(r"[`*]", "", text)                                 # code and emphasis marks
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slugify(m.group(2)) for m in _HEADING.finditer(text)}


def python_blocks(page: Path) -> list[str]:
    """The page's ```python blocks in order, without those marked ``<!-- not run -->``."""
    text = page.read_text(encoding="utf-8")
    blocks = []
    for match in _FENCE.finditer(text):
        if match.group(1) != "python":
            continue
        before = text[:match.start()].rstrip().splitlines()
        if before and before[-1].strip() == NOT_RUN:
            continue
        blocks.append(match.group(2))
    return blocks


def run_blocks(page: Path, folder: Path, monkeypatch) -> dict:
    """Execute the page's Python blocks in order as one script, with ``folder / "cwd"`` as the
    working folder and ``folder / "tmp"`` as the temporary folder (so nothing is left behind)."""
    blocks = python_blocks(page)
    assert blocks, f"{page.relative_to(ROOT)} has no Python block to run"
    (folder / "cwd").mkdir()
    (folder / "tmp").mkdir()
    monkeypatch.chdir(folder / "cwd")
    monkeypatch.setattr(tempfile, "tempdir", str(folder / "tmp"))
    monkeypatch.setattr(sys, "path", [str(ROOT), *sys.path])
    namespace: dict = {"__name__": "__docs__"}
    for i, block in enumerate(blocks):
        code = compile(block, f"{page.relative_to(ROOT)} (python block {i + 1})", "exec")
        exec(code, namespace)  # noqa: S102 - the documentation's own examples
    return namespace


def test_every_nav_page_exists_and_every_page_is_in_the_nav():
    nav = _nav_pages(_config()["nav"])
    missing = [p for p in nav if not (DOCS / p).is_file()]
    assert not missing, f"pages named in mkdocs.yml's nav but not in docs/: {missing}"
    assert len(nav) == len(set(nav)), "a page is listed twice in the nav"
    omitted = [str(p.relative_to(DOCS)) for p in _pages() if str(p.relative_to(DOCS)) not in nav]
    assert not omitted, f"pages in docs/ missing from mkdocs.yml's nav: {omitted}"


def test_nav_holds_the_sections_a_newcomer_needs():
    nav = set(_nav_pages(_config()["nav"]))
    for page in ["index.md", "getting_started.md", "concepts/graph_sequences.md",
                 "concepts/algorithms.md", "concepts/runner.md", "concepts/claims.md",
                 "claims.md", "status.md", "gallery.md", "tutorials/add_algorithm.md",
                 "api/index.md"]:
        assert page in nav, page


def test_no_page_links_to_a_missing_file_or_anchor():
    broken = []
    for page in _pages():
        text = _without_code(page.read_text(encoding="utf-8"))
        targets = _LINK.findall(text) + _HTML_SRC.findall(text)
        for target in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):      # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            linked = page if not path else (page.parent / path).resolve()
            name = f"{page.relative_to(DOCS)} -> {target}"
            if not linked.exists():
                broken.append(f"{name} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{name} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_readme_links_to_docs_pages_that_exist():
    text = _without_code((ROOT / "README.md").read_text(encoding="utf-8"))
    targets = [t.partition("#")[0] for t in _LINK.findall(text) if t.startswith("docs/")]
    assert "docs/index.md" in targets, "the README links to the documentation's home page"
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, f"README links to missing docs pages: {missing}"


def test_api_pages_document_public_packages_only():
    directives = {}
    for page in sorted((DOCS / "api").glob("*.md")):
        for target in re.findall(r"^::: ([\w.]+)\s*$", page.read_text(encoding="utf-8"),
                                 flags=re.MULTILINE):
            # a public top-level module or package, or a public subpackage (never a module
            # inside a package)
            spec = importlib.util.find_spec(target)
            top_level = re.fullmatch(r"decentral\.[a-z]\w*", target) is not None
            subpackage = (re.fullmatch(r"decentral(\.[a-z]\w*)+", target) is not None
                          and spec is not None and bool(spec.submodule_search_locations))
            assert spec is not None and (top_level or subpackage), (
                f"{page.name} documents {target}: API pages name public packages only, never "
                "a module inside one (the __all__ of the package decides what is listed)")
            directives[target] = page.name
    assert sorted(directives) == sorted(f"decentral.{p}" for p in API_PACKAGES)


def test_slugify_matches_the_headings_the_pages_link_to():
    assert slugify("Reproducibility, and its one limit") == "reproducibility-and-its-one-limit"
    assert slugify("The `dducb` baseline") == "the-dducb-baseline"


def test_python_blocks_skip_the_ones_marked_not_run(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```python\nx = 1\n```\n\n<!-- not run -->\n```python\nraise SystemExit\n```\n"
                    "```bash\nexit 1\n```\n")
    assert python_blocks(page) == ["x = 1\n"]


RUNNABLE = [str(p.relative_to(DOCS)) for p in _pages()
            if python_blocks(p) and str(p.relative_to(DOCS)) not in RUN_ELSEWHERE]


def test_getting_started_has_runnable_blocks():
    assert "getting_started.md" in RUNNABLE
    assert len(python_blocks(DOCS / "getting_started.md")) >= 4


@pytest.mark.parametrize("page", RUNNABLE)
def test_python_blocks_of_the_page_run(page, tmp_path, monkeypatch):
    namespace = run_blocks(DOCS / page, tmp_path, monkeypatch)
    if page == "getting_started.md":
        assert namespace["res"].records.shape == (3, 64, 5)
        assert namespace["first"].records.tobytes() == namespace["again"].records.tobytes()
    left = sorted(p.name for p in (tmp_path / "cwd").iterdir())
    assert not left, f"{page} wrote into the working folder (use a temporary one): {left}"


def test_readme_optimization_example_prints_what_the_readme_says(capsys):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Decentralized optimization on a directed graph", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md (optimization example)", "exec"), {})
    lines = capsys.readouterr().out.strip().splitlines()
    errors = {line.split()[0]: float(line.split()[-1]) for line in lines}
    assert 0.05 < errors["DGD"] < 0.2                     # "about 1e-1": the pi-weighted bias
    assert errors["push-pull"] < 1e-6                     # "about 2e-7" in float32
