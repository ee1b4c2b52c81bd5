/*
 * onednn_eltwise_probe.c - direct oneDNN 2.6 calls, without parity, behind the onednn findings of docs/findings.md:
 * eltwise relu, clip and swish, max pooling and softmax / logsoftmax on a few chosen f32 inputs (NaN, -Inf, values
 * near the f32 underflow of exp, a one-element softmax row), printed beside the exact answers. It asserts nothing:
 * it shows what the library computes.
 *
 *     cc -std=c11 tools/onednn_eltwise_probe.c -o /tmp/probe -ldnnl -lm && /tmp/probe
 */
#include <dnnl.h>
#include <math.h>
#include <stdio.h>

static dnnl_engine_t eng;
static dnnl_stream_t strm;

static void run(const void *desc, float *src, float *dst, const dnnl_memory_desc_t *smd, const dnnl_memory_desc_t *dmd)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t p;
    dnnl_memory_t s, d;
    if (dnnl_primitive_desc_create(&pd, desc, NULL, eng, NULL) || dnnl_primitive_create(&p, pd)) {
        printf("  (no primitive)\n");
        return;
    }
    dnnl_memory_create(&s, smd, eng, src);
    dnnl_memory_create(&d, dmd, eng, dst);
    dnnl_exec_arg_t a[2] = {{DNNL_ARG_SRC, s}, {DNNL_ARG_DST, d}};
    dnnl_primitive_execute(p, strm, 2, a);
    dnnl_stream_wait(strm);
    dnnl_primitive_destroy(p);
    dnnl_primitive_desc_destroy(pd);
    dnnl_memory_destroy(s);
    dnnl_memory_destroy(d);
}

static void eltwise(const char *name, dnnl_alg_kind_t alg, float alpha, float beta, float x, double exact)
{
    float src[16], dst[16];
    for (int i = 0; i < 16; i++) src[i] = x;
    dnnl_dims_t dims = {16};
    dnnl_memory_desc_t md;
    dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a);
    dnnl_eltwise_desc_t ed;
    dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, alg, &md, alpha, beta);
    run(&ed, src, dst, &md, &md);
    printf("%-28s x = %-12.9g got %-14.9g exact %.9g\n", name, x, dst[0], exact);
}

int main(void)
{
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) || dnnl_stream_create(&strm, eng, dnnl_stream_default_flags)) return 2;
    eltwise("relu", dnnl_eltwise_relu, 0, 0, NAN, NAN);
    eltwise("clip_v2(0, 6) (relu6)", dnnl_eltwise_clip_v2, 0, 6, NAN, NAN);
    eltwise("swish(1) (silu)", dnnl_eltwise_swish, 1, 0, -INFINITY, -0.0);
    eltwise("gelu_erf", dnnl_eltwise_gelu_erf, 0, 0, -INFINITY, -0.0);
    double x = -87.28;
    eltwise("swish(1) (silu)", dnnl_eltwise_swish, 1, 0, (float)x, (float)x / (1 + exp(-(double)(float)x)));
    eltwise("logistic (sigmoid)", dnnl_eltwise_logistic, 0, 0, (float)x, 1 / (1 + exp(-(double)(float)x)));
    eltwise("exp", dnnl_eltwise_exp, 0, 0, (float)x, exp((double)(float)x));

    /* max pooling 2x2 over [NaN, 1, 2, 3] */
    {
        float src[4] = {NAN, 1, 2, 3}, dst[1];
        dnnl_dims_t sd = {1, 1, 2, 2}, dd = {1, 1, 1, 1}, k = {2, 2}, st = {2, 2}, z = {0, 0};
        dnnl_memory_desc_t smd, dmd;
        dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, dnnl_nchw);
        dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, dnnl_nchw);
        dnnl_pooling_v2_desc_t pdsc;
        dnnl_pooling_v2_forward_desc_init(&pdsc, dnnl_forward_inference, dnnl_pooling_max, &smd, &dmd, st, k, z, z, z);
        run(&pdsc, src, dst, &smd, &dmd);
        printf("%-28s [nan 1 2 3] got %g exact nan\n", "pooling_max 2x2", dst[0]);
    }
    /* softmax and logsoftmax of one-element rows and of [NaN, 1] */
    for (int log = 0; log < 2; log++) {
        float src[2] = {0.5f, 0.25f}, dst[2];
        dnnl_dims_t dims = {2, 1};
        dnnl_memory_desc_t md;
        dnnl_memory_desc_init_by_tag(&md, 2, dims, dnnl_f32, dnnl_ab);
        dnnl_softmax_v2_desc_t sd;
        dnnl_softmax_v2_forward_desc_init(&sd, dnnl_forward_inference, log ? dnnl_softmax_log : dnnl_softmax_accurate,
                                          &md, &md, 1);
        run(&sd, src, dst, &md, &md);
        printf("%-28s [0.5] got %.9g exact %g\n", log ? "softmax_log, 1-element row" : "softmax, 1-element row",
               dst[0], log ? 0.0 : 1.0);
        float s2[2] = {NAN, 1}, d2[2];
        dnnl_dims_t dims2 = {1, 2};
        dnnl_memory_desc_init_by_tag(&md, 2, dims2, dnnl_f32, dnnl_ab);
        dnnl_softmax_v2_forward_desc_init(&sd, dnnl_forward_inference, log ? dnnl_softmax_log : dnnl_softmax_accurate,
                                          &md, &md, 1);
        run(&sd, s2, d2, &md, &md);
        printf("%-28s [nan 1] got [%g %g] exact [nan nan]\n", log ? "softmax_log" : "softmax", d2[0], d2[1]);
    }
    return 0;
}
