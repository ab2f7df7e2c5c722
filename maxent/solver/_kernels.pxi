# The engine's module body, included by _engine.pyx (baseline build), _engine_avx2.pyx and
# _engine_avx512.pyx: declarations, constants and the kernels of every concept.
import numpy as np
from libc.math cimport exp, log, floor, ldexp, isfinite, INFINITY, fabs
from libc.string cimport memcpy
from libc.stdlib cimport malloc, free
from libc.stdint cimport int64_t

cdef extern from "_constants.h":
    const double _RTOL, _ARMIJO, _EPS, _EPS64, _W_ULPS, _MIN_STEP, _P_FLOOR, _AT_FLOOR, _PINV_MAX
    const double _MAX_EXP, _ELASTIC, _START_TOL, _COLD_RES, _FAR_TOL, _CASCADE_FAR_TOL, _EXP_MIN
    const double _EARLY_RES, _NEAR, _NEAR_SWITCH, _POW_RANGE, _MIN_NORMAL, _MAX_FINITE, _PIN_REL
    const double _EDGE_START, _DECAY_CV
    const int64_t _MANT_BITS, _ONE_BITS, _MAGIC_BITS
    const double _LOG2E, _LN2_HI, _LN2_LO, _SQRT2, _MAGIC_SUB, _ROUND_MAGIC
    const int64_t _ROUND_MAGIC_BITS
    const long _ROUNDING_STEPS, _COLD_ITER, _START_STEPS, _START_ITER, _COARSE, _COARSE_STEPS
    const long _LS_STEPS, _INNER_ITER, _POLISH_ITER, _NEAR_NEWTON, _BLOCK, _POW_MAX
    enum: _STACK_RANKS
    cpdef enum kernel_code:
        CODE_OPTIMAL, CODE_SKIPPED, CODE_NOT_CERTIFIED, CODE_SECOND_RUN

CONSTANTS = {
    "RTOL": _RTOL, "ARMIJO": _ARMIJO, "W_ULPS": _W_ULPS, "MIN_STEP": _MIN_STEP, "P_FLOOR": _P_FLOOR,
    "AT_FLOOR": _AT_FLOOR, "PINV_MAX": _PINV_MAX, "MAX_EXP": _MAX_EXP, "ELASTIC": _ELASTIC,
    "START_TOL": _START_TOL, "COLD_RES": _COLD_RES, "FAR_TOL": _FAR_TOL,
    "CASCADE_FAR_TOL": _CASCADE_FAR_TOL, "EXP_MIN": _EXP_MIN, "EARLY_RES": _EARLY_RES, "NEAR": _NEAR,
    "NEAR_SWITCH": _NEAR_SWITCH, "POW_RANGE": _POW_RANGE, "ROUNDING_STEPS": _ROUNDING_STEPS,
    "COLD_ITER": _COLD_ITER, "START_STEPS": _START_STEPS, "START_ITER": _START_ITER, "COARSE": _COARSE,
    "COARSE_STEPS": _COARSE_STEPS, "LS_STEPS": _LS_STEPS, "INNER_ITER": _INNER_ITER,
    "POLISH_ITER": _POLISH_ITER, "NEAR_NEWTON": _NEAR_NEWTON, "BLOCK": _BLOCK, "POW_MAX": _POW_MAX,
    "PIN_REL": _PIN_REL, "EDGE_START": _EDGE_START, "DECAY_CV": _DECAY_CV,
}
"""The kernels' constants, from ``_constants.h`` (the numpy oracle in the tests reads them here)."""

include "_fastmath.pxi"
include "_workspaces.pxi"
include "_algebra.pxi"
include "_softmax.pxi"
include "_dual.pxi"
include "_ranges.pxi"
include "_linearize.pxi"
include "_thomas.pxi"
include "_prefix.pxi"
include "_cascade_state.pxi"
include "_cascade_solve.pxi"
include "_cascade.pxi"
include "_batches.pxi"
