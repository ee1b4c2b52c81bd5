/*
 * ukernels.c - the per-ISA micro-kernel table: which GEMM/IGEMM tile and which depthwise kernels each ISA uses.
 * A request for an ISA this machine lacks is served by the best one it has (never an illegal instruction). Each
 * architecture's rows are compiled only where their kernel files are built (x86-64 or AArch64), so the table is
 * searched by ISA rather than indexed.
 * Tiles: AVX-512 7x32 (14 zmm accumulators), AVX2 6x16 (12 ymm), NEON 6x8 (12 q accumulators + 6 A + B of 32 q
 * registers), scalar 4x4; depthwise blocks 16, 8, 8, 1 channels; a 3x3 stride-1 depthwise row kernel on AVX-512 (the
 * other ISAs, and stride 2, run 3x3 through the 9p indirection kernels: NULL in their rows).
 */
#include "cpu_ukernels.h"

static const cpu_ukernel_set sets[] = {
    {CPU_ISA_SCALAR, 4, 4, cpu_f32_gemm_4x4__scalar, cpu_f32_igemm_4x4__scalar, 1, cpu_f32_dwconv_9p__scalar,
     cpu_f32_dwconv_25p__scalar, cpu_f32_dwconv_up__scalar, NULL},
#if defined(__x86_64__)
    {CPU_ISA_AVX2, 6, 16, cpu_f32_gemm_6x16__avx2, cpu_f32_igemm_6x16__avx2, 8, cpu_f32_dwconv_9p__avx2,
     cpu_f32_dwconv_25p__avx2, cpu_f32_dwconv_up__avx2, NULL},
    {CPU_ISA_AVX512, 7, 32, cpu_f32_gemm_7x32__avx512, cpu_f32_igemm_7x32__avx512, 16, cpu_f32_dwconv_9p__avx512,
     cpu_f32_dwconv_25p__avx512, cpu_f32_dwconv_up__avx512, cpu_f32_dwconv_3x3s1__avx512},
#endif
#if defined(__aarch64__)
    {CPU_ISA_NEON, 6, 8, cpu_f32_gemm_6x8__neon, cpu_f32_igemm_6x8__neon, 8, cpu_f32_dwconv_9p__neon,
     cpu_f32_dwconv_25p__neon, cpu_f32_dwconv_up__neon, NULL},
#endif
};

static const cpu_ukernel_set *find(cpu_isa isa)
{
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        if (sets[i].isa == isa) return &sets[i];
    return NULL;
}

const cpu_ukernel_set *cpu_ukernels_for(cpu_isa isa)
{
    const cpu_ukernel_set *s = cpu_isa_supported(isa) ? find(isa) : NULL;
    if (!s) s = find(cpu_isa_detect());
    return s ? s : &sets[0]; /* sets[0] is scalar, which runs everywhere */
}
