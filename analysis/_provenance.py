"""Provenance of committed evidence: every file under ``results/<analysis>/<dataset>/`` sits
beside a ``PROVENANCE.json`` with the exact command, the commit (and whether the work tree had
uncommitted changes outside that folder), the UTC date, the wall time and the machine.
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
RESULTS = ROOT / "results"  # the one tracked tree of evidence


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _proc(path: str, key: str) -> str | None:
    """The value of the first ``key: value`` line of a /proc file (None: none, or no such file)."""
    try:
        return next((line.split(":", 1)[1].strip() for line in Path(path).read_text().splitlines()
                     if line.startswith(key)), None)
    except OSError:
        return None


def machine() -> dict:
    """CPU model, logical cores, memory and platform of this machine."""
    cpu = _proc("/proc/cpuinfo", "model name")
    cpu = platform.processor() or platform.machine() if cpu is None else cpu
    mem = _proc("/proc/meminfo", "MemTotal")
    mem = None if mem is None else round(int(mem.split()[0]) / 2**20, 1)
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": mem,
            "platform": platform.platform(), "python": platform.python_version()}


def command_line(argv: list[str] | None = None, module: str | None = None, script: str | None = None) -> str:
    """The command as a user would type it: ``python -m MODULE ARGS``, or ``python SCRIPT ARGS``
    with ``script`` relative to the project root; ``argv`` defaults to ``sys.argv``."""
    argv = list(sys.argv if argv is None else argv)
    if module is not None:
        return shlex.join(["python", "-m", module, *argv[1:]])
    if script is not None:
        return shlex.join(["python", Path(os.path.relpath(Path(script).resolve(), ROOT)).as_posix(), *argv[1:]])
    return shlex.join(["python", *argv])


def write_provenance(folder: str | Path, command: str, started: float, *, extra: dict | None = None) -> Path:
    """Write ``folder/PROVENANCE.json`` for files just written there by ``command``, which
    began at ``time.time()`` = ``started``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
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
    """Write ``rows`` atomically as CSV ``folder/name`` (``append``: after the rows it holds) and
    its ``PROVENANCE.json``: a benchmark's evidence in one call."""
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
