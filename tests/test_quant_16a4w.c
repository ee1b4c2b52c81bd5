/*
 * test_quant_16a4w.c - hand-computed integers of linear_16a4w (docs/quantization.md, "16a4w"): packed int4 weights
 * (low nibble first, two's complement), integer block multipliers, per-channel scales, the i32 bias, an exact tie
 * decided by the declared scheme (half to even for fp32, half up for rndnu) and recorded as a tie; the weight forms
 * (u4 with zero points, high nibble first, bf16 channel scales) and the bf16 rounding; the int32 bound of
 * the accumulator at both sides of it; and the clear errors of malformed nodes.
 */
#include <math.h>
#include <string.h>

#include "core/graph.h"
#include "core/tensor.h"
#include "reference/reference.h"
#include "tmain.h"

typedef struct a4w_spec {
    int64_t k, o, block;
    const uint8_t *w;      /* [o, k / 2] */
    const int8_t *m;       /* [o, k / block] */
    const float *chs;      /* [o] channel scales */
    const int32_t *b;      /* [o] or NULL */
    par_dtype xdt, sdt;    /* x's dtype (qs16), the block scales' dtype (qs8) */
    float wscale;          /* the packed bytes' scale (1) */
    const char *w4, *nibbles, *scales; /* the weight form's attributes (docs/quantization.md, "4-bit weights:
                                        * forms"); NULL: none given (the defaults) */
    int64_t zp;                        /* w4_zp, with w4 */
} a4w_spec;

/* x [1, K] with scale 2^-6; y qs16 [1, O] with scale 2^-8. NULL with the message in *m when malformed. */
static par_graph *a4w_graph(const a4w_spec *sp, par_msg *m)
{
    par_graph *g = par_graph_create("t");
    int64_t xd[2] = {1, sp->k}, wd[2] = {sp->o, sp->k / 2}, sd[2] = {sp->o, sp->k / sp->block}, bd[1] = {sp->o};
    int32_t ids[4];
    ids[0] = par_graph_add_input(g, "x", sp->xdt, 2, xd, m);
    par_graph_set_quant(g, ids[0], 0x1p-6f, 0, m);
    ids[1] = par_graph_add_const(g, "w", PAR_DTYPE_QU8, 2, wd, sp->w, m);
    par_graph_set_quant(g, ids[1], sp->wscale, 0, m);
    ids[2] = par_graph_add_const(g, "s", sp->sdt, 2, sd, sp->m, m);
    if (sp->sdt == PAR_DTYPE_QS8) par_graph_set_channel_quant(g, ids[2], 0, sp->chs, sp->o, m);
    if (sp->b) {
        ids[3] = par_graph_add_const(g, "b", PAR_DTYPE_I32, 1, bd, sp->b, m);
        par_graph_set_quant(g, ids[3], 0x1p-9f, 0, m);
    }
    par_attr at[5] = {par_a_int("block", sp->block), par_a_str("w4", sp->w4 ? sp->w4 : "s4"), par_a_int("w4_zp", sp->zp),
                      par_a_str("nibbles", sp->nibbles ? sp->nibbles : "lo"),
                      par_a_str("scales", sp->scales ? sp->scales : "f32")};
    par_out_spec os = {"y", PAR_DTYPE_QS16, 0x1p-8f, 0};
    int32_t nd = par_graph_add_node(g, "linear_16a4w", NULL, sp->b ? 4 : 3, ids, sp->w4 ? 5 : 1, at, &os, m);
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

/* The reference's integers v (and ties: NaN where none) under scheme s. */
static par_status ref(const par_graph *g, const int16_t *x, par_requant s, double *v, double *tie, par_msg *m)
{
    const par_graph_desc *d = par_graph_desc_of(g);
    par_prec p = par_prec_for(PAR_ARITH_F32);
    p.requant = s;
    p.requant_exact = 1;
    par_ref_result *r = NULL;
    const void *inputs[1] = {x};
    par_status st = par_ref_run(d, &p, inputs, &r, m);
    if (st != PAR_OK) return st;
    const par_rt *y = &r->values[d->outputs[0]];
    for (int64_t i = 0; i < y->numel; i++) {
        v[i] = y->v[i];
        if (tie) tie[i] = y->tie ? y->tie[i] : NAN;
    }
    par_ref_result_destroy(r);
    return PAR_OK;
}

/* K = 4, O = 2, block 2; x = 3, -2, 5, 1.
 * Weights, byte j holds k = 2j in its low nibble:
 *   row 0:  1, -8, 7, -1 -> bytes 0x81 = 129 (low 1, high 8 = -8), 0xF7 = 247 (low 7, high 15 = -1)
 *   row 1: -2,  3, 0,  5 -> bytes 0x3E = 62 (low 14 = -2, high 3), 0x50 = 80 (low 0, high 5)
 * Multipliers: row 0: 2, 3; row 1: 1, 5. Channel scales 2^-3, 2^-4. Bias 1, -4.
 *   row 0: block 0 = 3 - 2 (-8) = 19, x 2 = 38; block 1 = 35 - 1 = 34, x 3 = 102; + 1 = 141
 *   row 1: block 0 = -6 - 6 = -12, x 1 = -12;    block 1 = 0 + 5 = 5, x 5 = 25;     - 4 = 9
 * Ratios s_x s[o] / s_out: 2^-6 2^-3 / 2^-8 = 1/2 and 2^-6 2^-4 / 2^-8 = 1/4: 141 / 2 = 70.5, an exact tie (fp32:
 * half to even, 70; rndnu: half up, 71), and 9 / 4 = 2.25 -> 2.
 * Wrong readings: -8 read as unsigned 8 gives row 0 block 0 = 3 - 16 = -13, total 77 -> 38; the nibbles swapped
 * (row 0 as -8, 1, -1, 7) gives -24 - 2 = -26 and -5 + 7 = 2, total -45 -> -22; block 1's multiplier on block 0 gives
 * 57 + 102 + 1 = 160 -> 80: each far from 70. */
static const uint8_t W[4] = {129, 247, 62, 80};
static const int8_t M[4] = {2, 3, 1, 5};
static const float CHS[2] = {0x1p-3f, 0x1p-4f};
static const int32_t B[2] = {1, -4};

static void test_value(void)
{
    static const int16_t x[4] = {3, -2, 5, 1};
    a4w_spec sp = {4, 2, 2, W, M, CHS, B, PAR_DTYPE_QS16, PAR_DTYPE_QS8, 1.0f, NULL, NULL, NULL, 0};
    par_msg m = {{0}};
    par_graph *g = a4w_graph(&sp, &m);
    CU_ASSERT_FATAL(g != NULL);
    double v[2], tie[2];
    CU_ASSERT_FATAL(ref(g, x, PAR_REQUANT_FP32, v, tie, &m) == PAR_OK);
    CU_ASSERT(v[0] == 70 && v[1] == 2);
    CU_ASSERT(tie[0] == 70.5 && isnan(tie[1]));
    CU_ASSERT_FATAL(ref(g, x, PAR_REQUANT_RNDNU, v, tie, &m) == PAR_OK);
    CU_ASSERT(v[0] == 71 && v[1] == 2);
    par_graph_destroy(g);
    /* per channel is block = K with one multiplier: row 0 = (3 - 2 (-8) + 35 - 1) 2 + 1 = 107 -> 53.5 -> 54 (fp32) */
    static const int8_t m1[2] = {2, 1};
    a4w_spec pc = {4, 2, 4, W, m1, CHS, B, PAR_DTYPE_QS16, PAR_DTYPE_QS8, 1.0f, NULL, NULL, NULL, 0};
    g = a4w_graph(&pc, &m);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT_FATAL(ref(g, x, PAR_REQUANT_FP32, v, tie, &m) == PAR_OK);
    CU_ASSERT(v[0] == 54 && tie[0] == 53.5); /* row 1: -12 + 5 - 4 = -11 -> -2.75 -> -3 */
    CU_ASSERT(v[1] == -3 && isnan(tie[1]));
    par_graph_destroy(g);
}

/* The weight forms (par_int4_form). test_value's weights as u4 with zero point 8, high nibble first: codes w + 8,
 *   row 0:  9, 0, 15, 7 -> bytes 0x90 = 144 (weight 0 in bits 4-7), 0xF7 = 247
 *   row 1:  6, 11, 8, 13 -> bytes 0x6B = 107, 0x8D = 141
 * give the same integers (70 with the tie 70.5 under fp32, and 2). u4 with zero point 3 (weights in [-3, 12]), low
 * nibble first: row 0 weights 12, -3, 0, 4 (codes 15, 0, 3, 7: bytes 0x0F = 15, 0x73 = 115), row 1 -1, 2, 5, -3
 * (codes 2, 5, 8, 0: bytes 0x52 = 82, 0x08 = 8):
 *   row 0: block 0 = 36 + 6 = 42, x 2 = 84; block 1 = 0 + 4 = 4, x 3 = 12; + 1 = 97 -> 48.5: fp32 48, rndnu 49
 *   row 1: block 0 = -3 - 4 = -7;           block 1 = 25 - 3 = 22, x 5 = 110; - 4 = 99 -> 24.75 -> 25
 * (the zero point ignored: row 0 = (45 + 0) 2 + (0 + 7) 3 + 1 = 112 -> 56, far from 48; the order ignored for the
 * first: row 0 read as 0, 9, 7, 15 = -8, 1, -1, 7, as test_value's swapped nibbles, -22). A zero point outside the
 * code's range is refused at the node; bf16 channel scales pass when each is a bfloat16 (2^-3, 2^-4) and are refused
 * naming the element otherwise (0.1). */
static void test_forms(void)
{
    static const int16_t x[4] = {3, -2, 5, 1};
    static const uint8_t whi[4] = {144, 247, 107, 141}, wzp[4] = {15, 115, 82, 8};
    a4w_spec sp = {4, 2, 2, whi, M, CHS, B, PAR_DTYPE_QS16, PAR_DTYPE_QS8, 1.0f, "u4", "hi", "bf16", 8};
    par_msg m = {{0}};
    par_graph *g = a4w_graph(&sp, &m);
    CU_ASSERT_FATAL(g != NULL);
    double v[2], tie[2];
    CU_ASSERT_FATAL(ref(g, x, PAR_REQUANT_FP32, v, tie, &m) == PAR_OK);
    CU_ASSERT(v[0] == 70 && v[1] == 2 && tie[0] == 70.5);
    par_graph_destroy(g);
    a4w_spec az = {4, 2, 2, wzp, M, CHS, B, PAR_DTYPE_QS16, PAR_DTYPE_QS8, 1.0f, "u4", "lo", NULL, 3};
    g = a4w_graph(&az, &m);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT_FATAL(ref(g, x, PAR_REQUANT_FP32, v, tie, &m) == PAR_OK);
    CU_ASSERT(v[0] == 48 && v[1] == 25 && tie[0] == 48.5 && isnan(tie[1]));
    CU_ASSERT_FATAL(ref(g, x, PAR_REQUANT_RNDNU, v, tie, &m) == PAR_OK);
    CU_ASSERT(v[0] == 49 && v[1] == 25);
    par_graph_destroy(g);
    a4w_spec bad = az;
    bad.w4 = "s4", bad.zp = 8;
    CU_ASSERT(a4w_graph(&bad, &m) == NULL);
    CU_ASSERT(strstr(m.text, "attribute w4_zp: 8 is outside the codes of w4 = s4 ([-8, 7])") != NULL);
    static const float chs01[2] = {0x1p-3f, 0.1f};
    a4w_spec bf = sp;
    bf.chs = chs01;
    m = (par_msg){{0}};
    g = a4w_graph(&bf, &m);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT(ref(g, x, PAR_REQUANT_FP32, v, tie, &m) == PAR_ERROR);
    CU_ASSERT(strstr(m.text, "input 2 (s): channel scale 1 is 0.100000001, not a bfloat16") != NULL);
    par_graph_destroy(g);
}

/* par_f32_round_bf16 (parity quantize --scale-dtype bf16): to nearest, ties to even, 8 significant bits. */
static void test_bf16_round(void)
{
    CU_ASSERT(par_f32_round_bf16(1.0f + 0x1p-8f) == 1.0f);                 /* a tie, to the even 1 */
    CU_ASSERT(par_f32_round_bf16(1.0f + 3 * 0x1p-8f) == 1.0f + 0x1p-6f);   /* a tie, to the even 1 + 2^-6 */
    CU_ASSERT(par_f32_round_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 1.0f + 0x1p-7f); /* past the tie: up */
    CU_ASSERT(par_f32_round_bf16(-0.1f) == -0x1.9ap-4f);                    /* -0.1 = -0x1.99999ap-4 */
    CU_ASSERT(isinf(par_f32_round_bf16(0x1.ffffep127f)));                  /* past the largest bf16: inf */
    CU_ASSERT(isnan(par_f32_round_bf16(NAN)));
    CU_ASSERT(par_f32_is_bf16(par_f32_round_bf16(0.1f)) && !par_f32_is_bf16(0.1f));
}

/* K = 64, block 32, every x -32768, every nibble -8, every multiplier 127: each term 2^18 x 127, the sum
 * 64 x 2^18 x 127 = 2130706432 = 2^31 - 2^24; with a bias of 2^24 - 1 the accumulator is INT32_MAX exactly (accepted,
 * clamped to 32767), with 2^24 it is 2^31 (refused, naming the element). */
static void test_int32_bound(void)
{
    static uint8_t w[64];
    static int16_t x[64];
    static const int8_t m[4] = {127, 127, 127, 127};
    static const float chs[2] = {0x1p-20f, 0x1p-20f};
    for (int i = 0; i < 64; i++) w[i] = 0x88, x[i] = -32768;
    for (int over = 0; over < 2; over++) {
        const int32_t b[2] = {(1 << 24) - 1 + over, 0};
        a4w_spec sp = {64, 2, 32, w, m, chs, b, PAR_DTYPE_QS16, PAR_DTYPE_QS8, 1.0f, NULL, NULL, NULL, 0};
        par_msg msg = {{0}};
        par_graph *g = a4w_graph(&sp, &msg);
        CU_ASSERT_FATAL(g != NULL);
        double v[2];
        par_status st = ref(g, x, PAR_REQUANT_FP32, v, NULL, &msg);
        if (over) {
            CU_ASSERT(st == PAR_ERROR && strstr(msg.text, "overflows int32") && strstr(msg.text, "element 0"));
        } else {
            CU_ASSERT(st == PAR_OK);
            /* ratio 2^-6 2^-20 / 2^-8 = 2^-18: 2147483647 / 2^18 = 8192.0 (float(acc) = 2^31), 8191.99 for row 1 */
            CU_ASSERT(st == PAR_OK && v[0] == 8192 && v[1] == 8128);
        }
        par_graph_destroy(g);
    }
}

static void expect(const a4w_spec *sp, par_status want_st, const char *want)
{
    static const int16_t x[8] = {0};
    par_msg m = {{0}};
    par_graph *g = a4w_graph(sp, &m);
    if (g) {
        double v[2];
        CU_ASSERT(ref(g, x, PAR_REQUANT_FP32, v, NULL, &m) == want_st);
        par_graph_destroy(g);
    }
    if (!strstr(m.text, want)) fprintf(stderr, "\n  got '%s', want '%s'\n", m.text, want);
    CU_ASSERT(strstr(m.text, want) != NULL);
}

static void test_errors(void)
{
    static const uint8_t w[8] = {0};
    static const int8_t m[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    a4w_spec sp = {8, 2, 4, w, m, CHS, B, PAR_DTYPE_QS16, PAR_DTYPE_QS8, 0.5f, NULL, NULL, NULL, 0};
    expect(&sp, PAR_ERROR, "input 1 (weight): packed int4 bytes must be qu8 with scale 1");
    sp.wscale = 1.0f, sp.sdt = PAR_DTYPE_QU8;
    expect(&sp, PAR_ERROR, "input 2 (block scales): must be qs8 with per-channel scales on axis 0");
    sp.sdt = PAR_DTYPE_QS8, sp.xdt = PAR_DTYPE_QS8;
    expect(&sp, PAR_UNSUPPORTED, "input 0 (x) and output 0 must be qs16");
    sp.xdt = PAR_DTYPE_QS16, sp.block = 3;
    expect(&sp, PAR_ERROR, "attribute block: 3 must be even");
}

static const CU_TestInfo tests[] = {
    {"value, nibble order, multipliers, tie per scheme", test_value},
    {"int32 accumulator bound, both sides", test_int32_bound},
    {"malformed nodes", test_errors},
    {"weight forms: u4 with zero points, high nibble first, bf16 scales", test_forms},
    {"bf16 rounding of scales", test_bf16_round},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("quant_16a4w", tests)
