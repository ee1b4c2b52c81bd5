// common.glsl - what every compute shader of the vulkan backend shares: the workgroup size (specialization
// constant 0), the op (specialization constant 1), the push constants (vk_push in vk_internal.h, byte for byte),
// the four storage buffers (0 output, 1..3 inputs), the work-item index of a 1-D or 2-D dispatch, and the logical
// NCHW -> storage offset of a plain or NC4HW4 tensor. Included by every *.comp; never compiled alone.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int OP = 0;

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

layout(std430, binding = 0) writeonly buffer O { float o[]; };
layout(std430, binding = 1) readonly buffer A { float a[]; };
layout(std430, binding = 2) readonly buffer B { float b[]; };
layout(std430, binding = 3) readonly buffer C { float c[]; };

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
