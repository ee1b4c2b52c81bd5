/*
 * ukernels.c - the per-ISA micro-kernel table: which GEMM/IGEMM tile and which depthwise kernels each ISA uses.
 * A request for an ISA this machine lacks is served by the best one it has (never an illegal instruction).
 * Tiles: AVX-512 7x32 (14 zmm accumulators), AVX2 6x16 (12 ymm), scalar 4x4; depthwise blocks 16, 8, 1 channels.
 */
#include "cpu_ukernels.h"

static const cpu_ukernel_set sets[] = {
    {CPU_ISA_SCALAR, 4, 4, cpu_f32_gemm_4x4__scalar, cpu_f32_igemm_4x4__scalar, 1, cpu_f32_dwconv_9p__scalar,
     cpu_f32_dwconv_25p__scalar, cpu_f32_dwconv_up__scalar},
#if defined(__x86_64__)
    {CPU_ISA_AVX2, 6, 16, cpu_f32_gemm_6x16__avx2, cpu_f32_igemm_6x16__avx2, 8, cpu_f32_dwconv_9p__avx2,
     cpu_f32_dwconv_25p__avx2, cpu_f32_dwconv_up__avx2},
    {CPU_ISA_AVX512, 7, 32, cpu_f32_gemm_7x32__avx512, cpu_f32_igemm_7x32__avx512, 16, cpu_f32_dwconv_9p__avx512,
     cpu_f32_dwconv_25p__avx512, cpu_f32_dwconv_up__avx512},
#endif
};

const cpu_ukernel_set *cpu_ukernels_for(cpu_isa isa)
{
    const cpu_isa best = cpu_isa_detect();
    if ((int)isa < (int)CPU_ISA_SCALAR) isa = CPU_ISA_SCALAR;
    if ((int)isa > (int)best) isa = best;
    return &sets[isa];
}
