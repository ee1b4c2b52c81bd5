/*
 * test_vulkan.c - the vulkan backend's own pieces: the NC4HW4 index mapping (hand-computed offsets, and every
 * logical element at a distinct slot), the sub-allocator's placement (offsets, alignment, block sizes), the choice
 * of a physical device (auto, index, name; the errors), the precision modes (names, arith, the feature each needs)
 * and the host's f32 -> f16 rounding (hand-computed bit patterns), and on a real device: the knobs and describe,
 * and one prepared graph (relu then a broadcast add, C = 5 so NC4HW4 has padding) replayed with two different
 * inputs in each precision mode (the mode's arith declared; a value f16 cannot hold shows the storage), a sum
 * whose f16 additions round where f32 ones do not (the arithmetic of each mode), and a dispatch larger than one row of workgroups over a tensor larger than one memory block.
 * The device tests are skipped, never passed, when there is no Vulkan device (or the backend is not built).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tmain.h"

/* Under AddressSanitizer: the Vulkan driver (lavapipe: llvmpipe and LLVM) leaves a few small allocations behind at
 * exit in modules the loader has already unloaded, which LeakSanitizer can neither name nor suppress by module. Leak
 * detection is therefore off for this one program; every other check of the sanitizers stays on, and the other test
 * programs keep leak detection. */
#if defined(__SANITIZE_ADDRESS__)
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }
#endif

#ifdef PAR_HAVE_VULKAN
#include "backends/vulkan/vk_internal.h"

const par_backend *par_backend_vulkan(void);

static void test_nc4_offsets(void)
{
    const int64_t d[4] = {2, 5, 3, 2}; /* C = 5: two channel blocks, the second holding 1 real channel of 4 */
    CU_ASSERT_EQUAL(vk_nc4_count(d), 96u); /* 2 * 2 * 3 * 2 * 4 */
    const int64_t i0[4] = {0, 0, 0, 0}, i1[4] = {0, 1, 0, 0}, i2[4] = {0, 4, 0, 0}, i3[4] = {1, 4, 2, 1},
                  i4[4] = {0, 3, 1, 1};
    CU_ASSERT_EQUAL(vk_nc4_offset(d, i0), 0u);
    CU_ASSERT_EQUAL(vk_nc4_offset(d, i1), 1u);
    CU_ASSERT_EQUAL(vk_nc4_offset(d, i2), 24u);  /* block 1 of image 0: (1 * 3 * 2) * 4 */
    CU_ASSERT_EQUAL(vk_nc4_offset(d, i3), 92u);  /* ((1*2 + 1)*3 + 2)*2 + 1 = 23 pixels, * 4, lane 0 */
    CU_ASSERT_EQUAL(vk_nc4_offset(d, i4), 15u);  /* pixel (1, 1) = 3, * 4, lane 3 */
    /* Every logical element at its own slot; the padding lanes (channels 5..7) stay unused. */
    unsigned char used[96] = {0};
    int dup = 0, out = 0, n = 0;
    for (int64_t a = 0; a < 2; a++)
        for (int64_t b = 0; b < 5; b++)
            for (int64_t c = 0; c < 3; c++)
                for (int64_t e = 0; e < 2; e++) {
                    const int64_t i[4] = {a, b, c, e};
                    uint64_t o = vk_nc4_offset(d, i);
                    if (o >= 96) {
                        out++;
                        continue;
                    }
                    dup += used[o]++ != 0;
                    n++;
                }
    CU_ASSERT_EQUAL(dup, 0);
    CU_ASSERT_EQUAL(out, 0);
    CU_ASSERT_EQUAL(n, 60);
    CU_ASSERT_EQUAL(used[3], 1); /* channel 3 of the first block */
    CU_ASSERT_EQUAL(used[24 + 1], 0); /* channel 5: padding */
}

static void test_arena(void)
{
    vk_arena a;
    vk_arena_init(&a, 1000, 256);
    int b = -1;
    uint64_t off = 1;
    CU_ASSERT_EQUAL(vk_arena_place(&a, 100, &b, &off), 0);
    CU_ASSERT(b == 0 && off == 0);
    CU_ASSERT_EQUAL(vk_arena_place(&a, 100, &b, &off), 0);
    CU_ASSERT(b == 0 && off == 256); /* aligned up from 100 */
    CU_ASSERT_EQUAL(vk_arena_place(&a, 400, &b, &off), 0);
    CU_ASSERT(b == 0 && off == 512); /* 356 aligned up to 512; ends at 912 <= 1000 */
    CU_ASSERT_EQUAL(vk_arena_place(&a, 900, &b, &off), 0); /* at 1024 it would end at 1924 > 1000: a new block */
    CU_ASSERT(b == 1 && off == 0);
    CU_ASSERT_EQUAL(a.block_size[1], 1000u);
    CU_ASSERT_EQUAL(vk_arena_place(&a, 5000, &b, &off), 0); /* larger than a block: a block of its own */
    CU_ASSERT(b == 2 && off == 0);
    CU_ASSERT_EQUAL(a.block_size[2], 5120u); /* 5000 aligned up to 256 */
    CU_ASSERT_EQUAL(vk_arena_place(&a, 100, &b, &off), 0); /* the newest block is full: another */
    CU_ASSERT(b == 3 && off == 0);
    CU_ASSERT_EQUAL(a.n_blocks, 4);
    /* Every offset is a multiple of the alignment. */
    for (int k = 0; k < 20; k++) {
        CU_ASSERT_EQUAL(vk_arena_place(&a, 1 + (uint64_t)k * 7, &b, &off), 0);
        CU_ASSERT_EQUAL(off % 256, 0u);
        CU_ASSERT(off + 1 + (uint64_t)k * 7 <= a.block_size[b]);
    }
    vk_arena_free(&a);
}

static void test_choose_device(void)
{
    vk_devinfo two[2] = {{"llvmpipe (LLVM 15.0.6, 256 bits)", VK_PHYSICAL_DEVICE_TYPE_CPU, 1},
                         {"NVIDIA GeForce RTX 3060", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, 1}};
    char err[256];
    CU_ASSERT_EQUAL(vk_choose_device(two, 2, NULL, err, sizeof err), 1); /* a GPU before the CPU device */
    CU_ASSERT_EQUAL(vk_choose_device(two, 2, "auto", err, sizeof err), 1);
    CU_ASSERT_EQUAL(vk_choose_device(two, 2, "0", err, sizeof err), 0);
    CU_ASSERT_EQUAL(vk_choose_device(two, 2, "LLVMpipe", err, sizeof err), 0);
    CU_ASSERT_EQUAL(vk_choose_device(two, 2, "rtx", err, sizeof err), 1);
    err[0] = 0;
    CU_ASSERT_EQUAL(vk_choose_device(two, 2, "2", err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "does not exist"));
    err[0] = 0;
    CU_ASSERT_EQUAL(vk_choose_device(two, 2, "radeon", err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "'radeon'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "llvmpipe")); /* the error lists the devices */
    CU_ASSERT_EQUAL(vk_choose_device(two, 1, NULL, err, sizeof err), 0); /* only the CPU device: it */
    two[1].has_compute = 0;
    CU_ASSERT_EQUAL(vk_choose_device(two, 2, NULL, err, sizeof err), 0); /* a GPU without compute is passed over */
    err[0] = 0;
    CU_ASSERT_EQUAL(vk_choose_device(two, 2, "1", err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no compute queue"));
    two[0].has_compute = 0;
    CU_ASSERT_EQUAL(vk_choose_device(two, 2, NULL, err, sizeof err), -1);
    CU_ASSERT_EQUAL(vk_choose_device(two, 0, NULL, err, sizeof err), -1);
}

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

static void test_knobs(void)
{
    const par_backend *be;
    void *ctx = open_backend(&be);
    if (!ctx) PAR_TEST_SKIP(m.text);
    par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    par_describe_fn describe = (par_describe_fn)be->get_proc(ctx, PAR_PROC_DESCRIBE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(knob);
    CU_ASSERT_PTR_NOT_NULL_FATAL(describe);
    CU_ASSERT_EQUAL(knob(ctx, "device", "0", &m), PAR_OK);
    char buf[512];
    describe(ctx, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "device=0:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "api=1."));
    CU_ASSERT_EQUAL(knob(ctx, "device", "99", &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "does not exist"));
    CU_ASSERT_EQUAL(knob(ctx, "device", "no-such-gpu-name", &m), PAR_ERROR);
    CU_ASSERT_EQUAL(knob(ctx, "precision", "fp32", &m), PAR_OK);
    CU_ASSERT_EQUAL(knob(ctx, "precision", "fp64", &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "fp16_relaxed")); /* the error lists the modes */
    /* fp16 and fp16_relaxed follow the chosen device's features (lavapipe has both). */
    const vk_ctx *c = ctx;
    CU_ASSERT_EQUAL(knob(ctx, "precision", "fp16", &m), c->storage16 ? PAR_OK : PAR_UNSUPPORTED);
    if (!c->storage16) CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "storageBuffer16BitAccess"));
    par_arith_fn arith = (par_arith_fn)be->get_proc(ctx, PAR_PROC_ARITH);
    CU_ASSERT_PTR_NOT_NULL_FATAL(arith);
    if (c->storage16) {
        CU_ASSERT_EQUAL(arith(ctx), PAR_ARITH_F16_STORAGE);
        describe(ctx, buf, sizeof buf);
        CU_ASSERT_PTR_NOT_NULL(strstr(buf, ";precision=fp16;"));
    }
    CU_ASSERT_EQUAL(knob(ctx, "precision", "fp16_relaxed", &m),
                    c->storage16 && c->float16 ? PAR_OK : PAR_UNSUPPORTED);
    if (c->storage16 && c->float16) CU_ASSERT_EQUAL(arith(ctx), PAR_ARITH_F16);
    CU_ASSERT_EQUAL(knob(ctx, "precision", "fp32", &m), PAR_OK);
    CU_ASSERT_EQUAL(arith(ctx), PAR_ARITH_F32);
    CU_ASSERT_EQUAL(knob(ctx, "threads", "2", &m), PAR_ERROR);
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
    static const float cdata[5] = {0.5f, -1.0f, 2.0f, 0.25f, -3.0f};
    par_value v[4] = {
        {.name = "x", .dtype = PAR_DTYPE_F32, .rank = 4, .dims = {1, 5, 2, 3}, .numel = 30, .kind = PAR_VALUE_INPUT,
         .producer = -1, .quant_axis = -1},
        {.name = "r", .dtype = PAR_DTYPE_F32, .rank = 4, .dims = {1, 5, 2, 3}, .numel = 30, .kind = PAR_VALUE_NODE,
         .producer = 0, .quant_axis = -1},
        {.name = "c", .dtype = PAR_DTYPE_F32, .rank = 3, .dims = {5, 1, 1}, .numel = 5, .kind = PAR_VALUE_CONST,
         .producer = -1, .data = cdata, .quant_axis = -1},
        {.name = "y", .dtype = PAR_DTYPE_F32, .rank = 4, .dims = {1, 5, 2, 3}, .numel = 30, .kind = PAR_VALUE_NODE,
         .producer = 1, .quant_axis = -1},
    };
    static const int32_t in0[1] = {0}, out0[1] = {1}, in1[2] = {1, 2}, out1[1] = {3}, gin[1] = {0}, gout[1] = {3};
    par_node nodes[2] = {
        {.name = "relu0", .op = "relu", .n_inputs = 1, .inputs = in0, .n_outputs = 1, .outputs = out0},
        {.name = "add0", .op = "add", .n_inputs = 2, .inputs = in1, .n_outputs = 1, .outputs = out1},
    };
    par_graph_desc g = {.name = "replay", .n_values = 4, .values = v, .n_nodes = 2, .nodes = nodes,
                        .n_inputs = 1, .inputs = gin, .n_outputs = 1, .outputs = gout};
    CU_ASSERT_EQUAL(be->supports(ctx, &g, 0, &m), PAR_OK);
    CU_ASSERT_EQUAL(be->supports(ctx, &g, 1, &m), PAR_OK);
    void *prep = NULL;
    par_status st = be->prepare(ctx, &g, &prep, &m);
    CU_ASSERT_EQUAL_FATAL(st, PAR_OK);
    float x[30], y[30];
    const void *ins[1] = {x};
    void *outs[1] = {y};
    CU_ASSERT_EQUAL(be->bind(ctx, prep, ins, outs, &m), PAR_OK);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 30; i++) x[i] = (float)((i * 7 + round * 5) % 11) - 5.0f; /* integers in [-5, 5] */
        for (int i = 0; i < 30; i++) y[i] = NAN;
        CU_ASSERT_EQUAL(be->run(ctx, prep, &m), PAR_OK);
        int bad = 0;
        for (int i = 0; i < 30; i++) {
            float want = (x[i] > 0 ? x[i] : 0.0f) + cdata[i / 6]; /* exact: small integers and quarters */
            bad += y[i] != want;
        }
        CU_ASSERT_EQUAL(bad, 0);
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

static void test_replay(void)
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

/* relu over 17 000 003 elements: more workgroups than maxComputeWorkGroupCount[0] allows in x (the dispatch then
 * spreads over y), and a tensor of 68 MB, more than one 64 MiB block of the sub-allocator (a block of its own). */
static void test_large_grid(void)
{
    const par_backend *be;
    void *ctx = open_backend(&be);
    if (!ctx) PAR_TEST_SKIP(m.text);
    enum { N = 17000003 };
    par_value v[2] = {
        {.name = "x", .dtype = PAR_DTYPE_F32, .rank = 1, .dims = {N}, .numel = N, .kind = PAR_VALUE_INPUT,
         .producer = -1, .quant_axis = -1},
        {.name = "y", .dtype = PAR_DTYPE_F32, .rank = 1, .dims = {N}, .numel = N, .kind = PAR_VALUE_NODE,
         .producer = 0, .quant_axis = -1},
    };
    static const int32_t in0[1] = {0}, out0[1] = {1};
    par_node node = {.name = "relu0", .op = "relu", .n_inputs = 1, .inputs = in0, .n_outputs = 1, .outputs = out0};
    par_graph_desc g = {.name = "large", .n_values = 2, .values = v, .n_nodes = 1, .nodes = &node,
                        .n_inputs = 1, .inputs = in0, .n_outputs = 1, .outputs = out0};
    float *x = malloc((size_t)N * sizeof *x), *y = malloc((size_t)N * sizeof *y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i % 1001) - 500.0f;
        y[i] = NAN;
    }
    void *prep = NULL;
    CU_ASSERT_EQUAL_FATAL(be->prepare(ctx, &g, &prep, &m), PAR_OK);
    const void *ins[1] = {x};
    void *outs[1] = {y};
    CU_ASSERT_EQUAL(be->bind(ctx, prep, ins, outs, &m), PAR_OK);
    CU_ASSERT_EQUAL(be->run(ctx, prep, &m), PAR_OK);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += y[i] != (i % 1001 > 500 ? (float)(i % 1001 - 500) : 0.0f);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(y[N - 1] == (float)((N - 1) % 1001 > 500 ? (N - 1) % 1001 - 500 : 0)); /* the last work item */
    be->release(ctx, prep);
    be->destroy(ctx);
    free(x);
    free(y);
}

static const CU_TestInfo tests[] = {
    {"nc4_offsets", test_nc4_offsets},
    {"arena", test_arena},
    {"choose_device", test_choose_device},
    {"f16_bits", test_f16_bits},
    {"precision_modes", test_precision_modes},
    {"knobs", test_knobs},
    {"replay", test_replay},
    {"replay_fp16", test_replay_fp16},
    {"replay_fp16_relaxed", test_replay_fp16_relaxed},
    {"sum_arith", test_sum_arith},
    {"sum_arith_relaxed", test_sum_arith_relaxed},
    {"large_grid", test_large_grid},
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

PAR_TEST_MAIN("vulkan", tests)
