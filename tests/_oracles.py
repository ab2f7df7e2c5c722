"""Independent oracles shared by several test files."""
from __future__ import annotations

import numpy as np

from maxent.ranked import RankedLists


def brute_force_swap_deltas(m, grades, counts):
    """Delta[a, b] = value(list with a, b swapped) - value(list), all pairs in one batch.

    The oracle for every swap delta: swap two documents, recompute with the metric's ``value``.
    """
    grades = np.asarray(grades)
    N = len(grades)
    a, b = np.meshgrid(np.arange(N), np.arange(N), indexing="ij")
    batch = np.tile(grades, (N * N + 1, 1))
    rows = np.arange(N * N)
    batch[rows, a.ravel()] = grades[b.ravel()]
    batch[rows, b.ravel()] = grades[a.ravel()]
    lists = RankedLists.from_grades(batch, np.tile(counts, (N * N + 1, 1)), lengths=np.full(N * N + 1, N))
    v = m.value(lists)
    return (v[:-1] - v[-1]).reshape(N, N)
