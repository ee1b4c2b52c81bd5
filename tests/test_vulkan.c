/*
 * test_vulkan.c - the vulkan backend's own pieces: the NC4HW4 index mapping (hand-computed offsets, and every
 * logical element at a distinct slot), the sub-allocator's placement (offsets, alignment, block sizes), the choice
 * of a physical device (auto, index, name; the errors), and on a real device: the knobs and describe, and one
 * prepared graph (relu then a broadcast add, C = 5 so NC4HW4 has padding) replayed with two different inputs, and
 * a dispatch larger than one row of workgroups over a tensor larger than one memory block; validate=1 (a clean graph
 * reports nothing, three planted misuses of the API come back once each, a missing layer is UNSUPPORTED), which
 * layer messages count, the GPU timestamps of PAR_PROC_DEVICE_TIME (on the device, and their arithmetic on made-up
 * values), and a failure planted at every checked Vulkan call in turn (device lost, out
 * of device memory); the drivers pinned by the first context (still loaded after its destroy) and a forked child
 * that runs a graph after its parent's init and destroy (the fork server's warm start); the context's pipelines
 * (created by the first prepare, none by a second prepare of the same graph on the same context).
 * The device tests are skipped, never passed, when there is no Vulkan device (or the backend is not built).
 */
#include <link.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
#include "core/clock.h"
#include "vk_test_replay.h"

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

/* Which messages of the layer count as defects: errors of any type but performance, warnings of validation only. */
static void test_diag_policy(void)
{
    const VkDebugUtilsMessageSeverityFlagBitsEXT E = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
                                                 W = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
                                                 I = VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT;
    const VkDebugUtilsMessageTypeFlagsEXT V = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
                                          G = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT,
                                          P = VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    CU_ASSERT_EQUAL(vk_diag_counts(E, V), 1);
    CU_ASSERT_EQUAL(vk_diag_counts(E, G), 1);
    CU_ASSERT_EQUAL(vk_diag_counts(E, V | P), 1);
    CU_ASSERT_EQUAL(vk_diag_counts(E, P), 0);
    CU_ASSERT_EQUAL(vk_diag_counts(W, V), 1);
    CU_ASSERT_EQUAL(vk_diag_counts(W, G), 0);
    CU_ASSERT_EQUAL(vk_diag_counts(W, P), 0);
    CU_ASSERT_EQUAL(vk_diag_counts(I, V), 0);
    CU_ASSERT_EQUAL(vk_diag_counts(VK_DEBUG_UTILS_MESSAGE_SEVERITY_VERBOSE_BIT_EXT, V), 0);
}

/* The arithmetic of the device time on made-up timestamps (no device): a 36-bit counter that wraps between two
 * timestamps, garbage above the valid bits, 2.5 ns a tick; groups: start, input conversion, node 0, node 2, output
 * conversion. Expected values by hand: spans 50, 80, 100, 1000 ticks; total 1230 ticks. */
static void test_device_time_math(void)
{
    vk_ctx c;
    memset(&c, 0, sizeof c);
    c.ts_bits = 36;
    c.ts_period = 2.5f;
    const uint64_t top = (uint64_t)1 << 36;
    uint64_t ts[5] = {top - 100, top - 50, 30 | ((uint64_t)7 << 50), 130, 1130};
    int32_t group[5] = {-1, -1, 0, 2, -1};
    vk_graph vg;
    memset(&vg, 0, sizeof vg);
    vg.ctx = &c;
    vg.qpool = (VkQueryPool)(uintptr_t)1; /* never used as a handle here */
    vg.n_queries = 5;
    vg.group_node = group;
    vg.ts = ts;
    double total = 0, node[4];
    CU_ASSERT_EQUAL(vk_graph_device_time(&vg, &total, node, 4), 0); /* no run read yet */
    vg.ts_valid = 1;
    CU_ASSERT_EQUAL_FATAL(vk_graph_device_time(&vg, &total, node, 4), 1);
    CU_ASSERT_DOUBLE_EQUAL(total, 1230 * 2.5e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(node[0], 80 * 2.5e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(node[1], -1, 0);
    CU_ASSERT_DOUBLE_EQUAL(node[2], 100 * 2.5e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(node[3], -1, 0);
    CU_ASSERT_EQUAL(vk_graph_device_time(&vg, &total, node, 2), 1); /* fewer slots than nodes: node 2 dropped */
    CU_ASSERT_DOUBLE_EQUAL(node[0], 80 * 2.5e-6, 1e-12);
    CU_ASSERT_EQUAL(vk_graph_device_time(&vg, NULL, NULL, 0), 1);
    ts[3] = 20; /* before ts[2]: out of order */
    CU_ASSERT_EQUAL(vk_graph_device_time(&vg, &total, node, 4), 0);
    c.ts_bits = 64; /* the full counter: the same spans without the wrap */
    uint64_t ts64[5] = {1000, 1050, 1130, 1230, 2230};
    vg.ts = ts64;
    CU_ASSERT_EQUAL_FATAL(vk_graph_device_time(&vg, &total, node, 4), 1);
    CU_ASSERT_DOUBLE_EQUAL(total, 1230 * 2.5e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(node[2], 100 * 2.5e-6, 1e-12);
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
    CU_ASSERT_EQUAL(knob(ctx, "precision", "fp64", &m), PAR_ERROR); /* the modes: test_vulkan_precision.c */
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "fp16_relaxed"));
    CU_ASSERT_EQUAL(knob(ctx, "threads", "2", &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "timestamps=0|1"));
    CU_ASSERT_EQUAL(knob(ctx, "timestamps", "yes", &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "not 0 or 1"));
    CU_ASSERT_EQUAL(knob(ctx, "timestamps", "0", &m), PAR_OK);
    CU_ASSERT_EQUAL(knob(ctx, "validate", "0", &m), PAR_OK); /* already off: nothing to do */
    be->destroy(ctx);
}

/* y = relu(x) + c, x [1, 5, 2, 3] (NC4HW4 inside, a padded second channel block), c [5, 1, 1] a constant broadcast
 * over H and W. Run twice with different inputs: the replayed command buffer must see the new input. */
static void test_replay(void)
{
    const par_backend *be;
    void *ctx = open_backend(&be);
    if (!ctx) PAR_TEST_SKIP(m.text);
    vk_replay r;
    float x[30], y[30];
    void *prep = vk_replay_run(be, ctx, &r, x, y, &m);
    CU_ASSERT_PTR_NOT_NULL(prep);
    be->release(ctx, prep);
    be->destroy(ctx);
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

/* relu(x) then add(relu, c): x [1, C, H, W], c [C, 1, 1] broadcast. The graph lives in `t` (a caller's struct). */
typedef struct two_nodes {
    par_value v[4];
    par_node nodes[2];
    par_graph_desc g;
    float c[8];
} two_nodes;

static void two_nodes_init(two_nodes *t, int64_t C, int64_t H, int64_t W)
{
    static const int32_t in0[1] = {0}, out0[1] = {1}, in1[2] = {1, 2}, out1[1] = {3}, gin[1] = {0}, gout[1] = {3};
    memset(t, 0, sizeof *t);
    for (int i = 0; i < 8; i++) t->c[i] = 0.25f * (float)(i - 3);
    int64_t n = C * H * W;
    t->v[0] = (par_value){.name = "x", .dtype = PAR_DTYPE_F32, .rank = 4, .dims = {1, C, H, W}, .numel = n,
                          .kind = PAR_VALUE_INPUT, .producer = -1, .quant_axis = -1};
    t->v[1] = (par_value){.name = "r", .dtype = PAR_DTYPE_F32, .rank = 4, .dims = {1, C, H, W}, .numel = n,
                          .kind = PAR_VALUE_NODE, .producer = 0, .quant_axis = -1};
    t->v[2] = (par_value){.name = "c", .dtype = PAR_DTYPE_F32, .rank = 3, .dims = {C, 1, 1}, .numel = C,
                          .kind = PAR_VALUE_CONST, .producer = -1, .data = t->c, .quant_axis = -1};
    t->v[3] = (par_value){.name = "y", .dtype = PAR_DTYPE_F32, .rank = 4, .dims = {1, C, H, W}, .numel = n,
                          .kind = PAR_VALUE_NODE, .producer = 1, .quant_axis = -1};
    t->nodes[0] = (par_node){.name = "relu0", .op = "relu", .n_inputs = 1, .inputs = in0, .n_outputs = 1,
                             .outputs = out0};
    t->nodes[1] = (par_node){.name = "add0", .op = "add", .n_inputs = 2, .inputs = in1, .n_outputs = 1,
                             .outputs = out1};
    t->g = (par_graph_desc){.name = "two", .n_values = 4, .values = t->v, .n_nodes = 2, .nodes = t->nodes,
                            .n_inputs = 1, .inputs = gin, .n_outputs = 1, .outputs = gout};
}

/* The outputs of two_nodes for x[i] = (i % 9) - 4: exact (small integers and quarters). */
static int two_nodes_bad(const two_nodes *t, const float *y)
{
    int64_t hw = t->v[0].dims[2] * t->v[0].dims[3];
    int bad = 0;
    for (int64_t i = 0; i < t->v[0].numel; i++) {
        float x = (float)(i % 9) - 4.0f;
        bad += y[i] != (x > 0 ? x : 0.0f) + t->c[i / hw];
    }
    return bad;
}

/* validate=1: a graph with nothing wrong reports nothing; a descriptor whose range runs past its buffer (planted at
 * prepare) and a command buffer submitted while it is still pending (planted at run) each come back once, naming
 * the rule. */
static void test_validate(void)
{
    const par_backend *be;
    void *ctx = open_backend(&be);
    if (!ctx) PAR_TEST_SKIP(m.text);
    par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    par_diagnostics_fn diag = (par_diagnostics_fn)be->get_proc(ctx, PAR_PROC_DIAGNOSTICS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(diag);
    par_status st = knob(ctx, "validate", "1", &m);
    if (st == PAR_UNSUPPORTED) {
        CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "vulkan-validationlayers"));
        be->destroy(ctx);
        PAR_TEST_SKIP(m.text);
    }
    CU_ASSERT_EQUAL_FATAL(st, PAR_OK);
    CU_ASSERT_EQUAL(knob(ctx, "validate", "2", &m), PAR_ERROR);
    char text[2048];
    two_nodes t;
    two_nodes_init(&t, 5, 2, 3);
    float x[30], y[30];
    for (int i = 0; i < 30; i++) x[i] = (float)(i % 9) - 4.0f;
    const void *ins[1] = {x};
    void *outs[1] = {y};

    /* Clean: nothing after prepare, nothing after two runs, and the values are right. */
    void *prep = NULL;
    CU_ASSERT_EQUAL_FATAL(be->prepare(ctx, &t.g, &prep, &m), PAR_OK);
    text[0] = 0;
    CU_ASSERT_EQUAL(diag(ctx, prep, text, sizeof text), 0u);
    if (text[0]) fprintf(stderr, "unexpected: %s\n", text);
    CU_ASSERT_EQUAL(be->bind(ctx, prep, ins, outs, &m), PAR_OK);
    for (int k = 0; k < 2; k++) {
        CU_ASSERT_EQUAL(be->run(ctx, prep, &m), PAR_OK);
        CU_ASSERT_EQUAL(diag(ctx, prep, text, sizeof text), 0u);
    }
    CU_ASSERT_EQUAL(two_nodes_bad(&t, y), 0);

    /* At run: the command buffer is submitted twice, the second time while the first is pending. */
    vk_ctx *c = ctx;
    c->test_break = VK_BREAK_RESUBMIT;
    CU_ASSERT_EQUAL(be->run(ctx, prep, &m), PAR_OK);
    size_t need = diag(ctx, prep, NULL, 0); /* asking the length forgets nothing */
    CU_ASSERT(need > 0);
    CU_ASSERT_EQUAL(diag(ctx, prep, text, sizeof text), need);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "vulkan validation: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "VUID-vkQueueSubmit-pCommandBuffers-00071"));
    PAR_TEST_NOTE("at run: %s\n", text);
    CU_ASSERT_PTR_NULL(strchr(text, '\n'));
    CU_ASSERT_EQUAL(strlen(text) + 1, need);
    CU_ASSERT_EQUAL(diag(ctx, prep, text, sizeof text), 0u); /* each message once */
    c->test_break = 0;
    be->release(ctx, prep);

    /* At prepare: an unused descriptor slot's range runs past the end of its buffer. A short buffer truncates. */
    c->test_break = VK_BREAK_DESC_RANGE;
    prep = NULL;
    CU_ASSERT_EQUAL_FATAL(be->prepare(ctx, &t.g, &prep, &m), PAR_OK);
    char small[24];
    need = diag(ctx, prep, small, sizeof small);
    CU_ASSERT(need > sizeof small);
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);
    CU_ASSERT_EQUAL(diag(ctx, prep, text, sizeof text), 0u); /* it was reported, truncated */
    c->test_break = 0;
    be->release(ctx, prep);
    c->test_break = VK_BREAK_DESC_RANGE;
    CU_ASSERT_EQUAL_FATAL(be->prepare(ctx, &t.g, &prep, &m), PAR_OK);
    CU_ASSERT(diag(ctx, prep, text, sizeof text) > 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "VUID-VkDescriptorBufferInfo-range"));
    PAR_TEST_NOTE("at prepare: %s\n", text);
    c->test_break = 0;
    be->release(ctx, prep);

    /* At prepare, synchronization validation: add reads relu's output with no barrier after relu wrote it. */
    c->test_break = VK_BREAK_BARRIER;
    CU_ASSERT_EQUAL_FATAL(be->prepare(ctx, &t.g, &prep, &m), PAR_OK);
    CU_ASSERT(diag(ctx, prep, text, sizeof text) > 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "SYNC-HAZARD-READ"));
    PAR_TEST_NOTE("at prepare, no barrier: %s\n", text);
    c->test_break = 0;
    be->release(ctx, prep);
    be->destroy(ctx);
}

/* Without the layer on the loader's path, validate=1 is UNSUPPORTED naming the layer and its package; validate=0
 * needs nothing. */
static void test_validate_missing_layer(void)
{
    const par_backend *be;
    void *ctx = open_backend(&be);
    if (!ctx) PAR_TEST_SKIP(m.text);
    par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    const char *old = getenv("VK_LAYER_PATH");
    char *saved = old ? strdup(old) : NULL;
    setenv("VK_LAYER_PATH", "/nonexistent-parity-layers", 1);
    par_status st = knob(ctx, "validate", "1", &m);
    if (saved) setenv("VK_LAYER_PATH", saved, 1);
    else unsetenv("VK_LAYER_PATH");
    free(saved);
    CU_ASSERT_EQUAL(st, PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "VK_LAYER_KHRONOS_validation"));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "vulkan-validationlayers"));
    CU_ASSERT_EQUAL(knob(ctx, "validate", "0", &m), PAR_OK);
    be->destroy(ctx);
}

/* GPU timestamps: nothing before a run; after one, a positive total, each node positive and within the total, their
 * sum within it, and -1 for node slots beyond the graph; nothing with timestamps=0. */
static void test_device_time(void)
{
    const par_backend *be;
    void *ctx = open_backend(&be);
    if (!ctx) PAR_TEST_SKIP(m.text);
    vk_ctx *c = ctx;
    if (c->ts_bits == 0 || !(c->ts_period > 0)) {
        be->destroy(ctx);
        PAR_TEST_SKIP("the device's compute queue has no timestamps (timestampValidBits 0)");
    }
    par_device_time_fn dt = (par_device_time_fn)be->get_proc(ctx, PAR_PROC_DEVICE_TIME);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dt);
    two_nodes t;
    two_nodes_init(&t, 8, 64, 64);
    int64_t n = t.v[0].numel;
    float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    for (int64_t i = 0; i < n; i++) x[i] = (float)(i % 9) - 4.0f;
    const void *ins[1] = {x};
    void *outs[1] = {y};
    void *prep = NULL;
    CU_ASSERT_EQUAL_FATAL(be->prepare(ctx, &t.g, &prep, &m), PAR_OK);
    double total = -7, node[4] = {-7, -7, -7, -7};
    CU_ASSERT_EQUAL(dt(ctx, prep, &total, node, 4), 0); /* no run yet */
    /* The groups: the start, the input's conversion, relu, add, the output's conversion (no node). */
    const vk_graph *vg = prep;
    CU_ASSERT_EQUAL_FATAL(vg->n_queries, 5u);
    CU_ASSERT(vg->group_node[1] == -1 && vg->group_node[2] == 0 && vg->group_node[3] == 1 && vg->group_node[4] == -1);
    CU_ASSERT_EQUAL(be->bind(ctx, prep, ins, outs, &m), PAR_OK);
    for (int round = 0; round < 3; round++) {
        double t0 = par_now_s();
        CU_ASSERT_EQUAL_FATAL(be->run(ctx, prep, &m), PAR_OK);
        double wall_ms = (par_now_s() - t0) * 1e3;
        CU_ASSERT_EQUAL_FATAL(dt(ctx, prep, &total, node, 4), 1);
        CU_ASSERT(total > 0);
        CU_ASSERT(node[0] > 0 && node[0] <= total);
        CU_ASSERT(node[1] > 0 && node[1] <= total);
        CU_ASSERT(node[0] + node[1] <= total); /* the edge conversions take the rest */
        CU_ASSERT(node[2] == -1 && node[3] == -1);
        PAR_TEST_NOTE("device time (%u valid bits, %g ns a tick): total %.4f ms, relu %.4f, add %.4f; wall %.4f ms\n",
                      c->ts_bits, (double)c->ts_period, total, node[0], node[1], wall_ms);
    }
    CU_ASSERT_EQUAL(two_nodes_bad(&t, y), 0);
    be->release(ctx, prep);
    be->destroy(ctx);

    /* timestamps=0: no query pool, nothing measured. */
    ctx = open_backend(&be);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
    par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    CU_ASSERT_EQUAL(knob(ctx, "timestamps", "0", &m), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(be->prepare(ctx, &t.g, &prep, &m), PAR_OK);
    CU_ASSERT_EQUAL(be->bind(ctx, prep, ins, outs, &m), PAR_OK);
    CU_ASSERT_EQUAL(be->run(ctx, prep, &m), PAR_OK);
    CU_ASSERT_EQUAL(dt(ctx, prep, &total, node, 4), 0);
    CU_ASSERT_EQUAL(two_nodes_bad(&t, y), 0);
    be->release(ctx, prep);
    be->destroy(ctx);
    free(x);
    free(y);
}

/* Every VK_CALL of prepare and run in turn fails with VK_ERROR_DEVICE_LOST, then with VK_ERROR_OUT_OF_DEVICE_MEMORY
 * (the call is not made): prepare or run is an ERROR naming the result; after a lost device the context refuses to
 * prepare or run again, naming the call; after an out-of-memory at run the next run works and is right. */
static void test_faults(void)
{
    const par_backend *be;
    void *ctx = open_backend(&be);
    if (!ctx) PAR_TEST_SKIP(m.text);
    be->destroy(ctx);
    static const VkResult results[2] = {VK_ERROR_DEVICE_LOST, VK_ERROR_OUT_OF_DEVICE_MEMORY};
    two_nodes t;
    two_nodes_init(&t, 5, 2, 3);
    float x[30], y[30];
    for (int i = 0; i < 30; i++) x[i] = (float)(i % 9) - 4.0f;
    const void *ins[1] = {x};
    void *outs[1] = {y};
    for (int k = 0; k < 2; k++) {
        const char *name = vk_result_name(results[k]);
        int sites = 0, at_run = 0;
        for (int nth = 1; nth < 100; nth++) {
            ctx = open_backend(&be);
            CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
            vk_ctx *c = ctx;
            c->fail_nth = nth;
            c->fail_result = results[k];
            void *prep = NULL;
            par_status st = be->prepare(ctx, &t.g, &prep, &m);
            if (st == PAR_OK) {
                CU_ASSERT_EQUAL(be->bind(ctx, prep, ins, outs, &m), PAR_OK);
                st = be->run(ctx, prep, &m);
                at_run += st != PAR_OK;
            }
            int fired = c->fail_nth == 0;
            if (!fired) { /* past the last call: everything ran */
                CU_ASSERT_EQUAL(st, PAR_OK);
                CU_ASSERT_EQUAL(two_nodes_bad(&t, y), 0);
                be->release(ctx, prep);
                be->destroy(ctx);
                break;
            }
            sites++;
            CU_ASSERT_EQUAL(st, PAR_ERROR);
            CU_ASSERT_PTR_NOT_NULL(strstr(m.text, name));
            if (results[k] == VK_ERROR_DEVICE_LOST) {
                CU_ASSERT(c->lost[0] != 0);
                if (prep) {
                    CU_ASSERT_EQUAL(be->run(ctx, prep, &m), PAR_ERROR);
                    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "was lost"));
                }
                void *prep2 = NULL;
                CU_ASSERT_EQUAL(be->prepare(ctx, &t.g, &prep2, &m), PAR_ERROR);
                CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "was lost"));
                CU_ASSERT_PTR_NULL(prep2);
            } else if (prep) {
                for (int i = 0; i < 30; i++) y[i] = NAN;
                CU_ASSERT_EQUAL(be->run(ctx, prep, &m), PAR_OK);
                CU_ASSERT_EQUAL(two_nodes_bad(&t, y), 0);
            }
            be->release(ctx, prep);
            be->destroy(ctx);
        }
        PAR_TEST_NOTE("%s planted at %d calls (%d of them in run)\n", name, sites, at_run);
        CU_ASSERT(sites >= 10); /* prepare's creations and run's calls */
        CU_ASSERT(at_run >= 3); /* reset, submit, wait (and the query read with timestamps) */
    }
}

static int count_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    ++*(int *)data;
    return 0;
}

static int loaded_objects(void)
{
    int n = 0;
    dl_iterate_phdr(count_object, &n);
    return n;
}

/* This process's threads (/proc/self/status), or -1. */
static int thread_count(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    int n = -1;
    while (n < 0 && fgets(line, sizeof line, f))
        if (strncmp(line, "Threads:", 8) == 0) n = atoi(line + 8);
    fclose(f);
    return n;
}

/* The first context pins what its instance loaded: destroying it unloads nothing (the objects a child of the fork
 * server then finds loaded), and leaves no thread behind (the driver's warm-up joined its device's threads: a fork
 * copies only the calling thread). Then the warm start as the fork server does it (init and destroy here), and a
 * forked child that creates its own context and runs the replay graph: it must compute every element. */
static void test_pin_and_fork(void)
{
    const par_backend *be;
    void *ctx = open_backend(&be);
    if (!ctx) PAR_TEST_SKIP(m.text);
    int with = loaded_objects();
    be->destroy(ctx);
    int after = loaded_objects();
    const char *env = getenv("PARITY_VULKAN_WARM");
    if (!env || strcmp(env, "0") != 0) {
        CU_ASSERT(vk_pinned_libraries() > 0); /* the loader's ICDs at least */
        CU_ASSERT_EQUAL(after, with);
    }
    CU_ASSERT_EQUAL(thread_count(), 1);
    PAR_TEST_NOTE("pinned %d objects; %d loaded with the instance, %d after its destroy\n", vk_pinned_libraries(),
                  with, after);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        unsigned before = CU_get_number_of_failures();
        void *c2 = open_backend(&be);
        if (!c2) _exit(2);
        vk_replay r;
        float x[30], y[30];
        void *prep = vk_replay_run(be, c2, &r, x, y, &m);
        int ok = prep && CU_get_number_of_failures() == before;
        be->release(c2, prep);
        be->destroy(c2);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The context's pipelines (vk_pipes.c): the first prepare creates them, a second prepare of the same graph on the same
 * context (a kept backend child's next case) creates none and still computes every element of both inputs
 * (vk_replay_run checks them), and after release and destroy nothing is left to leak (LeakSanitizer). */
static void test_pipes(void)
{
    const par_backend *be;
    void *ctx = open_backend(&be);
    if (!ctx) PAR_TEST_SKIP(m.text);
    vk_ctx *c = ctx;
    int64_t created[3] = {0};
    for (int round = 0; round < 3; round++) {
        vk_replay r;
        float x[30], y[30];
        void *prep = vk_replay_run(be, ctx, &r, x, y, &m);
        CU_ASSERT_PTR_NOT_NULL(prep);
        be->release(ctx, prep);
        created[round] = c->pipes_created;
    }
    CU_ASSERT(created[0] > 0);
    CU_ASSERT_EQUAL(created[1], created[0]);
    CU_ASSERT_EQUAL(created[2], created[0]);
    CU_ASSERT_EQUAL(c->n_pipes, (int)created[0]);
    PAR_TEST_NOTE("%lld pipelines created by the first prepare, none by the next two\n", (long long)created[0]);
    be->destroy(ctx);
}

static const CU_TestInfo tests[] = {
    {"nc4_offsets", test_nc4_offsets},
    {"arena", test_arena},
    {"choose_device", test_choose_device},
    {"diag_policy", test_diag_policy},
    {"device_time_math", test_device_time_math},
    {"knobs", test_knobs},
    {"replay", test_replay},
    {"large_grid", test_large_grid},
    {"validate", test_validate},
    {"validate_missing_layer", test_validate_missing_layer},
    {"device_time", test_device_time},
    {"faults", test_faults},
    {"pin_and_fork", test_pin_and_fork},
    {"pipes", test_pipes},
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
