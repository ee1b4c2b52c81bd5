/*
 * test_quant_qd8.c - hand-computed values of linear_qd8 and matmul_qd8 (docs/quantization.md, "Dynamic int8
 * activations (qd8)"): XNNPACK's qd8 parameters per row (token) and per tensor, qs8 weights per channel, the tie of
 * the activation quantization in the budget (and none where the backend promises the rule's integers), an all-zero
 * row, matmul's [K, N] weights, and the clear errors of malformed nodes.
 */
#include <math.h>
#include <string.h>

#include "core/graph.h"
#include "reference/reference.h"
#include "tmain.h"

/* x f32 [2, 4]; linear: w qs8 [2, 4] (per channel on axis 0 with scales 0.5, 0.25, or per tensor scale 0.5 with
 * zero point wz), bias 0.25, -1; matmul: a [1, 2, 4], b qs8 [4, 2] = w's transpose per channel on axis 1 (axis:
 * another axis, for the errors). NULL with the message in *m when the graph is malformed. */
static par_graph *qd8_graph(int mm, const char *per, int axis, int32_t wz, par_dtype wdt, par_msg *m)
{
    static const int8_t w[8] = {1, -8, 7, -1, -2, 3, 0, 5}, wt[8] = {1, -2, -8, 3, 7, 0, -1, 5};
    static const float cs[2] = {0.5f, 0.25f}, b[2] = {0.25f, -1.0f};
    par_graph *g = par_graph_create("t");
    int64_t xd[3] = {1, 2, 4}, wd[2] = {mm ? 4 : 2, mm ? 2 : 4}, bd[1] = {2};
    int32_t ids[3];
    ids[0] = mm ? par_graph_add_input(g, "x", PAR_DTYPE_F32, 3, xd, m) : par_graph_add_input(g, "x", PAR_DTYPE_F32, 2,
                                                                                            xd + 1, m);
    ids[1] = par_graph_add_const(g, "w", wdt, 2, wd, mm ? wt : w, m);
    if (axis >= 0)
        par_graph_set_channel_quant(g, ids[1], axis, cs, 2, m);
    else
        par_graph_set_quant(g, ids[1], 0.5f, wz, m);
    if (!mm) ids[2] = par_graph_add_const(g, "b", PAR_DTYPE_F32, 1, bd, b, m);
    par_attr at[1] = {par_a_str("per", per)};
    par_out_spec os = {"y", PAR_DTYPE_F32, 0, 0};
    int32_t nd = par_graph_add_node(g, mm ? "matmul_qd8" : "linear_qd8", NULL, mm ? 2 : 3, ids, 1, at, &os, m);
    if (nd < 0) {
        par_graph_destroy(g);
        return NULL;
    }
    par_graph_mark_output(g, par_graph_desc_of(g)->nodes[nd].outputs[0], m);
    if (par_graph_finalize(g, m) != PAR_OK) {
        par_graph_destroy(g);
        return NULL;
    }
    return g;
}

/* The reference's 4 outputs (row-major [2, 2]) for x; exact: the backend promises the rule's integers. */
static void ref(int mm, const char *per, const float *x, int exact, double *v, double *e)
{
    par_msg m = {{0}};
    par_graph *g = qd8_graph(mm, per, mm ? 1 : 0, 0, PAR_DTYPE_QS8, &m);
    CU_ASSERT_FATAL(g != NULL);
    const par_graph_desc *d = par_graph_desc_of(g);
    par_prec p = par_prec_for(PAR_ARITH_F32);
    p.requant_exact = exact;
    par_ref_result *r = NULL;
    const void *inputs[1] = {x};
    CU_ASSERT_FATAL(par_ref_run(d, &p, inputs, &r, &m) == PAR_OK);
    const par_rt *y = &r->values[d->outputs[0]];
    CU_ASSERT_FATAL(y->numel == 4);
    for (int64_t i = 0; i < 4; i++) v[i] = y->v[i], e[i] = y->e[i];
    par_ref_result_destroy(r);
    par_graph_destroy(g);
}

/* Row 0: x = -1, 0.5, 2, 0: lo = -1, hi = 2, inv = 255 / 3 = 85 (exact in f32); (-128 - 85) + (127 + 170) = 84 > 0,
 * so zp = -128 + 85 = -43; s_x = (float)(1 / 85). x inv = -85, 42.5 (a tie: rint gives 42), 170, 0, so q - zp =
 * -85, 42, 170, 0. Weights row 0: 1, -8, 7, -1 (scale 0.5), row 1: -2, 3, 0, 5 (scale 0.25):
 *   o = 0: -85 + 42 (-8) + 170 (7) = 769, y = 769 0.5 s_x + 0.25 = 384.5 s_x + 0.25
 *   o = 1: 170 + 126 = 296, y = 296 0.25 s_x - 1 = 74 s_x - 1
 * The tie of x[1] may take 43: it moves y by s_x 0.5 8 = 4 s_x (o = 0) and s_x 0.25 3 = 0.75 s_x (o = 1).
 * Row 1: x = 0, 0.25, 0, -0.5. Per token: lo = -0.5, hi = 0.25, inv = 255 / 0.75 = 340; (-128 - 170) + (127 + 85) =
 * -86, so zp = 127 - 85 = 42; s_x = (float)(1 / 340); x inv = 0, 85, 0, -170 (no tie), q - zp = 0, 85, 0, -170:
 *   o = 0: 85 (-8) - 170 (-1) = -510, y = -255 s_x + 0.25;  o = 1: 255 - 850 = -595, y = -148.75 s_x - 1.
 * Per tensor (both rows): lo = -1, hi = 2 as row 0, so row 0 is the same, and row 1's x inv = 0, 21.25, 0, -42.5 ->
 * 0, 21, 0, -42 (a tie, half to even):
 *   o = 0: 21 (-8) - 42 (-1) = -126, y = -63 s_x + 0.25;  o = 1: 63 - 210 = -147, y = -36.75 s_x - 1
 * and the tie moves y by s_x 0.5 1 = 0.5 s_x and s_x 0.25 5 = 1.25 s_x. */
static const float X[8] = {-1.0f, 0.5f, 2.0f, 0.0f, 0.0f, 0.25f, 0.0f, -0.5f};

static void test_per_token(void)
{
    double v[4], e[4];
    ref(0, "token", X, 0, v, e);
    const double s85 = (double)(1.0f / 85.0f), s340 = (double)(1.0f / 340.0f);
    CU_ASSERT(fabs(v[0] - (384.5 * s85 + 0.25)) <= 1e-12);
    CU_ASSERT(fabs(v[1] - (74 * s85 - 1)) <= 1e-12);
    CU_ASSERT(fabs(v[2] - (-255 * s340 + 0.25)) <= 1e-12);
    CU_ASSERT(fabs(v[3] - (-148.75 * s340 - 1)) <= 1e-12);
    CU_ASSERT(e[0] >= 4 * s85 && e[0] <= 4 * s85 + 1e-5);
    CU_ASSERT(e[1] >= 0.75 * s85 && e[1] <= 0.75 * s85 + 1e-5);
    CU_ASSERT(e[2] < 1e-5 && e[3] < 1e-5); /* no tie in row 1: f32 roundings only */
    /* the tie taken the other way (43: q - zp = 43) is within the budget; the per-tensor parameters are not */
    CU_ASSERT(fabs(v[0] - ((769 - 8) * 0.5 * s85 + 0.25)) <= e[0]);
    CU_ASSERT(fabs(v[2] - (-63 * s85 + 0.25)) > 100 * e[2]);
}

static void test_per_tensor(void)
{
    double v[4], e[4];
    ref(0, "tensor", X, 0, v, e);
    const double s85 = (double)(1.0f / 85.0f);
    CU_ASSERT(fabs(v[0] - (384.5 * s85 + 0.25)) <= 1e-12);
    CU_ASSERT(fabs(v[1] - (74 * s85 - 1)) <= 1e-12);
    CU_ASSERT(fabs(v[2] - (-63 * s85 + 0.25)) <= 1e-12);
    CU_ASSERT(fabs(v[3] - (-36.75 * s85 - 1)) <= 1e-12);
    CU_ASSERT(e[2] >= 0.5 * s85 && e[2] <= 0.5 * s85 + 1e-5);
    CU_ASSERT(e[3] >= 1.25 * s85 && e[3] <= 1.25 * s85 + 1e-5);
}

/* A backend that promises the rule's integers (qnnpack's strict): no tie window, so 43 in place of 42 fails. */
static void test_exact(void)
{
    double v[4], e[4];
    ref(0, "token", X, 1, v, e);
    CU_ASSERT(e[0] < 1e-5);
    CU_ASSERT(fabs(v[0] - ((769 - 8) * 0.5 * (double)(1.0f / 85.0f) + 0.25)) > e[0]);
}

/* An all-zero row: lo = hi = 0, inv = 1; (-128 + 0) + (127 + 0) = -1, so zp = 127 and every q = zp: y = bias. */
static void test_zero_row(void)
{
    static const float x[8] = {-1.0f, 0.5f, 2.0f, 0.0f, 0, 0, 0, 0};
    double v[4], e[4];
    ref(0, "token", x, 0, v, e);
    CU_ASSERT(v[2] == 0.25 && v[3] == -1.0);
}

/* matmul_qd8: a [1, 2, 4] times b [4, 2] (w's transpose, scales per column) is the linear without its bias. */
static void test_matmul(void)
{
    double v[4], e[4];
    ref(1, "token", X, 0, v, e);
    const double s85 = (double)(1.0f / 85.0f), s340 = (double)(1.0f / 340.0f);
    CU_ASSERT(fabs(v[0] - 384.5 * s85) <= 1e-12);
    CU_ASSERT(fabs(v[1] - 74 * s85) <= 1e-12);
    CU_ASSERT(fabs(v[2] - -255 * s340) <= 1e-12);
    CU_ASSERT(fabs(v[3] - -148.75 * s340) <= 1e-12);
    ref(1, "tensor", X, 0, v, e);
    CU_ASSERT(fabs(v[2] - -63 * s85) <= 1e-12);
    CU_ASSERT(fabs(v[3] - -36.75 * s85) <= 1e-12);
}

static void expect_error(int mm, int axis, int32_t wz, par_dtype wdt, const char *want)
{
    par_msg m = {{0}};
    par_graph *g = qd8_graph(mm, "token", axis, wz, wdt, &m);
    CU_ASSERT(g == NULL);
    if (g) par_graph_destroy(g);
    if (!strstr(m.text, want)) fprintf(stderr, "\n  got '%s', want '%s'\n", m.text, want);
    CU_ASSERT(strstr(m.text, want) != NULL);
}

static void test_errors(void)
{
    expect_error(0, -1, 3, PAR_DTYPE_QS8, "input 1 (w): quantized with a non-zero zero point");
    expect_error(0, -1, 0, PAR_DTYPE_QU8, "input 1 (w): dtype qu8, expected qs8");
}

/* Scales per channel along the input axis of a square [2, 2] weight (linear: axis 1; matmul: axis 0). */
static void expect_axis_error(int mm, const char *want)
{
    static const int8_t w[4] = {1, 2, 3, 4};
    static const float cs[2] = {0.5f, 0.25f};
    par_msg m = {{0}};
    par_graph *g = par_graph_create("t");
    int64_t xd[2] = {3, 2}, wd[2] = {2, 2};
    int32_t ids[2];
    ids[0] = par_graph_add_input(g, "x", PAR_DTYPE_F32, 2, xd, &m);
    ids[1] = par_graph_add_const(g, "w", PAR_DTYPE_QS8, 2, wd, w, &m);
    CU_ASSERT(par_graph_set_channel_quant(g, ids[1], mm ? 0 : 1, cs, 2, &m) == PAR_OK);
    par_out_spec os = {"y", PAR_DTYPE_F32, 0, 0};
    CU_ASSERT(par_graph_add_node(g, mm ? "matmul_qd8" : "linear_qd8", NULL, 2, ids, 0, NULL, &os, &m) < 0);
    if (!strstr(m.text, want)) fprintf(stderr, "\n  got '%s', want '%s'\n", m.text, want);
    CU_ASSERT(strstr(m.text, want) != NULL);
    par_graph_destroy(g);
}

static void test_axis_errors(void)
{
    expect_axis_error(0, "input 1 (w): quantized per channel on another axis; expected per channel on axis 0");
    expect_axis_error(1, "input 1 (w): quantized per channel on another axis; expected per channel on axis 1");
}

static const CU_TestInfo tests[] = {
    {"per token: values, tie, wrong parameters", test_per_token},
    {"per tensor: values, ties", test_per_tensor},
    {"rule's integers promised: no tie window", test_exact},
    {"all-zero row", test_zero_row},
    {"matmul_qd8", test_matmul},
    {"malformed nodes", test_errors},
    {"weights per channel on the input axis", test_axis_errors},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("quant_qd8", tests)
