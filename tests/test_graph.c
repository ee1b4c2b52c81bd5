/*
 * test_graph.c - the graph builder and the op table: schemas parsed, defaults filled, every attribute and arity
 * error named with the node, the attribute and the reason; shapes inferred at insertion.
 */
#include <math.h>

#include "core/graph.h"
#include "tmain.h"

static par_graph *g;
static par_msg m;
static int32_t x;

static void setup(void)
{
    g = par_graph_create("t");
    memset(&m, 0, sizeof m);
    x = par_graph_add_input(g, "x", PAR_DTYPE_F32, 4, (int64_t[]){1, 8, 10, 10}, &m);
    CU_ASSERT_FATAL(x == 0);
}

static void test_op_table(void)
{
    const par_op_info *c = par_op_find("conv2d");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->in_min, 2);
    CU_ASSERT_EQUAL(c->in_max, 3);
    CU_ASSERT_EQUAL(c->n_attrs, 5);
    CU_ASSERT_STRING_EQUAL(c->attrs[0].name, "stride");
    CU_ASSERT_EQUAL(c->attrs[0].fixed_count, 2);
    CU_ASSERT_EQUAL(c->attrs[1].def.count, 4);
    CU_ASSERT_STRING_EQUAL(c->attrs[4].def.s, "explicit");
    CU_ASSERT_STRING_EQUAL(c->attrs[4].choices, "explicit|same|valid");
    const par_op_info *cl = par_op_find("clamp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cl);
    CU_ASSERT(isinf(cl->attrs[0].def.f) && cl->attrs[0].def.f < 0);
    CU_ASSERT_PTR_NULL(par_op_find("conv3d"));
}

/* Every default of every schema is a value the schema itself accepts: a string among its choices, a fixed-size list
 * of that size, names unique within the op and spelled [a-z0-9_]. (A typo in a default, "=nonee", fails here rather
 * than on the first case that leaves the attribute out.) */
static void test_schema_defaults_valid(void)
{
    int n_defaults = 0;
    for (int i = 0; i < PAR_OP_COUNT; i++) {
        const par_op_info *op = par_op_get((par_op_id)i);
        for (int32_t k = 0; k < op->n_attrs; k++) {
            const par_attr_spec *sp = &op->attrs[k];
            int ok = strlen(sp->name) > 0 && strspn(sp->name, "abcdefghijklmnopqrstuvwxyz0123456789_") ==
                                                 strlen(sp->name);
            for (int32_t j = 0; j < k; j++) ok &= strcmp(op->attrs[j].name, sp->name) != 0;
            if (sp->has_default) {
                n_defaults++;
                if (sp->type == PAR_ATTR_STRING && sp->choices[0]) {
                    /* the default is one of the '|'-separated choices */
                    char tmp[sizeof sp->choices + 2];
                    snprintf(tmp, sizeof tmp, "|%s|", sp->choices);
                    char want[72];
                    snprintf(want, sizeof want, "|%s|", sp->def.s);
                    ok &= strstr(tmp, want) != NULL;
                }
                if ((sp->type == PAR_ATTR_INTS || sp->type == PAR_ATTR_FLOATS) && sp->fixed_count > 0)
                    ok &= sp->def.count == sp->fixed_count;
            }
            if (!ok) fprintf(stderr, "\n    op %s: attribute '%s' or its default is invalid\n", op->name, sp->name);
            CU_ASSERT(ok);
        }
    }
    CU_ASSERT(n_defaults > 30);
}

/* Every op's shape inference refuses a node whose inputs are absent (it is called directly, without the builder's
 * arity check in front), with a message that names the input, instead of crashing or inventing a shape. */
static void test_infer_names_missing_input(void)
{
    par_graph_desc d = {.name = "t"};
    for (int i = 0; i < PAR_OP_COUNT; i++) {
        const par_op_info *op = par_op_get((par_op_id)i);
        int32_t ins[64], outs_ix[4] = {0};
        for (int32_t k = 0; k < 64; k++) ins[k] = -1;
        par_attr attrs[PAR_MAX_ATTRS];
        int32_t na = 0;
        for (int32_t k = 0; k < op->n_attrs; k++)
            if (op->attrs[k].has_default) attrs[na++] = op->attrs[k].def;
        par_node n = {.name = "n", .op = op->name, .n_inputs = op->in_min, .inputs = ins, .n_outputs = op->n_out,
                      .outputs = outs_ix, .n_attrs = na, .attrs = attrs};
        par_value outs[4];
        memset(outs, 0, sizeof outs);
        par_msg msg;
        memset(&msg, 0, sizeof msg);
        par_status st = op->infer(&d, &n, outs, &msg);
        int ok = st == PAR_ERROR && strstr(msg.text, "input") != NULL;
        if (!ok) fprintf(stderr, "\n    op %s: status %d, message '%s'\n", op->name, (int)st, msg.text);
        CU_ASSERT(ok);
    }
}

/* Every op whose attributes all have defaults (an empty list default is an attribute left out, so upsample's size or
 * scale must be given) and that takes one float input builds a node on x [1,8,10,10] from its defaults alone (the
 * conversions, whose output quantization must be declared, aside); the same-shape ops keep
 * x's shape. */
static void test_defaults_build_valid_nodes(void)
{
    int built = 0, same = 0;
    for (int i = 0; i < PAR_OP_COUNT; i++) {
        const par_op_info *op = par_op_get((par_op_id)i);
        int all_default = 1;
        for (int32_t k = 0; k < op->n_attrs; k++) { /* an empty list default ("size:ints=") means "not given" */
            const par_attr_spec *sp = &op->attrs[k];
            all_default &= sp->has_default &&
                           !((sp->type == PAR_ATTR_INTS || sp->type == PAR_ATTR_FLOATS) && sp->def.count == 0);
        }
        if (!all_default || op->in_min != 1 || op->qform == PAR_QFORM_CONVERT) continue;
        if (op->infer == par_infer_logical) continue; /* logical_not: a bool input */
        setup();
        int32_t n = par_graph_add_node(g, op->name, "n0", 1, (int32_t[]){x}, 0, NULL, NULL, &m);
        if (n != 0) fprintf(stderr, "\n    op %s: %s\n", op->name, m.text);
        CU_ASSERT_EQUAL(n, 0);
        if (n == 0) {
            built++;
            const par_graph_desc *d = par_graph_desc_of(g);
            const par_value *y = &d->values[d->nodes[0].outputs[0]];
            CU_ASSERT(y->rank >= 1 && y->numel >= 1);
            if (op->infer == par_infer_same) {
                same++;
                CU_ASSERT(y->rank == 4 && y->dims[0] == 1 && y->dims[1] == 8 && y->dims[2] == 10 && y->dims[3] == 10);
            }
        }
        par_graph_destroy(g);
    }
    CU_ASSERT(built > 15);
    CU_ASSERT(same > 10);
}

static void test_defaults_filled(void)
{
    setup();
    int32_t w = par_graph_add_const(g, "w", PAR_DTYPE_F32, 4, (int64_t[]){4, 8, 3, 3}, (float[4 * 8 * 9]){0}, &m);
    int32_t n = par_graph_add_node(g, "conv2d", "c0", 2, (int32_t[]){x, w}, 0, NULL, NULL, &m);
    CU_ASSERT_FATAL(n == 0);
    const par_graph_desc *d = par_graph_desc_of(g);
    const par_node *node = &d->nodes[0];
    CU_ASSERT_EQUAL(node->n_attrs, 5);
    CU_ASSERT_EQUAL(par_attr_ints_at(node, "stride", 1, -1), 1);
    CU_ASSERT_EQUAL(par_attr_int(node, "groups", -1), 1);
    CU_ASSERT_STRING_EQUAL(par_attr_str(node, "pad_mode", ""), "explicit");
    const par_value *y = &d->values[node->outputs[0]];
    CU_ASSERT_EQUAL(y->rank, 4);
    CU_ASSERT_EQUAL(y->dims[1], 4);
    CU_ASSERT_EQUAL(y->dims[2], 8);
    CU_ASSERT_EQUAL(y->kind, PAR_VALUE_NODE);
    CU_ASSERT_EQUAL(y->producer, 0);
    CU_ASSERT_STRING_EQUAL(y->name, "c0");
    par_graph_destroy(g);
}

static void expect_err(int32_t r, const char *needle1, const char *needle2)
{
    CU_ASSERT_EQUAL(r, -1);
    if (!strstr(m.text, needle1) || (needle2 && !strstr(m.text, needle2))) {
        fprintf(stderr, "\n    message was: %s\n", m.text);
        CU_FAIL("message does not name what is wrong");
    }
}

static void test_attribute_errors(void)
{
    setup();
    int32_t w = par_graph_add_const(g, "w", PAR_DTYPE_F32, 4, (int64_t[]){4, 8, 3, 3}, (float[4 * 8 * 9]){0}, &m);
    par_attr bad1[] = {par_a_ints("strde", 2, (int64_t[]){1, 1})};
    expect_err(par_graph_add_node(g, "conv2d", "c0", 2, (int32_t[]){x, w}, 1, bad1, NULL, &m), "'c0'", "strde");
    par_attr bad2[] = {par_a_ints("stride", 3, (int64_t[]){1, 1, 1})};
    expect_err(par_graph_add_node(g, "conv2d", "c0", 2, (int32_t[]){x, w}, 1, bad2, NULL, &m), "stride",
               "expected 2 elements");
    par_attr bad3[] = {par_a_str("pad_mode", "sideways")};
    expect_err(par_graph_add_node(g, "conv2d", "c0", 2, (int32_t[]){x, w}, 1, bad3, NULL, &m), "pad_mode",
               "sideways");
    par_attr bad4[] = {par_a_float("groups", 1.5)};
    expect_err(par_graph_add_node(g, "conv2d", "c0", 2, (int32_t[]){x, w}, 1, bad4, NULL, &m), "groups",
               "integer");
    par_attr bad5[] = {par_a_int("groups", 1), par_a_int("groups", 1)};
    expect_err(par_graph_add_node(g, "conv2d", "c0", 2, (int32_t[]){x, w}, 2, bad5, NULL, &m), "groups", "twice");
    /* required attribute */
    expect_err(par_graph_add_node(g, "max_pool2d", "p0", 1, (int32_t[]){x}, 0, NULL, NULL, &m), "'p0'", "kernel");
    /* arity, unknown op, missing required input */
    expect_err(par_graph_add_node(g, "conv2d", "c1", 1, (int32_t[]){x}, 0, NULL, NULL, &m), "c1", "inputs");
    expect_err(par_graph_add_node(g, "conv9d", "c2", 1, (int32_t[]){x}, 0, NULL, NULL, &m), "unknown op", "conv9d");
    expect_err(par_graph_add_node(g, "conv2d", "c3", 2, (int32_t[]){x, -1}, 0, NULL, NULL, &m), "c3", "required");
    expect_err(par_graph_add_node(g, "conv2d", "c4", 2, (int32_t[]){x, 99}, 0, NULL, NULL, &m), "c4", "no value");
    /* shape inference errors carry the node too */
    par_attr g3[] = {par_a_int("groups", 3)};
    expect_err(par_graph_add_node(g, "conv2d", "c5", 2, (int32_t[]){x, w}, 1, g3, NULL, &m), "'c5' (conv2d)", NULL);
    CU_ASSERT_EQUAL(par_graph_desc_of(g)->n_nodes, 0); /* nothing half-added */
    par_graph_destroy(g);
}

static void test_value_errors(void)
{
    setup();
    expect_err(par_graph_add_input(g, "x", PAR_DTYPE_F32, 1, (int64_t[]){3}, &m), "'x'", "twice");
    expect_err(par_graph_add_input(g, "neg", PAR_DTYPE_F32, 2, (int64_t[]){3, -1}, &m), "neg", ">= 1");
    expect_err(par_graph_add_input(g, "r7", PAR_DTYPE_F32, 7, (int64_t[]){1, 1, 1, 1, 1, 1, 1}, &m), "r7", "rank");
    expect_err(par_graph_add_input(g, "big", PAR_DTYPE_F32, 2, (int64_t[]){INT64_C(1) << 40, 1 << 20}, &m), "big",
               "2^28");
    expect_err(par_graph_add_input(g, "", PAR_DTYPE_F32, 1, (int64_t[]){3}, &m), "invalid", NULL);
    int32_t q = par_graph_add_input(g, "q", PAR_DTYPE_QU8, 1, (int64_t[]){3}, &m);
    CU_ASSERT(q > 0);
    CU_ASSERT_EQUAL(par_graph_set_quant(g, q, 0.0f, 0, &m), PAR_ERROR);
    CU_ASSERT_EQUAL(par_graph_set_quant(g, q, 0.5f, 256, &m), PAR_ERROR);
    CU_ASSERT_EQUAL(par_graph_set_quant(g, q, 0.5f, 128, &m), PAR_OK);
    /* outputs: must be computed by a node; finalize needs one */
    CU_ASSERT_EQUAL(par_graph_mark_output(g, x, &m), PAR_ERROR);
    CU_ASSERT_EQUAL(par_graph_finalize(g, &m), PAR_ERROR);
    int32_t r = par_graph_add_node(g, "relu", NULL, 1, (int32_t[]){x}, 0, NULL, NULL, &m);
    CU_ASSERT_FATAL(r == 0);
    int32_t y = par_graph_desc_of(g)->nodes[r].outputs[0];
    CU_ASSERT_STRING_EQUAL(par_graph_desc_of(g)->values[y].name, "relu0");
    CU_ASSERT_EQUAL(par_graph_mark_output(g, y, &m), PAR_OK);
    CU_ASSERT_EQUAL(par_graph_mark_output(g, y, &m), PAR_ERROR);
    CU_ASSERT_EQUAL(par_graph_finalize(g, &m), PAR_OK);
    expect_err(par_graph_add_input(g, "late", PAR_DTYPE_F32, 1, (int64_t[]){3}, &m), "finalized", NULL);
    par_graph_destroy(g);
    par_graph_destroy(NULL);
}

static void test_attr_format(void)
{
    char b[64];
    par_attr a = par_a_ints("p", 3, (int64_t[]){1, -2, 3});
    par_attr_format(&a, b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "[1,-2,3]");
    a = par_a_float("f", -INFINITY);
    par_attr_format(&a, b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "-inf");
    char s[64];
    par_shape_format(3, (int64_t[]){1, 3, 224}, s, sizeof s);
    CU_ASSERT_STRING_EQUAL(s, "[1,3,224]");
    CU_ASSERT_EQUAL(par_axis_norm(-1, 4), 3);
    CU_ASSERT_EQUAL(par_axis_norm(4, 4), -1);
    CU_ASSERT_EQUAL(par_axis_norm(-5, 4), -1);
}

static const CU_TestInfo tests[] = {
    {"op table parsed", test_op_table},
    {"schema defaults are valid", test_schema_defaults_valid},
    {"infer names a missing input", test_infer_names_missing_input},
    {"defaults build valid nodes", test_defaults_build_valid_nodes},
    {"defaults filled, shapes inferred", test_defaults_filled},
    {"attribute and arity errors name node and attribute", test_attribute_errors},
    {"value errors", test_value_errors},
    {"formatting", test_attr_format},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("graph", tests)
