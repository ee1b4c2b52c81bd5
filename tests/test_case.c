/*
 * test_case.c - the case module: generators (deterministic, distinct per name, in range, EDGE contents), the
 * sticky builder, loading the files in tests/data/cases/, sidecar files, and the round trip to_json -> parse (same
 * graph, same input bytes, same constant bytes). Malformed input has its own program, tests/test_case_malformed.c.
 */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/case.h"
#include "case_helpers.h"
#include "core/prng.h"
#include "core/tensor.h"
#include "tmain.h"

static const par_tensor_src *src_of(const par_case *c, int32_t value)
{
    for (int32_t i = 0; i < c->n_srcs; i++)
        if (c->srcs[i].value == value) return &c->srcs[i];
    return NULL;
}

/* ------------------------------------------------------------------------------------------------------------------
 * Generators
 * ---------------------------------------------------------------------------------------------------------------- */

static void test_gen_deterministic_and_in_range(void)
{
    const int64_t dims[2] = {50, 40};
    float a[2000], b[2000], c[2000];
    par_gen g = {.dist = PAR_DIST_UNIFORM, .a = -2.0, .b = 3.0, .seed = 11};
    par_gen_fill(&g, PAR_DTYPE_F32, 2, dims, a);
    par_gen_fill(&g, PAR_DTYPE_F32, 2, dims, b);
    g.seed = 12;
    par_gen_fill(&g, PAR_DTYPE_F32, 2, dims, c);
    CU_ASSERT(memcmp(a, b, sizeof a) == 0);
    CU_ASSERT(memcmp(a, c, sizeof a) != 0);
    float lo = 1e9f, hi = -1e9f;
    for (int i = 0; i < 2000; i++) lo = a[i] < lo ? a[i] : lo, hi = a[i] > hi ? a[i] : hi;
    CU_ASSERT(lo >= -2.0f && hi <= 3.0f);
    CU_ASSERT(lo < -1.9f && hi > 2.9f); /* actually spread over the range */

    par_gen n = {.dist = PAR_DIST_NORMAL, .a = 10.0, .b = 0.5, .seed = 3};
    par_gen_fill(&n, PAR_DTYPE_F32, 2, dims, a);
    double sum = 0;
    int bounded = 1;
    for (int i = 0; i < 2000; i++) {
        sum += a[i];
        if (fabsf(a[i] - 10.0f) > 3.0f + 1e-5f) bounded = 0;
    }
    CU_ASSERT(bounded);
    CU_ASSERT(fabs(sum / 2000 - 10.0) < 6 * 0.5 / sqrt(2000.0));

    par_gen k = {.dist = PAR_DIST_CONST, .a = 0.1, .b = 0, .seed = 1};
    par_gen_fill(&k, PAR_DTYPE_F32, 2, dims, a);
    CU_ASSERT_EQUAL(a[0], 0.1f);
    CU_ASSERT_EQUAL(a[1999], 0.1f);

    /* f16: values rounded through f32 to f16 */
    uint16_t h[2000];
    par_gen_fill(&g, PAR_DTYPE_F16, 2, dims, h);
    int ok16 = 1;
    for (int i = 0; i < 2000; i++) {
        float f = par_f16_to_f32(h[i]);
        if (!(f >= -2.0f && f <= 3.0f)) ok16 = 0;
        if (par_f32_to_f16(c[i]) != h[i]) ok16 = 0; /* the same draws as the f32 fill with seed 12 */
    }
    CU_ASSERT(ok16);
}

static void test_gen_integers(void)
{
    const int64_t dims[1] = {3000};
    uint8_t q[3000];
    int8_t s[3000];
    int32_t w[3000];
    par_gen g = {.dist = PAR_DIST_UNIFORM, .a = 10, .b = 20, .seed = 4};
    par_gen_fill(&g, PAR_DTYPE_QU8, 1, dims, q);
    int seen[256] = {0}, in = 1;
    for (int i = 0; i < 3000; i++) {
        if (q[i] < 10 || q[i] > 20) in = 0;
        seen[q[i]] = 1;
    }
    CU_ASSERT(in);
    CU_ASSERT(seen[10] && seen[20]); /* both ends are inclusive */

    g = (par_gen){.dist = PAR_DIST_UNIFORM, .a = -1000, .b = 1000, .seed = 4}; /* clamped to the type */
    par_gen_fill(&g, PAR_DTYPE_QS8, 1, dims, s);
    int lo = 0, hi = 0;
    for (int i = 0; i < 3000; i++) lo += s[i] == -128, hi += s[i] == 127;
    CU_ASSERT(lo > 1000 && hi > 1000);

    g = (par_gen){.dist = PAR_DIST_CONST, .a = 2.5, .b = 0, .seed = 4}; /* round half to even */
    par_gen_fill(&g, PAR_DTYPE_I32, 1, dims, w);
    CU_ASSERT_EQUAL(w[0], 2);
    g.a = -3.5;
    par_gen_fill(&g, PAR_DTYPE_I32, 1, dims, w);
    CU_ASSERT_EQUAL(w[7], -4);

    g = (par_gen){.dist = PAR_DIST_EDGE, .a = 0, .b = 100, .seed = 4};
    par_gen_fill(&g, PAR_DTYPE_QS8, 1, dims, s);
    int emin = 0, emax = 0, zero = 0, inr = 1;
    for (int i = 0; i < 3000; i++) {
        if (s[i] < -100 || s[i] > 100) inr = 0;
        emin += s[i] == -100, emax += s[i] == 100, zero += s[i] == 0;
    }
    CU_ASSERT(inr && emin > 0 && emax > 0 && zero > 0);
}

/* EDGE over f32 makes every listed class: +-0, +-1, +-0.5, ties +-1.5 +-2.5, +-1e-30, a subnormal, +-max, values
 * just under max, and nothing beyond max. */
static void test_gen_edge_contents(void)
{
    const int64_t dims[1] = {4800};
    static float v[4800];
    par_gen g = {.dist = PAR_DIST_EDGE, .a = 0, .b = 4.0, .seed = 21};
    par_gen_fill(&g, PAR_DTYPE_F32, 1, dims, v);
    int pz = 0, nz = 0, one = 0, mone = 0, half = 0, tie = 0, tiny = 0, sub = 0, max = 0, mmax = 0, near = 0, out = 0;
    for (int i = 0; i < 4800; i++) {
        float x = v[i];
        if (x == 0 && !signbit(x)) pz++;
        if (x == 0 && signbit(x)) nz++;
        one += x == 1.0f, mone += x == -1.0f, half += x == 0.5f || x == -0.5f;
        tie += x == 2.5f || x == -2.5f || x == 1.5f || x == -1.5f;
        tiny += x == 1e-30f || x == -1e-30f;
        sub += x != 0 && fabsf(x) < 1.17549435e-38f;
        max += x == 4.0f, mmax += x == -4.0f;
        near += fabsf(x) < 4.0f && fabsf(x) >= 4.0f * (1 - 1.0f / 256);
        out += !(fabsf(x) <= 4.0f);
    }
    CU_ASSERT(pz && nz && one && mone && half && tie && tiny && sub && max && mmax && near);
    CU_ASSERT_EQUAL(out, 0);
}

static void test_gen_fan_in(void)
{
    const int64_t dims[4] = {4, 3, 3, 3}; /* fan_in = 27 */
    float w[108];
    par_gen g = {.dist = PAR_DIST_CONST, .a = 1.0, .b = 0, .fan_in = 1, .seed = 1};
    par_gen_fill(&g, PAR_DTYPE_F32, 4, dims, w);
    CU_ASSERT_EQUAL(w[0], (float)(1.0 / sqrt(27.0)));
    CU_ASSERT_EQUAL(w[107], (float)(1.0 / sqrt(27.0)));
    const int64_t d1[1] = {16}; /* rank 1: fan_in = dims[0] */
    g.a = 2.0;
    par_gen_fill(&g, PAR_DTYPE_F32, 1, d1, w);
    CU_ASSERT_EQUAL(w[3], 0.5f);
}

static void test_gen_check(void)
{
    par_msg m;
    par_gen g = {.dist = PAR_DIST_UNIFORM, .a = 2, .b = 1};
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_F32, &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "greater than high"));
    g = (par_gen){.dist = PAR_DIST_UNIFORM, .a = -1e6, .b = 1e6};
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_F16, &m), PAR_ERROR); /* beyond f16's 65504 */
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_F32, &m), PAR_OK);
    g = (par_gen){.dist = PAR_DIST_NORMAL, .a = 0, .b = -1};
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_F32, &m), PAR_ERROR);
    g = (par_gen){.dist = PAR_DIST_UNIFORM, .a = 0.2, .b = 0.8};
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_QU8, &m), PAR_ERROR); /* no integer inside */
    g = (par_gen){.dist = PAR_DIST_CONST, .a = NAN, .b = 0};
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_F32, &m), PAR_ERROR);
    g = (par_gen){.dist = (par_dist)9, .a = 0, .b = 1};
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_F32, &m), PAR_ERROR);
}

/* ------------------------------------------------------------------------------------------------------------------
 * Builder
 * ---------------------------------------------------------------------------------------------------------------- */

static par_case *build_small(uint64_t seed)
{
    const int64_t xd[2] = {3, 5}, wd[2] = {4, 5};
    par_case *c = par_case_create("linear(3x5->4)#seed=1", seed);
    par_gen u = {.dist = PAR_DIST_UNIFORM, .a = -1, .b = 1};
    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, 2, xd, u);
    int32_t z = par_case_input(c, "z", PAR_DTYPE_F32, 2, xd, u);
    int32_t w = par_case_const(c, "w", PAR_DTYPE_F32, 2, wd, (par_gen){.dist = PAR_DIST_NORMAL, .a = 0, .b = 1, .fan_in = 1});
    int32_t s = par_case_node(c, "add", 2, (int32_t[]){x, z}, 0, NULL, NULL);
    int32_t y = par_case_node(c, "linear", 2, (int32_t[]){s, w}, 0, NULL, NULL);
    par_case_output(c, y);
    par_case_finish(c);
    return c;
}

/* Seeds derive from the tensor name and the case seed: two tensors of a case differ, the same ID and seed give the
 * same bytes, another case seed gives other bytes. */
static void test_derived_seeds(void)
{
    par_case *a = build_small(7), *b = build_small(7), *c = build_small(8);
    CU_ASSERT_EQUAL_FATAL(a->status, PAR_OK);
    CU_ASSERT_EQUAL_FATAL(b->status, PAR_OK);
    CU_ASSERT_EQUAL_FATAL(c->status, PAR_OK);
    void **ia, **ib, **ic;
    par_msg m;
    CU_ASSERT_EQUAL_FATAL(par_case_make_inputs(a, &ia, &m), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(par_case_make_inputs(b, &ib, &m), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(par_case_make_inputs(c, &ic, &m), PAR_OK);
    CU_ASSERT(memcmp(ia[0], ia[1], 15 * sizeof(float)) != 0);
    CU_ASSERT(memcmp(ia[0], ib[0], 15 * sizeof(float)) == 0);
    CU_ASSERT(memcmp(ia[1], ib[1], 15 * sizeof(float)) == 0);
    CU_ASSERT(memcmp(ia[0], ic[0], 15 * sizeof(float)) != 0);
    CU_ASSERT_EQUAL(src_of(a, 0)->gen.seed, par_hash_str("x", 7));
    const par_value *wa = value_named(a, "w"), *wb = value_named(b, "w"), *wc = value_named(c, "w");
    CU_ASSERT(memcmp(wa->data, wb->data, 20 * sizeof(float)) == 0);
    CU_ASSERT(memcmp(wa->data, wc->data, 20 * sizeof(float)) != 0);
    par_case_free_inputs(a, ia);
    par_case_free_inputs(b, ib);
    par_case_free_inputs(c, ic);
    round_trip(a, 0);
    round_trip(a, 1);
    par_case_destroy(a);
    par_case_destroy(b);
    par_case_destroy(c);
}

/* After the first failure every builder call does nothing, returns -1 and keeps the first message. */
static void test_builder_sticky_error(void)
{
    const int64_t bad[2] = {3, 0}, good[1] = {4};
    par_case *c = par_case_create("sticky", 1);
    par_gen u = {.dist = PAR_DIST_UNIFORM, .a = -1, .b = 1};
    CU_ASSERT_EQUAL(par_case_input(c, "x", PAR_DTYPE_F32, 2, bad, u), -1);
    CU_ASSERT_EQUAL(c->status, PAR_ERROR);
    char first[PAR_MSG_LEN];
    strcpy(first, c->err.text);
    CU_ASSERT_PTR_NOT_NULL(strstr(first, "dimension 1 is 0"));
    CU_ASSERT_EQUAL(par_case_input(c, "y", PAR_DTYPE_F32, 1, good, u), -1);
    CU_ASSERT_EQUAL(par_case_const(c, "w", PAR_DTYPE_F32, 1, good, u), -1);
    CU_ASSERT_EQUAL(par_case_node(c, "relu", 1, (int32_t[]){0}, 0, NULL, NULL), -1);
    par_case_output(c, 0);
    CU_ASSERT_EQUAL(par_case_finish(c), PAR_ERROR);
    CU_ASSERT_STRING_EQUAL(c->err.text, first);
    CU_ASSERT_PTR_NULL(par_case_to_json(c, 0));
    par_case_destroy(c);

    c = par_case_create("bad gen", 1);
    CU_ASSERT_EQUAL(par_case_input(c, "x", PAR_DTYPE_F32, 1, good, (par_gen){.dist = PAR_DIST_UNIFORM, .a = 1, .b = -1}), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(c->err.text, "input 'x': init: uniform"));
    par_case_destroy(c);
    par_case_destroy(NULL);
}

/* Edge values (-0, subnormals, ties) and a shortest-digits check survive export with inline data bit for bit;
 * data that JSON cannot hold (NaN) makes to_json refuse (NULL) rather than write "NaN". */
static void test_inline_round_trip_bits(void)
{
    const int64_t d[1] = {600};
    par_case *c = par_case_create("edges", 3);
    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, 1, d, (par_gen){.dist = PAR_DIST_EDGE, .a = 0, .b = 1e30});
    int32_t h = par_case_input(c, "h", PAR_DTYPE_F16, 1, d, (par_gen){.dist = PAR_DIST_EDGE, .a = 0, .b = 60000});
    int32_t k = par_case_const(c, "k", PAR_DTYPE_F32, 1, d, (par_gen){.dist = PAR_DIST_UNIFORM, .a = -1e-3, .b = 1e-3});
    int32_t y = par_case_node(c, "add", 2, (int32_t[]){x, k}, 0, NULL, NULL);
    int32_t z = par_case_node(c, "relu", 1, (int32_t[]){h}, 0, NULL, NULL);
    par_case_output(c, y);
    par_case_output(c, z);
    CU_ASSERT_EQUAL_FATAL(par_case_finish(c), PAR_OK);
    round_trip(c, 1);
    round_trip(c, 0);
    par_case_destroy(c);

    float bad[2] = {1.0f, NAN};
    const int64_t d2[1] = {2};
    c = par_case_create("nan", 1);
    x = par_case_input(c, "x", PAR_DTYPE_F32, 1, d2, (par_gen){.dist = PAR_DIST_UNIFORM, .a = -1, .b = 1});
    k = par_case_const_data(c, "k", PAR_DTYPE_F32, 1, d2, bad);
    par_case_output(c, par_case_node(c, "add", 2, (int32_t[]){x, k}, 0, NULL, NULL));
    CU_ASSERT_EQUAL_FATAL(par_case_finish(c), PAR_OK);
    CU_ASSERT_PTR_NULL(par_case_to_json(c, 0));
    par_case_destroy(c);
}

/* ------------------------------------------------------------------------------------------------------------------
 * Valid files
 * ---------------------------------------------------------------------------------------------------------------- */

static void test_load_conv_small(void)
{
    par_case *c = load(DATA "conv_small.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_STRING_EQUAL(c->id, "conv_small");
    CU_ASSERT_STRING_EQUAL(c->origin, DATA "conv_small.json");
    CU_ASSERT_PTR_NOT_NULL(c->description);
    CU_ASSERT_EQUAL(c->seed, 7);
    CU_ASSERT_EQUAL(c->repeat, 3);
    CU_ASSERT_EQUAL(c->timeout_s, 10.0);
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    CU_ASSERT_EQUAL(d->n_inputs, 1);
    CU_ASSERT_EQUAL(d->n_nodes, 2);
    CU_ASSERT_EQUAL(d->n_outputs, 1);
    const par_value *y = value_named(c, "y");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(y->dims[2], 4); /* (8 + 2 - 3) / 2 + 1 */
    CU_ASSERT_EQUAL(par_attr_ints_at(&d->nodes[0], "stride", 0, 0), 2);
    const par_value *b = value_named(c, "b");
    const float *bd = b->data;
    CU_ASSERT(bd[0] == 0.5f && bd[1] == -0.25f && bd[2] == 0.0f && !signbit(bd[2]) && signbit(bd[3]));
    CU_ASSERT_EQUAL(src_of(c, d->inputs[0])->gen.seed, 5);
    int32_t w = par_graph_find_value(c->graph, "w");
    CU_ASSERT_EQUAL(src_of(c, w)->gen.seed, par_hash_str("w", 7));
    CU_ASSERT_EQUAL(src_of(c, w)->gen.fan_in, 1);
    round_trip(c, 0);
    round_trip(c, 1);
    par_case_destroy(c);
}

static void test_load_others(void)
{
    par_case *c = load(DATA "quant_add.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_STRING_EQUAL(c->id, "quant_add"); /* default: the file's base name */
    CU_ASSERT_EQUAL(c->seed, 1);
    const par_value *a = value_named(c, "a"), *y = value_named(c, "y");
    CU_ASSERT_EQUAL(a->scale, 0.1f);
    CU_ASSERT_EQUAL(a->zero_point, 3);
    CU_ASSERT_EQUAL(y->dtype, PAR_DTYPE_QU8);
    CU_ASSERT_EQUAL(y->scale, 0.2f);
    CU_ASSERT_EQUAL(y->zero_point, 100);
    round_trip(c, 0);
    round_trip(c, 1);
    par_case_destroy(c);

    c = load(DATA "clamp_inf.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    CU_ASSERT(isinf(par_attr_float(&d->nodes[0], "min", 0)) && par_attr_float(&d->nodes[0], "min", 0) < 0);
    CU_ASSERT_EQUAL(par_attr_float(&d->nodes[0], "max", 0), 6.0);
    CU_ASSERT_EQUAL(d->n_outputs, 2);
    const uint16_t *t = src_of(c, par_graph_find_value(c->graph, "t"))->data;
    CU_ASSERT_EQUAL(par_f16_to_f32(t[18]), 65504.0f);
    CU_ASSERT_EQUAL(t[20], 0x0400); /* 2^-14, the smallest normal f16 */
    round_trip(c, 0);
    round_trip(c, 1);
    par_case_destroy(c);

    c = load(DATA "qs8_conv.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    const par_value *w = value_named(c, "w");
    CU_ASSERT_EQUAL(w->quant_axis, 0);
    CU_ASSERT_EQUAL(w->channel_scales[1], 0.02f);
    round_trip(c, 0);
    round_trip(c, 1);
    par_case_destroy(c);
}

static void test_sidecar(void)
{
    par_case *c = load(DATA "sidecar.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    const par_value *w = value_named(c, "w"), *b = value_named(c, "b");
    const float *wd = w->data, *bd = b->data;
    for (int i = 0; i < 12; i++) CU_ASSERT_EQUAL(wd[i], (i - 6) * 0.125f); /* as written by the generator script */
    CU_ASSERT(bd[0] == 1.0f && bd[1] == -1.0f && bd[2] == 0.5f && bd[3] == -0.5f);
    const par_tensor_src *s = src_of(c, par_graph_find_value(c->graph, "b"));
    CU_ASSERT_EQUAL(s->kind, PAR_SRC_FILE);
    CU_ASSERT_STRING_EQUAL(s->file, "linear_w.bin");
    CU_ASSERT_EQUAL(s->offset, 48);
    round_trip(c, 0); /* the same origin: the file reference resolves again */
    round_trip(c, 1);
    char *t = par_case_to_json(c, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"data\": {\"file\": \"linear_w.bin\", \"offset\": 48}"));
    free(t);
    par_case_destroy(c);

    par_msg m;
    CU_ASSERT_PTR_NULL(par_case_load(DATA "sidecar_short.json", &m));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "sidecar_short.json: $.constants[0].data.file: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "has 64 bytes; 48 needed from offset 48"));
}

static void test_sidecar_errors(void)
{
    expect_error(HDR "'constants': [{'name': 'w', 'dtype': 'f32', 'shape': [2], 'data': {'file': 'no_such.bin'}}],"
                     "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}",
                 "$.constants[0].data.file", "cannot open 'no_such.bin'");
    expect_error(HDR "'constants': [{'name': 'w', 'dtype': 'f32', 'shape': [2], 'data': {'file': '/'}}],"
                     "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}",
                 "$.constants[0].data.file", "is not a regular file");
    expect_error(HDR "'constants': [{'name': 'w', 'dtype': 'f32', 'shape': [2], 'data': {'file': 'a', 'offset': -1}}],"
                     "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}",
                 "$.constants[0].data.offset", "-1 is out of range");
    expect_error(HDR "'constants': [{'name': 'w', 'dtype': 'f32', 'shape': [2], 'data': {'path': 'a'}}],"
                     "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}",
                 "$.constants[0].data.path", "unknown field");

    /* A sidecar holding a NaN is refused (the writer could not express it); one holding an infinity is data. */
    char name[] = "/tmp/parity_test_case_XXXXXX";
    int fd = mkstemp(name);
    CU_ASSERT_FATAL(fd >= 0);
    const unsigned char bytes[8] = {0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f}; /* 1.0f, NaN (little-endian) */
    CU_ASSERT_EQUAL(write(fd, bytes, 8), 8);
    close(fd);
    char doc[1024];
    snprintf(doc, sizeof doc,
             HDR "'constants': [{'name': 'w', 'dtype': 'f32', 'shape': [2], 'data': {'file': '%s'}}],"
                 "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}",
             name);
    expect_error(doc, "$.constants[0].data.file", "element 1 of");
    const unsigned char infs[8] = {0, 0, 0x80, 0xff, 0, 0, 0x80, 0x7f}; /* -inf, +inf */
    fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(write(fd, infs, 8), 8);
    close(fd);
    par_msg m;
    par_case *c = parse_j(doc, &m);
    CU_ASSERT_PTR_NOT_NULL(c);
    par_case_destroy(c);
    unlink(name);
}

/* An attention mask's -inf is data: inline "-inf" / "inf" strings read as infinities (f32 and f16), and the writer
 * writes them back as those strings, so a case holding one is exported and read back bit for bit. */
static void test_inline_infinities(void)
{
    par_msg m;
    par_case *c = parse_j(HDR "'constants': [{'name': 'w', 'dtype': 'f32', 'shape': [3], 'data': [1, '-inf', 'inf']},"
                              "{'name': 'h', 'dtype': 'f16', 'shape': [2], 'data': ['-inf', -0.0]}],"
                              "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}",
                          &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char *text = par_case_to_json(c, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "[1, \"-inf\", \"inf\"]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "[\"-inf\", -0.0]"));
    par_case *back = par_case_parse(text, strlen(text), "<written>", &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    char *again = par_case_to_json(back, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(again);
    CU_ASSERT_STRING_EQUAL(text, again);
    free(again);
    free(text);
    par_case_destroy(back);
    par_case_destroy(c);
}

static const CU_TestInfo tests[] = {
    {"reader and writer: infinite data", test_inline_infinities},
    {"generators: deterministic, in range", test_gen_deterministic_and_in_range},
    {"generators: integer dtypes", test_gen_integers},
    {"generators: EDGE contents", test_gen_edge_contents},
    {"generators: fan_in", test_gen_fan_in},
    {"generators: parameter checks", test_gen_check},
    {"builder: derived seeds", test_derived_seeds},
    {"builder: sticky error", test_builder_sticky_error},
    {"writer: inline data bit-exact, no NaN", test_inline_round_trip_bits},
    {"load: conv_small.json", test_load_conv_small},
    {"load: quant, clamp inf, per-channel", test_load_others},
    {"sidecar: load, round trip, short file", test_sidecar},
    {"sidecar: errors", test_sidecar_errors},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("case", tests)

