/*
 * test_tflite.c - TFLite files: the flatbuffer reader against hostile bytes (each an error naming its path, never a
 * crash), the writer's fixed point, a hand-built model imported into the parity graph derived by hand, and the
 * export -> import round trip over the quick suite (what exports must come back as the same graph; the counts and
 * the reasons for the rest print with PAR_TEST_VERBOSE=1).
 *
 * Must not: depend on LiteRT or on model files outside the tree (tools/tflite_check.py checks against LiteRT).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases/sweep.h"
#include "formats/fb.h"
#include "formats/tflite.h"
#include "tmain.h"

/* ---- a small model, built by hand ------------------------------------------------------------------------------- */

/* x [1,4,4,2] NHWC f32 -> CONV_2D (3 filters 3x3, SAME, stride 1, fused RELU) -> y [1,4,4,3] -> RESHAPE [1,48]. */
static par_tfl_model *small_model(void)
{
    par_tfl_model *m = par_tfl_new();
    static float w[3 * 3 * 3 * 2], bias[3] = {0.5f, -0.25f, 0};
    static int32_t shape2[2] = {1, 48};
    for (int i = 0; i < 54; i++) w[i] = (float)(i % 7) - 3; /* OHWI: w[o][h][w][i] = ((o*18 + h*6 + w*2 + i) % 7) - 3 */
    m->n_buffers = 4;
    m->buffers = par_tfl_alloc(m, 4 * sizeof *m->buffers);
    m->buffers[1].data = (const uint8_t *)w, m->buffers[1].size = sizeof w;
    m->buffers[2].data = (const uint8_t *)bias, m->buffers[2].size = sizeof bias;
    m->buffers[3].data = (const uint8_t *)shape2, m->buffers[3].size = sizeof shape2;
    m->n_opcodes = 2;
    m->opcodes = par_tfl_alloc(m, 2 * sizeof *m->opcodes);
    m->opcodes[0].builtin = PAR_TFL_OP_CONV_2D, m->opcodes[0].version = 1;
    m->opcodes[1].builtin = PAR_TFL_OP_RESHAPE, m->opcodes[1].version = 1;
    par_tfl_subgraph *g = par_tfl_alloc(m, sizeof *g);
    m->n_subgraphs = 1, m->subgraphs = g;
    g->name = "main";
    g->n_tensors = 6;
    g->tensors = par_tfl_alloc(m, 6 * sizeof *g->tensors);
    static const struct { const char *name; int32_t rank, shape[4]; uint32_t buf; int32_t type; } ts[6] = {
        {"x", 4, {1, 4, 4, 2}, 0, PAR_TFL_FLOAT32},  {"w", 4, {3, 3, 3, 2}, 1, PAR_TFL_FLOAT32},
        {"b", 1, {3}, 2, PAR_TFL_FLOAT32},           {"y", 4, {1, 4, 4, 3}, 0, PAR_TFL_FLOAT32},
        {"shape", 1, {2}, 3, PAR_TFL_INT32},         {"z", 2, {1, 48}, 0, PAR_TFL_FLOAT32},
    };
    for (int i = 0; i < 6; i++) {
        par_tfl_tensor *t = &g->tensors[i];
        t->name = ts[i].name, t->rank = ts[i].rank, t->buffer = ts[i].buf, t->type = ts[i].type;
        memcpy(t->shape, ts[i].shape, sizeof ts[i].shape);
    }
    static int32_t in0 = 0, out0 = 5, conv_in[3] = {0, 1, 2}, conv_out = 3, rs_in[2] = {3, 4}, rs_out = 5;
    g->n_inputs = 1, g->inputs = &in0, g->n_outputs = 1, g->outputs = &out0;
    g->n_ops = 2;
    g->ops = par_tfl_alloc(m, 2 * sizeof *g->ops);
    par_tfl_op *c = &g->ops[0], *r = &g->ops[1];
    c->opcode_index = 0, c->n_inputs = 3, c->inputs = conv_in, c->n_outputs = 1, c->outputs = &conv_out;
    c->options_type = PAR_TFL_OPT_CONV2D;
    par_tfl_options_default(&c->opt, c->options_type);
    c->opt.padding = PAR_TFL_PAD_SAME, c->opt.stride_w = c->opt.stride_h = 1, c->opt.activation = PAR_TFL_ACT_RELU;
    r->opcode_index = 1, r->n_inputs = 2, r->inputs = rs_in, r->n_outputs = 1, r->outputs = &rs_out;
    return m;
}

static uint8_t *small_bytes(size_t *len)
{
    par_msg msg;
    par_tfl_model *m = small_model();
    uint8_t *b = par_tfl_write(m, len, &msg);
    par_tfl_free(m);
    return b;
}

static int starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* ---- the reader against hostile bytes --------------------------------------------------------------------------- */

static void test_write_parse_fixed_point(void)
{
    size_t n1, n2;
    par_msg msg;
    uint8_t *b1 = small_bytes(&n1);
    CU_ASSERT_FATAL(b1 != NULL);
    CU_ASSERT(memcmp(b1 + 4, "TFL3", 4) == 0);
    par_tfl_model *m = par_tfl_parse(b1, n1, "s.tflite", &msg);
    CU_ASSERT_FATAL(m != NULL);
    CU_ASSERT(m->subgraphs[0].n_ops == 2 && m->subgraphs[0].ops[0].opt.padding == PAR_TFL_PAD_SAME);
    CU_ASSERT(m->subgraphs[0].ops[0].opt.dilation_h == 1 && m->subgraphs[0].ops[0].opt.activation == 1);
    CU_ASSERT(strcmp(m->subgraphs[0].tensors[3].name, "y") == 0);
    uint8_t *b2 = par_tfl_write(m, &n2, &msg);
    CU_ASSERT(b2 && n1 == n2 && memcmp(b1, b2, n1) == 0);
    free(b2);
    par_tfl_free(m);
    free(b1);
}

static void test_truncated(void)
{
    size_t n;
    uint8_t *b = small_bytes(&n);
    CU_ASSERT_FATAL(b != NULL);
    int errors = 0, bad_msgs = 0;
    for (size_t len = 0; len < n; len++) {
        par_msg msg;
        uint8_t *copy = malloc(len + 1); /* exactly len bytes readable: ASan catches a read past them */
        memcpy(copy, b, len);
        par_tfl_model *m = par_tfl_parse(copy, len, "t.tflite", &msg);
        if (!m) errors++, bad_msgs += !starts(msg.text, "t.tflite: ");
        par_tfl_free(m);
        free(copy);
    }
    CU_ASSERT(errors > (int)n / 2); /* buffer data sits near the front: most prefixes lose the tables */
    CU_ASSERT(bad_msgs == 0);
    free(b);
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

static void test_hostile(void)
{
    size_t n;
    par_msg msg;
    uint8_t *b = small_bytes(&n), *c = malloc(n);
    CU_ASSERT_FATAL(b && c);

    /* the root offset past the end */
    memcpy(c, b, n);
    put32(c, (uint32_t)n + 100);
    CU_ASSERT(par_tfl_parse(c, n, "a.tflite", &msg) == NULL);
    CU_ASSERT(starts(msg.text, "a.tflite: ") && strstr(msg.text, "past the end"));

    /* the root table's vtable outside the buffer */
    memcpy(c, b, n);
    put32(c + par_fb_load32(c), 0x80000000u);
    CU_ASSERT(par_tfl_parse(c, n, "v.tflite", &msg) == NULL);
    CU_ASSERT(strstr(msg.text, "vtable") != NULL);

    /* a vector length of 2^31: the reshape's shape vector [1, 48] is the only "1, 48" pair in the file */
    memcpy(c, b, n);
    long at = -1;
    for (size_t i = 4; i + 8 <= n && at < 0; i++)
        if (par_fb_load32(c + i) == 1 && par_fb_load32(c + i + 4) == 48 && par_fb_load32(c + i - 4) == 2) at = (long)i - 4;
    CU_ASSERT_FATAL(at >= 0);
    put32(c + at, 0x80000000u);
    CU_ASSERT(par_tfl_parse(c, n, "l.tflite", &msg) == NULL);
    CU_ASSERT(starts(msg.text, "l.tflite: subgraphs[0].tensors[") && strstr(msg.text, "runs past the end"));

    /* a zero offset (a table pointing at itself: the only cycle a forward offset can make) */
    memcpy(c, b, n);
    put32(c, 0);
    CU_ASSERT(par_tfl_parse(c, n, "z.tflite", &msg) == NULL);
    CU_ASSERT(strstr(msg.text, "points at itself") != NULL);

    /* a missing required field: no subgraphs */
    par_tfl_model *m = small_model();
    m->n_subgraphs = 0;
    size_t n2;
    CU_ASSERT(par_tfl_write(m, &n2, &msg) == NULL); /* the writer refuses it */
    par_tfl_free(m);
    par_fbb fb;
    par_fbb_init(&fb);
    par_fbb_start(&fb);
    par_fbb_add_i32(&fb, 0, 3, 0);
    par_fb_off root = par_fbb_end(&fb);
    size_t n3;
    const uint8_t *nb = par_fbb_finish(&fb, root, "TFL3", &n3);
    CU_ASSERT(par_tfl_parse(nb, n3, "s.tflite", &msg) == NULL);
    CU_ASSERT(starts(msg.text, "s.tflite: subgraphs: missing"));
    par_fbb_free(&fb);

    /* an operator naming a tensor that does not exist */
    memcpy(c, b, n);
    long k = -1;
    for (size_t i = 0; i + 16 <= n && k < 0; i++)
        if (par_fb_load32(c + i) == 3 && par_fb_load32(c + i + 4) == 0 && par_fb_load32(c + i + 8) == 1 &&
            par_fb_load32(c + i + 12) == 2)
            k = (long)i;
    CU_ASSERT_FATAL(k >= 0);
    put32(c + k + 8, 97);
    CU_ASSERT(par_tfl_parse(c, n, "i.tflite", &msg) == NULL);
    CU_ASSERT(starts(msg.text, "i.tflite: subgraphs[0].operators[0].inputs[1]: tensor 97 out of range"));

    /* not a flatbuffer at all */
    CU_ASSERT(par_tfl_parse((const uint8_t *)"hello", 5, "h.tflite", &msg) == NULL);
    CU_ASSERT(starts(msg.text, "h.tflite: not a TFLite model"));
    free(c);
    free(b);
}

/* ---- import ---------------------------------------------------------------------------------------------------- */

static void test_import_small(void)
{
    par_msg msg;
    par_import_info info;
    par_import_opts o = {.seed = 5};
    par_tfl_model *m = small_model();
    par_case *c = par_tflite_import_model(m, "small", "small.tflite", &o, &info, &msg);
    CU_ASSERT_FATAL(c != NULL);
    const par_graph_desc *g = par_graph_desc_of(c->graph);
    /* x enters as NCHW [1,2,4,4]; conv2d (padding SAME for 3x3 stride 1 at 4: total 2, [1,1,1,1]), relu (the fused
     * activation), permute to NHWC [0,2,3,1] (RESHAPE reads NHWC memory), reshape [1,48]. */
    CU_ASSERT_FATAL(g->n_nodes == 4);
    CU_ASSERT(!strcmp(g->nodes[0].op, "conv2d") && !strcmp(g->nodes[1].op, "relu"));
    CU_ASSERT(!strcmp(g->nodes[2].op, "permute") && !strcmp(g->nodes[3].op, "reshape"));
    const par_value *x = &g->values[g->inputs[0]];
    CU_ASSERT(x->rank == 4 && x->dims[1] == 2 && x->dims[2] == 4 && x->dims[3] == 4);
    for (int i = 0; i < 4; i++) CU_ASSERT(par_attr_ints_at(&g->nodes[0], "padding", i, -1) == 1);
    CU_ASSERT(par_attr_int(&g->nodes[0], "groups", 0) == 1);
    CU_ASSERT(par_attr_ints_at(&g->nodes[2], "perm", 1, -1) == 2 && par_attr_ints_at(&g->nodes[2], "perm", 3, -1) == 1);
    /* the weights: OIHW [3,2,3,3]; w[o=1][i=1][h=2][w=0] is OHWI element 1*18 + 2*6 + 0*2 + 1 = 31 -> 31 % 7 - 3 = 0,
     * w[o=2][i=0][h=1][w=2] is 36 + 6 + 4 + 0 = 46 -> 46 % 7 - 3 = 1 */
    const par_value *w = &g->values[g->nodes[0].inputs[1]];
    CU_ASSERT_FATAL(w->kind == PAR_VALUE_CONST && w->dims[0] == 3 && w->dims[1] == 2 && w->dims[2] == 3);
    const float *wd = w->data;
    CU_ASSERT(wd[((1 * 2 + 1) * 3 + 2) * 3 + 0] == 0.0f);
    CU_ASSERT(wd[((2 * 2 + 0) * 3 + 1) * 3 + 2] == 1.0f);
    const par_value *z = &g->values[g->outputs[0]];
    CU_ASSERT(z->rank == 2 && z->dims[1] == 48 && !strcmp(z->name, "z"));
    par_case_destroy(c);
    par_tfl_free(m);
}

static void test_import_missing(void)
{
    par_msg msg;
    par_import_info info;
    par_tfl_model *m = small_model();
    m->opcodes[1].builtin = 5; /* DEPTH_TO_SPACE: parity has no such op */
    par_case *c = par_tflite_import_model(m, "small", "small.tflite", NULL, &info, &msg);
    CU_ASSERT(c == NULL);
    CU_ASSERT(info.n_missing == 1 && !strcmp(info.missing[0].op, "DEPTH_TO_SPACE") && info.missing[0].count == 1);
    CU_ASSERT(!strcmp(info.missing[0].first_node, "z"));
    CU_ASSERT(starts(msg.text, "small.tflite: 1 op type(s) parity cannot map"));
    par_tfl_free(m);
}

static void test_export_unsupported(void)
{
    par_case *c = par_case_create("clamp", 1);
    int64_t d[2] = {2, 3};
    par_gen g = {PAR_DIST_UNIFORM, -1, 1, 0, 0, 0};
    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, 2, d, g);
    par_attr a[2] = {par_a_float("min", 0), par_a_float("max", 2)};
    par_case_output(c, par_case_node(c, "clamp", 1, &x, 2, a, NULL));
    CU_ASSERT_FATAL(par_case_finish(c) == PAR_OK);
    par_msg msg;
    CU_ASSERT(par_tflite_export(c, "/nonexistent/x.tflite", &msg) == PAR_UNSUPPORTED);
    CU_ASSERT(starts(msg.text, "node 'clamp0' (clamp): ") || starts(msg.text, "node '"));
    CU_ASSERT(strstr(msg.text, "(clamp)") != NULL);
    par_case_destroy(c);
}

/* ---- round trip ------------------------------------------------------------------------------------------------ */

static int same_value(const par_value *a, const par_value *b, int data)
{
    if (a->dtype != b->dtype || a->rank != b->rank || a->kind != b->kind) return 0;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    if ((a->dtype == PAR_DTYPE_QS8 || a->dtype == PAR_DTYPE_QU8) &&
        (a->scale != b->scale || a->zero_point != b->zero_point || a->quant_axis != b->quant_axis))
        return 0;
    if (a->quant_axis >= 0 && memcmp(a->channel_scales, b->channel_scales, (size_t)a->dims[a->quant_axis] * 4)) return 0;
    if (data && a->kind == PAR_VALUE_CONST && memcmp(a->data, b->data, (size_t)a->numel * par_dtype_size(a->dtype)))
        return 0;
    return 1;
}

static int same_attr(const par_attr *a, const par_attr *b)
{
    if (a->type != b->type || strcmp(a->name, b->name)) return 0;
    switch (a->type) {
    case PAR_ATTR_INT: return a->i == b->i;
    case PAR_ATTR_FLOAT: return a->f == b->f || (float)a->f == (float)b->f;
    case PAR_ATTR_STRING: return !strcmp(a->s, b->s);
    case PAR_ATTR_INTS: return a->count == b->count && !memcmp(a->ints, b->ints, (size_t)a->count * 8);
    case PAR_ATTR_FLOATS:
        if (a->count != b->count) return 0;
        for (int32_t i = 0; i < a->count; i++)
            if ((float)a->floats[i] != (float)b->floats[i]) return 0;
        return 1;
    }
    return 0;
}

/* The same graph up to value and node names: the same inputs, nodes (op, attributes, inputs), constants (data,
 * quantization), outputs. why says the first difference. */
static int same_graph(const par_graph_desc *a, const par_graph_desc *b, char *why, size_t len)
{
    int32_t *map = malloc(((size_t)a->n_values + 1) * sizeof *map);
    int ok = 0;
    for (int32_t i = 0; i < a->n_values; i++) map[i] = -1;
    if (a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs) {
        snprintf(why, len, "inputs or outputs");
        goto done;
    }
    for (int32_t i = 0; i < a->n_inputs; i++) {
        if (!same_value(&a->values[a->inputs[i]], &b->values[b->inputs[i]], 0)) {
            snprintf(why, len, "input %d", (int)i);
            goto done;
        }
        map[a->inputs[i]] = b->inputs[i];
    }
    if (a->n_nodes != b->n_nodes) {
        snprintf(why, len, "%d nodes, then %d", (int)a->n_nodes, (int)b->n_nodes);
        goto done;
    }
    for (int32_t k = 0; k < a->n_nodes; k++) {
        const par_node *na = &a->nodes[k], *nb = &b->nodes[k];
        if (strcmp(na->op, nb->op) || na->n_inputs != nb->n_inputs || na->n_attrs != nb->n_attrs) {
            snprintf(why, len, "node %d: %s, then %s", (int)k, na->op, nb->op);
            goto done;
        }
        for (int32_t i = 0; i < na->n_inputs; i++) {
            int32_t va = na->inputs[i], vb = nb->inputs[i];
            if ((va < 0) != (vb < 0)) goto input;
            if (va < 0) continue;
            if (map[va] >= 0 ? map[va] != vb : !same_value(&a->values[va], &b->values[vb], 1)) goto input;
            map[va] = vb;
            continue;
        input:
            snprintf(why, len, "node %d (%s): input %d", (int)k, na->op, (int)i);
            goto done;
        }
        for (int32_t i = 0; i < na->n_attrs; i++)
            if (!same_attr(&na->attrs[i], &nb->attrs[i])) {
                snprintf(why, len, "node %d (%s): attribute '%s'", (int)k, na->op, na->attrs[i].name);
                goto done;
            }
        if (!same_value(&a->values[na->outputs[0]], &b->values[nb->outputs[0]], 0)) {
            snprintf(why, len, "node %d (%s): output", (int)k, na->op);
            goto done;
        }
        map[na->outputs[0]] = nb->outputs[0];
    }
    for (int32_t i = 0; i < a->n_outputs; i++)
        if (map[a->outputs[i]] != b->outputs[i]) {
            snprintf(why, len, "output %d", (int)i);
            goto done;
        }
    ok = 1;
done:
    free(map);
    return ok;
}

#define MAX_REASONS 128

typedef struct rt_stats {
    int64_t cases, exported, unsupported, errors, reimported, identical;
    int32_t n_reasons;
    struct {
        char text[120];
        int64_t count;
        char example[160];
    } reasons[MAX_REASONS];
} rt_stats;

static void reason(rt_stats *s, const char *kind, const char *text, const char *id)
{
    char key[120];
    /* group by the op and the reason, without the node's name */
    const char *op = strstr(text, "' (");
    snprintf(key, sizeof key, "%s: %s", kind, op ? op + 2 : text);
    for (int32_t i = 0; i < s->n_reasons; i++)
        if (!strcmp(s->reasons[i].text, key)) {
            s->reasons[i].count++;
            return;
        }
    if (s->n_reasons == MAX_REASONS) return;
    snprintf(s->reasons[s->n_reasons].text, sizeof s->reasons[0].text, "%s", key);
    snprintf(s->reasons[s->n_reasons].example, sizeof s->reasons[0].example, "%s", id);
    s->reasons[s->n_reasons++].count = 1;
}

static int rt_want(void *user, int64_t index, const char *id, const char *op)
{
    (void)user, (void)index, (void)id, (void)op;
    return 1;
}

static void rt_build(void *user, int64_t index, par_case *c)
{
    rt_stats *s = user;
    s->cases++;
    par_msg msg;
    par_tfl_model *m = par_tflite_export_model(c, &msg);
    if (!m) {
        if (strstr(msg.text, "out of memory") || !strstr(msg.text, "node '")) s->errors++;
        else s->unsupported++;
        reason(s, "not exported", msg.text, c->id);
        par_case_destroy(c);
        return;
    }
    s->exported++;
    size_t len;
    uint8_t *bytes = par_tfl_write(m, &len, &msg);
    par_tfl_free(m);
    /* PARITY_TFLITE_EXPORT_DIR: keep every written model (tests/report/test_formats.sh loads them in LiteRT) */
    const char *keep = getenv("PARITY_TFLITE_EXPORT_DIR");
    if (keep && bytes) {
        char path[1024];
        snprintf(path, sizeof path, "%s/case%05lld.tflite", keep, (long long)index);
        FILE *f = fopen(path, "wb");
        CU_ASSERT_PTR_NOT_NULL(f);
        if (f) {
            CU_ASSERT_EQUAL(fwrite(bytes, 1, len, f), len);
            fclose(f);
        }
    }
    par_tfl_model *m2 = bytes ? par_tfl_parse(bytes, len, c->id, &msg) : NULL;
    free(bytes);
    if (!m2) {
        s->errors++;
        reason(s, "written model unreadable", msg.text, c->id);
        par_case_destroy(c);
        return;
    }
    par_import_info info;
    par_import_opts o = {.seed = c->seed};
    par_case *c2 = par_tflite_import_model(m2, c->id, c->id, &o, &info, &msg);
    par_tfl_free(m2);
    if (!c2) {
        reason(s, "not imported back", info.n_missing ? info.missing[0].op : msg.text, c->id);
    } else {
        s->reimported++;
        char why[160];
        if (same_graph(par_graph_desc_of(c->graph), par_graph_desc_of(c2->graph), why, sizeof why)) s->identical++;
        else reason(s, "differs", why, c->id);
    }
    par_case_destroy(c2);
    par_case_destroy(c);
}

static void rt_error(void *user, const char *id, const par_msg *msg)
{
    (void)user, (void)id, (void)msg;
}

static void test_round_trip_quick(void)
{
    rt_stats *s = calloc(1, sizeof *s);
    CU_ASSERT_FATAL(s != NULL);
    par_sweep_visit v = {rt_want, rt_build, rt_error, s, 1, NULL};
    CU_ASSERT(par_sweep_walk("quick", &v) > 0);
    PAR_TEST_NOTE("quick suite: %lld cases, %lld exported (%lld unsupported, %lld errors), %lld imported back, "
                  "%lld identical\n", (long long)s->cases, (long long)s->exported, (long long)s->unsupported,
                  (long long)s->errors, (long long)s->reimported, (long long)s->identical);
    for (int32_t i = 0; i < s->n_reasons; i++)
        PAR_TEST_NOTE("  %5lld  %s  (e.g. %s)\n", (long long)s->reasons[i].count, s->reasons[i].text,
                      s->reasons[i].example);
    CU_ASSERT(s->cases > 1000);
    CU_ASSERT(s->errors == 0);            /* unsupported is an answer; an error is a bug */
    CU_ASSERT(s->exported > s->cases / 3);
    CU_ASSERT(s->identical > s->exported / 2);
    free(s);
}

static const CU_TestInfo tests[] = {
    {"write -> parse -> write is a fixed point", test_write_parse_fixed_point},
    {"every truncation is an error with the origin", test_truncated},
    {"hostile offsets, vtables, lengths, indices", test_hostile},
    {"a hand-built model imports to the expected graph", test_import_small},
    {"an op parity lacks is listed", test_import_missing},
    {"an op TFLite lacks is refused by name", test_export_unsupported},
    {"quick suite: export, import, the same graph", test_round_trip_quick},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("tflite", tests)
