"""Provenance of committed evidence: every number the documentation reports comes from a small
file under ``results/<analysis>/<dataset>/`` beside a ``PROVENANCE.json`` that says how it was made.

``PROVENANCE.json`` holds the exact command, the commit (and whether the work tree had uncommitted
changes, other than in the folder being written), the UTC date, the wall time and the machine.
:func:`write_provenance` writes it atomically.
"""
from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
"""The one tracked tree of evidence."""


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def machine() -> dict:
    """CPU model, logical cores, memory and platform of this machine."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = round(int(line.split()[1]) / 2**20, 1)
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": mem,
            "platform": platform.platform(), "python": platform.python_version()}


def command_line(argv: list[str] | None = None, module: str | None = None, script: str | None = None) -> str:
    """The command as a user would type it: ``python -m MODULE ARGS`` when ``module`` is given,
    ``python SCRIPT ARGS`` when ``script`` is (a file of the project, e.g. a benchmark's
    ``__file__``, written relative to the project root). ``argv``: the command line, program
    first (default ``sys.argv``)."""
    argv = list(sys.argv if argv is None else argv)
    if module is not None:
        return shlex.join(["python", "-m", module, *argv[1:]])
    if script is not None:
        return shlex.join(["python", Path(os.path.relpath(Path(script).resolve(), ROOT)).as_posix(), *argv[1:]])
    return shlex.join(["python", *argv])


def write_provenance(folder: str | Path, command: str, started: float, *, extra: dict | None = None) -> Path:
    """Write ``folder/PROVENANCE.json`` for files just written there.

    ``command`` is the exact command that made them (see :func:`command_line`); ``started`` is the
    ``time.time()`` at which the work began, so the wall time covers the whole command.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    # the files just written in the folder are the evidence itself, not a change to what made it
    spec = ["--", "."]
    try:
        spec.append(f":(exclude,literal){folder.resolve().relative_to(ROOT).as_posix()}")
    except ValueError:              # a folder outside the project
        pass
    status = _git("status", "--porcelain", "--untracked-files=no", *spec)
    record = {
        "command": command,
        "commit": _git("rev-parse", "HEAD"),
        "uncommitted_changes": bool(status) if status is not None else None,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "wall_time_s": round(time.time() - started, 2),
        "machine": machine(),
    }
    if extra:
        record.update(extra)
    path = folder / "PROVENANCE.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n")
    os.replace(tmp, path)
    return path


def write_rows(folder: str | Path, name: str, rows: list[dict], command: str, started: float, *,
               extra: dict | None = None, float_format: str = "%.4g", append: bool = False) -> Path:
    """Write ``rows`` as ``folder/name`` (CSV, four significant digits unless ``float_format``
    says otherwise, atomically; ``append``: after the rows the file already holds) and its
    ``PROVENANCE.json`` (:func:`write_provenance`): a benchmark's evidence in one call."""
    import pandas as pd

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    tmp = path.with_name(path.name + ".tmp")
    frame = pd.DataFrame(rows)
    if append and path.exists():
        frame = pd.concat([pd.read_csv(path), frame], ignore_index=True)
    frame.to_csv(tmp, index=False, float_format=float_format)
    os.replace(tmp, path)
    write_provenance(folder, command, started, extra=extra)
    return path
