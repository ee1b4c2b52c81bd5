/*
 * test_quant_8da4w.c - hand-computed values of linear_8da4w (docs/quantization.md, "linear_8da4w"): the per-row
 * dynamic int8 parameters, the packed int4 weights (low nibble first, two's complement), the block scales, the tie
 * of the activation quantization in the budget; and the clear errors of malformed nodes (odd K, a block that does not
 * divide K, a wrong scales shape, packed bytes with quantization parameters other than scale 1, zero point 0).
 */
#include <math.h>
#include <string.h>

#include "core/graph.h"
#include "reference/reference.h"
#include "tmain.h"

/* x [1, K] f32 input; w qu8 [O, K / 2] packed bytes (scale wscale, zero point 0); s f32 [O, K / block]; b f32 [O].
 * NULL with the shape inference's message in *m when the graph is malformed. */
static par_graph *q4_graph(int64_t k, int64_t o, int64_t block, const uint8_t *w, int64_t wcols, const float *s,
                           int64_t scols, const float *b, float wscale, par_msg *m)
{
    par_graph *g = par_graph_create("t");
    int64_t xd[2] = {1, k}, wd[2] = {o, wcols}, sd[2] = {o, scols}, bd[1] = {o};
    int32_t ids[4];
    ids[0] = par_graph_add_input(g, "x", PAR_DTYPE_F32, 2, xd, m);
    ids[1] = par_graph_add_const(g, "w", PAR_DTYPE_QU8, 2, wd, w, m);
    par_graph_set_quant(g, ids[1], wscale, 0, m);
    ids[2] = par_graph_add_const(g, "s", PAR_DTYPE_F32, 2, sd, s, m);
    ids[3] = par_graph_add_const(g, "b", PAR_DTYPE_F32, 1, bd, b, m);
    par_attr at[1] = {par_a_int("block", block)};
    par_out_spec os = {"y", PAR_DTYPE_F32, 0, 0};
    int32_t nd = par_graph_add_node(g, "linear_8da4w", NULL, 4, ids, 1, at, &os, m);
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

static par_status ref(const par_graph *g, const float *x, double *v, double *e, par_msg *m)
{
    const par_graph_desc *d = par_graph_desc_of(g);
    par_prec p = par_prec_for(PAR_ARITH_F32);
    par_ref_result *r = NULL;
    const void *inputs[1] = {x};
    par_status st = par_ref_run(d, &p, inputs, &r, m);
    if (st != PAR_OK) return st;
    const par_rt *y = &r->values[d->outputs[0]];
    for (int64_t i = 0; i < y->numel; i++) v[i] = y->v[i], e[i] = y->e[i];
    par_ref_result_destroy(r);
    return PAR_OK;
}

/* The reference on the weights, scales and bias of test_value (K = 4, O = 2, block 2) for the row x. */
static void example(const float *x, double *v, double *e)
{
    static const float s[4] = {0.5f, 0.25f, 1.0f, 2.0f}, b[2] = {0.25f, -1.0f};
    static const uint8_t w[4] = {129, 247, 62, 80};
    par_msg m = {{0}};
    par_graph *g = q4_graph(4, 2, 2, w, 2, s, 2, b, 1.0f, &m);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT_FATAL(ref(g, x, v, e, &m) == PAR_OK);
    par_graph_destroy(g);
}

/* x = -1, 0.5, 2, 0: lo = -1, hi = 2, inv = 255 / 3 = 85 (exact in f32), lo inv = -85, hi inv = 170; the zero point
 * from the min: (-128 - 85) + (127 + 170) = 84 > 0, so zp = -128 + 85 = -43; s_x = (float)(1 / 85).
 * x inv = -85, 42.5 (a tie: rint gives 42, a backend may give 43), 170, 0 -> q - zp = -85, 42, 170, 0.
 * Weights (K = 4, block 2), byte j holds k = 2j in its low nibble:
 *   row 0:  1, -8, 7, -1 -> bytes 0x81 = 129 (low 1, high 8 = -8), 0xF7 = 247 (low 7, high 15 = -1)
 *   row 1: -2,  3, 0,  5 -> bytes 0x3E = 62 (low 14 = -2, high 3), 0x50 = 80 (low 0, high 5)
 * Scales: row 0: 0.5, 0.25; row 1: 1, 2. Bias 0.25, -1.
 *   row 0: block 0 = -85 * 1 + 42 * -8 = -421, block 1 = 170 * 7 + 0 * -1 = 1190; -421 * 0.5 + 1190 * 0.25 = 87
 *   row 1: block 0 = -85 * -2 + 42 * 3 = 296,  block 1 = 170 * 0 + 0 * 5 = 0;     296 * 1 + 0 * 2 = 296
 * y = 87 s_x + 0.25, 296 s_x - 1. The tie of x[1] moves y by s_x times the weight's scale times |w|: row 0 0.5 * 8 =
 * 4 s_x, row 1 1 * 3 = 3 s_x; the rest of the budget is f32 rounding, a few 1e-7 relative.
 * Swapping the nibbles (row 0 as -8, 1, -1, 7) gives -85 * -8 + 42 * 1 = 722 in block 0; reading -8 as 8 gives
 * -85 + 336 = 251: both far outside the budget. */
static void test_value(void)
{
    static const float x[4] = {-1.0f, 0.5f, 2.0f, 0.0f};
    double v[2], e[2];
    example(x, v, e);
    const double sx = (double)(1.0f / 85.0f);
    CU_ASSERT(fabs(v[0] - (87 * sx + 0.25)) <= 1e-12);
    CU_ASSERT(fabs(v[1] - (296 * sx - 1)) <= 1e-12);
    CU_ASSERT(e[0] >= 4 * sx && e[0] <= 4 * sx + 1e-5);
    CU_ASSERT(e[1] >= 3 * sx && e[1] <= 3 * sx + 1e-5);
    CU_ASSERT(fabs(v[0] - (722 * 0.5 + 297.5) * sx - 0.25) > e[0]); /* nibbles swapped: judged wrong */
    CU_ASSERT(fabs(v[0] - (251 * 0.5 + 297.5) * sx - 0.25) > e[0]); /* -8 read as 8: judged wrong */
}

/* An all-zero row: lo = hi = 0, inv = 1; the error terms -128 + 0 and 127 + 0 sum to -1, not > 0, so zp = 127 -
 * hi inv = 127; every q = 127 = zp: y = bias exactly. The budget still covers a backend that splits the zero
 * point off (XNNPACK: sum q w - zp sum w, each scaled in f32): row 0's magnitudes 127 (|1 - 8| + |1 - 8|) 0.5 +
 * 127 (|7 - 1| + |7 - 1|) 0.25 = 1270, times gamma(9) = 9 2^-24 (nb = 2 blocks), about 6.8e-4. */
static void test_zero_row(void)
{
    static const float x[4] = {0};
    double v[2], e[2];
    example(x, v, e);
    CU_ASSERT(v[0] == 0.25 && v[1] == -1.0);
    CU_ASSERT(e[0] > 6e-4 && e[0] < 7.5e-4);
}

static void expect_error(int64_t k, int64_t block, int64_t wcols, int64_t scols, float wscale, const char *want)
{
    static const uint8_t w[64] = {0};
    static const float s[64] = {0}, b[2] = {0}, x[8] = {0};
    par_msg m = {{0}};
    par_graph *g = q4_graph(k, 2, block, w, wcols, s, scols, b, wscale, &m);
    if (g) { /* the packed bytes' parameters are the kernel's check */
        double v[2], e[2];
        CU_ASSERT(ref(g, x, v, e, &m) == PAR_ERROR);
        par_graph_destroy(g);
    }
    if (!strstr(m.text, want)) fprintf(stderr, "\n  got '%s', want '%s'\n", m.text, want);
    CU_ASSERT(strstr(m.text, want) != NULL);
}

static void test_errors(void)
{
    expect_error(5, 5, 2, 1, 1.0f, "K = 5 is odd");
    expect_error(6, 4, 3, 1, 1.0f, "attribute block: 4 must be even, at least 2 and divide K = 6");
    expect_error(8, 4, 4, 1, 1.0f, "input 2 (scales): shape must be [2, 2]");
    expect_error(8, 4, 8, 2, 1.0f, "input 1 (weight): shape must be [O, 4]");
    expect_error(8, 4, 4, 2, 0.5f, "input 1 (weight): packed int4 bytes must be qu8 with scale 1");
}

static const CU_TestInfo tests[] = {
    {"value, nibble order, sign, tie", test_value},
    {"all-zero row", test_zero_row},
    {"malformed nodes", test_errors},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("quant_8da4w", tests)
