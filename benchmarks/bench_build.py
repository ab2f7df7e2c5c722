"""Wall time of building and installing the package itself, ``pip install --no-deps .`` into a
fresh virtual environment, as README's install does it (build isolation: pip fetches setuptools
and Cython, from its cache after the first run; then Cython and the C compiler build the TREC
reader and the three builds of the solver's engine). The dependencies are not installed: this
is the part of the install the project's own build decides (the target: the whole
``pip install -e ".[test]"`` in under 2 minutes on a 2-core machine).

``--readme`` times README's install instead, dependencies included, as a new user meets it: a
fresh clone of the checkout's committed HEAD, a new venv, ``pip install -e ".[test]"`` with an
empty pip cache (so the time is comparable between checkouts on one machine, not between
machines: pip's wheels may come from a local index).

``--against DIR`` alternates each run with another checkout (e.g. an earlier commit's
``git worktree``). ``--evidence`` writes the rows to ``results/benchmarks/install/build.csv``
(``install/readme/install.csv`` with ``--readme``) with its ``PROVENANCE.json``.

    python benchmarks/bench_build.py [--runs 2] [--readme] [--against /tmp/start] [--evidence]
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build_once(where: Path, readme: bool = False) -> tuple[float, float]:
    """(wall, CPU of the child processes) seconds of ``pip install --no-deps`` of ``where`` into
    a new venv; ``readme``: of ``pip install -e ".[test]"`` in a fresh clone of it, with an empty
    pip cache."""
    with tempfile.TemporaryDirectory() as tmp:
        env_dir = Path(tmp) / "venv"
        venv.EnvBuilder(with_pip=True).create(env_dir)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q"]
        if readme:
            subprocess.run(["git", "clone", "-q", str(where), f"{tmp}/project"], check=True)
            cmd, cwd = [*pip, "-e", ".[test]"], f"{tmp}/project"
            env["XDG_CACHE_HOME"] = f"{tmp}/cache"
        else:
            cmd, cwd = [*pip, "--no-deps", str(where)], tmp
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode:
        raise SystemExit(f"the build of {where} failed:\n{res.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--evidence", action="store_true")
    ap.add_argument("--against", default=None, help="another checkout, built alternately")
    ap.add_argument("--readme", action="store_true", help="README's install, dependencies included")
    args = ap.parse_args(argv)
    started = time.time()
    checkouts = [("this", ROOT)] + ([("against", Path(args.against).resolve())] if args.against else [])
    rows = []
    for k in range(args.runs):
        for label, where in checkouts:
            wall, cpu = build_once(where, args.readme)
            load = os.getloadavg()[0]
            print(f"{label} ({where}) run {k + 1}: {wall:.1f} s wall, {cpu:.1f} s CPU "
                  f"(load average {load:.1f})", file=sys.stderr, flush=True)
            rows.append(dict(checkout=label, path=str(where), run=k + 1, seconds=wall, cpu_seconds=cpu,
                             load_average=load))
    if args.evidence:
        sys.path.insert(0, str(ROOT))
        from analysis._provenance import command_line, write_rows

        folder = ROOT / "results" / "benchmarks" / "install"
        folder, name = (folder / "readme", "install.csv") if args.readme else (folder, "build.csv")
        write_rows(folder, name, rows,
                   command_line(None if argv is None else ["", *argv], script=__file__),
                   started, extra={"against": args.against})
    return 0


if __name__ == "__main__":
    sys.exit(main())
