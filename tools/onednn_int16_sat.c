/*
 * onednn_int16_sat.c - a direct oneDNN 2.6 program, without parity: a u8 x s8 1x1 convolution with s32 output whose
 * exact result is 255*127 + 255*127 = 64770 per element. On a CPU without VNNI (or with ONEDNN_MAX_CPU_ISA=AVX2),
 * oneDNN's int8 kernels sum pairs of u8*s8 products with vpmaddubsw, which saturates at 32767; with VNNI
 * (vpdpbusd) the sum is exact. Prints the implementation and the result (docs/findings.md).
 *
 *     cc tools/onednn_int16_sat.c -o /tmp/sat -ldnnl && /tmp/sat && ONEDNN_MAX_CPU_ISA=AVX2 /tmp/sat
 */
#include <dnnl.h>
#include <stdint.h>
#include <stdio.h>

int main(void)
{
    enum { C = 2, O = 16, H = 4, W = 4 };
    static uint8_t src[C * H * W];
    static int8_t wei[O * C];
    static int32_t dst[O * H * W];
    for (int i = 0; i < C * H * W; i++) src[i] = 255;
    for (int i = 0; i < O * C; i++) wei[i] = 127;
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) || dnnl_stream_create(&strm, eng, dnnl_stream_default_flags)) return 2;
    dnnl_memory_desc_t smd, wmd, dmd, sany, wany, dany;
    dnnl_dims_t sd = {1, C, H, W}, wd = {O, C, 1, 1}, dd = {1, O, H, W}, one = {1, 1}, zero = {0, 0};
    dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_u8, dnnl_nchw);
    dnnl_memory_desc_init_by_tag(&wmd, 4, wd, dnnl_s8, dnnl_oihw);
    dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_s32, dnnl_nchw);
    dnnl_memory_desc_init_by_tag(&sany, 4, sd, dnnl_u8, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&wany, 4, wd, dnnl_s8, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&dany, 4, dd, dnnl_s32, dnnl_format_tag_any);
    dnnl_convolution_desc_t cd;
    dnnl_primitive_desc_t pd;
    if (dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &sany, &wany, NULL,
                                           &dany, one, zero, zero) ||
        dnnl_primitive_desc_create(&pd, &cd, NULL, eng, NULL))
        return 2;
    const char *impl = "?";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    /* reorder user memory into the primitive's layouts and back */
    const dnnl_memory_desc_t *ps = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *pw = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *pdst = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    dnnl_memory_t us, uw, ud, s, w, d;
    dnnl_memory_create(&us, &smd, eng, src);
    dnnl_memory_create(&uw, &wmd, eng, wei);
    dnnl_memory_create(&ud, &dmd, eng, dst);
    dnnl_memory_create(&s, ps, eng, DNNL_MEMORY_ALLOCATE);
    dnnl_memory_create(&w, pw, eng, DNNL_MEMORY_ALLOCATE);
    dnnl_memory_create(&d, pdst, eng, DNNL_MEMORY_ALLOCATE);
    dnnl_memory_t pairs[3][2] = {{us, s}, {uw, w}, {d, ud}};
    dnnl_primitive_t conv;
    dnnl_primitive_create(&conv, pd);
    for (int k = 0; k < 3; k++) {
        const dnnl_memory_desc_t *a, *b;
        dnnl_memory_get_memory_desc(pairs[k][0], &a);
        dnnl_memory_get_memory_desc(pairs[k][1], &b);
        dnnl_primitive_desc_t rpd;
        dnnl_primitive_t r;
        if (dnnl_reorder_primitive_desc_create(&rpd, a, eng, b, eng, NULL) || dnnl_primitive_create(&r, rpd)) return 2;
        dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, pairs[k][0]}, {DNNL_ARG_TO, pairs[k][1]}};
        if (k == 2) {
            dnnl_exec_arg_t ca[3] = {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, d}};
            dnnl_primitive_execute(conv, strm, 3, ca);
        }
        dnnl_primitive_execute(r, strm, 2, ra);
        dnnl_stream_wait(strm);
        dnnl_primitive_destroy(r);
        dnnl_primitive_desc_destroy(rpd);
    }
    printf("%s: dst[0] = %d (exact 64770%s)\n", impl, dst[0], dst[0] == 64770 ? "" : ", saturated pair sum");
    return dst[0] == 64770 ? 0 : 1;
}
