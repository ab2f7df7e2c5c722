"""Shared fixtures: the real data next to the repository, seeded generators, toy lists."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
TEST_DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def shared_data() -> Path:
    """``../shared/data`` (real runs, qrels and golden outputs); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}: these tests need the real "
                    "TREC files next to the repository (see ../shared/data/README.md)")
    return SHARED_DATA


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator (fresh per test, so tests do not depend on their order)."""
    return np.random.default_rng(20240607)


@pytest.fixture(scope="module")
def test_data() -> Path:
    """``tests/data``: small files written for these tests."""
    return TEST_DATA


TREC_EVAL_SOURCES = REPO.parent / "shared" / "tools" / "trec_eval"


@pytest.fixture(scope="session")
def trec_eval(tmp_path_factory) -> dict[str, Path]:
    """NIST's trec_eval built from source once per test run, the live oracle:
    ``{"9.0.7": binary, "10.0": binary}``. Skips when the sources or a C compiler are absent."""
    import shutil
    import subprocess

    script = TREC_EVAL_SOURCES / "build.sh"
    if not script.is_file():
        pytest.skip(f"trec_eval sources not found at {TREC_EVAL_SOURCES}")
    if shutil.which("make") is None or shutil.which("cc") is None:
        pytest.skip("building trec_eval needs make and a C compiler")
    dest = tmp_path_factory.mktemp("trec_eval")
    done = subprocess.run(["bash", str(script), str(dest)], capture_output=True, text=True)
    if done.returncode:
        pytest.fail(f"building trec_eval failed: {done.stderr[-2000:]}")
    return {v: dest / f"trec_eval-{v}" / "trec_eval" for v in ("9.0.7", "10.0")}
