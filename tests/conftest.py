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
