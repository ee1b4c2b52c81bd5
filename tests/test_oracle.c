/*
 * test_oracle.c - the oracle's own test: a backend that is exactly right passes with its error well under the
 * budget, and the mutations a real bug causes fail: off-by-one padding, transposed weights, bias dropped on one
 * channel, activation clamp missing, one element unwritten, a NaN, an Inf of the wrong sign. The "backend" here is
 * an independent float32 implementation written in this file (direct loops, f32 accumulation in a different order
 * from the reference's).
 */
#include <math.h>
#include <stdlib.h>

#include "core/graph.h"
#include "oracle/oracle.h"
#include "core/prng.h"
#include "core/tensor.h"
#include "tmain.h"

enum { N = 1, C = 6, H = 9, W = 11, O = 8, K = 3 };

typedef struct fixture {
    par_graph *g;
    float x[N * C * H * W], w[O * C * K * K], b[O];
    par_ref_result *ref;
    const par_rt *out; /* reference of the graph output */
} fixture;

/* conv2d 3x3 stride 1 pad 1 + bias, then relu6 */
static void build(fixture *f, uint64_t seed)
{
    par_prng r;
    par_prng_seed(&r, seed);
    for (int i = 0; i < N * C * H * W; i++) f->x[i] = (float)(par_prng_uniform(&r) * 2 - 1);
    for (int i = 0; i < O * C * K * K; i++) f->w[i] = (float)((par_prng_uniform(&r) * 2 - 1) * 0.5);
    for (int i = 0; i < O; i++) f->b[i] = (float)(par_prng_uniform(&r) * 2 - 1);
    par_msg m = {{0}};
    f->g = par_graph_create("oracle");
    int32_t x = par_graph_add_input(f->g, "x", PAR_DTYPE_F32, 4, (int64_t[]){N, C, H, W}, &m);
    int32_t w = par_graph_add_const(f->g, "w", PAR_DTYPE_F32, 4, (int64_t[]){O, C, K, K}, f->w, &m);
    int32_t b = par_graph_add_const(f->g, "b", PAR_DTYPE_F32, 1, (int64_t[]){O}, f->b, &m);
    par_attr a[] = {par_a_ints("padding", 4, (int64_t[]){1, 1, 1, 1})};
    int32_t conv = par_graph_add_node(f->g, "conv2d", "conv", 3, (int32_t[]){x, w, b}, 1, a, NULL, &m);
    CU_ASSERT_FATAL(conv >= 0);
    int32_t y = par_graph_add_node(f->g, "relu6", "act", 1, (int32_t[]){par_graph_desc_of(f->g)->nodes[conv].outputs[0]},
                                   0, NULL, NULL, &m);
    CU_ASSERT_FATAL(y >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(f->g, par_graph_desc_of(f->g)->nodes[y].outputs[0], &m) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(f->g, &m) == PAR_OK);
    par_prec p = par_prec_for(PAR_ARITH_F32);
    const void *ins[] = {f->x};
    CU_ASSERT_FATAL(par_ref_run(par_graph_desc_of(f->g), &p, ins, &f->ref, &m) == PAR_OK);
    const par_graph_desc *d = par_graph_desc_of(f->g);
    f->out = &f->ref->values[d->outputs[0]];
}

static void destroy(fixture *f)
{
    par_ref_result_destroy(f->ref);
    par_graph_destroy(f->g);
}

typedef struct mutation {
    int pad_shift;     /* off-by-one padding: read x at (ih + pad_shift) */
    int transpose;     /* w[o][c][kh][kw] read as w[o][c][kw][kh] */
    int drop_bias_ch;  /* bias of this channel dropped (-1: none) */
    int no_clamp;      /* relu6 missing */
    int reverse_sum;   /* sum in reverse order (a legal reordering) */
    int half;          /* products and partial sums rounded to binary16: precision far below the declared f32 */
} mutation;

static float r16(float x) { return par_f16_to_f32(par_f32_to_f16(x)); }

/* The backend under test: f32 arithmetic throughout. */
static void backend(const fixture *f, mutation mu, float *y)
{
    for (int o = 0; o < O; o++)
        for (int oh = 0; oh < H; oh++)
            for (int ow = 0; ow < W; ow++) {
                float acc = o == mu.drop_bias_ch ? 0.0f : f->b[o];
                for (int t = 0; t < C * K * K; t++) {
                    int tt = mu.reverse_sum ? C * K * K - 1 - t : t;
                    int c = tt / (K * K), kh = (tt / K) % K, kw = tt % K;
                    int ih = oh - 1 + kh + mu.pad_shift, iw = ow - 1 + kw;
                    if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                    int wk = mu.transpose ? ((o * C + c) * K + kw) * K + kh : ((o * C + c) * K + kh) * K + kw;
                    if (mu.half) acc = r16(acc + r16(f->w[wk] * f->x[(c * H + ih) * W + iw]));
                    else acc += f->w[wk] * f->x[(c * H + ih) * W + iw];
                }
                if (!mu.no_clamp) acc = fminf(fmaxf(acc, 0.0f), 6.0f);
                y[(o * H + oh) * W + ow] = acc;
            }
}

static const mutation correct = {.drop_bias_ch = -1};

static void test_correct_backend_passes(void)
{
    for (uint64_t seed = 1; seed <= 5; seed++) {
        fixture f;
        build(&f, seed);
        float y[O * H * W];
        par_metrics m;
        mutation mu = correct;
        backend(&f, mu, y);
        CU_ASSERT_EQUAL(par_oracle_compare(f.out, y, &m), 0);
        CU_ASSERT(m.max_ratio < 0.25); /* a correct f32 backend sits well under its budget */
        mu.reverse_sum = 1;            /* another summation order is just as correct */
        backend(&f, mu, y);
        CU_ASSERT_EQUAL(par_oracle_compare(f.out, y, &m), 0);
        CU_ASSERT(m.max_ratio < 0.25);
        if (seed == 1) PAR_TEST_NOTE("\n    correct f32 conv: max error/budget %.3g ", m.max_ratio);
        destroy(&f);
    }
}

static void expect_fail(mutation mu, const char *what)
{
    fixture f;
    build(&f, 7);
    float y[O * H * W];
    par_metrics m;
    backend(&f, mu, y);
    int64_t bad = par_oracle_compare(f.out, y, &m);
    if (bad == 0) fprintf(stderr, "\n    mutation '%s' was not caught (max ratio %g)\n", what, m.max_ratio);
    CU_ASSERT(bad > 0);
    CU_ASSERT(m.max_ratio > 1.0);
    destroy(&f);
}

static void test_off_by_one_padding_fails(void)
{
    mutation mu = correct;
    mu.pad_shift = 1;
    expect_fail(mu, "off-by-one padding");
}

static void test_transposed_weights_fail(void)
{
    mutation mu = correct;
    mu.transpose = 1;
    expect_fail(mu, "transposed weights");
}

static void test_dropped_bias_channel_fails(void)
{
    mutation mu = correct;
    mu.drop_bias_ch = 5;
    expect_fail(mu, "bias dropped on one channel");
}

static void test_missing_clamp_fails(void)
{
    mutation mu = correct;
    mu.no_clamp = 1;
    expect_fail(mu, "relu6 clamp missing");
}

static void test_unwritten_element_fails(void)
{
    fixture f;
    build(&f, 3);
    float y[O * H * W];
    par_metrics m;
    backend(&f, correct, y);
    /* poisoned by the harness before the run and never written: a NaN pattern */
    uint32_t poison = 0xffffffffu;
    memcpy(&y[17], &poison, sizeof poison);
    CU_ASSERT_EQUAL(par_oracle_compare(f.out, y, &m), 1);
    CU_ASSERT_EQUAL(m.n_nonfinite, 1);
    CU_ASSERT_EQUAL(m.worst_index, 17);
    CU_ASSERT_EQUAL(m.worst_rank, 4);
    CU_ASSERT_EQUAL(m.worst_coords[1], 17 / (H * W)); /* [0, o, oh, ow] */
    CU_ASSERT_EQUAL(m.worst_coords[3], 17 % W);
    destroy(&f);
}

/* NaN/Inf policy on a hand-made reference tensor. */
static void test_nonfinite_policy(void)
{
    par_rt t;
    par_msg msg;
    CU_ASSERT_FATAL(par_rt_alloc(&t, PAR_DTYPE_F32, 1, (int64_t[]){4}, &msg) == PAR_OK);
    t.v[0] = 1.0; t.e[0] = 1e-6;
    t.v[1] = INFINITY; t.e[1] = 0;
    t.v[2] = NAN; t.e[2] = 0;
    t.v[3] = -2.0; t.e[3] = 0;
    par_metrics m;
    float ok[4] = {1.0f, INFINITY, NAN, -2.0f};
    CU_ASSERT_EQUAL(par_oracle_compare(&t, ok, &m), 0);
    float wrong_inf[4] = {1.0f, -INFINITY, NAN, -2.0f};
    CU_ASSERT_EQUAL(par_oracle_compare(&t, wrong_inf, &m), 1);
    float nan_for_finite[4] = {NAN, INFINITY, NAN, -2.0f};
    CU_ASSERT_EQUAL(par_oracle_compare(&t, nan_for_finite, &m), 1);
    CU_ASSERT_EQUAL(m.n_nonfinite, 1);
    float finite_for_nan[4] = {1.0f, INFINITY, 0.0f, -2.0f};
    CU_ASSERT_EQUAL(par_oracle_compare(&t, finite_for_nan, &m), 1);
    float one_ulp[4] = {1.0f, INFINITY, NAN, nextafterf(-2.0f, 0.0f)}; /* zero budget: exact required */
    CU_ASSERT_EQUAL(par_oracle_compare(&t, one_ulp, &m), 1);
    CU_ASSERT_EQUAL(m.max_ulp, 1.0);
    CU_ASSERT_EQUAL(m.n_unbounded, 0);
    /* An infinite budget at a finite reference admits any finite value: it passes, and is counted as not judged. */
    t.e[0] = INFINITY;
    float far[4] = {1e30f, INFINITY, NAN, -2.0f};
    CU_ASSERT_EQUAL(par_oracle_compare(&t, far, &m), 0);
    CU_ASSERT_EQUAL(m.n_unbounded, 1);
    par_rt_free(&t);
}

/* Metrics: NMSE, bias, max abs/rel on known numbers. */
static void test_metrics_values(void)
{
    par_rt t;
    par_msg msg;
    CU_ASSERT_FATAL(par_rt_alloc(&t, PAR_DTYPE_F32, 2, (int64_t[]){2, 2}, &msg) == PAR_OK);
    double ref[4] = {1, 2, -4, 8};
    for (int i = 0; i < 4; i++) {
        t.v[i] = ref[i];
        t.e[i] = 1.0;
    }
    float got[4] = {1.5f, 2.0f, -4.0f, 7.0f}; /* d = 0.5, 0, 0, -1 */
    par_metrics m;
    CU_ASSERT_EQUAL(par_oracle_compare(&t, got, &m), 0);
    CU_ASSERT_DOUBLE_EQUAL(m.max_abs, 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.max_rel, 0.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.bias, -0.125, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(m.nmse, 1.25 / 85.0, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(m.max_ratio, 1.0, 0);
    CU_ASSERT_EQUAL(m.worst_index, 3);
    CU_ASSERT_EQUAL(m.worst_coords[0], 1);
    CU_ASSERT_EQUAL(m.worst_coords[1], 1);
    par_rt_free(&t);
}

/* The statistical companion's arithmetic on a hand-made output: z = max(0, |d| - f) / t over the elements with a
 * finite budget and a finite t > 0, and their root-mean-square. */
static void test_companion_values(void)
{
    par_rt r, t;
    par_msg msg;
    CU_ASSERT_FATAL(par_rt_alloc(&r, PAR_DTYPE_F32, 1, (int64_t[]){5}, &msg) == PAR_OK);
    CU_ASSERT_FATAL(par_rt_alloc(&t, PAR_DTYPE_F32, 1, (int64_t[]){5}, &msg) == PAR_OK);
    double f[5] = {0, 0.5, 0, 0, 0};
    double sc[5] = {1, 1, 2, 0, 1};
    for (int i = 0; i < 5; i++) {
        r.v[i] = i;
        r.e[i] = i == 4 ? INFINITY : 100;
        t.v[i] = i;
        t.e[i] = 100;
    }
    double *own_s = t.s; /* par_rt_alloc's scales, given back before the free */
    r.f = f;
    t.s = sc;
    /* d = 3, 2 (less its flush part 0.5: 1.5), 4 (t = 2: z = 2), skipped (t = 0), skipped (infinite budget) */
    float got[5] = {3, 3, 6, 7, 9};
    par_metrics m;
    par_metrics_init(&m);
    CU_ASSERT_EQUAL(par_oracle_companion(&r, &t, got, &m), 0);
    CU_ASSERT_EQUAL(m.stat_n, 3);
    CU_ASSERT_DOUBLE_EQUAL(m.stat_z, sqrt((9 + 2.25 + 4) / 3.0), 1e-12);
    CU_ASSERT_EQUAL(m.stat_skip, PAR_STAT_APPLIED);
    got[0] = 40; /* z^2 = 1600: the mean 535.4 > 8.41^2 */
    CU_ASSERT_EQUAL(par_oracle_companion(&r, &t, got, &m), 1);
    CU_ASSERT(m.stat_over);
    for (int i = 0; i < 5; i++) sc[i] = 0; /* no scale anywhere: it stands down */
    CU_ASSERT_EQUAL(par_oracle_companion(&r, &t, got, &m), 0);
    CU_ASSERT(isnan(m.stat_z));
    CU_ASSERT_EQUAL(m.stat_skip, PAR_STAT_SKIP_NONE);
    /* an element whose flush part reaches its scale is not counted: its z would be 0 whatever the backend gave */
    double sc2[5] = {1, 1, 2, 0, 1};
    for (int i = 0; i < 5; i++) sc[i] = sc2[i];
    got[0] = 3;
    f[0] = 1;
    CU_ASSERT_EQUAL(par_oracle_companion(&r, &t, got, &m), 0);
    CU_ASSERT_EQUAL(m.stat_n, 2);
    CU_ASSERT_DOUBLE_EQUAL(m.stat_z, sqrt((2.25 + 4) / 2.0), 1e-12);
    f[1] = 1;
    f[2] = 2;
    got[2] = 1e6; /* far off, and still not judged: the companion says why */
    CU_ASSERT_EQUAL(par_oracle_companion(&r, &t, got, &m), 0);
    CU_ASSERT(isnan(m.stat_z));
    CU_ASSERT_EQUAL(m.stat_skip, PAR_STAT_SKIP_FLUSH);
    CU_ASSERT_STRING_EQUAL(par_stat_skip_name(m.stat_skip), "flushing");
    /* merged: a record's outputs say "flushing" over "no scale", and "applied" over both */
    par_metrics acc, other;
    par_metrics_init(&acc);
    par_metrics_init(&other);
    par_metrics_merge(&acc, &m, 0);
    CU_ASSERT_EQUAL(acc.stat_skip, PAR_STAT_SKIP_FLUSH);
    par_metrics_merge(&acc, &other, 1);
    CU_ASSERT_EQUAL(acc.stat_skip, PAR_STAT_SKIP_FLUSH);
    other.stat_skip = PAR_STAT_APPLIED;
    par_metrics_merge(&acc, &other, 2);
    CU_ASSERT_EQUAL(acc.stat_skip, PAR_STAT_APPLIED);
    r.f = NULL;
    t.s = own_s;
    par_rt_free(&r);
    par_rt_free(&t);
}

/* The companion on the conv + relu6 fixture: correct f32 backends (two summation orders) sit far under its bound,
 * while one that rounds every product and partial sum to binary16 is far over it. */
/* The bound on the largest of k companion statistics (the companion on every node): k sqrt(2) exp(-q / 4) = 3e-8,
 * computed here from Markov's inequality as docs/oracle.md states it, not from the function under test. */
static void test_companion_bound_of(void)
{
    CU_ASSERT_DOUBLE_EQUAL(par_stat_bound_of(1), PAR_STAT_BOUND, 0);
    CU_ASSERT_DOUBLE_EQUAL(par_stat_bound_of(0), PAR_STAT_BOUND, 0);
    const int32_t ks[] = {2, 50, 152, 100000};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        double b = par_stat_bound_of(ks[i]);
        /* the false-alarm probability of k values at that bound is 3e-8 */
        CU_ASSERT_DOUBLE_EQUAL(ks[i] * sqrt(2) * exp(-b * b / 4), 3e-8, 3e-8 * 1e-9);
        CU_ASSERT(b > par_stat_bound_of(ks[i] - 1));
    }
    CU_ASSERT_DOUBLE_EQUAL(par_stat_bound_of(152), 9.5273, 1e-4); /* MobileNetV2's node values */
}

static void test_companion_backends(void)
{
    fixture f;
    build(&f, 3);
    par_prec p = par_prec_for(PAR_ARITH_F32);
    p.stat_scale = 1;
    par_ref_result *st = NULL;
    par_msg msg = {{0}};
    const void *ins[] = {f.x};
    const par_graph_desc *d = par_graph_desc_of(f.g);
    CU_ASSERT_FATAL(par_ref_run(d, &p, ins, &st, &msg) == PAR_OK);
    const par_rt *t = &st->values[d->outputs[0]];
    float y[O * H * W];
    par_metrics m;
    double zc[2];
    for (int rev = 0; rev < 2; rev++) {
        mutation mu = correct;
        mu.reverse_sum = rev;
        backend(&f, mu, y);
        par_metrics_init(&m);
        CU_ASSERT_EQUAL(par_oracle_companion(f.out, t, y, &m), 0);
        CU_ASSERT(m.stat_n > 0);
        zc[rev] = m.stat_z;
        CU_ASSERT(m.stat_z < 1);
    }
    mutation mu = correct;
    mu.half = 1;
    backend(&f, mu, y);
    par_metrics_init(&m);
    CU_ASSERT_EQUAL(par_oracle_companion(f.out, t, y, &m), 1);
    PAR_TEST_NOTE("\n    companion: correct %.3g, reversed %.3g, f16 arithmetic %.3g (bound %.3g) ", zc[0], zc[1],
                  m.stat_z, PAR_STAT_BOUND);
    par_ref_result_destroy(st);
    destroy(&f);
}

static const CU_TestInfo tests[] = {
    {"correct backend passes well under budget", test_correct_backend_passes},
    {"off-by-one padding fails", test_off_by_one_padding_fails},
    {"transposed weights fail", test_transposed_weights_fail},
    {"bias dropped on one channel fails", test_dropped_bias_channel_fails},
    {"missing activation clamp fails", test_missing_clamp_fails},
    {"one unwritten element fails", test_unwritten_element_fails},
    {"NaN and Inf policy", test_nonfinite_policy},
    {"metrics values", test_metrics_values},
    {"statistical companion: values", test_companion_values},
    {"statistical companion: correct and f16 backends", test_companion_backends},
    {"statistical companion: the bound of k values", test_companion_bound_of},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("oracle", tests)
