/*
 * test_onnx_roundtrip.c - ONNX export and import on the quick suite: every case exports or says why it cannot, and
 * import(export(case)) gives back the same graph: the same nodes in the same order, each with the same op, the same
 * attributes, the same input and output shapes and dtypes, the same constants bit for bit, the same graph inputs.
 * Three ops ONNX has no one-to-one twin of are compared as what they compute: relu6 and hardtanh come back as clamp
 * with the same bounds (ONNX's Clip), conv2d with pad_mode same / valid as conv2d with those pads written out.
 * A decomposed op (decomposed() below) is counted apart and checked for shapes only.
 *
 * With PARITY_ONNX_EXPORT_DIR set, every exported file is kept there (make check runs ONNX's own checker on them:
 * tools/onnx_check.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cases/sweep.h"
#include "core/case.h"
#include "formats/model.h"
#include "tmain.h"

typedef struct rt_stats {
    int64_t cases, exported, unexportable, identical, decomposed, differ;
    char first_diff[512];
    char first_unexportable[512];
    const char *keep_dir;
    char tmp[256];
} rt_stats;

static int want_all(void *user, int64_t index, const char *id, const char *op) { return 1; }

/* The canonical form of a node for comparison: clamp bounds for relu6 / hardtanh / clamp. */
static const char *canon_op(const par_node *n, double *lo, double *hi)
{
    if (!strcmp(n->op, "relu6")) return *lo = 0, *hi = 6, "clamp";
    if (!strcmp(n->op, "hardtanh"))
        return *lo = par_attr_float(n, "min_val", -1), *hi = par_attr_float(n, "max_val", 1), "clamp";
    if (!strcmp(n->op, "clamp")) return *lo = par_attr_float(n, "min", 0), *hi = par_attr_float(n, "max", 0), "clamp";
    return n->op;
}

static int same_value(const par_value *a, const par_value *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank || a->kind != b->kind) return 0;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    if (a->kind == PAR_VALUE_CONST && memcmp(a->data, b->data, (size_t)a->numel * par_dtype_size(a->dtype)) != 0)
        return 0;
    if ((a->dtype == PAR_DTYPE_QU8 || a->dtype == PAR_DTYPE_QS8) &&
        (a->scale != b->scale || a->zero_point != b->zero_point || a->quant_axis != b->quant_axis))
        return 0;
    return 1;
}

/* The scale of axis k of an upsampling node as it computes: PyTorch's size rule (reference/resize.c) makes nearest
 * and bilinear copy an axis that keeps its size and nearest take dst / 2 on one that doubles it, whatever the scale,
 * so the export writes the sizes' ratio there (1 or 2) and it comes back as such. */
static double scale_as_computed(const par_graph_desc *g, const par_node *n, int32_t k, double f)
{
    int nearest = !strcmp(n->op, "upsample_nearest2d");
    if (!nearest && strcmp(n->op, "upsample_bilinear2d") != 0) return f;
    int64_t in = g->values[n->inputs[0]].dims[2 + k], out = g->values[n->outputs[0]].dims[2 + k];
    if (out == in) return 1;
    return nearest && out == 2 * in ? 2 : f;
}

static int same_attrs(const par_graph_desc *ga, const par_node *a, const par_graph_desc *gb, const par_node *b)
{
    if (!strcmp(a->op, "conv2d") && strcmp(par_attr_str(a, "pad_mode", "explicit"), "explicit") != 0) return 1;
    if (a->n_attrs != b->n_attrs) return 0;
    for (int32_t i = 0; i < a->n_attrs; i++) {
        const par_attr *x = &a->attrs[i], *y = par_node_attr(b, x->name);
        if (!y || x->type != y->type) return 0;
        switch (x->type) {
        case PAR_ATTR_INT: if (x->i != y->i) return 0; break;
        case PAR_ATTR_FLOAT: if ((float)x->f != (float)y->f) return 0; break;
        case PAR_ATTR_STRING: if (strcmp(x->s, y->s) != 0) return 0; break;
        case PAR_ATTR_INTS:
            if (x->count != y->count || memcmp(x->ints, y->ints, sizeof(int64_t) * (size_t)x->count)) return 0;
            break;
        case PAR_ATTR_FLOATS:
            if (x->count != y->count) return 0;
            for (int32_t k = 0; k < x->count; k++) {
                double fx = x->floats[k], fy = y->floats[k];
                if (!strcmp(x->name, "scale") && x->count == 2)
                    fx = scale_as_computed(ga, a, k, fx), fy = scale_as_computed(gb, b, k, fy);
                if ((float)fx != (float)fy) return 0;
            }
            break;
        }
    }
    return 1;
}

/* "" when the graphs are the same, else the first difference. */
static void compare(const par_graph_desc *a, const par_graph_desc *b, char *why, size_t len)
{
    why[0] = 0;
    if (a->n_nodes != b->n_nodes) {
        snprintf(why, len, "%d nodes came back as %d", (int)a->n_nodes, (int)b->n_nodes);
        return;
    }
    if (a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs) {
        snprintf(why, len, "graph inputs or outputs differ in number");
        return;
    }
    for (int32_t i = 0; i < a->n_inputs; i++)
        if (!same_value(&a->values[a->inputs[i]], &b->values[b->inputs[i]])) {
            snprintf(why, len, "graph input %d differs", (int)i);
            return;
        }
    for (int32_t i = 0; i < a->n_nodes; i++) {
        const par_node *x = &a->nodes[i], *y = &b->nodes[i];
        double lx = 0, hx = 0, ly = 0, hy = 0;
        const char *ox = canon_op(x, &lx, &hx), *oy = canon_op(y, &ly, &hy);
        if (strcmp(ox, oy) != 0 || lx != ly || hx != hy) {
            snprintf(why, len, "node %d: %s came back as %s", (int)i, x->op, y->op);
            return;
        }
        if (x->n_inputs != y->n_inputs) {
            snprintf(why, len, "node %d (%s): %d inputs came back as %d", (int)i, x->op, (int)x->n_inputs,
                     (int)y->n_inputs);
            return;
        }
        for (int32_t k = 0; k < x->n_inputs; k++) {
            if ((x->inputs[k] < 0) != (y->inputs[k] < 0) ||
                (x->inputs[k] >= 0 && !same_value(&a->values[x->inputs[k]], &b->values[y->inputs[k]]))) {
                snprintf(why, len, "node %d (%s): input %d differs", (int)i, x->op, (int)k);
                return;
            }
        }
        if (!same_value(&a->values[x->outputs[0]], &b->values[y->outputs[0]])) {
            snprintf(why, len, "node %d (%s): the output differs", (int)i, x->op);
            return;
        }
        if (strcmp(ox, "clamp") != 0 && !same_attrs(a, x, b, y)) {
            snprintf(why, len, "node %d (%s): attributes differ", (int)i, x->op);
            return;
        }
    }
}

/* Ops ONNX (opset 17) has no one-to-one twin of, exported as what they compute: silu and gelu as their formulas,
 * rsqrt as Reciprocal(Sqrt), adaptive_avg_pool2d of equal windows as AveragePool, linear of an input of rank other
 * than 2 as MatMul and Add, flatten of other dimensions than 1 to the last as Reshape, embedding as Gather (the same
 * function as gather on axis 0, which is what Gather imports as), an align_corners resize given by scale as Resize
 * with the sizes (parity's align_corners coordinates come from the sizes, ONNX's from an unrounded scale), and the
 * decoder-block ops rms_norm, rope, sdpa and slice_scatter as their formulas (formats/onnx_export_attn.c). */
static int decomposed(const par_graph_desc *g)
{
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const char *op = g->nodes[i].op;
        if (!strcmp(op, "silu") || !strcmp(op, "gelu") || !strcmp(op, "rsqrt") || !strcmp(op, "adaptive_avg_pool2d") ||
            !strcmp(op, "rms_norm") || !strcmp(op, "rope") || !strcmp(op, "sdpa") || !strcmp(op, "slice_scatter"))
            return 1;
        if (!strcmp(op, "linear") && g->values[g->nodes[i].inputs[0]].rank != 2) return 1;
        if (!strcmp(op, "flatten") &&
            (par_attr_int(&g->nodes[i], "start_dim", 1) != 1 || par_attr_int(&g->nodes[i], "end_dim", -1) != -1))
            return 1;
        if (!strcmp(op, "embedding")) return 1;
        if (!strncmp(op, "upsample_", 9) && par_attr_int(&g->nodes[i], "align_corners", 0) &&
            par_attr_count(&g->nodes[i], "scale") > 0)
            return 1;
    }
    return 0;
}

static void build_one(void *user, int64_t index, par_case *c)
{
    rt_stats *s = user;
    s->cases++;
    char path[512];
    if (s->keep_dir) snprintf(path, sizeof path, "%s/case%05lld.onnx", s->keep_dir, (long long)index);
    else snprintf(path, sizeof path, "%s/rt.onnx", s->tmp);
    par_msg msg = {{0}};
    par_status st = par_model_export(c, PAR_FMT_ONNX, path, &msg);
    if (st == PAR_UNSUPPORTED) {
        s->unexportable++;
        if (!s->first_unexportable[0]) snprintf(s->first_unexportable, sizeof s->first_unexportable, "%s: %s", c->id, msg.text);
        PAR_TEST_NOTE("NOEXPORT %s: %s\n", c->id, msg.text);
        par_case_destroy(c);
        return;
    }
    CU_ASSERT_EQUAL_FATAL(st, PAR_OK);
    s->exported++;
    par_import_opts o = {.seed = c->seed};
    par_case *back = par_model_import(path, &o, NULL, &msg);
    if (!back) {
        s->differ++;
        if (!s->first_diff[0]) snprintf(s->first_diff, sizeof s->first_diff, "%s: import: %s", c->id, msg.text);
        PAR_TEST_NOTE("DIFF %s: import: %s\n", c->id, msg.text);
        par_case_destroy(c);
        return;
    }
    const par_graph_desc *a = par_graph_desc_of(c->graph), *b = par_graph_desc_of(back->graph);
    char why[256];
    if (decomposed(a)) {
        s->decomposed++;
        CU_ASSERT_EQUAL(a->n_outputs, b->n_outputs);
        for (int32_t k = 0; k < a->n_outputs && k < b->n_outputs; k++)
            CU_ASSERT(a->values[a->outputs[k]].numel == b->values[b->outputs[k]].numel);
    } else {
        compare(a, b, why, sizeof why);
        if (why[0]) {
            s->differ++;
            if (!s->first_diff[0]) snprintf(s->first_diff, sizeof s->first_diff, "%s: %s", c->id, why);
            PAR_TEST_NOTE("DIFF %s: %s\n", c->id, why);
        } else {
            s->identical++;
        }
    }
    par_case_destroy(back);
    par_case_destroy(c);
}

static void build_error(void *user, const char *id, const par_msg *msg) { CU_FAIL("a quick case did not build"); }

static void test_quick_roundtrip(void)
{
    rt_stats s = {0};
    s.keep_dir = getenv("PARITY_ONNX_EXPORT_DIR");
    snprintf(s.tmp, sizeof s.tmp, "/tmp/parity-onnx-rt-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(s.tmp));
    par_sweep_visit v = {.want = want_all, .build = build_one, .error = build_error, .user = &s, .seed = 1};
    par_sweep_walk("quick", &v);
    char rm[300];
    snprintf(rm, sizeof rm, "%s/rt.onnx", s.tmp);
    unlink(rm);
    rmdir(s.tmp);
    PAR_TEST_NOTE("quick: %lld cases, %lld exported (%lld identical, %lld decomposed, %lld differ), %lld cannot be "
                  "exported\n  first difference: %s\n  first not exportable: %s\n",
                  (long long)s.cases, (long long)s.exported, (long long)s.identical, (long long)s.decomposed,
                  (long long)s.differ, (long long)s.unexportable, s.first_diff, s.first_unexportable);
    CU_ASSERT(s.cases > 1000);
    CU_ASSERT(s.exported > 0);
    CU_ASSERT_EQUAL(s.differ, 0);
    if (s.differ) fprintf(stderr, "  first difference: %s\n", s.first_diff);
}

static const CU_TestInfo tests[] = {
    {"quick suite: export, import, the same graph", test_quick_roundtrip},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("onnx_roundtrip", tests)
