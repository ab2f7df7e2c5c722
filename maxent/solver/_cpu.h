/* Which build of the engine this CPU can run: 2, the AVX-512 one (maxent.solver._engine_avx512,
   compiled with AVX-512 F/DQ/VL/BW, AVX2 and FMA); 1, the AVX2 one (maxent.solver._engine_avx2,
   -mavx2 -mfma); 0, only the baseline (maxent.solver._engine). libgcc's __builtin_cpu_supports also
   checks that the operating system saves the AVX and AVX-512 registers. On other architectures
   and compilers: the baseline. */
#ifndef MAXENT_SOLVER_CPU_H
#define MAXENT_SOLVER_CPU_H

static int maxent_cpu_level(void) {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        return 0;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")
        && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
        return 2;
    return 1;
#else
    return 0;
#endif
}
#endif
