"""The worked notebook page (docs/guide/notebook.md) and the Python API page run as written.

Every fenced ```python block of each page is executed in order, in one namespace, from the
project root, as a reader pasting them into a notebook would.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "docs" / "guide" / "notebook.md", ROOT / "docs" / "guide" / "python-api.md"]
_BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```\s*$", re.S | re.M)


def blocks(text: str) -> list[tuple[int, str]]:
    """(line, code) of every ```python block."""
    return [(text[:m.start()].count("\n") + 1, m.group(1)) for m in _BLOCK.finditer(text)]


def test_block_finder():
    text = "# t\n```python\nx = 1\n```\n\n```\nnot python\n```\n```python\ny = 2\n```\n"
    assert blocks(text) == [(2, "x = 1\n"), (9, "y = 2\n")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_runs(page, monkeypatch, capsys):
    found = blocks(page.read_text(encoding="utf-8"))
    assert len(found) >= 4, f"{page.name}: expected its worked examples"
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "__docs__"}
    for line, code in found:
        try:
            exec(compile(code, f"{page.name}:{line}", "exec"), namespace)
        except Exception as exc:
            raise AssertionError(f"the python block at {page.name}:{line} failed: {type(exc).__name__}: {exc}") from exc
    out = capsys.readouterr().out
    if page.name == "notebook.md":
        # what the page promises: 20 runs evaluated, a marked comparison, Table 1's layout, a curve
        assert "20 runs, 30 topics" in out
        assert "superscripts: significantly better than" in out
        summary = namespace["summary"]
        assert list(summary["metric"]) == ["AP", "AP", "nDCG", "nDCG", "GAP", "GAP"]
        assert set(namespace["display"].data["curve"]) == {"actual", "inferred from AP", "inferred from nDCG",
                                                            "inferred from GAP"}
