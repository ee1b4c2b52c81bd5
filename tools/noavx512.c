/*
 * noavx512.c - a measurement aid: an LD_PRELOAD library that clears cpuinfo's AVX-512 (and AVX-512 VNNI) flags
 * before anything reads them, so that libraries dispatching on cpuinfo (the system XNNPACK, qnnpack's kernels=auto)
 * pick their AVX2 kernels on an AVX-512 machine, as they would on an AVX2-only one. It changes nothing else and is
 * not linked into parity; it must not be used for conformance runs (they should see the real machine).
 *
 *     cc -O2 -shared -fPIC tools/noavx512.c -o build/noavx512.so -lcpuinfo
 *     LD_PRELOAD=build/noavx512.so build/parity bench --model mobilenet_v2_qs8 -b 'qnnpack[kernels=avx2],xnnpack'
 *
 * cpuinfo's cpuinfo_has_x86_* are inline reads of the exported struct cpuinfo_isa, filled once by
 * cpuinfo_initialize(); this constructor runs after libcpuinfo is loaded and before main.
 */
#include <cpuinfo.h>

__attribute__((constructor)) static void noavx512(void)
{
    if (!cpuinfo_initialize()) return;
    cpuinfo_isa.avx512f = cpuinfo_isa.avx512cd = cpuinfo_isa.avx512dq = cpuinfo_isa.avx512bw = false;
    cpuinfo_isa.avx512vl = cpuinfo_isa.avx512ifma = cpuinfo_isa.avx512vbmi = cpuinfo_isa.avx512vbmi2 = false;
    cpuinfo_isa.avx512bitalg = cpuinfo_isa.avx512vpopcntdq = cpuinfo_isa.avx512vnni = false;
    cpuinfo_isa.avx512bf16 = false;
}
