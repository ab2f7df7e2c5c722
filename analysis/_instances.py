"""The per-run instance table of ``analysis.maxent`` and ``analysis.gap_thresholds`` in
resumable chunks: :func:`maxent.informativeness.analyse_run` run by run, each run's rows
written atomically so that ``--resume`` skips finished runs."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis import _cli
from analysis import _outputs
from maxent.informativeness import Settings, analyse_run, resolve_graded_pr

__all__ = ["parse_graded_pr", "run_instances"]


def parse_graded_pr(text: str | None, max_grade: int) -> tuple[float, ...] | None:
    """--graded-pr: 'uniform' or comma-separated g_1..g_c (validated as GAP's g)."""
    return resolve_graded_pr(text, max_grade, "--graded-pr")


def _job(args):
    run, qrels, settings = args
    return run.name, analyse_run(run, qrels, settings)


def run_instances(runs, qrels, settings: Settings, out: Path, config: dict, args) -> pd.DataFrame:
    """Analyse every run (one resumable chunk per run, written atomically with a record of its
    inputs and checksum); all instances. ``--resume`` reuses a chunk only when its run file,
    the qrels and the options are those it was made from and it is intact."""
    chunks = _outputs.prepare_chunks(out, config, args.resume)
    options = {k: v for k, v in config.items() if k not in ("qrels", "runs")}
    inputs = {r.name: _outputs.chunk_inputs(r.path, qrels.path, options) for r in runs}
    frames = {}
    if args.resume:
        for r in runs:
            frame = _outputs.read_chunk(chunks, r.name, inputs[r.name], f"run {r.name}")
            if frame is not None:
                frames[r.name] = frame
    todo = [r for r in runs if r.name not in frames]
    _cli.report_resumed([r.name for r in runs if r.name in frames], len(runs), "runs")
    jobs = [(r, qrels, settings) for r in todo]
    with _cli.progress(len(runs), "runs", args.no_progress) as bar:
        bar.update(len(runs) - len(todo))
        for run_name, frame in _cli.parallel_map(_job, jobs, args):  # local, process pool or Dask
            _outputs.write_chunk(chunks, run_name, frame, inputs[run_name])
            bar.update(1)
    for r in todo:  # as written, so that a resumed table equals a fresh one byte for byte
        frames[r.name] = pd.read_csv(chunks / f"{r.name}.csv", dtype=_outputs.CHUNK_DTYPES)
    return pd.concat([frames[r.name] for r in runs], ignore_index=True)
