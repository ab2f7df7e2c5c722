"""The worked notebook page (docs/guide/notebook.md) and the Python API page run as written.

Every fenced ```python block of each page is executed in order, in one namespace, from the
project root, as a reader pasting them into a notebook would.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from test_docs import python_blocks      # the block parser every docs page is run with

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "docs" / "guide" / "notebook.md", ROOT / "docs" / "guide" / "python-api.md"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_runs(page, monkeypatch, capsys):
    found = [(line, code) for line, code, runs in python_blocks(page.read_text(encoding="utf-8")) if runs]
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
