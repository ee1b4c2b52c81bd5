// common.glsl - what every compute shader of the vulkan backend shares: the workgroup size (specialization
// constant 0), the op (specialization constant 1), the push constants (vk_push in vk_internal.h, byte for byte),
// the four storage buffers (0 output, 1..3 inputs) and the only access to them (LDA LDB LDC STO), the arithmetic
// type of the precision variant (afloat), the work-item index of a 1-D or 2-D dispatch, and the logical NCHW ->
// storage offset of a plain or NC4HW4 tensor. Included by every *.comp; never compiled alone.
//
// Precision variants (builtin.mk compiles every shader once per variant; docs/backends/vulkan.md):
//   (none)            f32 buffers, f32 arithmetic.
//   VK_FP16_STORAGE   float16_t buffers (storageBuffer16BitAccess); loads widen to f32, STO rounds to nearest even.
//   VK_FP16_ARITH     with VK_FP16_STORAGE: afloat is float16_t (shaderFloat16), so a shader that computes in afloat
//                     computes in f16; one that computes in float still widens, and rounds once at STO.
//   VK_A_F32, VK_O_F32  with VK_FP16_STORAGE: buffer a (resp. o) stays f32: the edge conversions of the staging.
//   VK_C_RAW          (defined by the shader before the include) buffer c holds raw 32-bit words (uint c[]): the
//                     i32 indices and bool bytes of select.comp, in every variant.
#if defined(VK_FP16_STORAGE)
#extension GL_EXT_shader_16bit_storage : require
#endif
#if defined(VK_FP16_ARITH)
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define afloat float16_t
#define avec4 f16vec4
#else
#define afloat float
#define avec4 vec4
#endif
#if defined(VK_FP16_STORAGE) && !defined(VK_O_F32)
#define VK_OT float16_t
#define VK_O16 1
#else
#define VK_OT float
#endif
#if defined(VK_FP16_STORAGE) && !defined(VK_A_F32)
#define VK_AT float16_t
#else
#define VK_AT float
#endif
#if defined(VK_FP16_STORAGE)
#define VK_BT float16_t
#define VK_CT float16_t
#else
#define VK_BT float
#define VK_CT float
#endif
#if defined(VK_C_RAW)
#undef VK_CT
#define VK_CT uint
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int OP = 0; // one of vk_codes.h's names for this shader
#include "../vk_codes.h"

layout(push_constant) uniform P {
    ivec4 od; // output dims (N, C, H, W), rank right-aligned to 4
    ivec4 ad; // input a dims
    ivec4 bd; // input b dims
    ivec4 p0; // op parameters
    ivec4 p1;
    ivec4 p2;
    int lay;  // bit 0: output NC4HW4, bit 1: a NC4HW4, bit 2: b NC4HW4
    int total;
    float f0;
    float f1;
} pc;

layout(std430, binding = 0) writeonly buffer O { VK_OT o[]; };
layout(std430, binding = 1) readonly buffer A { VK_AT a[]; };
layout(std430, binding = 2) readonly buffer B { VK_BT b[]; };
layout(std430, binding = 3) readonly buffer C { VK_CT c[]; };

// x rounded to the nearest f16 value, ties to even, as an f32 (exactly representable in f16, so that the conversion
// at the store is exact whatever rounding mode the device's OpFConvert has: Vulkan leaves it to the implementation).
// |x| >= 65520 (the midpoint above 65504) is +-Inf, as IEEE rounding gives; NaN stays NaN; below 2^-14 the grid is
// f16's subnormal step 2^-24.
float rne16(float x)
{
    if (isnan(x)) return x;
    float ax = abs(x);
    if (ax >= 65520.0) return uintBitsToFloat((floatBitsToUint(x) & 0x80000000u) | 0x7f800000u);
    if (ax < 6.103515625e-05) return roundEven(x * 16777216.0) * 5.9604644775390625e-08;
    uint u = floatBitsToUint(x);
    return uintBitsToFloat((u + 0x0fffu + ((u >> 13) & 1u)) & 0xffffe000u);
}

// Storage access: shaders read inputs and write the output only through these, so that a precision variant changes
// the buffers' element type (and the conversions to and from the arithmetic's type) in this one place. LDA, LDB and
// LDC give afloat; STO takes any float type.
#define LDA(i) afloat(a[i])
#define LDB(i) afloat(b[i])
#define LDC(i) afloat(c[i])
#if defined(VK_O16)
#define STO(i, v) o[i] = float16_t(rne16(float(v)))
#else
#define STO(i, v) o[i] = float(v)
#endif

int work_item()
{
    return int(gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x);
}

// Storage offset of logical element i of a tensor of dims d; nc4: [N][ceil(C/4)][H][W][4], else plain NCHW.
int off(ivec4 d, bool nc4, ivec4 i)
{
    if (nc4) return (((i.x * ((d.y + 3) / 4) + i.y / 4) * d.z + i.z) * d.w + i.w) * 4 + (i.y & 3);
    return ((i.x * d.y + i.y) * d.z + i.z) * d.w + i.w;
}

// Logical coordinates of the linear (row-major NCHW) index k in dims d.
ivec4 coords(ivec4 d, int k)
{
    ivec4 i;
    i.w = k % d.w; k /= d.w;
    i.z = k % d.z; k /= d.z;
    i.y = k % d.y; i.x = k / d.y;
    return i;
}

bool out_nc4() { return (pc.lay & 1) != 0; }
bool a_nc4() { return (pc.lay & 2) != 0; }
bool b_nc4() { return (pc.lay & 4) != 0; }

// Numpy broadcasting of output coordinates into an input of dims d (a dim of 1 is read at 0).
ivec4 bcast(ivec4 i, ivec4 d)
{
    return i * ivec4(greaterThan(d, ivec4(1)));
}

// exp(x) to about 1 ulp: Cody-Waite reduction x = n ln2 + r (ln2 in two parts, n ln2_hi exact), |r| <= ln2 / 2,
// exp(r) by its Taylor series to r^9 (truncation < 2e-10 relative), scaled by 2^n. The built-in exp is allowed
// 3 + 2|x| ulp (Vulkan's precision table), which is far outside an f32 budget for |x| in the tens.
float exp_(float x)
{
    if (isnan(x)) return x;
    if (x > 88.72284) return uintBitsToFloat(0x7f800000u);
    if (x < -103.97208) return 0.0;
    float n = round(x * 1.4426950408889634);
    // precise: the two-part subtraction must not be reassociated into x - n * ln2 (one rounded constant), which
    // would cost n ulp-sized errors of ln2 (measured on lavapipe: 3e-6 relative at x = -58 without it).
    precise float r = (x - n * 0.693145751953125) - n * 1.428606765330187e-06;
    float p = 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    int e = int(n);
    // 2^e built from its bits (exact; the built-in exp2 need not be), in two factors so that neither overflows
    // nor goes subnormal before the product.
    int e1 = e / 2;
    return p * intBitsToFloat((e1 + 127) << 23) * intBitsToFloat((e - e1 + 127) << 23);
}
