"""The output folder of an analysis: held by one process at a time (a lock), final outputs
staged and renamed into place only when complete, and per-run result chunks that ``--resume``
reuses only when their record proves they were made from the same inputs and are intact.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd

from analysis._cli import atomic_write_text
from maxent.errors import MaxEntError


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
            for pattern in ("*.csv", "*.json"):
                for f in chunks.glob(pattern):
                    f.unlink()
    chunks.mkdir(parents=True, exist_ok=True)
    atomic_write_text(stamp, text)
    return chunks


_DIGESTS: dict[str, tuple[tuple, str]] = {}  # path -> (its size, mtime, inode; sha256 of its bytes)


def file_digest(path) -> str:
    """sha256 of a file's bytes, read in 1 MiB blocks; cached per path for this process (read
    again only if the file's size, mtime or inode changed)."""
    key = os.path.abspath(path)
    st = os.stat(key)
    sig = (st.st_size, st.st_mtime_ns, st.st_ino)
    if key not in _DIGESTS or _DIGESTS[key][0] != sig:
        h = hashlib.sha256()
        with open(key, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _DIGESTS[key] = (sig, h.hexdigest())
    return _DIGESTS[key][1]


def chunk_inputs(run_path, qrels_path, options: dict) -> dict:
    """What one run's chunk is made from: its run file, the qrels and the options (by hash)."""
    return {"run": file_digest(run_path) if run_path else "",
            "qrels": file_digest(qrels_path) if qrels_path else "",
            "options": hashlib.sha256(json.dumps(options, sort_keys=True, default=str).encode()).hexdigest()}


_INPUT_NAMES = {"run": "the run file", "qrels": "the qrels", "data": "the input files", "options": "the options"}
CHUNK_DTYPES = {"topic": str, "count": str}


def write_chunk(chunks: Path, name: str, frame: pd.DataFrame, inputs: dict) -> None:
    """``name.csv`` and then its record ``name.json`` (inputs, checksum, columns), each atomically;
    the old record goes first, so a chunk is never taken for one of other inputs."""
    record = chunks / f"{name}.json"
    text = frame.to_csv(index=False, float_format="%.10g", lineterminator="\n")
    with contextlib.suppress(FileNotFoundError):
        record.unlink()
    atomic_write_text(chunks / f"{name}.csv", text)
    atomic_write_text(record, json.dumps({"inputs": inputs, "sha256": hashlib.sha256(text.encode()).hexdigest(),
                                          "columns": list(frame.columns)}, sort_keys=True, indent=1) + "\n")


def read_chunk(chunks: Path, name: str, inputs: dict, label: str) -> pd.DataFrame | None:
    """The chunk ``name`` if it was made from ``inputs`` and is intact, else None: absent
    silently, made from other inputs with a ``resume:`` line, damaged with a ``warning:`` line
    (``label`` names it there)."""
    path, record = chunks / f"{name}.csv", chunks / f"{name}.json"
    if not path.exists():
        return None
    try:
        meta = json.loads(record.read_text())
        made_from, checksum, columns = meta["inputs"], meta["sha256"], meta["columns"]
    except (OSError, ValueError, KeyError, TypeError):
        return _damaged(path, label, f"no readable record {record.name}")
    changed = [_INPUT_NAMES.get(k, k) for k in inputs if made_from.get(k) != inputs[k]]
    if changed:
        print(f"resume: {label}: {' and '.join(changed)} changed since its chunk was written; recomputed",
              file=sys.stderr)
        return None
    try:
        data = path.read_bytes()
    except OSError as e:
        return _damaged(path, label, e.strerror or str(e))
    if hashlib.sha256(data).hexdigest() != checksum:
        return _damaged(path, label, "its checksum does not match")
    try:
        frame = pd.read_csv(io.BytesIO(data), dtype=CHUNK_DTYPES)
    except Exception as e:  # noqa: BLE001 - any unreadable chunk is recomputed, never a traceback
        return _damaged(path, label, f"unreadable: {type(e).__name__}")
    if list(frame.columns) != list(columns):
        return _damaged(path, label, "other columns than recorded")
    return frame


def _damaged(path: Path, label: str, why: str) -> None:
    print(f"warning: {label}: chunk {path} is damaged ({why}); recomputed", file=sys.stderr)
    return None


@contextlib.contextmanager
def own_output(out: Path, outputs: tuple[str, ...], config: dict | None = None, resume: bool = False):
    """Hold ``out`` for this process and clear the outputs an earlier run left there.

    An exclusive ``flock`` on ``out/.lock`` (released when the process ends, even by SIGKILL)
    makes a second analysis on the same folder fail at once instead of mixing results; the
    file is removed on leaving, while still held (a process that opened it before then finds,
    once it holds the lock, that the path is gone or another file, and locks anew).
    ``outputs`` (glob patterns) are deleted first so that none outlives the settings that made
    it; with ``config``, only if config.json holds other settings (or none): the outputs of
    these settings stay until :func:`staged_outputs` replaces them. With ``config`` and
    ``resume``, other settings in config.json are refused before anything is deleted.
    """
    import errno

    try:
        import fcntl
    except ImportError:  # not POSIX: no advisory locks (outputs are still cleared)
        fcntl = None
    out = Path(out)
    lock = out / ".lock"
    while True:
        fd = _open_lock(out, lock)
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
        try:  # a holder that just finished removed the file we locked: lock the new one
            mine = os.path.samestat(os.fstat(fd), os.stat(lock))
        except FileNotFoundError:
            mine = False
        if mine:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        stale = True
        if config is not None:
            text = _check_config(out, config, resume)
            with contextlib.suppress(OSError):
                stale = (out / "config.json").read_text() != text
        for pattern in outputs if stale else ():
            for f in out.glob(pattern):
                if f.is_file():
                    f.unlink()
        yield out
    finally:
        with contextlib.suppress(OSError):
            lock.unlink()  # while still held: a waiter that opened it sees it is gone and retries
        os.close(fd)


def _open_lock(out: Path, lock: Path) -> int:
    try:
        out.mkdir(parents=True, exist_ok=True)
        return os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except FileExistsError:
        raise MaxEntError(f"--out {out}: a file of that name exists; --out names a folder") from None
    except NotADirectoryError:
        raise MaxEntError(f"--out {out}: a part of the path is a file, not a folder") from None
    except OSError as e:
        raise MaxEntError(f"--out {out}: cannot create the output folder there "
                          f"({e.strerror or e})") from None


STAGING = ".staging-"


@contextlib.contextmanager
def staged_outputs(out: Path, outputs: tuple[str, ...]):
    """A temporary folder inside ``out`` for the final outputs; only when the block ends
    without an error are they renamed into ``out`` (and earlier outputs matching ``outputs``
    that this run did not make removed). A failed write leaves the previous result as it was;
    its error names the file in ``out``. Call it holding :func:`own_output`."""
    out = Path(out)
    for old in out.glob(STAGING + "*"):   # left by a killed run
        shutil.rmtree(old, ignore_errors=True)
    try:
        stage = Path(tempfile.mkdtemp(dir=out, prefix=STAGING))
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(out)) from e
    try:
        yield stage
        made = sorted(p.name for p in stage.iterdir())
        for name in made:
            os.replace(stage / name, out / name)
        for pattern in outputs:
            for f in out.glob(pattern):
                if f.is_file() and f.name not in made:
                    f.unlink()
    except OSError as e:
        if e.filename is not None and Path(e.filename).parent == stage:
            raise OSError(e.errno, e.strerror, str(out / Path(e.filename).name)) from e
        raise
    finally:
        shutil.rmtree(stage, ignore_errors=True)
