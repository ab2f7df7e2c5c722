"""The documentation: the site builds with warnings as errors, and every Python example runs.

Every fenced ```python block of README.md and of each page under ``docs/`` is executed: the
blocks of one page in order, in one namespace, from the project root (so the examples read the
bundled data in ``trec_runs/``). A block opts out only visibly, with ```python title="not run"
in its opening fence; such blocks are listed in the test's output so none is forgotten.
Blocks in other languages (shell commands, output) are not run.
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OPT_OUT = 'title="not run"'

# An opening fence: three or more backticks (or tildes), then the info string; indented fences
# (inside list items or admonitions) count too.
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")


def pages() -> list[Path]:
    """README.md and every Markdown page of the site, in a stable order."""
    found = [REPO / "README.md"] if (REPO / "README.md").exists() else []
    return found + sorted((REPO / "docs").rglob("*.md"))


def python_blocks(text: str) -> list[tuple[int, str, bool]]:
    """(first line number, code, runs) of every fenced block whose language is python."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info, start = m["fence"], m["info"].strip(), i + 1
        body = []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence))
                                      and lines[i].strip().strip(fence[0]) == ""):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence
        language = info.split()[0].strip("{}.") if info else ""
        if language in ("python", "py"):
            blocks.append((start, textwrap.dedent("\n".join(body)), OPT_OUT not in info))
    return blocks


def _page_id(path: Path) -> str:
    return str(path.relative_to(REPO))


def test_block_parser():
    """The parser finds python blocks, their line numbers and the opt-out, and nothing else."""
    text = "\n".join([
        "# t", "```python", "x = 1", "```", "```", "not python", "```",
        '```python title="not run"', "raise SystemExit", "```",
        "````python", "y = x + 1", "```", "still inside", "````",
        "- a list item:", "", "    ```python", "    z = 3", "    if z:", "        z = 4", "    ```",
    ])
    assert python_blocks(text) == [
        (2, "x = 1", True), (8, "raise SystemExit", False),
        (11, "y = x + 1\n```\nstill inside", True), (18, "z = 3\nif z:\n    z = 4", True),
    ]


def test_pages_with_examples_are_found():
    assert {"README.md", "docs/guide/inference.md", "docs/guide/notebook.md"} <= {_page_id(p) for p in _with_blocks()}


def _with_blocks() -> list[Path]:
    return [p for p in pages() if python_blocks(p.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("page", _with_blocks(), ids=_page_id)
def test_examples_run(page: Path, monkeypatch):
    """Every python block of the page runs, in order, in one namespace, from the project root."""
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    skipped = [line for line, _, runs in blocks if not runs]
    if skipped:
        print(f"{_page_id(page)}: blocks marked {OPT_OUT} at lines {skipped} not run")
    monkeypatch.chdir(REPO)
    namespace: dict = {"__name__": "__docs__"}
    for line, code, runs in blocks:
        if not runs:
            continue
        try:
            exec(compile(code, f"{_page_id(page)}:{line}", "exec"), namespace)
        except Exception as exc:  # name the page and the block's line, keep the traceback
            raise AssertionError(f"the python block at {_page_id(page)}:{line} failed: "
                                 f"{type(exc).__name__}: {exc}") from exc


def test_site_builds_strict(tmp_path):
    """``mkdocs build --strict``: every page in the nav exists, every link and API entry resolves."""
    missing = [m for m in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")
               if _absent(m)]
    if missing:
        pytest.skip(f"the documentation tools are not installed ({', '.join(missing)}): "
                    'pip install -e ".[docs]"')
    missing_pages = [page for page in _nav_pages() if not (REPO / "docs" / page).exists()]
    assert not missing_pages, f"pages named in mkdocs.yml's nav are missing from docs/: {missing_pages}"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(REPO / "mkdocs.yml"),
         "--site-dir", str(tmp_path / "site")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-4000:]}"
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "api" / "index.html").stat().st_size > 10_000  # the API was rendered


def _absent(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:
        return True


def _nav_pages() -> list[str]:
    """Every page file named in mkdocs.yml's nav."""
    import yaml

    def walk(entry):
        if isinstance(entry, str):
            yield entry
        elif isinstance(entry, list):
            for item in entry:
                yield from walk(item)
        elif isinstance(entry, dict):
            for value in entry.values():
                yield from walk(value)

    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    return [page for page in walk(config["nav"]) if page.endswith(".md")]
