"""A non-editable install into a fresh virtual environment: the C extensions build (Cython and
a C compiler at install time), and the main job runs from outside the checkout on the bundled
sample. Slow (a venv, dependencies, a build): ``pytest -m slow tests/project/test_install.py``."""
from __future__ import annotations

import os
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_non_editable_install_runs_the_main_job_outside_the_checkout(tmp_path):
    env_dir = tmp_path / "venv"
    # the environment's own site-packages are visible (numpy, pandas, ... need no download);
    # maxent-ir itself is installed into the new environment from the checkout
    venv.EnvBuilder(with_pip=True, system_site_packages=True).create(env_dir)
    py = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    build = subprocess.run([str(py), "-m", "pip", "install", "-q", str(ROOT)], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=1800)
    assert build.returncode == 0, build.stderr[-3000:]
    work = tmp_path / "elsewhere"
    work.mkdir()
    run = subprocess.run([str(py), "-m", "analysis.maxent", "--metrics", "AP,nDCG", "--no-progress"],
                         cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    located = subprocess.run([str(py), "-c", "import maxent.solver._engine as e, analysis._cli as c; "
                              "print(e.__file__); print(c.BUNDLED_RUNS)"],
                             cwd=work, env=env, capture_output=True, text=True, timeout=120)
    engine_file, runs = located.stdout.split()
    assert not engine_file.startswith(str(ROOT)) and not runs.startswith(str(ROOT))
    assert any((work / "out").rglob("instances.csv"))


@pytest.mark.slow
def test_install_without_a_c_compiler_says_what_to_install(tmp_path):
    """No C compiler (CC names a missing program): the install fails with one message naming
    the packages to install, before any compilation."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["CC"] = str(tmp_path / "no-such-cc")
    res = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "--no-deps", str(ROOT)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
    assert res.returncode != 0
    assert "maxent-ir needs a C compiler to build from source" in res.stdout + res.stderr
    assert "apt-get install build-essential python3-dev" in res.stdout + res.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler to build the wheel")
@pytest.mark.skipif(shutil.which("auditwheel") is None, reason="auditwheel not installed (the test extra has it on Linux)")
def test_wheel_installs_and_runs_without_a_compiler(tmp_path):
    """``pip wheel`` and ``auditwheel repair`` make a manylinux wheel; in a fresh environment whose
    PATH has no C compiler it installs (binary dependencies only) and the main job writes the
    same tables as this source install."""
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    dist, house = tmp_path / "dist", tmp_path / "wheelhouse"
    steps = [lambda: [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
             lambda: ["auditwheel", "repair", "-w", str(house), *map(str, dist.glob("*.whl"))]]
    for step in steps:   # the second names the wheel the first made
        done = subprocess.run(step(), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
        assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = house.glob("maxent_ir-*manylinux*.whl")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bare = {**env, "PATH": str(env_dir / "bin")}          # no cc, gcc or anything else
    assert shutil.which("cc", path=bare["PATH"]) is None and shutil.which("gcc", path=bare["PATH"]) is None
    py = str(env_dir / "bin" / "python")
    done = subprocess.run([py, "-m", "pip", "install", "-q", "--only-binary", ":all:", str(wheel)], cwd=tmp_path,
                          env=bare, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    args = ["-m", "analysis.maxent", "--metrics", "AP,nDCG", "--no-progress", "--out"]
    work = tmp_path / "elsewhere"
    work.mkdir()
    wheel_run = subprocess.run([py, *args, str(work / "wheel")], cwd=work, env=bare, capture_output=True, text=True,
                               timeout=900)
    assert wheel_run.returncode == 0, wheel_run.stderr[-3000:]
    source_run = subprocess.run([sys.executable, *args, str(tmp_path / "source")], cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=900)
    assert source_run.returncode == 0, source_run.stderr[-3000:]
    for name in ("instances.csv", "summary.csv"):
        assert (work / "wheel" / name).read_bytes() == (tmp_path / "source" / name).read_bytes(), name
