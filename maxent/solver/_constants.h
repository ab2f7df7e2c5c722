/* The solver's numerical constants: the one definition, read by every kernel (the Cython
   modules declare them from here) and exposed to Python by maxent.solver._engine.CONSTANTS. */
#ifndef MAXENT_SOLVER_CONSTANTS_H
#define MAXENT_SOLVER_CONSTANTS_H
#include <float.h>
#include <stdint.h>

static const double _RTOL = 1e-11;        /* a target this close (relative) to an end of the range is on it */
static const double _ARMIJO = 1e-4;
static const double _EPS = DBL_EPSILON;
static const double _EPS64 = 64.0 * DBL_EPSILON;
static const double _W_ULPS = 16.0;       /* rounding allowance of dE/dp in the certificate, in ulps */
static const double _MIN_STEP = 1.0 / 64; /* first trial step of a damped problem */
static const long _ROUNDING_STEPS = 8;    /* linearisation steps a run stationary only to rounding may take to certify */
static const double _P_FLOOR = 1e-250;
static const double _AT_FLOOR = 2e-250;   /* 2 _P_FLOOR: a probability below this sits on the floor */
static const double _PINV_MAX = 1e12;
static const double _MAX_EXP = 300.0;     /* cap of a Newton-KKT log-space step per probability */
static const double _ELASTIC = 0.99;
static const double _PIN_REL = 1e-12;    /* a grade's count whose relative variance is below this cannot move (_hold_pinned) */
static const double _DECAY_CV = 1e-3;    /* a grade with a relative variance below this may take a log-space step (_leftover_steps) */
static const double _START_TOL = 1e-8;
static const double _COLD_RES = 10.0;     /* a failed subproblem, not an inexact one */
static const long _COLD_ITER = 200;
static const long _START_STEPS = 2;
static const long _START_ITER = 3;        /* dual Newton steps per start subproblem (an inexact start) */
static const long _COARSE = 16;           /* block ratio of the coarse subproblems (_rank_blocks) */
static const long _COARSE_STEPS = 2;
static const double _FAR_TOL = 1e-8;
static const double _CASCADE_FAR_TOL = 1e-4;
static const long _LS_STEPS = 8;
static const long _INNER_ITER = 40;
static const double _EXP_MIN = -300.0;    /* exp(d) below this is taken as 0 */
static const long _POLISH_ITER = 20;
static const double _EARLY_RES = 1e-6;
static const double _NEAR = 0.01;         /* a target within this fraction of the range's width from an end is near it */
static const long _NEAR_NEWTON = 10;
static const double _NEAR_SWITCH = 1e-3;
static const double _EDGE_START = 0.01;   /* a cascade target within this fraction of the way from the count-only E to an end starts near that end */
static const long _BLOCK = 64;            /* terms per reassociated block of a compensated sum */
static const double _POW_RANGE = 300.0;
static const long _POW_MAX = 16;
enum { _STACK_RANKS = 512 };             /* rank scratch of up to this many doubles on the stack, else malloc */
static const double _MIN_NORMAL = DBL_MIN;
static const double _MAX_FINITE = DBL_MAX;

/* exp and log helpers */
static const double _LOG2E = 1.4426950408889634;
static const double _LN2_HI = 6.93147180369123816490e-01;
static const double _LN2_LO = 1.90821492927058770002e-10;
static const double _SQRT2 = 1.4142135623730951;
static const int64_t _MANT_BITS = ((int64_t)1 << 52) - 1;
static const int64_t _ONE_BITS = (int64_t)1023 << 52;
static const int64_t _MAGIC_BITS = 0x4330000000000000;  /* 2^52 as a double; | e gives 2^52 + e exactly */
static const double _MAGIC_SUB = 4503599627370496.0 + 1023.0;
static const double _ROUND_MAGIC = 6755399441055744.0;         /* 1.5 2^52: x + it - it = rint(x) */
static const int64_t _ROUND_MAGIC_BITS = 0x4338000000000000;   /* its bits: + k gives those of it + k */

/* MaxEnt kernel status codes (one per problem of a batch) */
enum kernel_code {
    CODE_OPTIMAL = 0,        /* certified by the kernel's main iteration */
    CODE_SKIPPED = 1,        /* not to be solved: classified by maxent.solver.classify */
    CODE_NOT_CERTIFIED = 2,  /* the kernel found no certified point */
    CODE_SECOND_RUN = 3      /* certified by the second run (successive linearisation) */
};
#endif
