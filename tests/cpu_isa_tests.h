/*
 * cpu_isa_tests.h - registers a cpu backend test once per ISA (scalar, AVX2, AVX-512, NEON), shared by test_cpu.c and
 * test_cpu_kernels.c. g_isa is the ISA the running instance checks. An ISA this CPU lacks is a skip, not a pass:
 * forcing it would silently run a lower one, and a pass would claim a check that did not run.
 *     PER_ISA(test_fn)                      defines test_fn_scalar, test_fn_avx2, test_fn_avx512, test_fn_neon
 *     ISA_TESTS("name", test_fn),           four CU_TestInfo entries "name, scalar" ...
 */
#ifndef PAR_CPU_ISA_TESTS_H
#define PAR_CPU_ISA_TESTS_H

#include "backends/cpu/cpu_kernels.h"
#include "tmain.h"

static cpu_isa g_isa;
static const char *const ISA_MISSING[] = {"", "no AVX2/FMA on this CPU", "no AVX-512 on this CPU",
                                          "no NEON (AArch64 Advanced SIMD with FMA) on this CPU"};

static void run_for_isa(cpu_isa isa, void (*fn)(void))
{
    if (!cpu_isa_supported(isa)) PAR_TEST_SKIP(ISA_MISSING[isa]);
    g_isa = isa;
    fn();
}

#define PER_ISA(fn)                                                                                                  \
    static void fn##_scalar(void) { run_for_isa(CPU_ISA_SCALAR, fn); }                                               \
    static void fn##_avx2(void) { run_for_isa(CPU_ISA_AVX2, fn); }                                                   \
    static void fn##_avx512(void) { run_for_isa(CPU_ISA_AVX512, fn); }                                               \
    static void fn##_neon(void) { run_for_isa(CPU_ISA_NEON, fn); }
#define ISA_TESTS(name, fn)                                                                                          \
    {name ", scalar", fn##_scalar}, {name ", avx2", fn##_avx2}, {name ", avx512", fn##_avx512},                      \
        {name ", neon", fn##_neon}

#endif
