/*
 * case_helpers.h - the shared helpers of the case module's tests (tests/test_case.c, tests/test_case_malformed.c):
 * case documents written with single quotes, a parse that must fail with a message naming the JSON path and the
 * reason, a small valid document to vary, the loader of tests/data/cases/, and the round trip to_json -> parse
 * (same graph, same input bytes, same constant bytes). Everything is static inline: each program takes what it uses.
 *
 * It must hold no test of its own: the assertions here run only on behalf of a test that calls them.
 */
#ifndef PAR_TESTS_CASE_HELPERS_H
#define PAR_TESTS_CASE_HELPERS_H

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/case.h"
#include "core/tensor.h"

#ifndef PAR_SOURCE_DIR
#define PAR_SOURCE_DIR "."
#endif
#define DATA PAR_SOURCE_DIR "/tests/data/cases/"

/* JSON written with single quotes (the format never needs one inside a string), turned into real JSON. */
static inline char *J(const char *s)
{
    char *d = strdup(s);
    for (char *p = d; *p; p++)
        if (*p == '\'') *p = '"';
    return d;
}

static inline par_case *parse_j(const char *sq, par_msg *m)
{
    char *t = J(sq);
    par_case *c = par_case_parse(t, strlen(t), "t.json", m);
    free(t);
    return c;
}

/* The parse must fail, and the message must read "t.json: <path>: ..." and contain the reason. */
static inline void expect_error(const char *sq, const char *path, const char *reason)
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

static inline const par_value *value_named(const par_case *c, const char *name)
{
    int32_t v = par_graph_find_value(c->graph, name);
    return v >= 0 ? &par_graph_desc_of(c->graph)->values[v] : NULL;
}

static inline int attrs_equal(const par_attr *a, const par_attr *b)
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
static inline void assert_same_case(const par_case *a, const par_case *b)
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
static inline void round_trip(const par_case *c, int inline_data)
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

static inline par_case *load(const char *file)
{
    par_msg m;
    par_case *c = par_case_load(file, &m);
    if (!c) printf("\n    %s\n", m.text);
    return c;
}

#endif
