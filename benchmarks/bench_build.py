"""Wall and CPU time of building and installing the package itself, ``pip install --no-deps .``
into a fresh venv (build isolation: setuptools and Cython from pip's cache, then the TREC reader
and the engine's three builds), alternating with another checkout (``--against``).

``--readme`` times README's whole install instead, ``pip install -e ".[test]"`` in a fresh clone of
the checkout's HEAD with an empty pip cache, split into pip's phases (download, build, install)
read from its verbose log. ``--evidence``: results/benchmarks/install/ (``readme/`` with ``--readme``).

    python benchmarks/bench_build.py [--runs 2] [--readme] [--against /tmp/start] [--evidence]
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))     # the tests import this file too
from _common import RESULTS, alternating, parser, write_evidence  # noqa: E402


def pip_phases(log: list[tuple[float, str]], wall: float) -> dict[str, float]:
    """Seconds of pip's phases from its ``-v`` log (lines with the time each was read): until
    "Building wheels for collected packages", until "Installing collected packages", until
    ``wall``. Only unindented lines count: pip's build environments print the same indented."""
    def first(prefix):
        return next((t for t, line in log if line.startswith(prefix)), None)

    install = first("Installing collected packages")
    if install is None:
        raise ValueError("pip's log has no 'Installing collected packages' line")
    build = first("Building wheels for collected packages")
    build = install if build is None else build
    return dict(download_s=build, build_s=install - build, install_s=wall - install)


def build_once(where: Path, readme: bool = False) -> tuple[float, float, dict]:
    """(wall, children's CPU) seconds of the install of ``where`` into a new venv, and with
    ``readme`` its phases."""
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
    ap = parser(__doc__, against=False)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--readme", action="store_true", help="README's install, dependencies included")
    args = ap.parse_args(argv)
    started = time.time()
    rows = []
    for k, label, where in alternating(args.runs, args.against):
        wall, cpu, phases = build_once(where, args.readme)
        load = os.getloadavg()[0]
        split = "".join(f", {name[:-2]} {s:.1f} s" for name, s in phases.items())
        print(f"{label} ({where}) run {k}: {wall:.1f} s wall{split}, {cpu:.1f} s CPU "
              f"(load average {load:.1f})", file=sys.stderr, flush=True)
        rows.append(dict(checkout=label, path=str(where), run=k, seconds=wall, **phases,
                         cpu_seconds=cpu, load_average=load))
    if args.evidence:
        folder = RESULTS / "install" / ("readme" if args.readme else "")
        name = "install.csv" if args.readme else "build.csv"
        write_evidence(folder, name, rows, argv, __file__, started, extra={"against": args.against})
    return 0


if __name__ == "__main__":
    sys.exit(main())
