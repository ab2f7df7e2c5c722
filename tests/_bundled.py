"""Helpers several test folders share: a small sample cut from the bundled runs, and the
evaluate command run in this process with its output captured."""
from __future__ import annotations

import contextlib
import gzip
import io
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "trec_runs"


def write_tiny_sample(d: Path, runs, topics) -> Path:
    """``d/runs/<name>`` for each bundled run in ``runs`` and ``d/qrels.txt``, cut to ``topics``."""
    (d / "runs").mkdir()
    for name in runs:
        lines = gzip.open(BUNDLED / "runs" / f"{name}.gz", "rt").read().splitlines()
        (d / "runs" / name).write_text("\n".join(l for l in lines if l.split()[0] in topics) + "\n")
    qrels = [l for l in (BUNDLED / "qrels-rnd1.txt").read_text().splitlines() if l.split()[0] in topics]
    (d / "qrels.txt").write_text("\n".join(qrels) + "\n")
    return d


def run_evaluate(argv) -> tuple[int, str, str]:
    """``maxent evaluate ARGV``: (exit code, stdout, stderr)."""
    from maxent.cli.evaluate import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()
