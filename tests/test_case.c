/*
 * test_case.c - the case module: generators (deterministic, distinct per name, in range, EDGE contents), the
 * sticky builder, loading the files in tests/data/cases/, one test per class of malformed input (each checks that
 * par_case_parse returns NULL and that the message names the JSON path and the reason), sidecar files, and the
 * round trip to_json -> parse (same graph, same input bytes, same constant bytes).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "case.h"
#include "prng.h"
#include "tensor.h"
#include "tmain.h"

#ifndef PAR_SOURCE_DIR
#define PAR_SOURCE_DIR "."
#endif
#define DATA PAR_SOURCE_DIR "/tests/data/cases/"

/* ------------------------------------------------------------------------------------------------------------------
 * Helpers
 * ---------------------------------------------------------------------------------------------------------------- */

/* JSON written with single quotes (the format never needs one inside a string), turned into real JSON. */
static char *J(const char *s)
{
    char *d = strdup(s);
    for (char *p = d; *p; p++)
        if (*p == '\'') *p = '"';
    return d;
}

static par_case *parse_j(const char *sq, par_msg *m)
{
    char *t = J(sq);
    par_case *c = par_case_parse(t, strlen(t), "t.json", m);
    free(t);
    return c;
}

/* The parse must fail, and the message must read "t.json: <path>: ..." and contain the reason. */
static void expect_error(const char *sq, const char *path, const char *reason)
{
    par_msg m;
    memset(&m, 0, sizeof m);
    par_case *c = parse_j(sq, &m);
    CU_ASSERT_PTR_NULL(c);
    par_case_destroy(c);
    char want[300];
    snprintf(want, sizeof want, "t.json: %s: ", path);
    int ok = strstr(m.text, want) != NULL && strstr(m.text, reason) != NULL;
    if (!ok) printf("\n    message: %s\n    wanted:  %s... %s\n", m.text, want, reason);
    CU_ASSERT(ok);
}

#define HDR "{'schema': 'parity.case', 'version': 1, "
#define X_IN "{'name': 'x', 'dtype': 'f32', 'shape': [2, 3], 'init': {'dist': 'uniform', 'low': -1, 'high': 1}}"
#define RELU "{'op': 'relu', 'inputs': ['x'], 'outputs': ['y']}"
/* A valid document with the given input list / node list. */
#define DOC_IN(in) HDR "'inputs': [" in "], 'nodes': [" RELU "], 'outputs': ['y']}"
#define DOC_NODE(node) HDR "'inputs': [" X_IN "], 'nodes': [" node "], 'outputs': ['y']}"

static const par_tensor_src *src_of(const par_case *c, int32_t value)
{
    for (int32_t i = 0; i < c->n_srcs; i++)
        if (c->srcs[i].value == value) return &c->srcs[i];
    return NULL;
}

static const par_value *value_named(const par_case *c, const char *name)
{
    int32_t v = par_graph_find_value(c->graph, name);
    return v >= 0 ? &par_graph_desc_of(c->graph)->values[v] : NULL;
}

static int attrs_equal(const par_attr *a, const par_attr *b)
{
    if (strcmp(a->name, b->name) != 0 || a->type != b->type || a->count != b->count) return 0;
    switch (a->type) {
    case PAR_ATTR_INT: return a->i == b->i;
    case PAR_ATTR_FLOAT: return a->f == b->f;
    case PAR_ATTR_STRING: return strcmp(a->s, b->s) == 0;
    case PAR_ATTR_INTS: return a->count == 0 || memcmp(a->ints, b->ints, sizeof(int64_t) * (size_t)a->count) == 0;
    case PAR_ATTR_FLOATS:
        for (int32_t i = 0; i < a->count; i++)
            if (a->floats[i] != b->floats[i]) return 0;
        return 1;
    }
    return 0;
}

/* Same graph (matched by names: the file format lists inputs before constants), same constant bytes, same
 * quantization, same nodes and outputs, and the same materialized input bytes. */
static void assert_same_case(const par_case *a, const par_case *b)
{
    const par_graph_desc *da = par_graph_desc_of(a->graph), *db = par_graph_desc_of(b->graph);
    CU_ASSERT_STRING_EQUAL(a->id, b->id);
    CU_ASSERT_EQUAL(a->seed, b->seed);
    CU_ASSERT_EQUAL(a->repeat, b->repeat);
    CU_ASSERT_EQUAL(a->timeout_s, b->timeout_s);
    CU_ASSERT_EQUAL_FATAL(da->n_values, db->n_values);
    CU_ASSERT_EQUAL_FATAL(da->n_nodes, db->n_nodes);
    CU_ASSERT_EQUAL_FATAL(da->n_inputs, db->n_inputs);
    CU_ASSERT_EQUAL_FATAL(da->n_outputs, db->n_outputs);
    for (int32_t i = 0; i < da->n_values; i++) {
        const par_value *va = &da->values[i], *vb = value_named(b, va->name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(vb);
        CU_ASSERT_EQUAL(va->dtype, vb->dtype);
        CU_ASSERT_EQUAL(va->kind, vb->kind);
        CU_ASSERT_EQUAL_FATAL(va->rank, vb->rank);
        CU_ASSERT(memcmp(va->dims, vb->dims, sizeof(int64_t) * (size_t)va->rank) == 0);
        CU_ASSERT_EQUAL(va->scale, vb->scale);
        CU_ASSERT_EQUAL(va->zero_point, vb->zero_point);
        CU_ASSERT_EQUAL(va->quant_axis, vb->quant_axis);
        if (va->quant_axis >= 0)
            CU_ASSERT(memcmp(va->channel_scales, vb->channel_scales, sizeof(float) * (size_t)va->dims[va->quant_axis]) ==
                      0);
        if (va->kind == PAR_VALUE_CONST)
            CU_ASSERT(memcmp(va->data, vb->data, (size_t)va->numel * par_dtype_size(va->dtype)) == 0);
    }
    for (int32_t i = 0; i < da->n_nodes; i++) {
        const par_node *na = &da->nodes[i], *nb = &db->nodes[i];
        CU_ASSERT_STRING_EQUAL(na->name, nb->name);
        CU_ASSERT_STRING_EQUAL(na->op, nb->op);
        CU_ASSERT_EQUAL_FATAL(na->n_inputs, nb->n_inputs);
        for (int32_t k = 0; k < na->n_inputs; k++) {
            CU_ASSERT_EQUAL(na->inputs[k] < 0, nb->inputs[k] < 0);
            if (na->inputs[k] >= 0 && nb->inputs[k] >= 0)
                CU_ASSERT_STRING_EQUAL(da->values[na->inputs[k]].name, db->values[nb->inputs[k]].name);
        }
        CU_ASSERT_EQUAL_FATAL(na->n_attrs, nb->n_attrs);
        for (int32_t k = 0; k < na->n_attrs; k++) CU_ASSERT(attrs_equal(&na->attrs[k], &nb->attrs[k]));
        CU_ASSERT_STRING_EQUAL(da->values[na->outputs[0]].name, db->values[nb->outputs[0]].name);
    }
    for (int32_t i = 0; i < da->n_outputs; i++)
        CU_ASSERT_STRING_EQUAL(da->values[da->outputs[i]].name, db->values[db->outputs[i]].name);

    void **ia = NULL, **ib = NULL;
    par_msg m;
    CU_ASSERT_EQUAL_FATAL(par_case_make_inputs(a, &ia, &m), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(par_case_make_inputs(b, &ib, &m), PAR_OK);
    for (int32_t i = 0; i < da->n_inputs; i++) {
        const par_value *v = &da->values[da->inputs[i]];
        CU_ASSERT_STRING_EQUAL(v->name, db->values[db->inputs[i]].name);
        CU_ASSERT(memcmp(ia[i], ib[i], (size_t)v->numel * par_dtype_size(v->dtype)) == 0);
    }
    par_case_free_inputs(a, ia);
    par_case_free_inputs(b, ib);
}

/* to_json -> parse gives the same case; the text is deterministic and a fixed point of parse + to_json. */
static void round_trip(const par_case *c, int inline_data)
{
    char *t1 = par_case_to_json(c, inline_data);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t1);
    CU_ASSERT_PTR_NULL(strstr(t1, "NaN"));
    CU_ASSERT_PTR_NULL(strstr(t1, "Infinity"));
    char *again = par_case_to_json(c, inline_data);
    CU_ASSERT_STRING_EQUAL(t1, again);
    free(again);
    par_msg m;
    /* the same origin, so sidecar paths resolve as in the original */
    par_case *c2 = par_case_parse(t1, strlen(t1), c->origin ? c->origin : "rt.json", &m);
    if (!c2) printf("\n    reparse: %s\n", m.text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c2);
    assert_same_case(c, c2);
    char *t2 = par_case_to_json(c2, inline_data);
    CU_ASSERT_PTR_NOT_NULL(t2);
    if (t2) CU_ASSERT_STRING_EQUAL(t1, t2);
    free(t1);
    free(t2);
    par_case_destroy(c2);
}

static par_case *load(const char *file)
{
    par_msg m;
    par_case *c = par_case_load(file, &m);
    if (!c) printf("\n    %s\n", m.text);
    return c;
}

/* ------------------------------------------------------------------------------------------------------------------
 * Generators
 * ---------------------------------------------------------------------------------------------------------------- */

static void test_gen_deterministic_and_in_range(void)
{
    const int64_t dims[2] = {50, 40};
    float a[2000], b[2000], c[2000];
    par_gen g = {PAR_DIST_UNIFORM, -2.0, 3.0, 0, 11};
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

    par_gen n = {PAR_DIST_NORMAL, 10.0, 0.5, 0, 3};
    par_gen_fill(&n, PAR_DTYPE_F32, 2, dims, a);
    double sum = 0;
    int bounded = 1;
    for (int i = 0; i < 2000; i++) {
        sum += a[i];
        if (fabsf(a[i] - 10.0f) > 3.0f + 1e-5f) bounded = 0;
    }
    CU_ASSERT(bounded);
    CU_ASSERT(fabs(sum / 2000 - 10.0) < 6 * 0.5 / sqrt(2000.0));

    par_gen k = {PAR_DIST_CONST, 0.1, 0, 0, 1};
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
    par_gen g = {PAR_DIST_UNIFORM, 10, 20, 0, 4};
    par_gen_fill(&g, PAR_DTYPE_QU8, 1, dims, q);
    int seen[256] = {0}, in = 1;
    for (int i = 0; i < 3000; i++) {
        if (q[i] < 10 || q[i] > 20) in = 0;
        seen[q[i]] = 1;
    }
    CU_ASSERT(in);
    CU_ASSERT(seen[10] && seen[20]); /* both ends are inclusive */

    g = (par_gen){PAR_DIST_UNIFORM, -1000, 1000, 0, 4}; /* clamped to the type */
    par_gen_fill(&g, PAR_DTYPE_QS8, 1, dims, s);
    int lo = 0, hi = 0;
    for (int i = 0; i < 3000; i++) lo += s[i] == -128, hi += s[i] == 127;
    CU_ASSERT(lo > 1000 && hi > 1000);

    g = (par_gen){PAR_DIST_CONST, 2.5, 0, 0, 4}; /* round half to even */
    par_gen_fill(&g, PAR_DTYPE_I32, 1, dims, w);
    CU_ASSERT_EQUAL(w[0], 2);
    g.a = -3.5;
    par_gen_fill(&g, PAR_DTYPE_I32, 1, dims, w);
    CU_ASSERT_EQUAL(w[7], -4);

    g = (par_gen){PAR_DIST_EDGE, 0, 100, 0, 4};
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
    par_gen g = {PAR_DIST_EDGE, 0, 4.0, 0, 21};
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
    par_gen g = {PAR_DIST_CONST, 1.0, 0, 1, 1};
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
    par_gen g = {PAR_DIST_UNIFORM, 2, 1, 0, 0};
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_F32, &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "greater than high"));
    g = (par_gen){PAR_DIST_UNIFORM, -1e6, 1e6, 0, 0};
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_F16, &m), PAR_ERROR); /* beyond f16's 65504 */
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_F32, &m), PAR_OK);
    g = (par_gen){PAR_DIST_NORMAL, 0, -1, 0, 0};
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_F32, &m), PAR_ERROR);
    g = (par_gen){PAR_DIST_UNIFORM, 0.2, 0.8, 0, 0};
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_QU8, &m), PAR_ERROR); /* no integer inside */
    g = (par_gen){PAR_DIST_CONST, NAN, 0, 0, 0};
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_F32, &m), PAR_ERROR);
    g = (par_gen){(par_dist)9, 0, 1, 0, 0};
    CU_ASSERT_EQUAL(par_gen_check(&g, PAR_DTYPE_F32, &m), PAR_ERROR);
}

/* ------------------------------------------------------------------------------------------------------------------
 * Builder
 * ---------------------------------------------------------------------------------------------------------------- */

static par_case *build_small(uint64_t seed)
{
    const int64_t xd[2] = {3, 5}, wd[2] = {4, 5};
    par_case *c = par_case_create("linear(3x5->4)#seed=1", seed);
    par_gen u = {PAR_DIST_UNIFORM, -1, 1, 0, 0};
    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, 2, xd, u);
    int32_t z = par_case_input(c, "z", PAR_DTYPE_F32, 2, xd, u);
    int32_t w = par_case_const(c, "w", PAR_DTYPE_F32, 2, wd, (par_gen){PAR_DIST_NORMAL, 0, 1, 1, 0});
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
    par_gen u = {PAR_DIST_UNIFORM, -1, 1, 0, 0};
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
    CU_ASSERT_EQUAL(par_case_input(c, "x", PAR_DTYPE_F32, 1, good, (par_gen){PAR_DIST_UNIFORM, 1, -1, 0, 0}), -1);
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
    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, 1, d, (par_gen){PAR_DIST_EDGE, 0, 1e30, 0, 0});
    int32_t h = par_case_input(c, "h", PAR_DTYPE_F16, 1, d, (par_gen){PAR_DIST_EDGE, 0, 60000, 0, 0});
    int32_t k = par_case_const(c, "k", PAR_DTYPE_F32, 1, d, (par_gen){PAR_DIST_UNIFORM, -1e-3, 1e-3, 0, 0});
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
    x = par_case_input(c, "x", PAR_DTYPE_F32, 1, d2, (par_gen){PAR_DIST_UNIFORM, -1, 1, 0, 0});
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

    /* A sidecar holding a NaN is refused: data must be finite. */
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
    unlink(name);
}

/* ------------------------------------------------------------------------------------------------------------------
 * Malformed input: one test per class
 * ---------------------------------------------------------------------------------------------------------------- */

static void test_bad_not_json(void)
{
    expect_error("hello", "$", "invalid JSON at line 1, column 1");
    expect_error("", "$", "unexpected end of input");
    expect_error(HDR "'id': 'x'} trailing", "$", "invalid JSON at line 1");
    expect_error("{'a': 1,}", "$", "invalid JSON");
    expect_error("{'schema': 'parity.case',\n 'version': 1,\n 'id': 'x' 'seed': 1}", "$", "line 3, column 12");
    expect_error("{'s': '\xff'}", "$", "invalid JSON"); /* not UTF-8 */
    char deep[400];
    memset(deep, '[', 300);
    deep[300] = 0;
    expect_error(deep, "$", "invalid JSON"); /* nesting deeper than the limit */
    par_msg m;
    CU_ASSERT_PTR_NULL(par_case_load(DATA "bad_syntax.json", &m));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "bad_syntax.json: $: invalid JSON at line 5, column 51"));
    CU_ASSERT_PTR_NULL(par_case_load(DATA "no_such_file.json", &m));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "no_such_file.json: $: cannot open"));
    /* an embedded NUL ends the document early: the rest is trailing data */
    const char nul[] = "{\"schema\": \"parity.case\"}\0xyz";
    CU_ASSERT_PTR_NULL(par_case_parse(nul, sizeof nul - 1, "t.json", &m));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "t.json: $: invalid JSON"));
}

static void test_bad_truncated(void)
{
    char *full = J(DOC_IN(X_IN));
    par_msg m;
    par_case *c = par_case_parse(full, strlen(full), "t.json", &m);
    CU_ASSERT_PTR_NOT_NULL(c); /* the untruncated text is valid */
    par_case_destroy(c);
    int all = 1;
    for (size_t n = 0; n < strlen(full); n++) { /* every proper prefix fails with a syntax error */
        c = par_case_parse(full, n, "t.json", &m);
        if (c || !strstr(m.text, "t.json: $: invalid JSON")) all = 0;
        par_case_destroy(c);
    }
    CU_ASSERT(all);
    free(full);
}

static void test_bad_types(void)
{
    expect_error("[1, 2]", "$", "expected an object, got an array");
    expect_error("null", "$", "expected an object, got null");
    expect_error("{'schema': 'parity.model', 'version': 1}", "$.schema", "expected \"parity.case\"");
    expect_error("{'schema': 'parity.case', 'version': 2}", "$.version", "unsupported version 2");
    expect_error("{'schema': 'parity.case', 'version': '1'}", "$.version", "expected an integer, got a string");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': '2x3', 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape", "expected an array of dimensions, got a string");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 5, 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].dtype", "expected a string, got an integer");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f64', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].dtype", "unknown dtype 'f64'");
    expect_error(DOC_IN("{'name': ['x'], 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].name", "expected a string, got an array");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': '1'}}"),
                 "$.inputs[0].init.value", "expected a number, got a string");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1, "
                        "'fan_in': 1}}"),
                 "$.inputs[0].init.fan_in", "expected true or false, got an integer");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'data': 'abc'}"), "$.inputs[0].data",
                 "expected an array of numbers or {\"file\": ...}, got a string");
    expect_error(DOC_IN("7"), "$.inputs[0]", "expected an object, got an integer");
    expect_error(HDR "'inputs': {}, 'outputs': ['y']}", "$.inputs", "expected an array, got an object");
    expect_error(DOC_NODE("{'op': 'conv2d', 'inputs': ['x', 'x'], 'attrs': {'stride': '2'}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.stride", "expected a list of integers, got a string");
    expect_error(DOC_NODE("{'op': 'conv2d', 'inputs': ['x', 'x'], 'attrs': {'groups': 1.5}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.groups", "expected an integer, got a number");
    expect_error(DOC_NODE("{'op': 'conv2d', 'inputs': ['x', 'x'], 'attrs': {'stride': [1, 1, 1]}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.stride", "expected 2 elements, got 3");
    expect_error(DOC_NODE("{'op': 'conv2d', 'inputs': ['x', 'x'], 'attrs': {'pad_mode': 'full'}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.pad_mode", "'full' is not one of explicit|same|valid");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': [3], 'outputs': ['y']}"), "$.nodes[0].inputs[0]",
                 "expected a value name or null, got an integer");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['x'], 'outputs': [{'name': 'y', 'dtype': 'f32', 'scale': 1}]}"),
                 "$.nodes[0].outputs[0].scale", "only for outputs declared qu8, qs8 or i32");
    expect_error(HDR "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': 'y'}", "$.outputs",
                 "expected an array of value names, got a string");
    expect_error(HDR "'options': {'repeat': 0}, 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}",
                 "$.options.repeat", "0 is out of range [1, 1000000]");
    expect_error(HDR "'options': {'timeout_s': -1}, 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}",
                 "$.options.timeout_s", "outside (0, 86400]");
    expect_error(DOC_IN("{'name': 'x\\u0000y', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].name", "NUL character");
}

static void test_bad_numbers(void)
{
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2, -1], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape[1]", "-1 is out of range [1, ");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [0], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape[0]", "0 is out of range [1, ");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [1e30], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape[0]", "expected an integer, got a number");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [99999999999999999999999], "
                        "'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape[0]", "is out of range");
    expect_error(HDR "'seed': -1, 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}", "$.seed",
                 "-1 is negative");
    expect_error(HDR "'seed': 1e3, 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}", "$.seed",
                 "expected an integer, got a number");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'uniform', 'low': -1e400, "
                        "'high': 1}}"),
                 "$.inputs[0].init.low", "infinite numbers are not allowed");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'uniform', 'low': 2, "
                        "'high': 1}}"),
                 "$.inputs[0].init", "uniform: low 2 is greater than high 1");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f16', 'shape': [2], 'init': {'dist': 'uniform', 'low': -1e5, "
                        "'high': 1}}"),
                 "$.inputs[0].init", "bounds must lie within");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'normal', 'mean': 0, "
                        "'std': -1}}"),
                 "$.inputs[0].init", "std -1 is negative");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'edge', 'max': 1, 'seed': -5}}"),
                 "$.inputs[0].init.seed", "-5 is negative");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'data': [1, 1e39]}"), "$.inputs[0].data[1]",
                 "1e+39 overflows f32");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f16', 'shape': [2], 'data': [70000, 1]}"), "$.inputs[0].data[0]",
                 "70000 overflows f16");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'qu8', 'shape': [2], 'data': [1, 256], 'quant': {'scale': 1}}"),
                 "$.inputs[0].data[1]", "256 is out of range [0, 255]");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'qs8', 'shape': [2], 'data': [1, 0.5], 'quant': {'scale': 1}}"),
                 "$.inputs[0].data[1]", "expected an integer, got a number");
}

static void test_bad_shapes(void)
{
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [1, 1, 1, 1, 1, 1, 1], "
                        "'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape", "rank 7 exceeds the maximum 6");
    /* a product that overflows int64 if multiplied naively: 2^28 six times */
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [268435456, 268435456, 268435456, 268435456, "
                        "268435456, 268435456], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape", "more than ");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [65536, 65536], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape", "more than ");
    /* each tensor within the limit, together over it */
    char doc[600];
    long long half = (long long)(PAR_CASE_MAX_ELEMS / 2 + 1);
    snprintf(doc, sizeof doc,
             HDR "'inputs': [{'name': 'x', 'dtype': 'qu8', 'shape': [%lld], 'init': {'dist': 'const', 'value': 1}, "
                 "'quant': {'scale': 1}}, {'name': 'z', 'dtype': 'qu8', 'shape': [%lld], 'init': {'dist': 'const', "
                 "'value': 1}, 'quant': {'scale': 1}}], 'nodes': [" RELU "], 'outputs': ['y']}",
             half, half);
    expect_error(doc, "$.inputs[1].shape", "elements in all");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2, 3], 'data': [1, 2, 3, 4, 5]}"), "$.inputs[0].data",
                 "expected 6 values for shape [2,3], got 5");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2, 3], 'data': [1, 2, 3, 4, 5, 6, 7]}"),
                 "$.inputs[0].data", "expected 6 values for shape [2,3], got 7");
}

static void test_bad_missing(void)
{
    expect_error("{'version': 1}", "$.schema", "missing");
    expect_error("{'schema': 'parity.case'}", "$.version", "missing");
    expect_error(HDR "'inputs': [" X_IN "], 'nodes': [" RELU "]}", "$.outputs", "missing");
    expect_error(HDR "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': []}", "$.outputs",
                 "at least one output");
    expect_error(DOC_IN("{'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"), "$.inputs[0].name",
                 "missing");
    expect_error(DOC_IN("{'name': 'x', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"), "$.inputs[0].dtype",
                 "missing");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'init': {'dist': 'const', 'value': 1}}"), "$.inputs[0].shape",
                 "missing");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2]}"), "$.inputs[0]", "missing 'init' or 'data'");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'data': [1, 2], "
                        "'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0]", "give 'init' or 'data', not both");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'low': 0, 'high': 1}}"),
                 "$.inputs[0].init.dist", "missing");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'uniform', 'low': 0}}"),
                 "$.inputs[0].init.high", "missing (required for uniform)");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'gauss', 'mean': 0}}"),
                 "$.inputs[0].init.dist", "unknown distribution 'gauss'");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'qu8', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].quant", "missing (required for qu8)");
    expect_error(DOC_NODE("{'inputs': ['x'], 'outputs': ['y']}"), "$.nodes[0].op", "missing");
    expect_error(DOC_NODE("{'op': 'relu', 'outputs': ['y']}"), "$.nodes[0].inputs", "missing");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['x']}"), "$.nodes[0].outputs", "missing");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['x'], 'outputs': []}"), "$.nodes[0].outputs",
                 "relu has 1 output, got 0");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': [], 'outputs': ['y']}"), "$.nodes[0].inputs",
                 "relu takes 1 to 1 inputs, got 0");
    expect_error(DOC_NODE("{'op': 'max_pool2d', 'inputs': ['x'], 'outputs': ['y']}"), "$.nodes[0]",
                 "attribute 'kernel' is required");
    expect_error(DOC_NODE("{'op': 'quantize', 'inputs': ['x'], 'outputs': [{'name': 'y', 'dtype': 'qu8'}]}"),
                 "$.nodes[0].outputs[0].scale", "missing (required for qu8)");
}

static void test_bad_unknown_fields(void)
{
    expect_error(HDR "'seeed': 3, 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}", "$.seeed",
                 "unknown field (expected one of: schema, version, id");
    expect_error(DOC_IN("{'name': 'x', 'dtyp': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].dtyp", "unknown field");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'uniform', 'lo': 0, "
                        "'high': 1}}"),
                 "$.inputs[0].init.lo", "unknown field (expected one of: dist, low, high, fan_in, seed)");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1, "
                        "'std': 1}}"),
                 "$.inputs[0].init.std", "unknown field");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['x'], 'outputs': ['y'], 'attr': {}}"), "$.nodes[0].attr",
                 "unknown field");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['x'], 'attrs': {'alpha': 1}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.alpha", "unknown attribute: relu takes none");
    expect_error(DOC_NODE("{'op': 'conv3d', 'inputs': ['x'], 'outputs': ['y']}"), "$.nodes[0].op",
                 "unknown op 'conv3d'");
    expect_error(HDR "'options': {'repeats': 2}, 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}",
                 "$.options.repeats", "unknown field");
    par_msg m;
    /* the one top-level field that is ignored: the reference outputs `parity export` appends */
    par_case *c = parse_j(HDR "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y'], "
                              "'reference': {'arith': 'f32', 'outputs': []}}",
                          &m);
    CU_ASSERT_PTR_NOT_NULL(c);
    par_case_destroy(c);
    CU_ASSERT_PTR_NULL(par_case_load(DATA "bad_typo.json", &m));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "bad_typo.json: $.nodes[0].attrs.axsi: unknown attribute for softmax"));
}

static void test_bad_names(void)
{
    expect_error(DOC_IN(X_IN ", " X_IN), "$.inputs[1].name", "duplicate name 'x'");
    expect_error(HDR "'inputs': [" X_IN "], 'constants': [{'name': 'x', 'dtype': 'f32', 'shape': [1], 'data': [1]}],"
                     "'nodes': [" RELU "], 'outputs': ['y']}",
                 "$.constants[0].name", "duplicate name 'x'");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['x'], 'outputs': ['x']}"), "$.nodes[0].outputs[0]",
                 "duplicate name 'x'");
    expect_error(DOC_NODE(RELU ", " RELU), "$.nodes[1].outputs[0]", "duplicate name 'y'");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['q'], 'outputs': ['y']}"), "$.nodes[0].inputs[0]",
                 "no value named 'q'");
    /* topological order: a node may not use a value produced later */
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['z'], 'outputs': ['y']}, "
                          "{'op': 'relu', 'inputs': ['x'], 'outputs': ['z']}"),
                 "$.nodes[0].inputs[0]", "no value named 'z'");
    expect_error(HDR "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['w']}", "$.outputs[0]",
                 "no value named 'w'");
    expect_error(HDR "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y', 'y']}", "$.outputs[1]",
                 "listed twice");
    expect_error(DOC_IN("{'name': '', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].name", "empty name");
    expect_error(HDR "'id': '', 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}", "$.id", "empty id");
}

static void test_bad_nan_inf(void)
{
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'data': [1, NaN]}"), "$.inputs[0].data[1]",
                 "NaN is not allowed");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'data': [-Infinity, 1]}"), "$.inputs[0].data[0]",
                 "infinite numbers are not allowed");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'data': ['inf', 1]}"), "$.inputs[0].data[0]",
                 "expected a number, got a string");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': NaN}}"),
                 "$.inputs[0].init.value", "NaN is not allowed");
    expect_error(DOC_NODE("{'op': 'clamp', 'inputs': ['x'], 'attrs': {'max': NaN}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.max", "NaN is not allowed");
    expect_error(DOC_NODE("{'op': 'clamp', 'inputs': ['x'], 'attrs': {'max': 'nan'}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.max", "expected a number, \"inf\" or \"-inf\", got \"nan\"");
    expect_error(DOC_NODE("{'op': 'clamp', 'inputs': ['x'], 'attrs': {'max': Infinity}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.max", "infinite numbers are not allowed");
    /* the strings "inf" / "-inf" are the way to write infinite float attributes */
    par_msg m;
    par_case *c = parse_j(DOC_NODE("{'op': 'clamp', 'inputs': ['x'], 'attrs': {'min': '-inf', 'max': 'inf'}, "
                                   "'outputs': ['y']}"),
                          &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT(isinf(par_attr_float(&par_graph_desc_of(c->graph)->nodes[0], "max", 0)));
    par_case_destroy(c);
    c = parse_j(DOC_NODE("{'op': 'clamp', 'inputs': ['x'], 'attrs': {'min': '-inf', 'max': 2}, 'outputs': ['y']}"), &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char *t = par_case_to_json(c, 0);
    CU_ASSERT_PTR_NULL(strstr(t, "inf")); /* -inf is clamp's default for min: not written */
    free(t);
    round_trip(c, 1);
    par_case_destroy(c);
    c = parse_j(DOC_NODE("{'op': 'clamp', 'inputs': ['x'], 'attrs': {'min': 0, 'max': '-inf'}, 'outputs': ['y']}"), &m);
    if (c) { /* whether the graph accepts min > max is its business; if it does, -inf must be written as a string */
        t = par_case_to_json(c, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"max\": \"-inf\""));
        free(t);
        par_case_destroy(c);
    }
}

static void test_bad_quant(void)
{
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1}, "
                        "'quant': {'scale': 1}}"),
                 "$.inputs[0].quant", "quantization is only for qu8, qs8 and i32 tensors");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'qu8', 'shape': [2], 'init': {'dist': 'const', 'value': 1}, "
                        "'quant': {'scale': 0.1, 'zero_point': 300}}"),
                 "$.inputs[0].quant.zero_point", "300 is out of range [0, 255]");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'qu8', 'shape': [2], 'init': {'dist': 'const', 'value': 1}, "
                        "'quant': {'scale': 0}}"),
                 "$.inputs[0].quant.scale", "must be > 0");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'qu8', 'shape': [2], 'init': {'dist': 'const', 'value': 1}, "
                        "'quant': {'scale': 1e-50}}"),
                 "$.inputs[0].quant.scale", "finite f32");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'qs8', 'shape': [2], 'init': {'dist': 'const', 'value': 1}, "
                        "'quant': {'axis': 0, 'scales': [1, 1]}}"),
                 "$.inputs[0].quant", "per-channel scales are for qs8 constants only");
    expect_error(HDR "'inputs': [" X_IN "], 'constants': [{'name': 'w', 'dtype': 'qs8', 'shape': [3, 2], "
                     "'data': [1, 2, 3, 4, 5, 6], 'quant': {'axis': 0, 'scales': [1, 2]}}], 'nodes': [" RELU "], "
                     "'outputs': ['y']}",
                 "$.constants[0].quant.scales", "expected 3 scales (dimension 0), got 2");
    expect_error(HDR "'inputs': [" X_IN "], 'constants': [{'name': 'w', 'dtype': 'qs8', 'shape': [3, 2], "
                     "'data': [1, 2, 3, 4, 5, 6], 'quant': {'axis': 2, 'scales': [1, 2]}}], 'nodes': [" RELU "], "
                     "'outputs': ['y']}",
                 "$.constants[0].quant.axis", "2 is out of range [-2, 1]");
    expect_error(HDR "'inputs': [" X_IN "], 'constants': [{'name': 'w', 'dtype': 'qs8', 'shape': [3, 2], "
                     "'data': [1, 2, 3, 4, 5, 6], 'quant': {'axis': 0, 'scales': [1, 2, -1]}}], 'nodes': [" RELU "], "
                     "'outputs': ['y']}",
                 "$.constants[0].quant.scales[2]", "must be > 0");
}

/* A graph-level error (the graph builder's message) comes with the node's path. */
static void test_bad_graph(void)
{
    expect_error(HDR "'inputs': [{'name': 'x', 'dtype': 'f32', 'shape': [1, 3, 4, 4], 'init': {'dist': 'const', "
                     "'value': 1}}], 'constants': [{'name': 'w', 'dtype': 'f32', 'shape': [4, 1, 1, 1], "
                     "'init': {'dist': 'const', 'value': 1}}], 'nodes': [{'op': 'conv2d', 'inputs': ['x', 'w'], "
                     "'attrs': {'groups': 2}, 'outputs': ['y']}], 'outputs': ['y']}",
                 "$.nodes[0]", "conv2d");
    expect_error(HDR "'inputs': [" X_IN "], 'outputs': ['x']}", "$.outputs[0]", "not computed by a node");
}

static const CU_TestInfo tests[] = {
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
    {"malformed: not JSON", test_bad_not_json},
    {"malformed: truncated", test_bad_truncated},
    {"malformed: wrong types", test_bad_types},
    {"malformed: numbers", test_bad_numbers},
    {"malformed: shapes and lengths", test_bad_shapes},
    {"malformed: missing fields", test_bad_missing},
    {"malformed: unknown fields", test_bad_unknown_fields},
    {"malformed: names", test_bad_names},
    {"malformed: NaN and infinities", test_bad_nan_inf},
    {"malformed: quantization", test_bad_quant},
    {"malformed: graph errors", test_bad_graph},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("case", tests)
