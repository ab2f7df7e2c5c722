"""``python -m analysis.report``: the documentation's tables equal the committed evidence.

Every README/docs file with report markers is copied to a temporary root, its tables are
regenerated there from ``results/`` and the copy must equal the committed file byte for byte.
Markers must name registered tables; stale tables make ``--check`` fail with a diff.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from analysis import report
from maxent.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
MARK = re.compile(r"<!--\s*(/?)report:([A-Za-z0-9_-]+)\s*-->")


def _marked_files() -> list[Path]:
    return report.documents(ROOT)


def _copy_docs(dst: Path) -> None:
    for f in _marked_files():
        target = dst / f.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)


def test_some_file_has_tables():
    names = {m.group(2) for f in _marked_files() for m in MARK.finditer(f.read_text())}
    assert "headline" in report.TABLES
    assert names, "no README/docs file contains a report marker"


def test_every_marker_names_a_registered_table():
    for f in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        if not f.exists():
            continue
        for m in MARK.finditer(f.read_text()):
            line = f.read_text().count("\n", 0, m.start()) + 1
            assert m.group(2) in report.TABLES, f"{f}:{line}: unknown report table {m.group(2)!r}"


def test_regenerated_tables_equal_the_committed_files(tmp_path):
    _copy_docs(tmp_path)
    assert report.main(["--root", str(tmp_path), "--results", str(RESULTS)]) == 0
    for f in _marked_files():
        committed = f.read_text()
        regenerated = (tmp_path / f.relative_to(ROOT)).read_text()
        assert regenerated == committed, (
            f"{f.relative_to(ROOT)} differs from its tables regenerated from results/; "
            "run python -m analysis.report")


def test_check_passes_on_the_committed_files(capsys):
    assert report.main(["--check"]) == 0
    assert capsys.readouterr().out == ""


def test_check_reports_a_stale_table_with_a_diff(tmp_path, capsys):
    doc = tmp_path / "docs" / "page.md"
    doc.parent.mkdir()
    doc.write_text("# page\n\n<!-- report:headline -->\n| stale |\n<!-- /report:headline -->\n\ntext\n")
    assert report.main(["--check", "--root", str(tmp_path), "--results", str(RESULTS)]) == 1
    out = capsys.readouterr()
    assert "-| stale |" in out.out and "+| collection |" in out.out
    assert "differ from the committed evidence" in out.err
    assert "stale" in doc.read_text()                       # --check writes nothing
    assert report.main(["--root", str(tmp_path), "--results", str(RESULTS)]) == 0
    text = doc.read_text()
    assert "stale" not in text and text.endswith("<!-- /report:headline -->\n\ntext\n")
    assert report.regenerate(text, doc, RESULTS) == text    # idempotent


def test_unknown_table_is_an_error_naming_file_and_line(tmp_path, capsys):
    doc = tmp_path / "README.md"
    doc.write_text("intro\n\n<!-- report:no_such_table -->\n<!-- /report:no_such_table -->\n")
    with pytest.raises(InputError, match=r"README.md.*3.*unknown report table 'no_such_table'"):
        report.regenerate(doc.read_text(), doc, RESULTS)
    assert report.main(["--check", "--root", str(tmp_path), "--results", str(RESULTS)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no_such_table" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("text, match", [
    ("<!-- report:headline -->\nno end\n", "not closed"),
    ("<!-- /report:headline -->\n", "without its opening"),
    ("<!-- report:headline -->\n<!-- /report:table1 -->\n", "not closed"),
])
def test_broken_markers(tmp_path, text, match):
    with pytest.raises(InputError, match=match):
        report.regenerate(text, tmp_path / "x.md", RESULTS)


def test_every_evidence_folder_has_provenance_and_small_files():
    folders = {p.parent for p in RESULTS.rglob("*") if p.is_file() and p.name != "PROVENANCE.json"}
    assert folders
    for folder in folders:
        prov = folder / "PROVENANCE.json"
        assert prov.exists(), f"{folder} has evidence without PROVENANCE.json"
        record = json.loads(prov.read_text())
        for key in ("command", "commit", "date", "wall_time_s", "machine"):
            assert record.get(key) not in (None, ""), f"{prov}: no {key}"
        assert record["command"].startswith(("python -m analysis.", "python benchmarks/")), prov
    for f in RESULTS.rglob("*"):
        if f.is_file():
            assert f.stat().st_size < 1_000_000, f"{f} is too large for committed evidence"


def test_headline_is_the_evidence():
    """The headline's cells are table1.csv's numbers, formatted, for every collection."""
    import pandas as pd

    t1 = pd.read_csv(RESULTS / "significance" / "all" / "table1.csv")
    table = report.headline(RESULTS)
    for d, name in report.NAMES.items():
        g = t1[t1["dataset"] == d]
        r = g[(g["threshold"] == g["threshold"].min()) & (g["metric"].str.startswith("AP"))].iloc[0]
        row = next(line for line in table.splitlines() if line.startswith(f"| {name} |"))
        assert f"{r['rms']:.4f} [{r['rms_lo']:.4f}, {r['rms_hi']:.4f}]" in row
