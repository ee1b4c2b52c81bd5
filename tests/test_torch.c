/*
 * test_torch.c - unit tests of the torch backend (backends/torch/): the library object looked for and a missing
 * one reported as UNSUPPORTED with its path (in a child, before anything loads libtorch here), the knobs and their
 * errors, the declared requantization scheme per engine, a small float graph (conv2d with bias -> add -> relu) on
 * small integers whose every output is exact in f32 and known by hand, in modes eager and mobile, a quantized conv2d
 * (qu8, and qs8 through the quint8 shift) on QNNPACK and oneDNN whose output integers are known by hand, a quantized
 * add whose every sum is an exact tie (QNNPACK rounds it half away from zero, oneDNN half to even, as declared), and
 * the
 * UNSUPPORTED reasons (f16, a quantized node in a float mode, a float graph in mode=quantized, asymmetric quantized
 * padding). Tests that need libparity_torch.so are skipped when it is not found; built without libtorch, the file
 * checks only that no torch backend is registered.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/graph.h"
#include "exec/exec.h"
#include "backend_absent.h"
#include "tmain.h"

#ifdef PAR_HAVE_TORCH
const par_backend *par_backend_torch(void);

typedef struct knob {
    const char *key, *value;
} knob;

/* init + knobs; NULL (and a message) when a knob fails. */
static void *open_ctx(const knob *knobs, int n, par_msg *msg)
{
    const par_backend *be = par_backend_torch();
    void *ctx = NULL;
    if (be->init(&ctx, msg) != PAR_OK) return NULL;
    par_set_knob_fn set = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    for (int i = 0; i < n; i++)
        if (set(ctx, knobs[i].key, knobs[i].value, msg) != PAR_OK) {
            be->destroy(ctx);
            return NULL;
        }
    return ctx;
}

/* supports every node, prepare, bind, run once; one input, one output. */
static par_status run_graph(const knob *knobs, int nk, const par_graph_desc *g, const void *in, void *out, par_msg *msg)
{
    const par_backend *be = par_backend_torch();
    void *ctx = open_ctx(knobs, nk, msg), *prep = NULL;
    if (!ctx) return PAR_ERROR;
    par_status st = PAR_OK;
    for (int32_t i = 0; i < g->n_nodes && st == PAR_OK; i++) st = be->supports(ctx, g, i, msg);
    if (st == PAR_OK) st = be->prepare(ctx, g, &prep, msg);
    const void *ins[1] = {in};
    void *outs[1] = {out};
    if (st == PAR_OK) st = be->bind(ctx, prep, ins, outs, msg);
    if (st == PAR_OK) st = be->run(ctx, prep, msg);
    be->release(ctx, prep);
    be->destroy(ctx);
    return st;
}

/* The first supports() answer that is not PAR_OK (its message in msg), or PAR_OK. */
static par_status first_refusal(const knob *knobs, int nk, const par_graph_desc *g, par_msg *msg)
{
    const par_backend *be = par_backend_torch();
    void *ctx = open_ctx(knobs, nk, msg);
    if (!ctx) return PAR_ERROR;
    par_status st = PAR_OK;
    for (int32_t i = 0; i < g->n_nodes && st == PAR_OK; i++) st = be->supports(ctx, g, i, msg);
    be->destroy(ctx);
    return st;
}

/* Whether libparity_torch.so loads here (a float relu is supported). */
static int have_lib(par_msg *why)
{
    par_graph *gr = par_graph_create("probe");
    int64_t d[1] = {2};
    par_msg m = {{0}};
    int32_t x = par_graph_add_input(gr, "x", PAR_DTYPE_F32, 1, d, &m);
    par_out_spec o = {.name = "y"};
    par_graph_add_node(gr, "relu", "r", 1, &x, 0, NULL, &o, &m);
    par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &m);
    par_graph_finalize(gr, &m);
    par_status st = first_refusal(NULL, 0, par_graph_desc_of(gr), why);
    par_graph_destroy(gr);
    return st == PAR_OK;
}

/* In a child (this process has not loaded libtorch yet, and must not keep a failed search): with
 * PARITY_TORCH_LIB naming a file that does not exist, init succeeds and supports is UNSUPPORTED naming the path. */
static void test_missing_library(void)
{
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        setenv("PARITY_TORCH_LIB", "/nonexistent/dir/libparity_torch.so", 1);
        par_msg m = {{0}};
        int ok = !have_lib(&m) && strstr(m.text, "/nonexistent/dir/libparity_torch.so") &&
                 strstr(m.text, "no torch library");
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* lib= naming a missing file is a knob error with the path */
    par_msg msg = {{0}};
    knob k = {"lib", "/nonexistent/dir/libparity_torch.so"};
    CU_ASSERT_PTR_NULL(open_ctx(&k, 1, &msg));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "/nonexistent/dir/libparity_torch.so"));
}

static void test_knobs(void)
{
    const par_backend *be = par_backend_torch();
    par_msg msg = {{0}};
    static const knob bad[] = {{"mode", "fast"}, {"qengine", "tflite"}, {"threads", "0"}, {"threads", "2x"},
                               {"colour", "blue"}};
    static const char *const says[] = {"eager, mobile, quantized", "qnnpack, onednn", "[1, 64]", "[1, 64]",
                                       "unknown knob 'colour'"};
    for (int i = 0; i < 5; i++) {
        msg.text[0] = 0;
        CU_ASSERT_PTR_NULL(open_ctx(&bad[i], 1, &msg));
        CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, says[i]));
    }
    knob good[3] = {{"mode", "mobile"}, {"threads", "2"}, {"qengine", "onednn"}};
    void *ctx = open_ctx(good, 3, &msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
    char buf[512];
    ((par_describe_fn)be->get_proc(ctx, PAR_PROC_DESCRIBE))(ctx, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "mode=mobile;qengine=onednn;threads=2;requant=fp32"));
    CU_ASSERT_EQUAL(((par_requant_fn)be->get_proc(ctx, PAR_PROC_REQUANT))(ctx), PAR_REQUANT_FP32);
    be->destroy(ctx);
    ctx = open_ctx(NULL, 0, &msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
    ((par_describe_fn)be->get_proc(ctx, PAR_PROC_DESCRIBE))(ctx, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "mode=eager;qengine=qnnpack;threads=1;requant=pytorch_qnnp"));
    CU_ASSERT_EQUAL(((par_requant_fn)be->get_proc(ctx, PAR_PROC_REQUANT))(ctx), PAR_REQUANT_PYTORCH_QNNP);
    be->destroy(ctx);
}

/* x = 1..9 as [1,1,3,3]; conv2d 2x2 (w0 = [[1,0],[0,1]], w1 = [[1,1],[0,0]], bias [1, -1]) -> add -5 -> relu.
 * By hand: conv ch0 = x[i][j] + x[i+1][j+1] + 1 = [[7,9],[13,15]]; ch1 = x[i][j] + x[i][j+1] - 1 = [[2,4],[8,10]];
 * minus 5: [[2,4],[8,10]] and [[-3,-1],[3,5]]; relu: [2,4,8,10, 0,0,3,5]. Every value is exact in f32. */
static par_graph *float_graph(par_dtype dt)
{
    par_msg msg = {{0}};
    par_graph *gr = par_graph_create("small");
    int64_t xd[4] = {1, 1, 3, 3}, wd[4] = {2, 1, 2, 2}, bd[1] = {2}, cd[1] = {1};
    static const float w[8] = {1, 0, 0, 1, 1, 1, 0, 0}, b[2] = {1, -1}, c[1] = {-5};
    static const uint16_t wh[8] = {0x3c00, 0, 0, 0x3c00, 0x3c00, 0x3c00, 0, 0}, bh[2] = {0x3c00, 0xbc00},
                          ch[1] = {0xc500};
    int f16 = dt == PAR_DTYPE_F16;
    int32_t ins[3] = {par_graph_add_input(gr, "x", dt, 4, xd, &msg),
                      par_graph_add_const(gr, "w", dt, 4, wd, f16 ? (const void *)wh : w, &msg),
                      par_graph_add_const(gr, "b", dt, 1, bd, f16 ? (const void *)bh : b, &msg)};
    par_out_spec oc = {.name = "c"}, oa = {.name = "a"}, oy = {.name = "y"};
    par_graph_add_node(gr, "conv2d", "conv", 3, ins, 0, NULL, &oc, &msg);
    int32_t add_in[2] = {par_graph_find_value(gr, "c"),
                         par_graph_add_const(gr, "k", dt, 1, cd, f16 ? (const void *)ch : c, &msg)};
    par_graph_add_node(gr, "add", "add", 2, add_in, 0, NULL, &oa, &msg);
    int32_t r_in[1] = {par_graph_find_value(gr, "a")};
    par_graph_add_node(gr, "relu", "relu", 1, r_in, 0, NULL, &oy, &msg);
    par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg);
    if (par_graph_finalize(gr, &msg) != PAR_OK) {
        par_graph_destroy(gr);
        return NULL;
    }
    return gr;
}

static void check_float_mode(const char *mode)
{
    par_msg msg = {{0}};
    if (!have_lib(&msg)) PAR_TEST_SKIP("libparity_torch.so not found");
    par_graph *gr = float_graph(PAR_DTYPE_F32);
    CU_ASSERT_PTR_NOT_NULL_FATAL(gr);
    float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, y[8];
    static const float want[8] = {2, 4, 8, 10, 0, 0, 3, 5};
    memset(y, 0xff, sizeof y);
    knob k = {"mode", mode};
    par_status st = run_graph(&k, 1, par_graph_desc_of(gr), x, y, &msg);
    CU_ASSERT_EQUAL(st, PAR_OK);
    if (st != PAR_OK) printf("  (%s: %s)\n", mode, msg.text);
    CU_ASSERT_EQUAL(memcmp(y, want, sizeof want), 0);
    par_graph_destroy(gr);
}

static void test_float_eager(void)
{
    check_float_mode("eager");
}

static void test_float_mobile(void)
{
    check_float_mode("mobile");
}

/* A quantized conv2d 2x2 on x [1,1,3,3] = 1..9 at scale 0.5 (real 0.5 .. 4.5), w = [[4,0],[0,4]] qs8 at 0.25 (real
 * [[1,0],[0,1]]), bias 8 (i32 at 0.125: real 1.0), output scale 1: y = 0.5 (x[i][j] + x[i+1][j+1]) + 1 =
 * [4, 5, 7, 8], exact (no rounding). As qu8 (zero points 0) and as qs8 (input zero point -3: q = x - 3; output zero
 * point -5: [-1, 0, 2, 3]), which runs through PyTorch's quint8 with both shifted by 128. */
static par_graph *qconv_graph(par_dtype dt, const int64_t *pad)
{
    par_msg msg = {{0}};
    par_graph *gr = par_graph_create("qconv");
    int64_t xd[4] = {1, 1, 3, 3}, wd[4] = {1, 1, 2, 2}, bd[1] = {1};
    static const int8_t w[4] = {4, 0, 0, 4};
    static const int32_t b[1] = {8};
    int qs8 = dt == PAR_DTYPE_QS8;
    int32_t ins[3] = {par_graph_add_input(gr, "x", dt, 4, xd, &msg),
                      par_graph_add_const(gr, "w", PAR_DTYPE_QS8, 4, wd, w, &msg),
                      par_graph_add_const(gr, "b", PAR_DTYPE_I32, 1, bd, b, &msg)};
    par_graph_set_quant(gr, ins[0], 0.5f, qs8 ? -3 : 0, &msg);
    par_graph_set_quant(gr, ins[1], 0.25f, 0, &msg);
    par_graph_set_quant(gr, ins[2], 0.125f, 0, &msg);
    par_out_spec oy = {.name = "y", .dtype = dt, .scale = 1.0f, .zero_point = qs8 ? -5 : 0};
    par_attr at[1] = {par_a_ints("padding", 4, pad)};
    par_graph_add_node(gr, "conv2d", "conv", 3, ins, 1, at, &oy, &msg);
    par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg);
    if (par_graph_finalize(gr, &msg) != PAR_OK) {
        par_graph_destroy(gr);
        return NULL;
    }
    return gr;
}

/* One variant in a child process of its own: oneDNN's quantized conv2d keeps the output zero point of the first call
 * in a process for later calls of the same shape (findings.md, T7), so each variant gets a fresh process, as each
 * case does under parity run. The child's exit status is the number of wrong outputs (100: the run failed). */
static int qconv_variant(const char *engine, par_dtype dt)
{
    static const int64_t pad0[4] = {0, 0, 0, 0};
    knob k[2] = {{"mode", "quantized"}, {"qengine", engine}};
    int qs8 = dt == PAR_DTYPE_QS8;
    par_graph *gr = qconv_graph(dt, pad0);
    if (!gr) return 100;
    uint8_t x[9], y[4];
    for (int i = 0; i < 9; i++) x[i] = (uint8_t)(int8_t)(i + 1 - (qs8 ? 3 : 0));
    memset(y, 0xa5, sizeof y);
    par_msg msg = {{0}};
    par_status st = run_graph(k, 2, par_graph_desc_of(gr), x, y, &msg);
    par_graph_destroy(gr);
    if (st != PAR_OK) {
        printf("  (%s %s: %s)\n", engine, par_dtype_name(dt), msg.text);
        return 100;
    }
    static const int want[4] = {4, 5, 7, 8};
    int bad = 0;
    for (int i = 0; i < 4; i++) bad += (qs8 ? (int)(int8_t)y[i] : (int)y[i]) != want[i] - (qs8 ? 5 : 0);
    if (bad) printf("  (%s %s: got %d %d %d %d)\n", engine, par_dtype_name(dt), y[0], y[1], y[2], y[3]);
    return bad;
}

static void check_qconv(const char *engine)
{
    par_msg msg = {{0}};
    if (!have_lib(&msg)) PAR_TEST_SKIP("libparity_torch.so not found");
    for (int v = 0; v < 2; v++) {
        fflush(stdout);
        pid_t pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0) _exit(qconv_variant(engine, v ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8));
        int status = 0;
        CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
        CU_ASSERT(WIFEXITED(status));
        CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
    }
}

static void test_qconv_qnnpack(void)
{
    check_qconv("qnnpack");
}

static void test_qconv_onednn(void)
{
    check_qconv("onednn");
}

/* Requantization ties, measured: x (qu8, scale 1, zero point 128) holding 1, 3, 5, -1, -3, 7 plus a constant zero,
 * out at scale 2: every sum is an exact half step (0.5, 1.5, 2.5, -0.5, -1.5, 3.5). PyTorch's QNNPACK add rounds half
 * away from zero (pytorch_qnnp, the scheme declared for add), oneDNN's (ATen's generic quantized add) half to even
 * (fp32). The scheme each prepared node declares is checked too. */
static void check_add_ties(const char *engine, const int *want, par_requant scheme)
{
    par_msg msg = {{0}};
    if (!have_lib(&msg)) PAR_TEST_SKIP("libparity_torch.so not found");
    par_graph *gr = par_graph_create("addties");
    int64_t d[1] = {6};
    static const uint8_t zero[6] = {128, 128, 128, 128, 128, 128};
    int32_t ins[2] = {par_graph_add_input(gr, "x", PAR_DTYPE_QU8, 1, d, &msg),
                      par_graph_add_const(gr, "z", PAR_DTYPE_QU8, 1, d, zero, &msg)};
    par_graph_set_quant(gr, ins[0], 1.0f, 128, &msg);
    par_graph_set_quant(gr, ins[1], 1.0f, 128, &msg);
    par_out_spec oy = {.name = "y", .dtype = PAR_DTYPE_QU8, .scale = 2.0f, .zero_point = 128};
    par_graph_add_node(gr, "add", "add", 2, ins, 0, NULL, &oy, &msg);
    par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg);
    CU_ASSERT_FATAL(par_graph_finalize(gr, &msg) == PAR_OK);
    uint8_t x[6] = {129, 131, 133, 127, 125, 135}, y[6];
    memset(y, 0, sizeof y);
    knob k[2] = {{"mode", "quantized"}, {"qengine", engine}};
    const par_backend *be = par_backend_torch();
    void *ctx = open_ctx(k, 2, &msg), *prep = NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
    const par_graph_desc *g = par_graph_desc_of(gr);
    par_status st = be->supports(ctx, g, 0, &msg);
    if (st == PAR_OK) st = be->prepare(ctx, g, &prep, &msg);
    const void *in[1] = {x};
    void *out[1] = {y};
    if (st == PAR_OK) st = be->bind(ctx, prep, in, out, &msg);
    if (st == PAR_OK) st = be->run(ctx, prep, &msg);
    CU_ASSERT_EQUAL(st, PAR_OK);
    if (st == PAR_OK) {
        par_node_requant_fn nr = (par_node_requant_fn)be->get_proc(ctx, PAR_PROC_NODE_REQUANT);
        CU_ASSERT_EQUAL(nr(ctx, prep, 0), scheme);
        for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL((int)y[i] - 128, want[i]);
    }
    be->release(ctx, prep);
    be->destroy(ctx);
    par_graph_destroy(gr);
}

static void test_add_ties_qnnpack(void)
{
    static const int away[6] = {1, 2, 3, -1, -2, 4};
    check_add_ties("qnnpack", away, PAR_REQUANT_PYTORCH_QNNP);
}

static void test_add_ties_onednn(void)
{
    static const int even[6] = {0, 2, 2, 0, -2, 4};
    check_add_ties("onednn", even, PAR_REQUANT_FP32);
}

static void test_unsupported_reasons(void)
{
    par_msg msg = {{0}};
    if (!have_lib(&msg)) PAR_TEST_SKIP("libparity_torch.so not found");
    knob eager = {"mode", "eager"}, quant = {"mode", "quantized"};
    par_graph *f16 = float_graph(PAR_DTYPE_F16), *f32 = float_graph(PAR_DTYPE_F32);
    static const int64_t pad0[4] = {0, 0, 0, 0}, asym[4] = {1, 0, 0, 1};
    par_graph *q = qconv_graph(PAR_DTYPE_QU8, pad0), *qa = qconv_graph(PAR_DTYPE_QU8, asym);
    CU_ASSERT_FATAL(f16 && f32 && q && qa);
    CU_ASSERT_EQUAL(first_refusal(&eager, 1, par_graph_desc_of(f16), &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "f16"));
    CU_ASSERT_EQUAL(first_refusal(&eager, 1, par_graph_desc_of(q), &msg), PAR_UNSUPPORTED);
    CU_ASSERT(strstr(msg.text, "with mode=quantized") != NULL);
    CU_ASSERT_EQUAL(first_refusal(&quant, 1, par_graph_desc_of(f32), &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "float graph in mode=quantized"));
    CU_ASSERT_EQUAL(first_refusal(&quant, 1, par_graph_desc_of(qa), &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "symmetric padding"));
    CU_ASSERT_EQUAL(first_refusal(&quant, 1, par_graph_desc_of(q), &msg), PAR_OK);
    par_graph_destroy(f16);
    par_graph_destroy(f32);
    par_graph_destroy(q);
    par_graph_destroy(qa);
}

static const CU_TestInfo tests[] = {
    {"a missing library object: UNSUPPORTED with its path", test_missing_library}, /* first: nothing loaded yet */
    {"knobs, describe, requantization scheme per engine", test_knobs},
    {"float conv2d -> add -> relu, eager", test_float_eager},
    {"float conv2d -> add -> relu, mobile (XNNPACK)", test_float_mobile},
    {"quantized conv2d qu8 / qs8, QNNPACK", test_qconv_qnnpack},
    {"quantized conv2d qu8 / qs8, oneDNN", test_qconv_onednn},
    {"quantized add ties: QNNPACK half away from zero", test_add_ties_qnnpack},
    {"quantized add ties: oneDNN half to even", test_add_ties_onednn},
    {"UNSUPPORTED reasons", test_unsupported_reasons},
    CU_TEST_INFO_NULL,
};
#else
PAR_TEST_BACKEND_ABSENT("torch", "built without libtorch (make deps installs libtorch-dev)")
#endif

PAR_TEST_MAIN("test_torch", tests)
