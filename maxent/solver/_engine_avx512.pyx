# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False, infer_types=True, auto_pickle=False
"""The solver's compiled engine built with AVX-512 (x86-64-v4's vector extensions): the same
source as :mod:`maxent.solver._engine`, which takes this module's functions on a CPU that has
them (and only there: this module may crash other CPUs). Import that one."""

include "_kernels.pxi"
