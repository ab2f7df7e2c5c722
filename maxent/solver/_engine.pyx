# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False, infer_types=True, auto_pickle=False
"""The maximum-entropy solver's compiled engine: the whole solve of each problem of a batch.

One extension module, built at install (setuptools + Cython), in files by concept that this
file includes (through ``_kernels.pxi``, the body it shares with the AVX2 and AVX-512
builds ``_engine_avx2.pyx`` and ``_engine_avx512.pyx``; the dispatch is at the end of this
file), so that the C compiler sees every kernel in one translation unit and inlines the small
helpers across them:

- ``_constants.h``: the numerical constants and the kernels' status codes (one definition,
  exposed here as :data:`CONSTANTS` and :class:`kernel_code`);
- ``_fastmath.pxi``: exp and log without libm calls;
- ``_algebra.pxi``: compensated and reassociated sums, scans, small dense and band solves;
- ``_softmax.pxi``: softmax and log-partition per rank, entropy, log-ratios;
- ``_dual.pxi``: damped Newton on the convex dual (the linear metrics and every subproblem);
- ``_ranges.pxi``: extreme lists and their values (the attainable range);
- ``_linearize.pxi``: successive linearisation (starts, the second run);
- ``_thomas.pxi``, ``_prefix.pxi``: Newton-KKT of the prefix metrics (AP, GAP);
- ``_cascade_state.pxi``, ``_cascade_solve.pxi``, ``_cascade.pxi``: Newton-KKT of the cascade
  metrics (RR, ERR): the state, the pentadiagonal solve, the step and the line search;
- ``_workspaces.pxi``: the named scratch of the Newton-KKT solves;
- ``_batches.pxi``: the entry points, by metric form (linear, prefix, cascade): the attainable
  range of every problem of a batch (``*_range``), and the solve of the problems classified
  interior (``*_batch``), each a loop over problems run without the GIL (threads solve chunks
  in parallel: :func:`maxent.solver.solve`).

Every kernel is ``noexcept nogil``: a float division by 0 gives inf or NaN (C semantics,
``cdivision``), which every certificate rejects.
"""
include "_kernels.pxi"

# Dispatch by CPU, as numpy dispatches its SIMD kernels: on x86-64 the same source is also
# built as maxent.solver._engine_avx2 (AVX2 and FMA: four doubles per vector instruction) and
# maxent.solver._engine_avx512 (AVX-512 and FMA: eight); this module's functions are those of
# the widest build the CPU can run. Both fuse multiply-adds, so their results agree with the
# baseline build's to rounding, not bit for bit (docs/design/solver.md, "Build"). The baseline
# build runs on any CPU of its architecture, so a wheel built here never crashes a machine
# without AVX2 (Dask workers that share a wheel cache), and this module is the one every caller
# imports.
import importlib as _importlib
import os as _os

cdef extern from "_cpu.h":
    int maxent_cpu_level() nogil

BASELINE = {_name: _f for _name, _f in list(globals().items())
            if callable(_f) and _name != "kernel_code" and not _name.startswith("__")
            and getattr(_f, "__module__", None) == __name__}
"""This build's functions and workspace classes by name (the benchmarks and tests compare the
builds; the status codes :class:`kernel_code` are one class for all)."""

BUILDS = ("baseline", "avx2", "avx512")
"""The builds, narrowest first: the baseline, then those dispatched to by CPU."""


def build(isa):
    """The functions and workspace classes of build ``isa`` (one of :data:`BUILDS`) by name,
    as :data:`BASELINE`; None where the install has no such build or this CPU cannot run it."""
    level = BUILDS.index(isa)
    if level == 0:
        return BASELINE
    if level > maxent_cpu_level():
        return None
    try:
        mod = _importlib.import_module(f"maxent.solver._engine_{isa}")
    except ImportError:             # a build without it (setup.py: x86-64 targets only)
        return None
    return {_name: getattr(mod, _name) for _name in BASELINE}


ISA = "baseline"
"""The build whose functions this module holds: the widest of :data:`BUILDS` that this CPU
runs and the install has (``MAXENT_ENGINE_ISA=baseline`` or ``avx2`` caps it)."""

_cap = _os.environ.get("MAXENT_ENGINE_ISA", "")
for _isa in reversed(BUILDS[1:BUILDS.index(_cap) + 1 if _cap in BUILDS else len(BUILDS)]):
    _funcs = build(_isa)         # the widest first: only the build that runs is imported
    if _funcs is not None:
        globals().update(_funcs)
        ISA = _isa
        break
