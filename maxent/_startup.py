"""Start-up of the command lines that only evaluate (``python -m maxent.evaluate``).

Imported first by ``maxent/__init__.py``, before numpy. When the process is ``python -m
maxent.evaluate ...`` (runpy is still locating the module: ``sys.argv[0] == "-m"``, and the
interpreter's own ``-m`` names it in ``sys.orig_argv``), OpenBLAS is asked for one thread
(``OPENBLAS_NUM_THREADS=1``, unless the user set it): loading numpy otherwise starts a pool
of BLAS threads, which costs about a third of numpy's import time, and evaluation never
multiplies matrices large enough to use them. The cyclic garbage collector is paused while
the command imports (nothing imported is garbage, yet the imports' ~20,000 container objects
set off some 50 collections) and resumes once they are done
(:func:`imports_done`). Library users (solver, learning) are untouched.
"""
from __future__ import annotations

import gc
import os
import sys

__all__ = ["running_as", "prepare", "imports_done"]

FAST_START = ("maxent.evaluate",)
"""Modules whose ``python -m`` start-up skips the BLAS thread pool."""


def running_as(module: str) -> bool:
    """True while this process is ``python [options] -m <module> ...`` importing its package."""
    argv = getattr(sys, "orig_argv", None)  # Python >= 3.10
    if not argv or sys.argv[:1] != ["-m"] or "-m" not in argv:
        return False
    i = argv.index("-m")
    return argv[i + 1: i + 2] == [module]


_GC_PAUSED = False


def prepare() -> None:
    """Set the environment of a fast start (see the module docstring), before numpy loads."""
    global _GC_PAUSED
    if "numpy" not in sys.modules and any(running_as(m) for m in FAST_START):
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        if gc.isenabled():
            gc.disable()
            _GC_PAUSED = True


def imports_done() -> None:
    """After the command's imports: the objects created so far move to the collector's
    permanent generation (:func:`gc.freeze`: never scanned again, and not written to by
    the collector in a forked child) and collection resumes."""
    global _GC_PAUSED
    if _GC_PAUSED:
        gc.freeze()
        gc.enable()
        _GC_PAUSED = False
