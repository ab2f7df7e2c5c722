"""Wall time of building and installing the package itself, ``pip install --no-deps .`` into a
fresh virtual environment, as README's install does it (build isolation: pip fetches setuptools
and Cython, from its cache after the first run; then Cython and the C compiler build the TREC
reader and the three builds of the solver's engine). The dependencies are not installed: this
is the part of the install the project's own build decides (the target: the whole
``pip install -e ".[test]"`` in under 2 minutes on a 2-core machine).

``--readme`` times README's install instead, dependencies included, as a new user meets it: a
fresh clone of the checkout's committed HEAD, a new venv, ``pip install -e ".[test]"`` with an
empty pip cache (so the time is comparable between checkouts on one machine, not between
machines: pip's wheels may come from a local index). Its rows also split the time into pip's
three phases, read from its verbose log: resolving and downloading, building the wheels (this
package's, and those of dependencies published only as source), and installing every package
(unpacking and byte-compiling).

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


def pip_phases(log: list[tuple[float, str]], wall: float) -> dict[str, float]:
    """Seconds of pip's phases from its ``-v`` log, each line with the time it was read:
    resolving and downloading until "Building wheels for collected packages", building them until
    "Installing collected packages", installing until the end (``wall``). Only unindented lines
    count: pip's build environments print the same words indented."""
    def first(prefix):
        return next((t for t, line in log if line.startswith(prefix)), None)

    install = first("Installing collected packages")
    if install is None:
        raise ValueError("pip's log has no 'Installing collected packages' line")
    build = first("Building wheels for collected packages")
    build = install if build is None else build
    return dict(download_s=build, build_s=install - build, install_s=wall - install)


def build_once(where: Path, readme: bool = False) -> tuple[float, float, dict]:
    """(wall, CPU of the child processes) seconds of ``pip install --no-deps`` of ``where`` into
    a new venv, and no phases ({}); ``readme``: of ``pip install -e ".[test]"`` in a fresh clone
    of it, with an empty pip cache, and its phases (:func:`pip_phases`)."""
    with tempfile.TemporaryDirectory() as tmp:
        env_dir = Path(tmp) / "venv"
        venv.EnvBuilder(with_pip=True).create(env_dir)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-v" if readme else "-q"]
        if readme:
            subprocess.run(["git", "clone", "-q", str(where), f"{tmp}/project"], check=True)
            cmd, cwd = [*pip, "-e", ".[test]"], f"{tmp}/project"
            env["XDG_CACHE_HOME"] = f"{tmp}/cache"
        else:
            cmd, cwd = [*pip, "--no-deps", str(where)], tmp
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        log = []
        with subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) as proc:
            for line in proc.stdout:
                log.append((time.perf_counter() - t0, line))
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        tail = "".join(line for _, line in log)[-3000:]
        raise SystemExit(f"the build of {where} failed:\n{tail}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, pip_phases(log, wall) if readme else {}


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
            wall, cpu, phases = build_once(where, args.readme)
            load = os.getloadavg()[0]
            split = "".join(f", {name[:-2]} {s:.1f} s" for name, s in phases.items())
            print(f"{label} ({where}) run {k + 1}: {wall:.1f} s wall{split}, {cpu:.1f} s CPU "
                  f"(load average {load:.1f})", file=sys.stderr, flush=True)
            rows.append(dict(checkout=label, path=str(where), run=k + 1, seconds=wall, **phases,
                             cpu_seconds=cpu, load_average=load))
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
