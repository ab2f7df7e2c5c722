/* Which build of the engine this CPU can run: the AVX2 one (maxent.solver._engine_avx2,
   compiled with -mavx2) or only the baseline (maxent.solver._engine). libgcc's
   __builtin_cpu_supports also checks that the operating system saves the AVX registers. On
   other architectures and compilers: the baseline. */
#ifndef MAXENT_SOLVER_CPU_H
#define MAXENT_SOLVER_CPU_H

static int maxent_cpu_has_avx2(void) {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}
#endif
