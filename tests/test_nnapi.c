/*
 * test_nnapi.c - the nnapi backend's converter without the library: weight permutations, host layout changes,
 * NNAPI's implicit padding, axis mapping, operation levels, and the model description the converter builds for
 * small graphs (operations, operand types and dims, explicit padding order, qs8 below and at level 30, the
 * feature-level gates with their reasons). Expected values are written by hand from the NNAPI documentation.
 * A last test runs a graph through the backend when a libneuralnetworks.so is found (skipped otherwise).
 */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "backends/nnapi/nn_model.h"
#include "core/graph.h"
#include "tmain.h"

const par_backend *par_backend_nnapi(void);

static void test_filters(void)
{
    /* conv2d weights [O=2, C=3, KH=1, KW=2], element = o*6 + c*2 + kw -> [O, KH, KW, C] */
    uint8_t w[12], f[12];
    for (int i = 0; i < 12; i++) w[i] = (uint8_t)i;
    par_nn_filter_ohwi(w, f, 2, 3, 1, 2, 1);
    static const uint8_t want[12] = {0, 2, 4, 1, 3, 5, 6, 8, 10, 7, 9, 11};
    CU_ASSERT_EQUAL(memcmp(f, want, 12), 0);
    /* depthwise [O=3, 1, KH=2, KW=1] -> [1, KH, KW, O]: element o*2 + kh */
    float dw[6] = {0, 1, 2, 3, 4, 5}, df[6];
    par_nn_filter_dw(dw, df, 3, 2, 1, sizeof(float));
    static const float dwant[6] = {0, 2, 4, 1, 3, 5};
    CU_ASSERT_EQUAL(memcmp(df, dwant, sizeof df), 0);
}

static void test_layouts(void)
{
    /* [N=1, C=2, H=1, W=3]: a0 a1 a2 b0 b1 b2 -> a0 b0 a1 b1 a2 b2 */
    int64_t d[4] = {1, 2, 1, 3};
    int16_t x[6] = {10, 11, 12, 20, 21, 22}, y[6], z[6];
    par_nn_nchw_to_nhwc(x, y, d, 2);
    static const int16_t want[6] = {10, 20, 11, 21, 12, 22};
    CU_ASSERT_EQUAL(memcmp(y, want, sizeof y), 0);
    par_nn_nhwc_to_nchw(y, z, d, 2);
    CU_ASSERT_EQUAL(memcmp(z, x, sizeof z), 0);
    /* axes of an NHWC-held 4-D value: N 0, C 3, H 1, W 2; other ranks unchanged */
    CU_ASSERT_EQUAL(par_nn_axis(4, 1, 0), 0);
    CU_ASSERT_EQUAL(par_nn_axis(4, 1, 1), 3);
    CU_ASSERT_EQUAL(par_nn_axis(4, 1, 2), 1);
    CU_ASSERT_EQUAL(par_nn_axis(4, 1, 3), 2);
    CU_ASSERT_EQUAL(par_nn_axis(4, 0, 1), 1);
    CU_ASSERT_EQUAL(par_nn_axis(3, 1, 1), 1);
}

static void test_implicit_pad(void)
{
    int64_t o, b, e;
    /* SAME, in 7, k 3, stride 2: out 4, total (4-1)*2 + 3 - 7 = 2 -> 1, 1 */
    par_nn_implicit_pad(ANEURALNETWORKS_PADDING_SAME, 7, 3, 2, 1, &o, &b, &e);
    CU_ASSERT(o == 4 && b == 1 && e == 1);
    /* SAME, in 8: out 4, total 1 -> 0, 1 (the odd one at the end) */
    par_nn_implicit_pad(ANEURALNETWORKS_PADDING_SAME, 8, 3, 2, 1, &o, &b, &e);
    CU_ASSERT(o == 4 && b == 0 && e == 1);
    /* SAME, in 5, k 3, dilation 2 (extent 5), stride 1: out 5, total 4 -> 2, 2 */
    par_nn_implicit_pad(ANEURALNETWORKS_PADDING_SAME, 5, 3, 1, 2, &o, &b, &e);
    CU_ASSERT(o == 5 && b == 2 && e == 2);
    /* VALID, in 7, k 3, stride 2: out 3 */
    par_nn_implicit_pad(ANEURALNETWORKS_PADDING_VALID, 7, 3, 2, 1, &o, &b, &e);
    CU_ASSERT(o == 3 && b == 0 && e == 0);
}

static void test_levels(void)
{
    CU_ASSERT_EQUAL(par_nn_op_level(ANEURALNETWORKS_CONV_2D), 27);
    CU_ASSERT_EQUAL(par_nn_op_level(ANEURALNETWORKS_RESIZE_BILINEAR), 27);
    CU_ASSERT_EQUAL(par_nn_op_level(ANEURALNETWORKS_DIV), 28);
    CU_ASSERT_EQUAL(par_nn_op_level(ANEURALNETWORKS_TRANSPOSE), 28);
    CU_ASSERT_EQUAL(par_nn_op_level(ANEURALNETWORKS_QUANTIZE), 29);
    CU_ASSERT_EQUAL(par_nn_op_level(ANEURALNETWORKS_GROUPED_CONV_2D), 29);
    CU_ASSERT_EQUAL(par_nn_op_level(ANEURALNETWORKS_HARD_SWISH), 30);
    CU_ASSERT_EQUAL(par_nn_op_level(ANEURALNETWORKS_GATHER), 29);
    CU_ASSERT_EQUAL(par_nn_op_level(ANEURALNETWORKS_RSQRT), 29);
    CU_ASSERT_EQUAL(par_nn_op_level(ANEURALNETWORKS_MAXIMUM), 29);
    CU_ASSERT_EQUAL(par_nn_op_level(ANEURALNETWORKS_SVDF), 0);
}

/* ---- graphs ---- */

typedef struct conv_spec {
    int64_t c, o, k, groups, dil;
    int64_t pad[4];
    const char *pad_mode;
    par_dtype xdt, wdt;
    int per_channel;
    float yscale;
    int bias;
    const char *after; /* NULL, "flatten", "hardswish", "global" */
} conv_spec;

static par_graph *conv_graph(const conv_spec *s)
{
    par_msg m = {{0}};
    par_graph *g = par_graph_create("t");
    int64_t xd[4] = {1, s->c, 5, 6}, wd[4] = {s->o, s->c / s->groups, s->k, s->k};
    int64_t nw = wd[0] * wd[1] * wd[2] * wd[3];
    int q = s->xdt != PAR_DTYPE_F32;
    int32_t x = par_graph_add_input(g, "x", PAR_DTYPE_F32, 4, xd, &m);
    if (q) {
        par_out_spec qo = {"xq", s->xdt, 0.02f, s->xdt == PAR_DTYPE_QS8 ? -3 : 125};
        int32_t qn = par_graph_add_node(g, "quantize", NULL, 1, &x, 0, NULL, &qo, &m);
        x = par_graph_desc_of(g)->nodes[qn].outputs[0];
    }
    void *wv = calloc((size_t)nw, 4);
    for (int64_t i = 0; i < nw; i++) {
        if (s->wdt == PAR_DTYPE_F32) ((float *)wv)[i] = (float)i;
        else ((uint8_t *)wv)[i] = (uint8_t)(i % 100);
    }
    int32_t w = par_graph_add_const(g, "w", s->wdt, 4, wd, wv, &m);
    free(wv);
    if (s->per_channel) {
        float cs[64];
        for (int64_t i = 0; i < s->o; i++) cs[i] = 0.01f * (float)(i + 1);
        par_graph_set_channel_quant(g, w, 0, cs, s->o, &m);
    } else if (s->wdt != PAR_DTYPE_F32) {
        par_graph_set_quant(g, w, 0.005f, s->wdt == PAR_DTYPE_QU8 ? 128 : 0, &m);
    }
    int32_t in[3] = {x, w, -1};
    if (s->bias) {
        int64_t bd[1] = {s->o};
        int32_t bv[64] = {0};
        in[2] = par_graph_add_const(g, "b", q ? PAR_DTYPE_I32 : PAR_DTYPE_F32, 1, bd, bv, &m);
        if (q) par_graph_set_quant(g, in[2], 0.0001f, 0, &m);
    }
    int64_t dil[2] = {s->dil, s->dil};
    par_attr at[4] = {par_a_ints("padding", 4, s->pad), par_a_int("groups", s->groups),
                      par_a_ints("dilation", 2, dil), par_a_str("pad_mode", s->pad_mode ? s->pad_mode : "explicit")};
    par_out_spec o = {"y", q ? s->xdt : PAR_DTYPE_F32, s->yscale, s->xdt == PAR_DTYPE_QS8 ? 2 : 130};
    int32_t n = par_graph_add_node(g, "conv2d", "conv", 3, in, 4, at, &o, &m);
    CU_ASSERT_FATAL(n >= 0);
    int32_t y = par_graph_desc_of(g)->nodes[n].outputs[0];
    if (s->after) {
        const char *op = !strcmp(s->after, "global") ? "global_avg_pool2d" : s->after;
        par_out_spec o2 = {"z", o.dtype, o.scale, o.zero_point};
        int32_t n2 = par_graph_add_node(g, op, "after", 1, &y, 0, NULL, &o2, &m);
        CU_ASSERT_FATAL(n2 >= 0);
        y = par_graph_desc_of(g)->nodes[n2].outputs[0];
        if (!strcmp(s->after, "global")) {
            par_out_spec o3 = {"f", o.dtype, o.scale, o.zero_point};
            int32_t n3 = par_graph_add_node(g, "flatten", "flat", 1, &y, 0, NULL, &o3, &m);
            CU_ASSERT_FATAL(n3 >= 0);
            y = par_graph_desc_of(g)->nodes[n3].outputs[0];
        }
    }
    par_graph_mark_output(g, y, &m);
    if (par_graph_finalize(g, &m) != PAR_OK) {
        fprintf(stderr, "graph: %s\n", m.text);
        par_graph_destroy(g);
        return NULL;
    }
    return g;
}

static const nn_operation *find_op(const nn_model *m, int32_t type)
{
    for (int32_t i = 0; i < m->n_oper; i++)
        if (m->oper[i].type == type) return &m->oper[i];
    return NULL;
}

static int32_t scalar_i32(const nn_model *m, uint32_t operand)
{
    const nn_operand *o = &m->opnd[operand];
    CU_ASSERT_EQUAL(o->type, ANEURALNETWORKS_INT32);
    int32_t v = 0;
    if (o->data) memcpy(&v, o->data, 4);
    return v;
}

/* Convert at a level; returns the status of node `node` (and its message). */
static par_status convert(const conv_spec *s, int level, nn_model *m, int32_t node, par_msg *msg)
{
    par_graph *g = conv_graph(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    nn_settings set = {level, NN_PROFILE_REFERENCE, 0};
    par_msg em = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_nn_convert(m, par_graph_desc_of(g), &set, &em), PAR_OK);
    par_status st = m->node_st[node];
    *msg = m->node_msg[node];
    /* the description keeps pointers into the graph only through m->g, which the checks below do not read */
    m->g = NULL;
    par_graph_destroy(g);
    return st;
}

static void test_conv_f32(void)
{
    conv_spec s = {.c = 3, .o = 2, .k = 3, .groups = 1, .dil = 1, .pad = {1, 2, 3, 4}, .xdt = PAR_DTYPE_F32,
                   .wdt = PAR_DTYPE_F32, .yscale = 0};
    nn_model m;
    par_msg msg;
    CU_ASSERT_EQUAL(convert(&s, 27, &m, 0, &msg), PAR_OK);
    const nn_operation *op = find_op(&m, ANEURALNETWORKS_CONV_2D);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->n_in, 10);
    /* input NHWC [1, 5, 6, 3] */
    const nn_operand *x = &m.opnd[op->in[0]];
    CU_ASSERT(x->rank == 4 && x->dims[0] == 1 && x->dims[1] == 5 && x->dims[2] == 6 && x->dims[3] == 3 && x->nhwc);
    /* filter [O, KH, KW, C]: element (o=1, kh=0, kw=1, c=2) is w[1, 2, 0, 1] = 27 + 18 + 1 = 46 */
    const nn_operand *f = &m.opnd[op->in[1]];
    CU_ASSERT(f->dims[0] == 2 && f->dims[1] == 3 && f->dims[2] == 3 && f->dims[3] == 3);
    CU_ASSERT_EQUAL(((const float *)f->data)[((1 * 3 + 0) * 3 + 1) * 3 + 2], 46.0f);
    /* no bias: zeros of [O] */
    const nn_operand *b = &m.opnd[op->in[2]];
    CU_ASSERT(b->rank == 1 && b->dims[0] == 2 && ((const float *)b->data)[0] == 0 && ((const float *)b->data)[1] == 0);
    /* parity [top 1, left 2, bottom 3, right 4] -> NNAPI left, right, top, bottom */
    CU_ASSERT_EQUAL(scalar_i32(&m, op->in[3]), 2);
    CU_ASSERT_EQUAL(scalar_i32(&m, op->in[4]), 4);
    CU_ASSERT_EQUAL(scalar_i32(&m, op->in[5]), 1);
    CU_ASSERT_EQUAL(scalar_i32(&m, op->in[6]), 3);
    CU_ASSERT_EQUAL(scalar_i32(&m, op->in[9]), ANEURALNETWORKS_FUSED_NONE);
    /* the model's output is held NHWC and permuted on the host */
    CU_ASSERT(m.n_out == 1 && m.out[0].nhwc && m.n_in == 1 && m.in[0].nhwc);
    par_nn_model_free(&m);

    /* pad_mode same: the implicit code */
    s.pad_mode = "same";
    CU_ASSERT_EQUAL(convert(&s, 27, &m, 0, &msg), PAR_OK);
    op = find_op(&m, ANEURALNETWORKS_CONV_2D);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->n_in, 7);
    CU_ASSERT_EQUAL(scalar_i32(&m, op->in[3]), ANEURALNETWORKS_PADDING_SAME);
    par_nn_model_free(&m);

    /* dilation: level 29 */
    s.pad_mode = NULL;
    s.dil = 2;
    memset(s.pad, 0, sizeof s.pad);
    CU_ASSERT_EQUAL(convert(&s, 28, &m, 0, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "level 29"));
    par_nn_model_free(&m);
    CU_ASSERT_EQUAL(convert(&s, 29, &m, 0, &msg), PAR_OK);
    op = find_op(&m, ANEURALNETWORKS_CONV_2D);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->n_in, 13);
    CU_ASSERT_EQUAL(scalar_i32(&m, op->in[11]), 2);
    par_nn_model_free(&m);
}

static void test_conv_groups(void)
{
    /* depthwise: groups = C = 4, O = 8 (multiplier 2), filter [1, KH, KW, O] */
    conv_spec s = {.c = 4, .o = 8, .k = 3, .groups = 4, .dil = 1, .xdt = PAR_DTYPE_F32, .wdt = PAR_DTYPE_F32};
    nn_model m;
    par_msg msg;
    CU_ASSERT_EQUAL(convert(&s, 27, &m, 0, &msg), PAR_OK);
    const nn_operation *op = find_op(&m, ANEURALNETWORKS_DEPTHWISE_CONV_2D);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    const nn_operand *f = &m.opnd[op->in[1]];
    CU_ASSERT(f->dims[0] == 1 && f->dims[1] == 3 && f->dims[2] == 3 && f->dims[3] == 8);
    /* element (kh=2, kw=1, o=5) is w[5, 0, 2, 1] = 45 + 7 = 52 */
    CU_ASSERT_EQUAL(((const float *)f->data)[(2 * 3 + 1) * 8 + 5], 52.0f);
    CU_ASSERT_EQUAL(scalar_i32(&m, op->in[9]), 2); /* multiplier */
    par_nn_model_free(&m);
    /* other groups: GROUPED_CONV_2D, level 29 */
    s.groups = 2;
    CU_ASSERT_EQUAL(convert(&s, 28, &m, 0, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "GROUPED_CONV_2D needs level 29"));
    par_nn_model_free(&m);
    CU_ASSERT_EQUAL(convert(&s, 29, &m, 0, &msg), PAR_OK);
    op = find_op(&m, ANEURALNETWORKS_GROUPED_CONV_2D);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(m.opnd[op->in[1]].dims[3], 2); /* C / groups */
    CU_ASSERT_EQUAL(scalar_i32(&m, op->in[9]), 2);
    par_nn_model_free(&m);
}

static void test_quant(void)
{
    /* qu8 activations, qs8 per-tensor weights: shifted to QUANT8_ASYMM with zero point 128 (exact) */
    conv_spec s = {.c = 3, .o = 2, .k = 1, .groups = 1, .dil = 1, .xdt = PAR_DTYPE_QU8, .wdt = PAR_DTYPE_QS8,
                   .yscale = 0.05f, .bias = 1};
    nn_model m;
    par_msg msg;
    CU_ASSERT_EQUAL(convert(&s, 29, &m, 1, &msg), PAR_OK);
    const nn_operation *op = find_op(&m, ANEURALNETWORKS_CONV_2D);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    const nn_operand *f = &m.opnd[op->in[1]], *b = &m.opnd[op->in[2]];
    CU_ASSERT_EQUAL(f->type, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM);
    CU_ASSERT_EQUAL(f->zp, 128);
    CU_ASSERT_EQUAL(((const uint8_t *)f->data)[1], 1 + 128); /* w[0, 1] = 1 */
    CU_ASSERT_EQUAL(b->type, ANEURALNETWORKS_TENSOR_INT32);
    CU_ASSERT_EQUAL(b->scale, 0.02f * 0.005f);
    CU_ASSERT_EQUAL(b->zp, 0);
    CU_ASSERT(find_op(&m, ANEURALNETWORKS_QUANTIZE) != NULL);
    par_nn_model_free(&m);
    /* QUANTIZE is level 29 */
    CU_ASSERT_EQUAL(convert(&s, 28, &m, 0, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "QUANTIZE needs level 29"));
    par_nn_model_free(&m);
    /* before level 29: output scale must exceed input * filter scale */
    s.yscale = 0.00005f;
    CU_ASSERT_EQUAL(convert(&s, 28, &m, 1, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "output scale > input scale * filter scale"));
    par_nn_model_free(&m);
    CU_ASSERT_EQUAL(convert(&s, 29, &m, 1, &msg), PAR_OK);
    par_nn_model_free(&m);

    /* qs8 activations: level 30 signed; level 29 held as qu8 with zero point + 128, flipped on the host */
    conv_spec t = {.c = 3, .o = 4, .k = 1, .groups = 1, .dil = 1, .xdt = PAR_DTYPE_QS8, .wdt = PAR_DTYPE_QS8,
                   .per_channel = 1, .yscale = 0.05f};
    CU_ASSERT_EQUAL(convert(&t, 30, &m, 1, &msg), PAR_OK);
    op = find_op(&m, ANEURALNETWORKS_CONV_2D);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(m.opnd[op->in[0]].type, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED);
    CU_ASSERT_EQUAL(m.opnd[op->in[0]].zp, -3);
    CU_ASSERT_EQUAL(m.opnd[op->in[1]].type, ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL);
    CU_ASSERT_EQUAL(m.opnd[op->in[1]].n_ch, 4);
    CU_ASSERT_EQUAL(m.opnd[op->in[1]].ch_dim, 0);
    CU_ASSERT_EQUAL(m.opnd[op->in[2]].scale, 0.0f); /* per-channel bias: scale 0 */
    par_nn_model_free(&m);
    CU_ASSERT_EQUAL(convert(&t, 29, &m, 1, &msg), PAR_OK);
    op = find_op(&m, ANEURALNETWORKS_CONV_2D);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(m.opnd[op->in[0]].type, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM);
    CU_ASSERT_EQUAL(m.opnd[op->in[0]].zp, 125);
    CU_ASSERT_EQUAL(m.opnd[op->in[1]].type, ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL);
    par_nn_model_free(&m);
    /* per-channel weights need level 29 */
    CU_ASSERT_EQUAL(convert(&t, 28, &m, 1, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "level 29"));
    par_nn_model_free(&m);
}

static void test_layout_ops(void)
{
    /* conv -> flatten: the flatten needs the logical order, a TRANSPOSE (level 28) */
    conv_spec s = {.c = 3, .o = 2, .k = 1, .groups = 1, .dil = 1, .xdt = PAR_DTYPE_F32, .wdt = PAR_DTYPE_F32,
                   .after = "flatten"};
    nn_model m;
    par_msg msg;
    CU_ASSERT_EQUAL(convert(&s, 28, &m, 1, &msg), PAR_OK);
    const nn_operation *t = find_op(&m, ANEURALNETWORKS_TRANSPOSE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const nn_operand *perm = &m.opnd[t->in[1]];
    static const int32_t to_nchw[4] = {0, 3, 1, 2};
    CU_ASSERT(perm->len == 16 && memcmp(perm->data, to_nchw, 16) == 0);
    CU_ASSERT(find_op(&m, ANEURALNETWORKS_RESHAPE) != NULL);
    CU_ASSERT_EQUAL(m.out[0].nhwc, 0);
    par_nn_model_free(&m);
    CU_ASSERT_EQUAL(convert(&s, 27, &m, 1, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "TRANSPOSE needs level 28"));
    par_nn_model_free(&m);
    /* conv -> global pool -> flatten: [1, C, 1, 1] holds the same bytes in both orders, no TRANSPOSE, level 27 */
    s.after = "global";
    CU_ASSERT_EQUAL(convert(&s, 27, &m, 2, &msg), PAR_OK);
    CU_ASSERT_PTR_NULL(find_op(&m, ANEURALNETWORKS_TRANSPOSE));
    const nn_operation *p = find_op(&m, ANEURALNETWORKS_AVERAGE_POOL_2D);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(scalar_i32(&m, p->in[7]), 6); /* filter width = W */
    CU_ASSERT_EQUAL(scalar_i32(&m, p->in[8]), 5); /* filter height = H */
    par_nn_model_free(&m);
    /* hardswish is level 30 */
    s.after = "hardswish";
    CU_ASSERT_EQUAL(convert(&s, 29, &m, 1, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "HARD_SWISH needs level 30"));
    par_nn_model_free(&m);
}

/* x f32 -> [quantize to (qdt, 0.02, qzp)] -> op(x[, w]) -> output (odt, oscale, ozp); returns the graph. */
typedef struct op_spec {
    const char *op;
    int32_t rank;
    int64_t dims[4];
    par_dtype qdt; /* PAR_DTYPE_F32: no quantize */
    int32_t qzp;
    int n_attrs;
    par_attr attrs[3];
    par_dtype odt;
    float oscale;
    int32_t ozp;
    int64_t wo;    /* linear: output features (per-channel qs8 weights), 0: none */
} op_spec;

static par_graph *op_graph(const op_spec *s)
{
    par_msg m = {{0}};
    par_graph *g = par_graph_create("t");
    int32_t x = par_graph_add_input(g, "x", PAR_DTYPE_F32, s->rank, s->dims, &m);
    if (s->qdt != PAR_DTYPE_F32) {
        par_out_spec qo = {"xq", s->qdt, 0.02f, s->qzp};
        int32_t qn = par_graph_add_node(g, "quantize", NULL, 1, &x, 0, NULL, &qo, &m);
        x = par_graph_desc_of(g)->nodes[qn].outputs[0];
    }
    int32_t in[2] = {x, -1}, n_in = 1;
    if (s->wo) {
        int64_t wd[2] = {s->wo, s->dims[s->rank - 1]};
        int8_t wv[64] = {0};
        float cs[8];
        for (int i = 0; i < 64; i++) wv[i] = (int8_t)(i - 20);
        for (int i = 0; i < 8; i++) cs[i] = 0.001f * (float)(i + 1);
        in[1] = par_graph_add_const(g, "w", PAR_DTYPE_QS8, 2, wd, wv, &m);
        par_graph_set_channel_quant(g, in[1], 0, cs, s->wo, &m);
        n_in = 2;
    }
    par_out_spec o = {"y", s->odt, s->oscale, s->ozp};
    int32_t n = par_graph_add_node(g, s->op, "op", n_in, in, s->n_attrs, s->attrs, &o, &m);
    if (n < 0) {
        fprintf(stderr, "op_graph: %s\n", m.text);
        par_graph_destroy(g);
        return NULL;
    }
    par_graph_mark_output(g, par_graph_desc_of(g)->nodes[n].outputs[0], &m);
    if (par_graph_finalize(g, &m) != PAR_OK) {
        fprintf(stderr, "op_graph: %s\n", m.text);
        par_graph_destroy(g);
        return NULL;
    }
    return g;
}

static par_status convert_op(const op_spec *s, int level, nn_model *m, par_msg *msg)
{
    par_graph *g = op_graph(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    nn_settings set = {level, NN_PROFILE_REFERENCE, 0};
    par_msg em = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_nn_convert(m, par_graph_desc_of(g), &set, &em), PAR_OK);
    int32_t node = par_graph_desc_of(g)->n_nodes - 1;
    par_status st = m->node_st[node];
    *msg = m->node_msg[node];
    m->g = NULL;
    par_graph_destroy(g);
    return st;
}

static void test_relu_requant(void)
{
    /* relu6 with other output parameters: ADD(x, 0) with RELU6 fused, the zero the input's zero point */
    op_spec s = {.op = "relu6", .rank = 4, .dims = {1, 2, 3, 3}, .qdt = PAR_DTYPE_QU8, .qzp = 125,
                 .odt = PAR_DTYPE_QU8, .oscale = 6.0f / 255, .ozp = 0};
    nn_model m;
    par_msg msg;
    CU_ASSERT_EQUAL(convert_op(&s, 29, &m, &msg), PAR_OK);
    CU_ASSERT_PTR_NULL(find_op(&m, ANEURALNETWORKS_RELU6));
    const nn_operation *op = find_op(&m, ANEURALNETWORKS_ADD);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    const nn_operand *z = &m.opnd[op->in[1]], *y = &m.opnd[op->out[0]];
    CU_ASSERT(z->data && ((const uint8_t *)z->data)[0] == 125 && z->zp == 125 && z->scale == 0.02f);
    CU_ASSERT_EQUAL(scalar_i32(&m, op->in[2]), ANEURALNETWORKS_FUSED_RELU6);
    CU_ASSERT(y->scale == 6.0f / 255 && y->zp == 0);
    par_nn_model_free(&m);
    /* the same parameters: RELU6 itself */
    s.oscale = 0.02f, s.ozp = 125;
    CU_ASSERT_EQUAL(convert_op(&s, 29, &m, &msg), PAR_OK);
    CU_ASSERT_PTR_NOT_NULL(find_op(&m, ANEURALNETWORKS_RELU6));
    CU_ASSERT_PTR_NULL(find_op(&m, ANEURALNETWORKS_ADD));
    par_nn_model_free(&m);
}

static void test_linear_per_channel(void)
{
    /* qu8 [2, 4] by per-channel qs8 [3, 4]: RESHAPE to [2, 1, 1, 4], CONV_2D by [3, 1, 1, 4], RESHAPE to [2, 3] */
    op_spec s = {.op = "linear", .rank = 2, .dims = {2, 4}, .qdt = PAR_DTYPE_QU8, .qzp = 128, .odt = PAR_DTYPE_QU8,
                 .oscale = 0.05f, .ozp = 128, .wo = 3};
    nn_model m;
    par_msg msg;
    CU_ASSERT_EQUAL(convert_op(&s, 29, &m, &msg), PAR_OK);
    CU_ASSERT_PTR_NULL(find_op(&m, ANEURALNETWORKS_FULLY_CONNECTED));
    const nn_operation *op = find_op(&m, ANEURALNETWORKS_CONV_2D);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    const nn_operand *x = &m.opnd[op->in[0]], *f = &m.opnd[op->in[1]];
    CU_ASSERT(x->rank == 4 && x->dims[0] == 2 && x->dims[1] == 1 && x->dims[2] == 1 && x->dims[3] == 4);
    CU_ASSERT(f->type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL && f->dims[0] == 3 && f->dims[3] == 4);
    CU_ASSERT(f->n_ch == 3 && f->ch_scales && f->ch_scales[2] == 0.003f);
    CU_ASSERT_EQUAL(m.opnd[m.out[0].operand].rank, 2);
    par_nn_model_free(&m);
    CU_ASSERT_EQUAL(convert_op(&s, 28, &m, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "level 29"));
    par_nn_model_free(&m);
}

static void test_resize_gates(void)
{
    /* bilinear, align_corners = 0: NNAPI's half_pixel_centers, level 30 */
    int64_t size[2] = {8, 8};
    op_spec s = {.op = "upsample_bilinear2d", .rank = 4, .dims = {1, 2, 4, 4}, .qdt = PAR_DTYPE_F32, .n_attrs = 1,
                 .attrs = {par_a_ints("size", 2, size)}, .odt = PAR_DTYPE_F32};
    nn_model m;
    par_msg msg;
    CU_ASSERT_EQUAL(convert_op(&s, 29, &m, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "half_pixel_centers"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "level 30"));
    par_nn_model_free(&m);
    CU_ASSERT_EQUAL(convert_op(&s, 30, &m, &msg), PAR_OK);
    const nn_operation *op = find_op(&m, ANEURALNETWORKS_RESIZE_BILINEAR);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->n_in, 6);
    CU_ASSERT_EQUAL(((const uint8_t *)m.opnd[op->in[4]].data)[0], 0); /* align_corners */
    CU_ASSERT_EQUAL(((const uint8_t *)m.opnd[op->in[5]].data)[0], 1); /* half_pixel_centers */
    par_nn_model_free(&m);
    /* nearest by scale 1.5 on 4: 4 * 1.5 = 6 = out, the ratios agree; by 1.7: out 6, ratio 1/1.7 != 4/6 */
    double sc[2] = {1.5, 1.5};
    op_spec t = {.op = "upsample_nearest2d", .rank = 4, .dims = {1, 2, 4, 4}, .qdt = PAR_DTYPE_F32, .n_attrs = 1,
                 .attrs = {par_a_floats("scale", 2, sc)}, .odt = PAR_DTYPE_F32};
    CU_ASSERT_EQUAL(convert_op(&t, 29, &m, &msg), PAR_OK);
    CU_ASSERT_PTR_NOT_NULL(find_op(&m, ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR));
    par_nn_model_free(&m);
    CU_ASSERT_EQUAL(convert_op(&t, 28, &m, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "RESIZE_NEAREST_NEIGHBOR needs level 29"));
    par_nn_model_free(&m);
    /* quantized bilinear: Android truncates its interpolation */
    op_spec q = s;
    q.qdt = PAR_DTYPE_QU8, q.qzp = 128, q.odt = PAR_DTYPE_QU8, q.oscale = 0.02f, q.ozp = 128;
    CU_ASSERT_EQUAL(convert_op(&q, 30, &m, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "truncates"));
    par_nn_model_free(&m);
    sc[0] = sc[1] = 1.7;
    t.attrs[0] = par_a_floats("scale", 2, sc);
    CU_ASSERT_EQUAL(convert_op(&t, 30, &m, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "ratio"));
    par_nn_model_free(&m);
}

/* ---- sequence models' ops as NNAPI graphs (nn_ops_seq.c) ---- */

static int count_ops(const nn_model *m, int32_t type)
{
    int k = 0;
    for (int32_t i = 0; i < m->n_oper; i++) k += m->oper[i].type == type;
    return k;
}

/* rms_norm(x [1,2,8], w [8]): MUL (square), MEAN kept, ADD eps, RSQRT, MUL, MUL by w; refused below level 29 and under
 * relaxed f16, whose squares overflow above |x| = 256. sdpa with 2 query heads on 1 kv head, causal: one key matrix
 * and one transposed value matrix for both heads, two FULLY_CONNECTED and one SOFTMAX per head, the causal mask a
 * constant added per head, heads stacked by CONCATENATION. */
static void test_seq_ops(void)
{
    par_msg m0 = {{0}};
    par_graph *g = par_graph_create("t");
    int64_t xd[3] = {1, 2, 8}, wd[1] = {8}, ns[1] = {8};
    float wv[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int32_t in[2] = {par_graph_add_input(g, "x", PAR_DTYPE_F32, 3, xd, &m0),
                     par_graph_add_const(g, "w", PAR_DTYPE_F32, 1, wd, wv, &m0)};
    par_attr at[2] = {par_a_ints("normalized_shape", 1, ns), par_a_float("eps", 1e-6)};
    par_out_spec o = {"y", PAR_DTYPE_F32, 0, 0};
    int32_t n = par_graph_add_node(g, "rms_norm", "norm", 2, in, 2, at, &o, &m0);
    CU_ASSERT_FATAL(n >= 0);
    par_graph_mark_output(g, par_graph_desc_of(g)->nodes[n].outputs[0], &m0);
    CU_ASSERT_EQUAL_FATAL(par_graph_finalize(g, &m0), PAR_OK);
    for (int v = 0; v < 3; v++) {
        nn_settings set = {v == 0 ? 28 : 29, v == 2 ? NN_PROFILE_GPU_FP16 : NN_PROFILE_REFERENCE, v == 2};
        nn_model m;
        par_msg em = {{0}};
        CU_ASSERT_EQUAL_FATAL(par_nn_convert(&m, par_graph_desc_of(g), &set, &em), PAR_OK);
        if (v == 1) {
            CU_ASSERT_EQUAL(m.node_st[n], PAR_OK);
            CU_ASSERT_EQUAL(count_ops(&m, ANEURALNETWORKS_MEAN), 1);
            CU_ASSERT_EQUAL(count_ops(&m, ANEURALNETWORKS_RSQRT), 1);
            CU_ASSERT_EQUAL(count_ops(&m, ANEURALNETWORKS_MUL), 3);
            CU_ASSERT_EQUAL(count_ops(&m, ANEURALNETWORKS_ADD), 1);
        } else {
            CU_ASSERT_EQUAL(m.node_st[n], PAR_UNSUPPORTED);
            CU_ASSERT_PTR_NOT_NULL(strstr(m.node_msg[n].text, v == 0 ? "level 29" : "overflow f16"));
        }
        par_nn_model_free(&m);
    }
    par_graph_destroy(g);

    g = par_graph_create("t");
    int64_t qd[4] = {1, 2, 3, 4}, kd[4] = {1, 1, 5, 4};
    int32_t qkv[3] = {par_graph_add_input(g, "q", PAR_DTYPE_F32, 4, qd, &m0),
                      par_graph_add_input(g, "k", PAR_DTYPE_F32, 4, kd, &m0),
                      par_graph_add_input(g, "v", PAR_DTYPE_F32, 4, kd, &m0)};
    par_attr sa[2] = {par_a_int("is_causal", 1), par_a_float("scale", 0)};
    par_out_spec so = {"o", PAR_DTYPE_F32, 0, 0};
    n = par_graph_add_node(g, "sdpa", "attn", 3, qkv, 2, sa, &so, &m0);
    CU_ASSERT_FATAL(n >= 0);
    par_graph_mark_output(g, par_graph_desc_of(g)->nodes[n].outputs[0], &m0);
    CU_ASSERT_EQUAL_FATAL(par_graph_finalize(g, &m0), PAR_OK);
    nn_settings set = {29, NN_PROFILE_REFERENCE, 0};
    nn_model m;
    par_msg em = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_nn_convert(&m, par_graph_desc_of(g), &set, &em), PAR_OK);
    CU_ASSERT_EQUAL(m.node_st[n], PAR_OK);
    CU_ASSERT_EQUAL(count_ops(&m, ANEURALNETWORKS_FULLY_CONNECTED), 4);
    CU_ASSERT_EQUAL(count_ops(&m, ANEURALNETWORKS_SOFTMAX), 2);
    /* rank-4 graph inputs are held NHWC: q (2 channels) comes back to the logical order by a TRANSPOSE, k and v (1
     * channel) by a RESHAPE; then the one kv head's value matrix is transposed once for both query heads */
    CU_ASSERT_EQUAL(count_ops(&m, ANEURALNETWORKS_TRANSPOSE), 2);
    CU_ASSERT_EQUAL(count_ops(&m, ANEURALNETWORKS_CONCATENATION), 1);
    /* the causal mask: [3, 5], row i open to keys j <= i */
    const nn_operation *add = find_op(&m, ANEURALNETWORKS_ADD);
    CU_ASSERT_PTR_NOT_NULL_FATAL(add);
    const nn_operand *mk = &m.opnd[add->in[1]];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mk->data);
    CU_ASSERT(mk->rank == 2 && mk->dims[0] == 3 && mk->dims[1] == 5);
    const float *mv = mk->data;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) CU_ASSERT(j > i ? isinf(mv[i * 5 + j]) && mv[i * 5 + j] < 0 : mv[i * 5 + j] == 0);
    par_nn_model_free(&m);
    par_graph_destroy(g);
}

static void test_avg_pool_pad(void)
{
    /* count_include_pad = 1 with padding [1, 1, 1, 1]: PAD to [1, 7, 7, 2] (NHWC), then a pool without padding */
    int64_t k[2] = {3, 3}, st[2] = {2, 2}, pd[4] = {1, 1, 1, 1};
    op_spec s = {.op = "avg_pool2d", .rank = 4, .dims = {1, 2, 5, 5}, .qdt = PAR_DTYPE_F32, .n_attrs = 3,
                 .attrs = {par_a_ints("kernel", 2, k), par_a_ints("stride", 2, st), par_a_ints("padding", 4, pd)},
                 .odt = PAR_DTYPE_F32};
    nn_model m;
    par_msg msg;
    CU_ASSERT_EQUAL(convert_op(&s, 28, &m, &msg), PAR_OK);
    const nn_operation *pad = find_op(&m, ANEURALNETWORKS_PAD), *pool = find_op(&m, ANEURALNETWORKS_AVERAGE_POOL_2D);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pad);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    const nn_operand *xp = &m.opnd[pad->out[0]];
    CU_ASSERT(xp->dims[0] == 1 && xp->dims[1] == 7 && xp->dims[2] == 7 && xp->dims[3] == 2);
    CU_ASSERT_EQUAL(pool->in[0], pad->out[0]);
    for (int i = 1; i <= 4; i++) CU_ASSERT_EQUAL(scalar_i32(&m, pool->in[i]), 0);
    par_nn_model_free(&m);
    CU_ASSERT_EQUAL(convert_op(&s, 27, &m, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "level 28"));
    par_nn_model_free(&m);
}

static void test_backend(void)
{
    const par_backend *be = par_backend_nnapi();
    CU_ASSERT_STRING_EQUAL(be->name, "nnapi");
    be->destroy(NULL);
    be->release(NULL, NULL);
    /* A library named by the environment that is not there: "not usable here", naming where it looked. */
    {
        const char *prev = getenv("PARITY_NNAPI_LIB");
        char *saved = prev ? strdup(prev) : NULL;
        setenv("PARITY_NNAPI_LIB", "/nonexistent/libneuralnetworks.so", 1);
        void *c0 = NULL;
        par_msg m0 = {{0}};
        CU_ASSERT_EQUAL(be->init(&c0, &m0), PAR_UNSUPPORTED);
        CU_ASSERT_PTR_NOT_NULL(strstr(m0.text, "PARITY_NNAPI_LIB=/nonexistent/libneuralnetworks.so"));
        if (saved) setenv("PARITY_NNAPI_LIB", saved, 1);
        else unsetenv("PARITY_NNAPI_LIB");
        free(saved);
    }
    /* The simulator the build makes, build/lib beside build/tests, unless the environment names a library. */
    char exe[4096], lib[4200];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0 && !getenv("PARITY_NNAPI_LIB")) {
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        snprintf(lib, sizeof lib, "%s/../lib/libneuralnetworks.so", exe);
        if (access(lib, F_OK) == 0) setenv("PARITY_NNAPI_LIB", lib, 1);
    }
    void *ctx = NULL;
    par_msg m = {{0}};
    par_status st = be->init(&ctx, &m);
    if (st == PAR_UNSUPPORTED) {
        CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "libneuralnetworks.so"));
        PAR_TEST_SKIP("no libneuralnetworks.so found (the simulator is not built)");
    }
    CU_ASSERT_EQUAL_FATAL(st, PAR_OK);
    par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(knob);
    CU_ASSERT_EQUAL(knob(ctx, "level", "26", &m), PAR_ERROR);
    CU_ASSERT_EQUAL(knob(ctx, "lib", "/nonexistent/libneuralnetworks.so", &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "lib=/nonexistent/libneuralnetworks.so"));
    CU_ASSERT_EQUAL(knob(ctx, "colour", "blue", &m), PAR_ERROR);
    CU_ASSERT_EQUAL(knob(ctx, "profile", "tpu", &m), PAR_ERROR);
    CU_ASSERT_EQUAL(knob(ctx, "profile", "gpu-fp16", &m), PAR_OK);
    par_arith_fn ar = (par_arith_fn)be->get_proc(ctx, PAR_PROC_ARITH);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ar);
    CU_ASSERT_EQUAL(ar(ctx), PAR_ARITH_F16);
    par_describe_fn desc = (par_describe_fn)be->get_proc(ctx, PAR_PROC_DESCRIBE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(desc);
    char dsc[512];
    CU_ASSERT_EQUAL(knob(ctx, "profile", "old-android", &m), PAR_OK);
    desc(ctx, dsc, sizeof dsc);
    CU_ASSERT_PTR_NOT_NULL(strstr(dsc, "profile=old-android;level=27;"));
    CU_ASSERT_EQUAL(knob(ctx, "profile", "reference", &m), PAR_OK);
    desc(ctx, dsc, sizeof dsc);
    CU_ASSERT_PTR_NOT_NULL(strstr(dsc, "profile=reference;level=30;"));
    CU_ASSERT_EQUAL(ar(ctx), PAR_ARITH_F32);
    par_requant_exact_fn ex = (par_requant_exact_fn)be->get_proc(ctx, PAR_PROC_REQUANT_EXACT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ex);
    CU_ASSERT_EQUAL(ex(ctx), 0);
    CU_ASSERT_EQUAL(knob(ctx, "strict", "1", &m), PAR_OK);
    CU_ASSERT_EQUAL(ex(ctx), 1);
    CU_ASSERT_EQUAL(knob(ctx, "strict", "yes", &m), PAR_ERROR);

    /* conv2d 1x1 with f32 weights through the library: y[o] = sum_c w[o, c] x[c] */
    conv_spec s = {.c = 3, .o = 2, .k = 1, .groups = 1, .dil = 1, .xdt = PAR_DTYPE_F32, .wdt = PAR_DTYPE_F32};
    par_graph *g = conv_graph(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const par_graph_desc *d = par_graph_desc_of(g);
    CU_ASSERT_EQUAL(be->supports(ctx, d, 0, &m), PAR_OK);
    void *prep = NULL;
    st = be->prepare(ctx, d, &prep, &m);
    CU_ASSERT_EQUAL(st, PAR_OK);
    if (st == PAR_OK) {
        float x[90], y[60];
        for (int i = 0; i < 90; i++) x[i] = (float)(i % 7) - 3;
        const void *in[1] = {x};
        void *out[1] = {y};
        CU_ASSERT_EQUAL(be->bind(ctx, prep, in, out, &m), PAR_OK);
        CU_ASSERT_EQUAL(be->run(ctx, prep, &m), PAR_OK);
        int bad = 0;
        for (int o = 0; o < 2; o++)
            for (int p = 0; p < 30; p++) {
                double want = 0;
                for (int c = 0; c < 3; c++) want += (double)(o * 3 + c) * x[c * 30 + p];
                if (fabs(y[o * 30 + p] - want) > 1e-4) bad++;
            }
        CU_ASSERT_EQUAL(bad, 0);
        /* one device (reference): the device's own time of the run */
        par_device_time_fn dt = (par_device_time_fn)be->get_proc(ctx, PAR_PROC_DEVICE_TIME);
        double total = -1, per[1] = {0};
        CU_ASSERT(dt && dt(ctx, prep, &total, per, 1) == 1 && total >= 0 && per[0] == -1);
        be->release(ctx, prep);
    } else {
        fprintf(stderr, "prepare: %s\n", m.text);
    }
    par_graph_destroy(g);
    be->destroy(ctx);
}

static const CU_TestInfo tests[] = {
    {"filter permutations OHWI and depthwise", test_filters},
    {"NCHW <-> NHWC and axis mapping", test_layouts},
    {"NNAPI implicit padding", test_implicit_pad},
    {"operation levels", test_levels},
    {"conv2d f32: operands, padding order, implicit code, dilation gate", test_conv_f32},
    {"depthwise and grouped conv2d", test_conv_groups},
    {"quantized conv2d: types, shifts, bias scale, level gates", test_quant},
    {"layouts through flatten and pools, op level gates", test_layout_ops},
    {"quantized relu6 with other output parameters: ADD with the clamp fused", test_relu_requant},
    {"linear with per-channel weights as a 1x1 CONV_2D", test_linear_per_channel},
    {"resampling: ratio agreement and level gates", test_resize_gates},
    {"avg_pool2d counting its padding: PAD, then a pool without padding", test_avg_pool_pad},
    {"sequence ops as NNAPI graphs: rms_norm's gates, sdpa per head", test_seq_ops},
    {"the backend through the library, when present", test_backend},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("nnapi", tests)
