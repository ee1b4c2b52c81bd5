// epilogue.glsl - the output stage of the tiled conv shaders (conv_gemm.comp, conv_dw.comp): the bias, a folded
// batch_norm and a clamp-like activation (relu, relu6, clamp, hardtanh) that vk_ops_tiled.c fused into the conv.
// The same f32 operations in the same order as the separate dispatches would do (binary.comp's x * scale + shift,
// unary.comp's min(max(x, lo), hi) with NaN passed through). flags: 1 bias, 2 scale and shift, 4 clamp to
// [pc.f0, pc.f1]. Included after common.glsl; never compiled alone.
vec4 epilogue(vec4 acc, vec4 bias, vec4 scale, vec4 shift, int flags)
{
    vec4 v = acc;
    if ((flags & 1) != 0) v += bias;
    if ((flags & 2) != 0) v = v * scale + shift;
    if ((flags & 4) != 0)
        for (int l = 0; l < 4; l++)
            if (!isnan(v[l])) v[l] = min(max(v[l], pc.f0), pc.f1);
    return v;
}
