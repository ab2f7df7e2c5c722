"""Shared command-line plumbing of the analysis entry points.

Common options (--out, --workers, --resume, --debug), exit handling (MaxEntError -> one line
``error: ...`` and exit 1), atomic file writes, chunked resumable results, progress bars.
No mathematics lives here.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable

import pandas as pd

from maxent.cli._common import HelpFormatter, plain_text  # one --help style for every command
from maxent.cli.progress import EVERY, progress
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


def split_names(text: str) -> list[str]:
    """Split a comma-separated list of measure names, keeping commas inside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


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


def add_data(p: argparse.ArgumentParser, qrels_help: str = "qrels file") -> None:
    """--runs and --qrels, both defaulting to the bundled sample (:func:`resolve_data`)."""
    p.add_argument("--runs", nargs="+", default=None,
                   help="run files or folders (default: the bundled TREC-COVID round-1 runs; "
                        "needs --qrels)")
    p.add_argument("--qrels", default=None,
                   help=f"{qrels_help} (default: the bundled TREC-COVID round-1 qrels; needs --runs)")
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
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    try:
        write(fd, tmp)
        os.chmod(tmp, _FILE_MODE)  # mkstemp makes 0600; outputs follow the umask as open() would
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
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


def config_key(config: dict) -> str:
    """A short stable hash of the settings that determine the chunk results."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _check_config(out: Path, config: dict, resume: bool) -> str:
    """config.json's text for ``config``; with --resume, other settings there are refused."""
    stamp = out / "config.json"
    text = json.dumps(config, sort_keys=True, indent=1, default=str)
    if resume and stamp.exists() and stamp.read_text() != text:
        raise MaxEntError(f"{stamp}: results there were made with other settings; "
                          "run without --resume to start again")
    return text


def prepare_chunks(out: Path, config: dict, resume: bool) -> Path:
    """The chunk folder for ``config``; without --resume, earlier chunks are cleared. With
    --resume, chunks of other settings are refused (they would mix). Temporary files a killed
    process left behind are removed either way."""
    chunks = out / "chunks"
    stamp = out / "config.json"
    text = _check_config(out, config, resume)
    if chunks.exists():
        for f in chunks.glob(".*.tmp"):
            f.unlink()
        if not resume:
            for f in chunks.glob("*.csv"):
                f.unlink()
    chunks.mkdir(parents=True, exist_ok=True)
    atomic_write_text(stamp, text)
    return chunks


def resolve_data(args: argparse.Namespace) -> None:
    """Fill in --runs and --qrels: both given, or neither (the bundled sample); runs scored
    against another collection's qrels would give a table of NaN."""
    if not hasattr(args, "runs") or not hasattr(args, "qrels"):
        return
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


def run_main(body: Callable[[argparse.Namespace], int], parser: argparse.ArgumentParser,
             argv: list[str] | None) -> int:
    """Parse arguments and run ``body``; MaxEntError or an unwritable output -> one ``error:``
    line on stderr, exit 1; library warnings -> one ``warning:`` line each."""
    import warnings

    args = parser.parse_args(argv)
    try:
        resolve_data(args)
        check_limits(args)
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


@contextlib.contextmanager
def own_output(out: Path, outputs: tuple[str, ...], config: dict | None = None, resume: bool = False):
    """Hold ``out`` for this process and clear the outputs an earlier run left there.

    An exclusive ``flock`` on ``out/.lock`` (released when the process ends, even by SIGKILL)
    makes a second analysis on the same folder fail at once instead of mixing results.
    ``outputs`` (glob patterns) are deleted first so that none outlives the settings that made
    it; with ``config`` and ``resume``, other settings in config.json are refused before that.
    """
    import errno

    try:
        import fcntl
    except ImportError:  # not POSIX: no advisory locks (outputs are still cleared)
        fcntl = None
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(out / ".lock", os.O_RDWR | os.O_CREAT, 0o666)
    except FileExistsError:
        raise MaxEntError(f"--out {out}: a file of that name exists; --out names a folder") from None
    except NotADirectoryError:
        raise MaxEntError(f"--out {out}: a part of the path is a file, not a folder") from None
    except OSError as e:
        raise MaxEntError(f"--out {out}: cannot create the output folder there "
                          f"({e.strerror or e})") from None
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        if e.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            os.close(fd)
            raise MaxEntError(f"{out}: cannot lock the output folder ({e.strerror}); "
                              "choose an --out on a local file system") from None
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise MaxEntError(f"{out}: output folder in use by another analysis (pid {holder}); "
                          "wait for it to finish or choose another --out") from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        if config is not None:
            _check_config(out, config, resume)
        for pattern in outputs:
            for f in out.glob(pattern):
                if f.is_file():
                    f.unlink()
        yield out
    finally:
        os.close(fd)  # releases the lock; the file stays (removing it would race a waiter)


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
