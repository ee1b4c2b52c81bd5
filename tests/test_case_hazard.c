/*
 * test_case_hazard.c - the hazard generators (core/case_gen.c, PAR_DIST_HAZARD): the same seed gives the same bytes
 * and another seed others; each hazard holds what it promises (counts of NaN, +-Inf, subnormals of both signs, -0,
 * ties exactly (k + 1/2) a, values at and beyond +-b, cancelling pairs, near-overflow magnitudes, one value) on every
 * dtype; the JSON form reads and writes back (core/case_json_tensor.c, core/case_write.c); bad parameters are
 * refused with the JSON path and the reason.
 */
#include <CUnit/CUnit.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "case_helpers.h"
#include "core/tensor.h"
#include "tmain.h"

enum { N = 512 };

static par_gen hz(par_hazard h, double a, double b, uint64_t seed)
{
    par_gen g = {.dist = PAR_DIST_HAZARD, .a = a, .b = b, .hazard = h, .seed = seed};
    return g;
}

/* Fill n f32 elements (after checking the generator) into out. */
static int fill_f32(par_gen g, int64_t n, float *out)
{
    par_msg m;
    if (par_gen_check(&g, PAR_DTYPE_F32, &m) != PAR_OK) {
        printf("\n    %s\n", m.text);
        return 0;
    }
    par_gen_fill(&g, PAR_DTYPE_F32, 1, &n, out);
    return 1;
}

static void test_determinism(void)
{
    float a[N], b[N], c[N];
    for (int h = 1; h < PAR_HAZARD_COUNT; h++) {
        par_gen g = hz((par_hazard)h, -2, 2, 7);
        if (h == PAR_HAZARD_TIES) g.a = 1.0 / 64, g.b = 128;
        CU_ASSERT_FATAL(fill_f32(g, N, a) && fill_f32(g, N, b));
        CU_ASSERT(memcmp(a, b, sizeof a) == 0);
        g.seed = 8;
        CU_ASSERT_FATAL(fill_f32(g, N, c));
        CU_ASSERT(memcmp(a, c, sizeof a) != 0); /* all_equal too: another seed draws another value */
    }
}

static void test_nan_inf(void)
{
    float x[N];
    CU_ASSERT_FATAL(fill_f32(hz(PAR_HAZARD_NAN_INF, -1, 1, 3), N, x));
    int nan = 0, pinf = 0, ninf = 0, ord = 0;
    for (int i = 0; i < N; i++) {
        if (isnan(x[i])) nan++;
        else if (isinf(x[i])) x[i] > 0 ? pinf++ : ninf++;
        else if (x[i] >= -1 && x[i] < 1) ord++;
    }
    CU_ASSERT_EQUAL(nan + pinf + ninf + ord, N);
    /* 1/16 each: 32 expected of 512; binomial sd 5.5, so [12, 52] is > 3.5 sd wide */
    CU_ASSERT(nan >= 12 && nan <= 52);
    CU_ASSERT(pinf >= 12 && pinf <= 52);
    CU_ASSERT(ninf >= 12 && ninf <= 52);
    /* n = 8: at least one of each, whatever the seed */
    for (uint64_t s = 1; s <= 50; s++) {
        float y[8];
        CU_ASSERT_FATAL(fill_f32(hz(PAR_HAZARD_NAN_INF, -1, 1, s), 8, y));
        int a = 0, b = 0, c = 0;
        for (int i = 0; i < 8; i++) a |= isnan(y[i]), b |= y[i] == INFINITY, c |= y[i] == -INFINITY;
        CU_ASSERT(a && b && c);
    }
    /* f16: the same shares in half precision, NaN a quiet half NaN */
    uint16_t h[N];
    int64_t n = N;
    par_gen g = hz(PAR_HAZARD_NAN_INF, -1, 1, 3);
    par_gen_fill(&g, PAR_DTYPE_F16, 1, &n, h);
    int hn = 0, hi = 0;
    for (int i = 0; i < N; i++) hn += (h[i] & 0x7fff) > 0x7c00, hi += (h[i] & 0x7fff) == 0x7c00;
    CU_ASSERT(hn >= 12 && hi >= 24);
}

static void test_subnormal_and_signed_zero(void)
{
    float x[N];
    CU_ASSERT_FATAL(fill_f32(hz(PAR_HAZARD_SUBNORMAL, 0.5, 2, 5), N, x));
    int pos = 0, neg = 0, ord = 0;
    for (int i = 0; i < N; i++) {
        if (x[i] != 0 && fabsf(x[i]) < FLT_MIN) x[i] > 0 ? pos++ : neg++;
        else if (x[i] >= 0.5f && x[i] < 2) ord++;
    }
    CU_ASSERT_EQUAL(pos + neg + ord, N);
    CU_ASSERT(pos >= 90 && neg >= 90); /* 1/4 each: 128 expected, sd 9.8 */
    CU_ASSERT_FATAL(fill_f32(hz(PAR_HAZARD_SIGNED_ZERO, 1, 2, 5), N, x));
    int pz = 0, nz = 0;
    ord = 0;
    for (int i = 0; i < N; i++) {
        if (x[i] == 0) signbit(x[i]) ? nz++ : pz++;
        else if (x[i] >= 1 && x[i] < 2) ord++;
    }
    CU_ASSERT_EQUAL(pz + nz + ord, N);
    CU_ASSERT(pz >= 90 && nz >= 90);
    /* forced when n >= 8 */
    for (uint64_t s = 1; s <= 50; s++) {
        float y[8];
        CU_ASSERT_FATAL(fill_f32(hz(PAR_HAZARD_SIGNED_ZERO, 1, 2, s), 8, y));
        int a = 0, b = 0;
        for (int i = 0; i < 8; i++) a |= y[i] == 0 && !signbit(y[i]), b |= y[i] == 0 && signbit(y[i]);
        CU_ASSERT(a && b);
        CU_ASSERT_FATAL(fill_f32(hz(PAR_HAZARD_SUBNORMAL, 1, 2, s), 8, y));
        a = b = 0;
        for (int i = 0; i < 8; i++) a |= y[i] > 0 && y[i] < FLT_MIN, b |= y[i] < 0 && y[i] > -FLT_MIN;
        CU_ASSERT(a && b);
    }
}

/* ties: every element is exactly (k + 1/2) a with k an integer in [-b, b), in f32 and in f16 */
static void test_ties(void)
{
    float x[N];
    const double a = 0.375, b = 100; /* odd part 3: (2k + 1) * 3 needs at most 10 bits, exact in f16 too */
    CU_ASSERT_FATAL(fill_f32(hz(PAR_HAZARD_TIES, a, b, 9), N, x));
    int neg = 0, pos = 0;
    for (int i = 0; i < N; i++) {
        double k = (double)x[i] / a - 0.5;
        CU_ASSERT(k == floor(k) && k >= -b && k < b);
        neg += x[i] < 0, pos += x[i] > 0;
    }
    CU_ASSERT(neg > 100 && pos > 100);
    uint16_t h[N];
    int64_t n = N;
    par_gen g = hz(PAR_HAZARD_TIES, a, b, 9);
    par_msg m;
    CU_ASSERT_EQUAL_FATAL(par_gen_check(&g, PAR_DTYPE_F16, &m), PAR_OK);
    par_gen_fill(&g, PAR_DTYPE_F16, 1, &n, h);
    for (int i = 0; i < N; i++) CU_ASSERT_EQUAL(par_f16_to_f32(h[i]), x[i]); /* the same ties, exact in f16 */
}

static void test_saturation_cancel_overflow_equal(void)
{
    float x[N];
    CU_ASSERT_FATAL(fill_f32(hz(PAR_HAZARD_SATURATION, -1, 3, 2), N, x));
    int at = 0, beyond = 0, ord = 0;
    for (int i = 0; i < N; i++) {
        if (fabsf(x[i]) == 3) at++;
        else if (fabsf(x[i]) > 3 && fabsf(x[i]) <= 6) beyond++;
        else if (x[i] >= -1 && x[i] < 3) ord++;
    }
    CU_ASSERT_EQUAL(at + beyond + ord, N);
    CU_ASSERT(at >= 90 && beyond >= 90);
    /* cancel: the large values come in adjacent pairs +L, -L with L in [1e4, 1e6) */
    CU_ASSERT_FATAL(fill_f32(hz(PAR_HAZARD_CANCEL, -1, 1, 2), N, x));
    int pairs = 0;
    for (int i = 0; i < N; i++) {
        if (fabsf(x[i]) < 1) continue;
        CU_ASSERT_FATAL(i + 1 < N);
        CU_ASSERT(fabsf(x[i]) >= 1e4f && fabsf(x[i]) < 1e6f && x[i + 1] == -x[i]);
        pairs++, i++;
    }
    CU_ASSERT(pairs > 50);
    CU_ASSERT_FATAL(fill_f32(hz(PAR_HAZARD_NEAR_OVERFLOW, -1, 1, 2), N, x));
    int big_p = 0, big_n = 0;
    for (int i = 0; i < N; i++) {
        CU_ASSERT(isfinite(x[i]));
        if (fabsf(x[i]) >= FLT_MAX / 16) x[i] > 0 ? big_p++ : big_n++;
        else CU_ASSERT(x[i] >= -1 && x[i] < 1);
    }
    CU_ASSERT(big_p >= 150 && big_n >= 150); /* 3/8 each: 192 expected */
    CU_ASSERT_FATAL(fill_f32(hz(PAR_HAZARD_HUGE, -1, 1, 2), N, x));
    big_p = big_n = 0;
    for (int i = 0; i < N; i++) {
        if (fabsf(x[i]) >= 100 && fabsf(x[i]) <= 1e4f) x[i] > 0 ? big_p++ : big_n++;
        else CU_ASSERT(x[i] >= -1 && x[i] < 1);
    }
    CU_ASSERT(big_p >= 150 && big_n >= 150);
    CU_ASSERT_FATAL(fill_f32(hz(PAR_HAZARD_ALL_EQUAL, -1, 1, 2), N, x));
    for (int i = 1; i < N; i++) CU_ASSERT_EQUAL(x[i], x[0]);
    CU_ASSERT(x[0] >= -1 && x[0] < 1);
}

/* Integer dtypes: saturation (and huge, near_overflow) give the extremes and their neighbours, both extremes
 * present; the others fall back to uniform integers of [a, b] (ties: of [-b, b - 1]), clamped to the type. */
static void test_integer_dtypes(void)
{
    const par_dtype dts[4] = {PAR_DTYPE_QU8, PAR_DTYPE_QS8, PAR_DTYPE_I32, PAR_DTYPE_BOOL};
    const double lo[4] = {0, -128, INT32_MIN, 0}, hi[4] = {255, 127, INT32_MAX, 1};
    int64_t n = N;
    for (int d = 0; d < 4; d++) {
        void *buf = malloc(N * 4);
        CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
        for (int h = 1; h < PAR_HAZARD_COUNT; h++) {
            par_gen g = hz((par_hazard)h, 0, 1, 4);
            if (h == PAR_HAZARD_TIES) g.a = 0.5, g.b = 1;
            par_msg m;
            CU_ASSERT_EQUAL_FATAL(par_gen_check(&g, dts[d], &m), PAR_OK);
            par_gen_fill(&g, dts[d], 1, &n, buf);
            int has_lo = 0, has_hi = 0;
            for (int i = 0; i < N; i++) {
                double v = par_elem_get(dts[d], buf, i);
                CU_ASSERT(v >= lo[d] && v <= hi[d]);
                has_lo |= v == lo[d], has_hi |= v == hi[d];
                if (h == PAR_HAZARD_SATURATION && dts[d] != PAR_DTYPE_BOOL)
                    CU_ASSERT(v <= lo[d] + 2 || v >= hi[d] - 2 || (v >= 0 && v <= 1));
                if (h == PAR_HAZARD_TIES) CU_ASSERT(v >= fmax(-1, lo[d]) && v <= 0);
                if (h == PAR_HAZARD_NAN_INF) CU_ASSERT(v == 0 || v == 1);
            }
            if (h == PAR_HAZARD_SATURATION) CU_ASSERT(has_lo && has_hi);
        }
        free(buf);
    }
}

#define H_IN(init) HDR "'inputs': [{'name': 'x', 'dtype': 'f32', 'shape': [4, 8], 'init': " init "}], " \
                   "'nodes': [" RELU "], 'outputs': ['y']}"

/* The JSON form: read, bytes as the generator gives them, written back the same (nan_inf keeps its generator even
 * when data is asked for inline: JSON has no NaN). */
static void test_json_round_trip(void)
{
    static const char *const docs[] = {
        H_IN("{'dist': 'hazard', 'hazard': 'nan_inf', 'low': -1, 'high': 1}"),
        H_IN("{'dist': 'hazard', 'hazard': 'ties', 'step': 0.25, 'count': 16, 'seed': 5}"),
        H_IN("{'dist': 'hazard', 'hazard': 'cancel', 'low': -1, 'high': 1, 'fan_in': true}"),
        H_IN("{'dist': 'hazard', 'hazard': 'all_equal', 'low': 3, 'high': 4}"),
    };
    for (size_t k = 0; k < sizeof docs / sizeof *docs; k++) {
        par_msg m;
        par_case *c = parse_j(docs[k], &m);
        if (!c) printf("\n    %s\n", m.text);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT_EQUAL(c->srcs[0].gen.dist, PAR_DIST_HAZARD);
        for (int inl = 0; inl < 2; inl++) {
            char *json = par_case_to_json(c, inl);
            CU_ASSERT_PTR_NOT_NULL_FATAL(json);
            if (k == 0 || !inl) CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"dist\": \"hazard\""));
            par_case *d = par_case_parse(json, strlen(json), "t.json", &m);
            if (!d) printf("\n    %s\n", m.text);
            CU_ASSERT_PTR_NOT_NULL_FATAL(d);
            assert_same_case(c, d);
            par_case_destroy(d);
            free(json);
        }
        par_case_destroy(c);
    }
    CU_ASSERT_STRING_EQUAL(par_hazard_name(PAR_HAZARD_NEAR_OVERFLOW), "near_overflow");
    CU_ASSERT_EQUAL(par_hazard_find("signed_zero"), PAR_HAZARD_SIGNED_ZERO);
    CU_ASSERT_EQUAL(par_hazard_find("nan"), 0);
    CU_ASSERT_PTR_NULL(par_hazard_name(PAR_HAZARD_COUNT));
}

static void test_refusals(void)
{
    expect_error(H_IN("{'dist': 'hazard', 'hazard': 'nan', 'low': -1, 'high': 1}"), "$.inputs[0].init.hazard",
                 "unknown hazard 'nan'");
    expect_error(H_IN("{'dist': 'hazard', 'low': -1, 'high': 1}"), "$.inputs[0].init.hazard", "missing");
    expect_error(H_IN("{'dist': 'hazard', 'hazard': 'huge', 'low': -1}"), "$.inputs[0].init.high", "missing");
    expect_error(H_IN("{'dist': 'hazard', 'hazard': 'ties', 'step': 0.25}"), "$.inputs[0].init.count", "missing");
    expect_error(H_IN("{'dist': 'hazard', 'hazard': 'ties', 'low': 0.25, 'count': 4}"), "$.inputs[0].init.low",
                 "unknown field (expected one of: dist, hazard, step, count, seed)");
    expect_error(H_IN("{'dist': 'hazard', 'hazard': 'ties', 'step': 0.1, 'count': 4}"), "$.inputs[0].init",
                 "is not exact in f32");
    expect_error(H_IN("{'dist': 'hazard', 'hazard': 'ties', 'step': 0.25, 'count': 2.5}"), "$.inputs[0].init",
                 "is not an integer");
    expect_error(H_IN("{'dist': 'hazard', 'hazard': 'ties', 'step': -1, 'count': 2}"), "$.inputs[0].init",
                 "is not positive");
    expect_error(H_IN("{'dist': 'hazard', 'hazard': 'huge', 'low': 2, 'high': 1}"), "$.inputs[0].init",
                 "low 2 is greater than high 1");
    expect_error(H_IN("{'dist': 'hazard', 'hazard': 'saturation', 'low': -1, 'high': 3e38}"), "$.inputs[0].init",
                 "bound 3e+38 is not in");
    par_gen g = hz((par_hazard)42, 0, 1, 1);
    par_msg m;
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_F32, &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "unknown hazard 42"));
}

static const CU_TestInfo tests[] = {
    {"determinism", test_determinism},
    {"nan_inf", test_nan_inf},
    {"subnormal and signed zero", test_subnormal_and_signed_zero},
    {"ties", test_ties},
    {"saturation, cancel, huge, near overflow, all equal", test_saturation_cancel_overflow_equal},
    {"integer dtypes", test_integer_dtypes},
    {"json round trip", test_json_round_trip},
    {"refusals", test_refusals},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("case_hazard", tests)
