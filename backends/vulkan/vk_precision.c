/*
 * vk_precision.c - the vulkan backend's precision modes (the `precision` knob): their names, the arithmetic each
 * declares to the oracle, the device features each needs, and the host-side f32 -> f16 rounding of the constants the
 * f16 modes upload. Pure: no Vulkan call (vk_device.c queries and enables the features; vk_graph.c converts).
 */
#include <stdio.h>
#include <string.h>

#include "vk_internal.h"

int vk_precision_parse(const char *s)
{
    if (!s) return -1;
    if (strcmp(s, "fp32") == 0) return VK_PREC_FP32;
    if (strcmp(s, "fp16") == 0) return VK_PREC_FP16;
    if (strcmp(s, "fp16_relaxed") == 0) return VK_PREC_FP16_RELAXED;
    return -1;
}

const char *vk_precision_name(vk_precision p)
{
    switch (p) {
    case VK_PREC_FP16: return "fp16";
    case VK_PREC_FP16_RELAXED: return "fp16_relaxed";
    default: return "fp32";
    }
}

par_arith vk_precision_arith(vk_precision p)
{
    switch (p) {
    case VK_PREC_FP16: return PAR_ARITH_F16_STORAGE;
    case VK_PREC_FP16_RELAXED: return PAR_ARITH_F16;
    default: return PAR_ARITH_F32;
    }
}

int vk_precision_check(vk_precision p, int storage16, int float16, const char *device, char *err, size_t errlen)
{
    if (p == VK_PREC_FP32) return 0;
    if (!storage16) {
        snprintf(err, errlen, "precision=%s needs storageBuffer16BitAccess (16-bit storage), which device '%s' lacks",
                 vk_precision_name(p), device);
        return -1;
    }
    if (p == VK_PREC_FP16_RELAXED && !float16) {
        snprintf(err, errlen, "precision=fp16_relaxed needs shaderFloat16 (VK_KHR_shader_float16_int8), which device "
                 "'%s' lacks", device);
        return -1;
    }
    return 0;
}

uint16_t vk_f16_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); /* NaN, quiet */
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);                      /* >= 65520: Inf */
    if (a >= 0x38800000u) {                                                       /* normal in f16 */
        uint32_t r = (a - 0x38000000u + 0x0fffu + ((a >> 13) & 1u)) >> 13;         /* rebias, round to even */
        return (uint16_t)(sign | r);
    }
    /* Below 2^-14: the subnormal grid 2^-24. x = m 2^(e - 150) = m 2^-shift in units of 2^-24, shift = 126 - e. */
    uint32_t e = a >> 23;
    if (e < 102) return sign; /* below 2^-25 (shift > 24): rounds to zero */
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e;
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
}
