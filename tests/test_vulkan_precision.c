/*
 * test_vulkan_precision.c - the vulkan backend's precision modes (the `precision` knob): the modes' names, arith and
 * the device feature each needs (pure), the host's f32 -> f16 rounding of constants (bit patterns computed by hand
 * from IEEE binary16), and on a real device: the knob against the device's features with arith and describe
 * following it, a small graph (relu then a broadcast add of a constant, NC4HW4 with padding) replayed in each mode
 * (a value f16 cannot hold shows the storage the mode declares), and a sum whose f16 additions round where f32 ones
 * do not (the arithmetic the mode declares). The device tests are skipped, never passed, when there is no Vulkan
 * device or the device lacks the mode's feature (the reason names it), or when the backend is not built.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tmain.h"

/* Under AddressSanitizer: leak detection off for this program, as in test_vulkan.c (the Vulkan driver leaves small
 * allocations behind in modules the loader has already unloaded, which LeakSanitizer cannot suppress). */
#if defined(__SANITIZE_ADDRESS__)
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }
#endif

#ifdef PAR_HAVE_VULKAN
#include "backends/vulkan/vk_internal.h"
#include "vk_test_replay.h"

const par_backend *par_backend_vulkan(void);

/* Bit patterns by hand from IEEE binary16: sign, 5 exponent bits (bias 15), 10 fraction bits. */
static void test_f16_bits(void)
{
    CU_ASSERT_EQUAL(vk_f16_bits(1.0f), 0x3c00);
    CU_ASSERT_EQUAL(vk_f16_bits(-2.0f), 0xc000);
    CU_ASSERT_EQUAL(vk_f16_bits(0.0f), 0x0000);
    CU_ASSERT_EQUAL(vk_f16_bits(-0.0f), 0x8000);
    CU_ASSERT_EQUAL(vk_f16_bits(0.1f), 0x2e66);            /* 0.0999755859375, the nearest */
    CU_ASSERT_EQUAL(vk_f16_bits(1.0f + 0x1p-11f), 0x3c00); /* a tie: to the even 1.0 */
    CU_ASSERT_EQUAL(vk_f16_bits(1.0f + 3 * 0x1p-11f), 0x3c02); /* a tie: to the even 1 + 2^-9 */
    CU_ASSERT_EQUAL(vk_f16_bits(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01); /* just above the tie: up */
    CU_ASSERT_EQUAL(vk_f16_bits(2049.0f), 0x6800);         /* 2048: spacing 2 there, a tie to even */
    CU_ASSERT_EQUAL(vk_f16_bits(2051.0f), 0x6802);         /* 2052: a tie to even, upwards */
    CU_ASSERT_EQUAL(vk_f16_bits(65504.0f), 0x7bff);        /* the largest finite */
    CU_ASSERT_EQUAL(vk_f16_bits(65519.996f), 0x7bff);      /* below the midpoint 65520 */
    CU_ASSERT_EQUAL(vk_f16_bits(65520.0f), 0x7c00);        /* the midpoint: Inf, as IEEE rounding gives */
    CU_ASSERT_EQUAL(vk_f16_bits(-1e6f), 0xfc00);
    CU_ASSERT_EQUAL(vk_f16_bits(INFINITY), 0x7c00);
    CU_ASSERT_EQUAL(vk_f16_bits(-INFINITY), 0xfc00);
    uint16_t nan = vk_f16_bits(NAN);
    CU_ASSERT((nan & 0x7c00) == 0x7c00 && (nan & 0x03ff) != 0);
    CU_ASSERT_EQUAL(vk_f16_bits(0x1p-14f), 0x0400);        /* the smallest normal */
    CU_ASSERT_EQUAL(vk_f16_bits(0x1p-24f), 0x0001);        /* the smallest subnormal */
    CU_ASSERT_EQUAL(vk_f16_bits(0x1p-25f), 0x0000);        /* half of it: a tie to the even 0 */
    CU_ASSERT_EQUAL(vk_f16_bits(0x1.8p-25f), 0x0001);      /* 0.75 of it: up */
    CU_ASSERT_EQUAL(vk_f16_bits(3 * 0x1p-25f), 0x0002);    /* 1.5 of it: a tie to the even 2 */
    CU_ASSERT_EQUAL(vk_f16_bits(-0x1.ffep-15f), 0x8400);   /* 0x3ff.c subnormal units: rounds up to the normal */
    CU_ASSERT_EQUAL(vk_f16_bits(0x1p-30f), 0x0000);        /* far below: 0 */
    CU_ASSERT_EQUAL(vk_f16_bits(0x1p-149f), 0x0000);       /* an f32 subnormal */
}

static void test_precision_modes(void)
{
    CU_ASSERT_EQUAL(vk_precision_parse("fp32"), VK_PREC_FP32);
    CU_ASSERT_EQUAL(vk_precision_parse("fp16"), VK_PREC_FP16);
    CU_ASSERT_EQUAL(vk_precision_parse("fp16_relaxed"), VK_PREC_FP16_RELAXED);
    CU_ASSERT_EQUAL(vk_precision_parse("fp16_storage"), -1);
    CU_ASSERT_EQUAL(vk_precision_parse(""), -1);
    CU_ASSERT_STRING_EQUAL(vk_precision_name(VK_PREC_FP16_RELAXED), "fp16_relaxed");
    CU_ASSERT_EQUAL(vk_precision_arith(VK_PREC_FP32), PAR_ARITH_F32);
    CU_ASSERT_EQUAL(vk_precision_arith(VK_PREC_FP16), PAR_ARITH_F16_STORAGE);
    CU_ASSERT_EQUAL(vk_precision_arith(VK_PREC_FP16_RELAXED), PAR_ARITH_F16);
    char err[256];
    CU_ASSERT_EQUAL(vk_precision_check(VK_PREC_FP32, 0, 0, "gpu", err, sizeof err), 0);
    CU_ASSERT_EQUAL(vk_precision_check(VK_PREC_FP16, 1, 0, "gpu", err, sizeof err), 0);
    CU_ASSERT_EQUAL(vk_precision_check(VK_PREC_FP16_RELAXED, 1, 1, "gpu", err, sizeof err), 0);
    err[0] = 0;
    CU_ASSERT_EQUAL(vk_precision_check(VK_PREC_FP16, 0, 1, "gpu", err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "storageBuffer16BitAccess"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "'gpu'"));
    err[0] = 0;
    CU_ASSERT_EQUAL(vk_precision_check(VK_PREC_FP16_RELAXED, 0, 1, "gpu", err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "storageBuffer16BitAccess"));
    err[0] = 0;
    CU_ASSERT_EQUAL(vk_precision_check(VK_PREC_FP16_RELAXED, 1, 0, "gpu", err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "shaderFloat16"));
}

static par_msg m;

/* The backend's context on this machine's default device, or NULL (the test is then skipped). */
static void *open_backend(const par_backend **be)
{
    *be = par_backend_vulkan();
    void *ctx = NULL;
    if ((*be)->init(&ctx, &m) != PAR_OK) return NULL;
    return ctx;
}

/* The precision knob follows the chosen device's features (lavapipe has both), and arith and describe follow it. */
static void test_precision_knob(void)
{
    const par_backend *be;
    void *ctx = open_backend(&be);
    if (!ctx) PAR_TEST_SKIP(m.text);
    par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    par_describe_fn describe = (par_describe_fn)be->get_proc(ctx, PAR_PROC_DESCRIBE);
    par_arith_fn arith = (par_arith_fn)be->get_proc(ctx, PAR_PROC_ARITH);
    CU_ASSERT_PTR_NOT_NULL_FATAL(knob);
    CU_ASSERT_PTR_NOT_NULL_FATAL(describe);
    CU_ASSERT_PTR_NOT_NULL_FATAL(arith);
    char buf[512];
    CU_ASSERT_EQUAL(arith(ctx), PAR_ARITH_F32); /* the default */
    describe(ctx, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, ";precision=fp32;"));
    CU_ASSERT_EQUAL(knob(ctx, "precision", "fp64", &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "fp16_relaxed")); /* the error lists the modes */
    const vk_ctx *c = ctx;
    CU_ASSERT_EQUAL(knob(ctx, "precision", "fp16", &m), c->storage16 ? PAR_OK : PAR_UNSUPPORTED);
    if (!c->storage16) CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "storageBuffer16BitAccess"));
    if (c->storage16) {
        CU_ASSERT_EQUAL(arith(ctx), PAR_ARITH_F16_STORAGE);
        describe(ctx, buf, sizeof buf);
        CU_ASSERT_PTR_NOT_NULL(strstr(buf, ";precision=fp16;"));
        /* device= after precision=: the device chosen again must have the feature too (it has: the same one). */
        CU_ASSERT_EQUAL(knob(ctx, "device", "auto", &m), PAR_OK);
    }
    CU_ASSERT_EQUAL(knob(ctx, "precision", "fp16_relaxed", &m),
                    c->storage16 && c->float16 ? PAR_OK : PAR_UNSUPPORTED);
    if (c->storage16 && c->float16) CU_ASSERT_EQUAL(arith(ctx), PAR_ARITH_F16);
    CU_ASSERT_EQUAL(knob(ctx, "precision", "fp32", &m), PAR_OK);
    CU_ASSERT_EQUAL(arith(ctx), PAR_ARITH_F32);
    be->destroy(ctx);
}

/* y = relu(x) + c, x [1, 5, 2, 3] (NC4HW4 inside, a padded second channel block), c [5, 1, 1] a constant broadcast
 * over H and W, in precision mode `precision` (skipped, with the reason, where the device lacks it). Run twice with
 * different inputs (small integers and quarters: exact in every mode): the replayed command buffer must see the new
 * input. Then x[0] = 2049, which f16 cannot hold: 2049.5 in fp32, 2048 in the f16 modes (2049 stored as 2048, a tie
 * to even, and 2048.5 stored as 2048 again), which shows the storage the mode declares. */
static void run_replay(const char *precision, par_arith want_arith)
{
    const par_backend *be;
    void *ctx = open_backend(&be);
    if (!ctx) PAR_TEST_SKIP(m.text);
    par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    par_arith_fn arith = (par_arith_fn)be->get_proc(ctx, PAR_PROC_ARITH);
    CU_ASSERT_PTR_NOT_NULL_FATAL(knob);
    CU_ASSERT_PTR_NOT_NULL_FATAL(arith);
    par_status ks = knob(ctx, "precision", precision, &m);
    if (ks == PAR_UNSUPPORTED) {
        be->destroy(ctx);
        PAR_TEST_SKIP(m.text);
    }
    CU_ASSERT_EQUAL_FATAL(ks, PAR_OK);
    CU_ASSERT_EQUAL(arith(ctx), want_arith);
    vk_replay r;
    float x[30], y[30];
    void *prep = vk_replay_run(be, ctx, &r, x, y, &m);
    if (!prep) {
        be->destroy(ctx);
        return;
    }
    x[0] = 2049.0f;
    CU_ASSERT_EQUAL(be->run(ctx, prep, &m), PAR_OK);
    CU_ASSERT_EQUAL(y[0], want_arith == PAR_ARITH_F32 ? 2049.5f : 2048.0f);
    be->release(ctx, prep);
    be->destroy(ctx);
}

/* y = sum(x, axes = [1]) of x = [2048, 1, 1], in order. f32 additions give 2050 (which f16 holds); f16 additions
 * give 2048: 2048 + 1 = 2049 is a tie between 2048 and 2050 in f16 and rounds to the even 2048, twice. So fp32 and
 * fp16 (f32 arithmetic) give 2050, fp16_relaxed (f16 arithmetic in the sums) 2048. */
static void run_sum(const char *precision, float want)
{
    const par_backend *be;
    void *ctx = open_backend(&be);
    if (!ctx) PAR_TEST_SKIP(m.text);
    par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(knob);
    par_status ks = knob(ctx, "precision", precision, &m);
    if (ks == PAR_UNSUPPORTED) {
        be->destroy(ctx);
        PAR_TEST_SKIP(m.text);
    }
    CU_ASSERT_EQUAL_FATAL(ks, PAR_OK);
    par_value v[2] = {
        {.name = "x", .dtype = PAR_DTYPE_F32, .rank = 2, .dims = {1, 3}, .numel = 3, .kind = PAR_VALUE_INPUT,
         .producer = -1, .quant_axis = -1},
        {.name = "y", .dtype = PAR_DTYPE_F32, .rank = 1, .dims = {1}, .numel = 1, .kind = PAR_VALUE_NODE,
         .producer = 0, .quant_axis = -1},
    };
    static const int32_t in0[1] = {0}, out0[1] = {1};
    static const int64_t axes[1] = {1};
    par_attr at[2] = {{.name = "axes", .type = PAR_ATTR_INTS, .count = 1, .ints = axes},
                      {.name = "keepdims", .type = PAR_ATTR_INT, .i = 0}};
    par_node node = {.name = "sum0", .op = "sum", .n_inputs = 1, .inputs = in0, .n_outputs = 1, .outputs = out0,
                     .n_attrs = 2, .attrs = at};
    par_graph_desc g = {.name = "sum", .n_values = 2, .values = v, .n_nodes = 1, .nodes = &node,
                        .n_inputs = 1, .inputs = in0, .n_outputs = 1, .outputs = out0};
    CU_ASSERT_EQUAL(be->supports(ctx, &g, 0, &m), PAR_OK);
    void *prep = NULL;
    CU_ASSERT_EQUAL_FATAL(be->prepare(ctx, &g, &prep, &m), PAR_OK);
    float x[3] = {2048.0f, 1.0f, 1.0f}, y[1] = {NAN};
    const void *ins[1] = {x};
    void *outs[1] = {y};
    CU_ASSERT_EQUAL(be->bind(ctx, prep, ins, outs, &m), PAR_OK);
    CU_ASSERT_EQUAL(be->run(ctx, prep, &m), PAR_OK);
    CU_ASSERT_EQUAL(y[0], want);
    be->release(ctx, prep);
    be->destroy(ctx);
}

static void test_sum_arith(void)
{
    run_sum("fp32", 2050.0f);
    run_sum("fp16", 2050.0f);
}

static void test_sum_arith_relaxed(void)
{
    run_sum("fp16_relaxed", 2048.0f);
}

static void test_replay_fp32(void)
{
    run_replay("fp32", PAR_ARITH_F32);
}

static void test_replay_fp16(void)
{
    run_replay("fp16", PAR_ARITH_F16_STORAGE);
}

static void test_replay_fp16_relaxed(void)
{
    run_replay("fp16_relaxed", PAR_ARITH_F16);
}

static const CU_TestInfo tests[] = {
    {"f16_bits", test_f16_bits},
    {"precision_modes", test_precision_modes},
    {"precision_knob", test_precision_knob},
    {"replay_fp32", test_replay_fp32},
    {"replay_fp16", test_replay_fp16},
    {"replay_fp16_relaxed", test_replay_fp16_relaxed},
    {"sum_arith", test_sum_arith},
    {"sum_arith_relaxed", test_sum_arith_relaxed},
    CU_TEST_INFO_NULL,
};
#else
static void test_not_built(void)
{
    PAR_TEST_SKIP("the vulkan backend is not built (no Vulkan headers or glslc)");
}
static const CU_TestInfo tests[] = {
    {"not_built", test_not_built},
    CU_TEST_INFO_NULL,
};
#endif

PAR_TEST_MAIN("vulkan_precision", tests)
