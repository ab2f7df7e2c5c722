"""Shared command-line plumbing of the analysis entry points.

Common options (--out, --workers, --resume, --debug), exit handling (MaxEntError or a failed
write -> one line ``error: ...`` and exit 1), option checks shared by analysis.maxent and
analysis.gap_thresholds, atomic file writes and figures, progress bars. The output folder
itself (its lock, staged final outputs, resumable chunks) is :mod:`analysis._outputs`.
No mathematics lives here.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable

import pandas as pd

from maxent.cli._common import (HelpFormatter, add_inputs, add_measures, measure_names,  # noqa: F401
                                plain_text, resolve_inputs, split_names)   # one style for all commands
from maxent.cli.progress import EVERY, progress  # noqa: F401 (the commands' progress)
from maxent.errors import MaxEntError, MaxEntWarning, ParameterError

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = Path("out")  # git-ignored; the committed evidence lives under results/


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_FILE_MODE = _umask_mode()  # what open(path, "w") would give under the process umask


def _bundled_sample() -> Path:
    """``trec_runs/`` of the checkout, or where a non-editable install put it (data-files)."""
    installed = Path(sys.prefix) / "share" / "maxent-ir" / "trec_runs"
    return installed if not (ROOT / "trec_runs").is_dir() and installed.is_dir() else ROOT / "trec_runs"


BUNDLED_RUNS = _bundled_sample() / "runs"
BUNDLED_QRELS = _bundled_sample() / "qrels-rnd1.txt"


def md_table(header: list[str], rows) -> str:
    """A Markdown table: the header, its ``---`` rule and one line per row."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


NO_PROGRESS_HELP = f"no progress bar: a line on stderr every {EVERY:.0f} s instead (as without a terminal)"


def add_common(p: argparse.ArgumentParser, tool: str) -> None:
    p.add_argument("--out", type=Path, default=None,
                   help=f"output folder (default out/{tool}/<dataset>/)")
    p.add_argument("--dataset", default=None, help="dataset name used in the default output folder")
    p.add_argument("--workers", type=int, default=1, help="worker processes")
    p.add_argument("--resume", action="store_true", help="skip work whose results are already written")
    p.add_argument("--no-progress", action="store_true", help=NO_PROGRESS_HELP)
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    add_scheduler(p)


def add_data(p: argparse.ArgumentParser, qrels_help: str = "qrels file", ranks: bool = True) -> None:
    """The qrels and runs, positional (``QRELS RUN...``) or ``--qrels``/``--runs``, both
    defaulting to the bundled sample (:func:`resolve_data`); ``ranks``: and --score-precision."""
    add_inputs(p, f"{qrels_help} (default: the bundled TREC-COVID round-1 qrels; needs the runs)",
               "run files or folders (default: the bundled TREC-COVID round-1 runs; needs the qrels)")
    if not ranks:
        return
    p.add_argument("--score-precision", choices=("single", "double"), default="single",
                   help="how run scores are compared when ranking: single = as C floats (trec_eval "
                        "9.x, pytrec_eval, official TREC results; default), double = as C doubles "
                        "(trec_eval 10.0)")


def dataset_name(runs: list[str], explicit: str | None) -> str:
    """Name of the dataset: --dataset, else the runs folder's name (its parent's if 'runs')."""
    if explicit:
        return explicit
    p = Path(runs[0]).resolve()
    if p.is_file():
        p = p.parent
    if p.name == "runs":
        p = p.parent
    return p.name


def _write_atomically(path: Path, suffix: str, write: Callable[[int, str], None]) -> None:
    """``write(fd, tmp)`` to a temporary file in the same folder, then os.replace (never a partial file)."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
        write(fd, tmp)
        os.chmod(tmp, _FILE_MODE)  # mkstemp makes 0600; outputs follow the umask as open() would
        os.replace(tmp, path)
    except BaseException as e:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):  # a full disk or a file-size limit names the file it hit
            raise OSError(e.errno, e.strerror or str(e), str(path)) from e
        raise


def atomic_write_text(path: Path, text: str) -> None:
    def write(fd, tmp):
        with os.fdopen(fd, "w", newline="") as f:
            f.write(text)

    _write_atomically(path, ".tmp", write)


def atomic_write_csv(path: Path, frame: pd.DataFrame) -> None:
    atomic_write_text(path, frame.to_csv(index=False, float_format="%.10g", lineterminator="\n"))


def pyplot():
    """matplotlib.pyplot on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: Path, *, tight: bool = True) -> None:
    """Save a matplotlib figure atomically as PNG and close it; ``tight``: cropped to what is
    drawn (``bbox_inches="tight"``, which draws the figure once more to measure it)."""
    def write(fd, tmp):
        os.close(fd)
        fig.savefig(tmp, dpi=110, bbox_inches="tight" if tight else None, metadata={"Software": None})

    _write_atomically(path, ".png", write)
    pyplot().close(fig)


def resolve_data(args: argparse.Namespace) -> None:
    """Fill in --runs and --qrels: both given, or neither (the bundled sample); runs scored
    against another collection's qrels would give a table of NaN."""
    if not hasattr(args, "runs") or not hasattr(args, "qrels"):
        return
    resolve_inputs(args)
    if args.runs is not None and args.qrels is None:
        raise ParameterError("--qrels: required when --runs is given (the bundled qrels judge only "
                             "the bundled runs)")
    if args.qrels is not None and args.runs is None:
        raise ParameterError("--runs: required when --qrels is given (the bundled runs belong to the "
                             "bundled qrels)")
    if args.runs is None:
        args.runs, args.qrels = [str(BUNDLED_RUNS)], str(BUNDLED_QRELS)


# (option, least value)
_LIMITS = (("workers", 1), ("depth", 1), ("min_relevant", 0), ("bootstrap", 1), ("top_k", 1))


def check_limits(args: argparse.Namespace) -> None:
    """ParameterError naming the option for a value below its bound (``--workers 0``)."""
    for name, low in _LIMITS:
        value = getattr(args, name, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value < low:
            raise ParameterError(f"--{name.replace('_', '-')}: must be >= {low}, got {value}")


GRID_LIMIT = 10_000  # g settings of the simplex grid: each is a metric solved on every list


def simplex_size(c: int, step: float, name: str = "step") -> int:
    """m = 1 / step for a grid of g over the simplex of ``c`` grades; ParameterError (naming
    ``name``) unless the step divides 1 and the grid has at most :data:`GRID_LIMIT` points."""
    import math

    m = int(round(1.0 / step)) if isinstance(step, (int, float)) and 0 < step <= 1 else 0
    if c < 1 or m < 1 or abs(m * step - 1.0) > 1e-9:
        raise ParameterError(f"{name}: the step must divide 1 (e.g. 0.1, 0.25), got {step}")
    points = math.comb(m + c - 1, c - 1)
    if points > GRID_LIMIT:
        raise ParameterError(f"{name}: a step of {step:g} makes {points} g settings over the simplex of "
                             f"{c} grades, more than the limit of {GRID_LIMIT}; choose a larger step (e.g. 0.1)")
    return m


def parse_thresholds(text: str | None) -> tuple[int, ...] | None:
    """--threshold: comma-separated integers >= 1 (None: not given)."""
    if text is None:
        return None
    try:
        values = tuple(int(x) for x in text.split(","))
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise ParameterError(f"--threshold: expected integers >= 1, comma-separated, got {text!r}")
    return values


def parse_g_list(text: str | None) -> list[tuple[float, ...]] | None:
    """--bootstrap-g: g settings g1,g2,... separated by ';' (None: not given)."""
    if text is None:
        return None
    try:
        gs = [tuple(float(x) for x in part.split(",")) for part in text.split(";")]
    except ValueError:
        gs = []
    if not gs or not all(g and all(x >= 0 for x in g) for g in gs):
        raise ParameterError(f"--bootstrap-g: expected g settings g1,g2,... (numbers >= 0) separated "
                             f"by ';', got {text!r}")
    return gs


def check_options(args: argparse.Namespace) -> None:
    """The option values of analysis.maxent and analysis.gap_thresholds that can be checked
    before any data is read (each ParameterError names its option); the rest, against the
    qrels, is :func:`check_against_qrels`'s."""
    parse_thresholds(getattr(args, "threshold", None))
    parse_g_list(getattr(args, "bootstrap_g", None))
    if getattr(args, "step", None) is not None:
        simplex_size(2, args.step, "--step")   # at least two grades: the smallest grid there is


def check_against_qrels(args: argparse.Namespace, qrels, thresholds) -> None:
    """--threshold above the highest grade, a --min-relevant no topic reaches and --bootstrap-g
    of another number of grades: ParameterError naming the option."""
    import numpy as np

    from maxent.metrics import parse_measure

    top = int(qrels.max_grade)
    for t in parse_thresholds(getattr(args, "threshold", None)) or ():
        if t > top:
            raise ParameterError(f"--threshold: {t} is above the highest grade in the qrels ({top})")
    need = getattr(args, "min_relevant", 0) or 0
    if need > 0 and thresholds:
        t = max(thresholds)
        most = max((int(np.count_nonzero(np.asarray(qrels.grades[q]) >= t)) for q in qrels.topics), default=0)
        if most < need:
            raise ParameterError(f"--min-relevant: no topic has {need} relevant documents at threshold {t} "
                                 f"(the most is {most}), so no list could be kept")
    for g in parse_g_list(getattr(args, "bootstrap_g", None)) or ():
        if len(g) != top:
            raise ParameterError(f"--bootstrap-g: {','.join('%g' % x for x in g)} has {len(g)} values; "
                                 f"the qrels have {top} grades")
        try:
            parse_measure("GAP(g=" + ",".join("%.12g" % x for x in g) + ")")
        except MaxEntError as e:
            raise ParameterError(f"--bootstrap-g: {e}") from None


def report_depth_cut(runs, qrels, depth: int | None, option: str = "--depth") -> int:
    """Say on stderr how many (run, topic) lists are longer than ``depth`` and so are cut
    (trec_eval's -M); returns that number."""
    import numpy as np

    if depth is None:
        return 0
    known = qrels.topic_index
    cut = total = 0
    for run in runs:
        topics, sizes = np.unique(run.qid, return_counts=True)
        sizes = sizes[known.codes(topics) >= 0]
        cut += int(np.count_nonzero(sizes > depth))
        total += len(sizes)
    if cut:
        print(f"note: {cut} of {total} ranked lists are longer than {option} {depth} and are cut "
              f"there (trec_eval's -M; its default keeps every document)", file=sys.stderr)
    return cut


class _Stdout:
    """sys.stdout that keeps the first write error instead of raising it: a closed pipe or a
    full disk on stdout must not abort an analysis (nor end in a traceback at exit)."""

    def __init__(self, stream):
        self.stream, self.error = stream, None

    def write(self, text):
        if self.error is None:
            try:
                return self.stream.write(text)
            except OSError as e:
                self.error = e
        return len(text)

    def flush(self):
        if self.error is None:
            try:
                self.stream.flush()
            except OSError as e:
                self.error = e

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _open_std_fds() -> None:
    """/dev/null on a closed fd 0-2, so that no file this process opens becomes 'stdout'."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def _stdout_failed(error: OSError) -> int:
    """Exit code after a failed write to stdout (EPIPE: quiet 0; else one ``error:`` line, 1);
    stdout goes to /dev/null so that Python's last flush cannot fail again."""
    import errno

    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    if error.errno == errno.EPIPE:
        return 0
    print(f"error: stdout: cannot write ({error.strerror or error})", file=sys.stderr)
    return 1


def run_main(body: Callable[[argparse.Namespace], int], parser: argparse.ArgumentParser,
             argv: list[str] | None) -> int:
    """Parse arguments and run ``body``; MaxEntError or an unwritable output -> one ``error:``
    line on stderr, exit 1; library warnings -> one ``warning:`` line each. A closed stdout
    (or a reader that went away) -> a quiet exit; a full one -> ``error: stdout: ...``, 1."""
    _open_std_fds()
    args = parser.parse_args(argv)
    real = sys.stdout
    sys.stdout = guard = _Stdout(real if real is not None else open(os.devnull, "w"))
    try:
        code = _run_body(body, args)
        guard.flush()
    finally:
        sys.stdout = real
    if guard.error is not None:
        failed = _stdout_failed(guard.error)
        return code or failed
    return code


def _run_body(body, args) -> int:
    import warnings

    try:
        resolve_data(args)
        check_limits(args)
        check_options(args)
        with warnings.catch_warnings():
            warnings.simplefilter("default", MaxEntWarning)
            warnings.showwarning = _show_warning
            return body(args)
    except MaxEntError as e:
        if args.debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        if args.debug or e.filename is None:
            raise
        print(f"error: {e.filename}: cannot write ({e.strerror or e}); choose another --out",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: finished chunks are kept; re-run with --resume", file=sys.stderr)
        return 130


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Library warnings as one line on stderr (no source line, no file of the library)."""
    if issubclass(category, MaxEntWarning):
        print(f"warning: {message}", file=sys.stderr)
    else:
        import warnings

        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def describe(doc: str) -> str:
    """A module or class docstring as plain text for ``--help`` (no reStructuredText)."""
    return plain_text(doc)


def report_resumed(done: list[str], total: int, what: str) -> None:
    """Say on stderr what ``--resume`` skipped."""
    if done:
        names = ", ".join(done[:10]) + (" ..." if len(done) > 10 else "")
        print(f"resume: {len(done)} of {total} {what} already done, skipped: {names}", file=sys.stderr)


def report_unknown_topics(runs, qrels) -> None:
    """Say on stderr which run topics the qrels lack (their lines are not used), per run."""
    import numpy as np

    known = np.array(sorted(t.encode() for t in qrels.topics)) if qrels.topics else np.zeros(0, "S1")
    for run in runs:
        topics = np.unique(run.qid)
        unknown = topics[~np.isin(topics, known)]
        if len(unknown):
            names = [q.decode("utf-8", "replace") for q in unknown]
            print(f"warning: run {run.name}: {len(names)} topic(s) not in the qrels, ignored: "
                  + ", ".join(names[:10]) + (" ..." if len(names) > 10 else ""), file=sys.stderr)


# Results come back in job order, so outputs are byte-identical whichever executor ran them.
DASK_HINT = 'pip install -e ".[distributed]"'


def add_scheduler(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the work units on a Dask cluster: a scheduler address (tcp://host:8786) "
                        "or 'local' for a LocalCluster of --workers processes (needs the 'distributed' "
                        f"extra: {DASK_HINT})")


def _dask_client(address: str, workers: int):
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise MaxEntError(f"--scheduler needs dask.distributed, which is not installed; {DASK_HINT} "
                          "(or drop --scheduler: --workers runs a local process pool)") from None
    if address == "local":
        import dask

        # the nannies' MALLOC_TRIM_THRESHOLD_=65536 makes NumPy-heavy work 2-3x slower
        with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
            try:
                cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=":0")
            except Exception as e:  # noqa: BLE001 - any start-up failure becomes one error line
                raise MaxEntError(f"--scheduler local: could not start a Dask LocalCluster ({e})") from None
        return Client(cluster), cluster
    try:
        return Client(address, timeout="30s"), None
    except (OSError, TimeoutError) as e:
        raise MaxEntError(f"--scheduler {address}: cannot reach the Dask scheduler ({e})") from None


def parallel_map(fn: Callable, jobs: list, args: argparse.Namespace):
    """Yield ``fn(job)`` for every job, in job order: in this process, a process pool
    (``--workers N``) or on a Dask cluster (``--scheduler``); ``fn`` and the jobs must pickle."""
    scheduler = getattr(args, "scheduler", None)
    workers = getattr(args, "workers", 1)
    if scheduler:
        client, cluster = _dask_client(scheduler, workers)
        try:
            data = client.scatter(jobs, hash=False)      # job data straight to the workers, not in the graph
            futures = client.map(fn, data, pure=False)
            for f in futures:
                yield f.result()
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    elif workers > 1 and len(jobs) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(workers) as pool:
            yield from pool.map(fn, jobs)
    else:
        for job in jobs:
            yield fn(job)
