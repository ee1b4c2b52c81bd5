/*
 * isa.c - run-time choice of the cpu backend's kernels: the best ISA this machine supports, read from cpuinfo (the
 * CPU-feature library XNNPACK uses), and the names used by knobs and reports. AVX-512 requires F, BW, DQ and VL
 * (the kernels are compiled with all four); AVX2 requires AVX2 and FMA3; NEON requires Advanced SIMD with FMA
 * (baseline on AArch64: cpuinfo says so there and nowhere else; its x86 and ARM queries are false on the other
 * architecture, so this file needs no #if). Must not execute any SIMD instruction.
 */
#include <pthread.h>
#include <string.h>

#include <cpuinfo.h>

#include "cpu_kernels.h"

static cpu_isa detected = CPU_ISA_SCALAR;
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;

static void detect(void)
{
    if (!cpuinfo_initialize()) return; /* unknown CPU: the portable kernels */
    if (cpuinfo_has_x86_avx512f() && cpuinfo_has_x86_avx512bw() && cpuinfo_has_x86_avx512dq() &&
        cpuinfo_has_x86_avx512vl())
        detected = CPU_ISA_AVX512;
    else if (cpuinfo_has_x86_avx2() && cpuinfo_has_x86_fma3())
        detected = CPU_ISA_AVX2;
    else if (cpuinfo_has_arm_neon_fma())
        detected = CPU_ISA_NEON;
}

cpu_isa cpu_isa_detect(void)
{
    pthread_once(&detect_once, detect);
    return detected;
}

int cpu_isa_supported(cpu_isa isa)
{
    const cpu_isa best = cpu_isa_detect();
    switch (isa) {
    case CPU_ISA_SCALAR: return 1;
    case CPU_ISA_AVX2: return best == CPU_ISA_AVX2 || best == CPU_ISA_AVX512;
    case CPU_ISA_AVX512: return best == CPU_ISA_AVX512;
    case CPU_ISA_NEON: return best == CPU_ISA_NEON;
    }
    return 0;
}

static const char *const names[] = {"scalar", "avx2", "avx512", "neon"};

const char *cpu_isa_name(cpu_isa isa)
{
    return (int)isa >= 0 && (size_t)isa < sizeof names / sizeof names[0] ? names[isa] : "unknown";
}

int cpu_isa_parse(const char *name, cpu_isa *out)
{
    if (!name || !out) return -1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (cpu_isa)i;
            return 0;
        }
    return -1;
}
