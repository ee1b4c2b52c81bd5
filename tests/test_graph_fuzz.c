/*
 * test_graph_fuzz.c - what the graph builder target (fuzz/targets/fuzz_graph.c) found, each input replayed as the
 * builder call sequence it decoded to: a graph the builder accepts is written by par_case_to_json, read back by
 * par_case_parse and written again to the same text, with the same dtypes and quantization.
 */
#include <stdlib.h>

#include "core/case.h"
#include "tmain.h"

/* The case of graph g (which it takes), with every input drawn by the constant generator 0. */
static par_case *case_of(par_graph *g)
{
    par_case *c = par_case_create("fuzz_graph", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    par_graph_destroy(c->graph);
    c->graph = g;
    const par_graph_desc *d = par_graph_desc_of(g);
    c->srcs = calloc((size_t)d->n_inputs + 1, sizeof *c->srcs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c->srcs);
    for (int32_t i = 0; i < d->n_inputs; i++) {
        par_tensor_src *s = &c->srcs[c->n_srcs++];
        s->value = d->inputs[i];
        s->kind = PAR_SRC_GEN;
        s->gen = (par_gen){.dist = PAR_DIST_CONST, .a = 0.0};
        s->gen.seed = par_case_derive_seed(d->values[d->inputs[i]].name, c->seed);
    }
    return c;
}

/* Written, read back and written again: the same text; the value `name` keeps dtype dt in the copy. */
static void check_round_trip(par_case *c, const char *name, par_dtype dt)
{
    char *t = par_case_to_json(c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    par_msg m = {{0}};
    par_case *c2 = par_case_parse(t, strlen(t), "t.json", &m);
    CU_ASSERT_PTR_NOT_NULL(c2);
    if (!c2) fprintf(stderr, "%s\n%s\n", m.text, t);
    if (c2) {
        int32_t v = par_graph_find_value(c2->graph, name);
        CU_ASSERT_FATAL(v >= 0);
        CU_ASSERT_EQUAL(par_graph_desc_of(c2->graph)->values[v].dtype, dt);
        char *t2 = par_case_to_json(c2, 0);
        CU_ASSERT_PTR_NOT_NULL(t2);
        if (t2) CU_ASSERT_STRING_EQUAL(t, t2);
        free(t2);
    }
    par_case_destroy(c2);
    free(t);
}

/* A node output declared with a plain dtype that differs from its input's (f32 from a qs8 flatten): the writer
 * wrote only the name, and the reader gave the output input 0's dtype. */
static void test_declared_plain_dtype(void)
{
    par_msg m = {{0}};
    par_graph *g = par_graph_create("fuzz");
    int32_t x = par_graph_add_input(g, "t15", PAR_DTYPE_QS8, 3, (int64_t[]){1, 5, 5}, &m);
    CU_ASSERT_FATAL(x >= 0);
    CU_ASSERT_EQUAL(par_graph_set_quant(g, x, 1.0f, 0, &m), PAR_OK);
    par_out_spec os = {"flatten1", PAR_DTYPE_F32, 1.0f, 0};
    int32_t n = par_graph_add_node(g, "flatten", NULL, 1, &x, 0, NULL, &os, &m);
    CU_ASSERT_FATAL(n >= 0);
    int32_t y = par_graph_find_value(g, "flatten1");
    CU_ASSERT_EQUAL(par_graph_desc_of(g)->values[y].dtype, PAR_DTYPE_F32);
    CU_ASSERT_EQUAL(par_graph_mark_output(g, y, &m), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(par_graph_finalize(g, &m), PAR_OK);
    par_case *c = case_of(g);
    check_round_trip(c, "flatten1", PAR_DTYPE_F32);
    par_case_destroy(c);
}

/* An output whose dtype shape inference sets (where takes its operands') is still written as a plain name. */
static void test_inferred_dtype_stays_plain(void)
{
    par_msg m = {{0}};
    par_graph *g = par_graph_create("fuzz");
    int32_t in[3];
    in[0] = par_graph_add_input(g, "c", PAR_DTYPE_BOOL, 1, (int64_t[]){4}, &m);
    in[1] = par_graph_add_input(g, "a", PAR_DTYPE_F32, 1, (int64_t[]){4}, &m);
    in[2] = par_graph_add_input(g, "b", PAR_DTYPE_F32, 1, (int64_t[]){4}, &m);
    CU_ASSERT_FATAL(in[0] >= 0 && in[1] >= 0 && in[2] >= 0);
    CU_ASSERT_FATAL(par_graph_add_node(g, "where", "w", 3, in, 0, NULL, NULL, &m) >= 0);
    CU_ASSERT_EQUAL(par_graph_mark_output(g, par_graph_find_value(g, "w"), &m), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(par_graph_finalize(g, &m), PAR_OK);
    par_case *c = case_of(g);
    char *t = par_case_to_json(c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"outputs\": [\"w\"]}"));
    free(t);
    check_round_trip(c, "w", PAR_DTYPE_F32);
    par_case_destroy(c);
}

/* Quantization set on a node's output (a where of i32 operands, then scale 0.5): shape inference gives where the
 * operands' quantization, so the copy read back had scale 1. The same for an operand's quantization changed after
 * the node read it. The builder now refuses both, naming the value (and the node). */
static void test_quant_of_node_output_refused(void)
{
    par_msg m = {{0}};
    par_graph *g = par_graph_create("fuzz");
    int32_t in[3];
    int64_t d5[5] = {2, 2, 2, 6, 2};
    unsigned char bits[96];
    for (int i = 0; i < 96; i++) bits[i] = (unsigned char)(i & 1);
    in[0] = par_graph_add_const(g, "c5", PAR_DTYPE_BOOL, 5, d5, bits, &m);
    in[1] = par_graph_add_input(g, "t18", PAR_DTYPE_I32, 1, (int64_t[]){2}, &m);
    in[2] = in[1];
    CU_ASSERT_FATAL(in[0] >= 0 && in[1] >= 0);
    par_out_spec os = {"where0", PAR_DTYPE_I32, 1.0f, 0};
    CU_ASSERT_FATAL(par_graph_add_node(g, "where", NULL, 3, in, 0, NULL, &os, &m) >= 0);
    int32_t w = par_graph_find_value(g, "where0");
    memset(&m, 0, sizeof m);
    CU_ASSERT_EQUAL(par_graph_set_quant(g, w, 0.5f, 0, &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "'where0' is a node output"));
    CU_ASSERT_EQUAL(par_graph_desc_of(g)->values[w].scale, 1.0f);
    /* nor may an input's change once a node read it: where copied its scale 1 into where0 */
    memset(&m, 0, sizeof m);
    CU_ASSERT_EQUAL(par_graph_set_quant(g, in[1], 0.5f, 0, &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "'t18' is already read by node 'where0'"));
    /* an input no node reads yet still takes it */
    int32_t t19 = par_graph_add_input(g, "t19", PAR_DTYPE_I32, 1, (int64_t[]){2}, &m);
    CU_ASSERT_EQUAL(par_graph_set_quant(g, t19, 0.5f, 0, &m), PAR_OK);
    CU_ASSERT_EQUAL(par_graph_mark_output(g, w, &m), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(par_graph_finalize(g, &m), PAR_OK);
    par_case *c = case_of(g);
    check_round_trip(c, "where0", PAR_DTYPE_I32);
    par_case_destroy(c);
}

static const CU_TestInfo tests[] = {
    {"a declared plain dtype is written and read back", test_declared_plain_dtype},
    {"an inferred dtype is written as a plain name", test_inferred_dtype_stays_plain},
    {"quantization of a node output is refused", test_quant_of_node_output_refused},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("graph_fuzz", tests)
