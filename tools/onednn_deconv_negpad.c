/*
 * onednn_deconv_negpad.c - a direct oneDNN 2.6 program, without parity: a deconvolution of a 1x1 source by a 1x2
 * kernel with stride [3, 2] and an output one column wider than the kernel covers (PyTorch's output_padding 1,
 * which oneDNN expresses as padding_r = -1), in f32 and in int8 (u8 source, s8 weights, s32 destination). The
 * exact result is [x w0, x w1, 0]. In plain layouts and in the layouts oneDNN chooses (format any, with reorders, as
 * frameworks run it). Prints the implementation and the result of each (docs/findings.md).
 *
 *     cc tools/onednn_deconv_negpad.c -o /tmp/negpad -ldnnl && /tmp/negpad
 */
#include <dnnl.h>
#include <stdint.h>
#include <stdio.h>

static dnnl_engine_t eng;
static dnnl_stream_t strm;

/* one reorder a -> b, executed now */
static void reorder(dnnl_memory_t a, dnnl_memory_t b)
{
    const dnnl_memory_desc_t *ma, *mb;
    dnnl_memory_get_memory_desc(a, &ma);
    dnnl_memory_get_memory_desc(b, &mb);
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t r;
    if (dnnl_reorder_primitive_desc_create(&pd, ma, eng, mb, eng, NULL) || dnnl_primitive_create(&r, pd)) return;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, a}, {DNNL_ARG_TO, b}};
    dnnl_primitive_execute(r, strm, 2, args);
    dnnl_stream_wait(strm);
    dnnl_primitive_destroy(r);
    dnnl_primitive_desc_destroy(pd);
}

/* the deconvolution with its layouts chosen by oneDNN (format any), user data reordered in and out, as
 * frameworks run it; any = 0: plain layouts */
static int run(int any, dnnl_data_type_t sdt, dnnl_data_type_t wdt, dnnl_data_type_t ddt, void *src, void *wei,
               void *dst)
{
    dnnl_memory_desc_t smd, wmd, dmd, sa, wa, da;
    dnnl_dims_t sd = {1, 1, 1, 1}, wd = {1, 1, 1, 2}, dd = {1, 1, 1, 3};
    dnnl_dims_t strides = {3, 2}, dil = {0, 0}, pl = {0, 0}, pr = {0, -1};
    dnnl_format_tag_t t = any ? dnnl_format_tag_any : dnnl_nchw, tw = any ? dnnl_format_tag_any : dnnl_oihw;
    dnnl_memory_desc_init_by_tag(&smd, 4, sd, sdt, dnnl_nchw);
    dnnl_memory_desc_init_by_tag(&wmd, 4, wd, wdt, dnnl_oihw);
    dnnl_memory_desc_init_by_tag(&dmd, 4, dd, ddt, dnnl_nchw);
    dnnl_memory_desc_init_by_tag(&sa, 4, sd, sdt, t);
    dnnl_memory_desc_init_by_tag(&wa, 4, wd, wdt, tw);
    dnnl_memory_desc_init_by_tag(&da, 4, dd, ddt, t);
    dnnl_deconvolution_desc_t d;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t p;
    if (dnnl_dilated_deconvolution_forward_desc_init(&d, dnnl_forward_inference, dnnl_deconvolution_direct, &sa, &wa,
                                                     NULL, &da, strides, dil, pl, pr) ||
        dnnl_primitive_desc_create(&pd, &d, NULL, eng, NULL) || dnnl_primitive_create(&p, pd)) {
        printf("  no primitive\n");
        return 1;
    }
    const char *impl = "?";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    dnnl_memory_t us, uw, ud, s, w, o;
    dnnl_memory_create(&us, &smd, eng, src);
    dnnl_memory_create(&uw, &wmd, eng, wei);
    dnnl_memory_create(&ud, &dmd, eng, dst);
    dnnl_memory_create(&s, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), eng, DNNL_MEMORY_ALLOCATE);
    dnnl_memory_create(&w, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), eng, DNNL_MEMORY_ALLOCATE);
    dnnl_memory_create(&o, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), eng, DNNL_MEMORY_ALLOCATE);
    reorder(us, s);
    reorder(uw, w);
    dnnl_exec_arg_t a[3] = {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, o}};
    dnnl_primitive_execute(p, strm, 3, a);
    dnnl_stream_wait(strm);
    reorder(o, ud);
    printf("%-44s", impl);
    return 0;
}

int main(void)
{
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) || dnnl_stream_create(&strm, eng, dnnl_stream_default_flags)) return 2;
    for (int any = 0; any < 2; any++) {
        float fs[1] = {10}, fw[2] = {3, 5}, fd[3] = {-1, -1, -1};
        if (!run(any, dnnl_f32, dnnl_f32, dnnl_f32, fs, fw, fd))
            printf(" f32:  [%g %g %g] (exact [30 50 0])\n", fd[0], fd[1], fd[2]);
        uint8_t qs[1] = {10};
        int8_t qw[2] = {3, 5};
        int32_t qd[3] = {-1, -1, -1};
        if (!run(any, dnnl_u8, dnnl_s8, dnnl_s32, qs, qw, qd))
            printf(" int8: [%d %d %d] (exact [30 50 0])\n", qd[0], qd[1], qd[2]);
    }
    return 0;
}
