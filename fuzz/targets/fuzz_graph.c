/*
 * fuzz_graph.c - libFuzzer target for the graph builder, its validation and every op's shape inference
 * (core/graph.c, core/shape_*.c, core/ops.c). The bytes are a program of builder calls: add inputs and constants
 * (any dtype code, rank, and dimensions including 0, negative and huge ones), add nodes (any op of the table, or an
 * unknown one; input indices including -1 and out-of-range ones; attributes from the op's schema with any type,
 * value and count, and wrong names), set per-tensor and per-channel quantization, mark outputs, and finally
 * finalize. Every call must return an error or succeed; nothing may crash, leak or trip UBSan.
 *
 * Checks that trap (so libFuzzer keeps the input): a failed call without a message; a call that changed the graph
 * after it was finalized; the view (par_graph_desc_of)
 * holding an index that points nowhere or a shape outside the limits; and, when the graph finalized, its case
 * (inputs drawn by a constant generator, constants inline) must write (par_case_to_json), read back
 * (par_case_parse) and write the very same text again, unless it is one the reader refuses on purpose (more
 * elements than a case may hold, NaN constant data).
 *
 * Build and run: make fuzz-run FUZZ_TARGET=graph (fuzz/Makefile.inc). A crash replays as
 * build/fuzz/fuzz_graph <file>. Must not: write files, or keep state between inputs.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/case.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_STEPS 48
#define MAX_CONST_ELEMS 4096 /* larger constants get small dims: the data must exist to be copied */
#define LIST_CAP 80          /* more than the 64 list elements the graph accepts */

typedef struct rd {
    const uint8_t *p;
    size_t n;
} rd;

/* The next byte; zeros once the input is spent, so any input is a complete program. */
static uint8_t u8(rd *r)
{
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}

static uint64_t u64(rd *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | u8(r);
    return v;
}

static int64_t pick_dim(rd *r)
{
    uint8_t b = u8(r);
    switch (b >> 4) {
    case 10: return -(int64_t)(b & 7);
    case 11: return INT64_C(1) << 28;
    case 12: return (INT64_C(1) << 28) + 1;
    case 13: return INT64_MAX;
    case 14: return INT64_MIN;
    case 15: return (int64_t)u64(r);
    default: return b & 7; /* mostly small, 0 included */
    }
}

static int64_t pick_int(rd *r)
{
    static const int64_t special[] = {0, 1, 2, 3, -1, -2, 4, 8, 100, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN,
                                      INT64_C(1) << 31, INT64_C(1) << 40, -(INT64_C(1) << 40)};
    uint8_t b = u8(r);
    if (b < 128) return (int64_t)(b & 15) - 4;
    if (b < 240) return special[b & 15];
    return (int64_t)u64(r);
}

static double pick_double(rd *r)
{
    static const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-30, 1e30, 1e308, -1e308, 4.9e-324,
                                     INFINITY, -INFINITY, NAN, 6.0, 0.01};
    uint8_t b = u8(r);
    if (b < 200) return special[b & 15];
    uint64_t bits = u64(r);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static float pick_scale(rd *r)
{
    static const float special[] = {1.0f, 0.5f, 0.1f, 0.0f, -1.0f, 1e-30f, 1e30f, 1e-45f, INFINITY, NAN, 0.02f,
                                    3.0e38f, 0.25f, 1.0f / 256, 1.0f / 128, 2.0f};
    uint8_t b = u8(r);
    if (b < 224) return special[b & 15];
    uint32_t bits = (uint32_t)u64(r);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static int32_t pick_zp(rd *r)
{
    static const int32_t special[] = {0, 128, 255, 256, -128, -129, 127, 1, -1, 10, INT32_MAX, INT32_MIN};
    uint8_t b = u8(r);
    if (b < 192) return special[b % 12];
    return (int32_t)(uint32_t)u64(r);
}

/* A dtype code: the valid ones and a few that are not (0, f64, past the end). */
static par_dtype pick_dtype(rd *r)
{
    return (par_dtype)(u8(r) % 9);
}

static int32_t pick_rank(rd *r)
{
    return (int32_t)(u8(r) % 9) - 1; /* -1 .. 7 */
}

/* Names from a small pool (so that duplicates happen), and a few invalid ones. */
static const char *pick_name(rd *r, char *buf, size_t len, char prefix)
{
    uint8_t b = u8(r);
    switch (b) {
    case 250: return "";
    case 251: return "a'b";
    case 252: return "tab\there";
    case 253: return NULL;
    case 254:
        memset(buf, 'x', len - 1); /* longer than the 200 characters a name may have */
        buf[len - 1] = 0;
        return buf;
    default: snprintf(buf, len, "%c%d", prefix, b % 24); return buf;
    }
}

/* A value index: mostly an existing value (recent ones first), sometimes -1 or one out of range. */
static int32_t pick_value(rd *r, const par_graph *g)
{
    int32_t n = par_graph_desc_of(g)->n_values;
    uint8_t b = u8(r);
    if (b < 224 && n > 0) return n - 1 - (int32_t)(b % (uint8_t)(n < 224 ? n : 224));
    switch (b & 3) {
    case 0: return -1;
    case 1: return n;
    case 2: return INT32_MAX;
    default: return INT32_MIN;
    }
}

/* Dimensions; for a constant, a shape whose element count is valid but larger than the data kept here is made
 * small (the shape checks are exercised by inputs and by invalid constant shapes, which read no data). */
static void pick_shape(rd *r, int32_t *rank, int64_t *dims, int is_const)
{
    *rank = pick_rank(r);
    for (int i = 0; i < 8; i++) dims[i] = i < *rank ? pick_dim(r) : 1;
    if (!is_const || *rank < 0 || *rank > PAR_MAX_RANK) return;
    int64_t n = 1;
    for (int32_t i = 0; i < *rank; i++) {
        if (dims[i] < 1) return; /* invalid: refused before any data is read */
        if (dims[i] > MAX_CONST_ELEMS || n > MAX_CONST_ELEMS / dims[i]) {
            for (int32_t k = 0; k < *rank; k++) dims[k] = dims[k] < 1 ? dims[k] : 1 + (k & 1);
            return;
        }
        n *= dims[i];
    }
}

typedef struct state {
    par_graph *g;
    int finalized;       /* finalize succeeded: every later call that would change the graph must be refused */
    int nonfinite_const; /* a constant holds NaN: the writer refuses it (infinities it writes as "inf") */
    unsigned char data[MAX_CONST_ELEMS * 4];
} state;

/* A broken promise: say which, with the texts involved, and trap so that libFuzzer keeps the input. */
static void broken(const char *what, const char *a, const char *b)
{
    fprintf(stderr, "fuzz_graph: %s\n", what);
    if (a) fprintf(stderr, "--- first:\n%s\n", a);
    if (b) fprintf(stderr, "--- second:\n%s\n", b);
    __builtin_trap();
}

static void trap_unless_msg(par_status st, const par_msg *m)
{
    if (st != PAR_OK && !m->text[0]) __builtin_trap();
}

/* The result of a call that changes the graph: an error has a message, and after finalize there is only errors. */
static void changed(const state *s, par_status st, const par_msg *m)
{
    trap_unless_msg(st, m);
    if (st == PAR_OK && s->finalized) broken("a call changed a finalized graph", NULL, NULL);
}

static void do_input(state *s, rd *r)
{
    char nb[256];
    int64_t dims[8];
    int32_t rank;
    const char *name = pick_name(r, nb, sizeof nb, 't');
    par_dtype dt = pick_dtype(r);
    pick_shape(r, &rank, dims, 0);
    par_msg m = {{0}};
    changed(s, par_graph_add_input(s->g, name, dt, rank, dims, &m) < 0 ? PAR_ERROR : PAR_OK, &m);
}

/* Constant data from the input bytes, made valid for its dtype (bool 0/1) most of the time. */
static void fill_const(state *s, rd *r, par_dtype dt, size_t bytes)
{
    uint8_t mode = u8(r);
    for (size_t i = 0; i < bytes; i++) s->data[i] = mode & 1 ? u8(r) : (uint8_t)(i * 37 + mode);
    if (dt == PAR_DTYPE_F32) {
        for (size_t i = 0; i + 4 <= bytes; i += 4) {
            float f;
            memcpy(&f, s->data + i, 4);
            if (isnan(f)) s->nonfinite_const = 1;
        }
    } else if (dt == PAR_DTYPE_F16) {
        for (size_t i = 0; i + 2 <= bytes; i += 2) {
            uint16_t h;
            memcpy(&h, s->data + i, 2);
            if ((h & 0x7fff) > 0x7c00) s->nonfinite_const = 1; /* NaN */
        }
    } else if (dt == PAR_DTYPE_BOOL) {
        for (size_t i = 0; i < bytes; i++) s->data[i] &= 1;
    }
}

static void do_const(state *s, rd *r)
{
    char nb[256];
    int64_t dims[8];
    int32_t rank;
    const char *name = pick_name(r, nb, sizeof nb, 'c');
    par_dtype dt = pick_dtype(r);
    pick_shape(r, &rank, dims, 1);
    /* Data for the elements a valid shape has (pick_shape bounds them); an invalid shape reads none. */
    int64_t n = 1;
    for (int32_t i = 0; rank >= 0 && rank <= PAR_MAX_RANK && i < rank; i++) n = dims[i] >= 1 ? n * dims[i] : 0;
    size_t es = par_dtype_size(dt) ? par_dtype_size(dt) : 1;
    size_t bytes = n > 0 && n <= MAX_CONST_ELEMS ? (size_t)n * es : 0;
    if (bytes > sizeof s->data) bytes = sizeof s->data;
    int before = s->nonfinite_const;
    fill_const(s, r, dt, bytes);
    par_msg m = {{0}};
    int32_t v = par_graph_add_const(s->g, name, dt, rank, dims, u8(r) == 255 ? NULL : s->data, &m);
    changed(s, v < 0 ? PAR_ERROR : PAR_OK, &m);
    if (v < 0) s->nonfinite_const = before; /* refused: not in the graph */
}

/* An attribute: a name from the op's schema (or a wrong one), a type that mostly matches, values of every kind. */
static void pick_attr(rd *r, const par_op_info *info, par_attr *a, int64_t *ibuf, double *fbuf)
{
    static const char *const wrong[] = {"bogus", "", "stride ", "axis", "groups", "alpha", "mode", "dims"};
    uint8_t b = u8(r);
    const par_attr_spec *sp = info && info->n_attrs ? &info->attrs[b % info->n_attrs] : NULL;
    *a = (par_attr){0};
    a->name = sp && b < 224 ? sp->name : (b & 8) ? NULL : wrong[b & 7];
    uint8_t tb = u8(r);
    a->type = sp && tb < 192 ? sp->type : (par_attr_type)(tb % 7); /* 0 and 6 are no type at all */
    switch (a->type) {
    case PAR_ATTR_INT: a->i = pick_int(r); break;
    case PAR_ATTR_FLOAT: a->f = pick_double(r); break;
    case PAR_ATTR_STRING: {
        static const char *const strs[] = {"explicit", "same", "valid", "nearest", "bilinear", "", "SAME", "none",
                                           "constant", "reflect", "replicate", "tanh", "mean", "x"};
        uint8_t sb = u8(r);
        if (sb == 255) {
            a->s = NULL;
        } else if (sp && sp->choices[0] && sb < 160) { /* one of its choices */
            const char *c = sp->choices;
            for (int k = sb % 4; k > 0; k--) {
                const char *e = strchr(c, '|');
                if (!e) break;
                c = e + 1;
            }
            size_t len = strcspn(c, "|");
            static char choice[96];
            memcpy(choice, c, len);
            choice[len] = 0;
            a->s = choice;
        } else {
            a->s = strs[sb % 14];
        }
        break;
    }
    case PAR_ATTR_INTS:
    case PAR_ATTR_FLOATS: {
        uint8_t cb = u8(r);
        int32_t count = cb < 160 && sp && sp->fixed_count ? sp->fixed_count : cb < 240 ? cb % 7 : (cb & 1) ? -1 : 65;
        a->count = count;
        for (int32_t k = 0; k < count && k < LIST_CAP; k++) {
            if (a->type == PAR_ATTR_INTS) ibuf[k] = pick_int(r);
            else fbuf[k] = pick_double(r);
        }
        /* A list longer than the graph accepts (65) is refused before it is read past LIST_CAP. */
        a->ints = ibuf;
        a->floats = fbuf;
        break;
    }
    default: break;
    }
}

static void do_node(state *s, rd *r)
{
    uint8_t ob = u8(r);
    const par_op_info *info = par_op_get((par_op_id)(ob % (PAR_OP_COUNT + 2)));
    const char *op = info ? info->name : (ob & 1) ? "no_such_op" : NULL;
    char nb[256];
    const char *name = u8(r) < 192 ? NULL : pick_name(r, nb, sizeof nb, 'n');

    int32_t inputs[128];
    uint8_t nbyte = u8(r);
    int32_t n_in;
    if (info && nbyte < 224) n_in = info->in_min + nbyte % (info->in_max - info->in_min + 1);
    else n_in = (int32_t[]){-1, 0, 1, 2, 3, 4, 5, 100}[nbyte & 7];
    for (int32_t i = 0; i < n_in && i < 128; i++) inputs[i] = pick_value(r, s->g);

    par_attr attrs[16];
    int64_t ibuf[16][LIST_CAP];
    double fbuf[16][LIST_CAP];
    int32_t n_attrs = u8(r) % 6;
    if (n_attrs == 5) n_attrs = info ? info->n_attrs + 1 : 13;
    if (n_attrs > 16) n_attrs = 16;
    for (int32_t i = 0; i < n_attrs; i++) pick_attr(r, info, &attrs[i], ibuf[i], fbuf[i]);

    par_out_spec outs[4];
    char onames[4][256];
    int with_outs = u8(r) >= 160;
    for (int k = 0; k < 4 && with_outs; k++) {
        outs[k].name = u8(r) < 128 ? NULL : pick_name(r, onames[k], sizeof onames[k], 'o');
        outs[k].dtype = u8(r) < 128 ? 0 : pick_dtype(r);
        outs[k].scale = pick_scale(r);
        outs[k].zero_point = pick_zp(r);
    }
    par_msg m = {{0}};
    int32_t k = par_graph_add_node(s->g, op, name, n_in, inputs, n_attrs, attrs, with_outs ? outs : NULL, &m);
    changed(s, k < 0 ? PAR_ERROR : PAR_OK, &m);
}

static void do_quant(state *s, rd *r)
{
    int32_t v = pick_value(r, s->g);
    float scale = pick_scale(r);
    int32_t zp = pick_zp(r);
    par_msg m = {{0}};
    changed(s, par_graph_set_quant(s->g, v, scale, zp, &m), &m);
}

static void do_channel_quant(state *s, rd *r)
{
    int32_t v = pick_value(r, s->g);
    int32_t axis = (int32_t)(u8(r) % 17) - 8;
    int64_t n = pick_dim(r);
    float scales[64];
    for (int i = 0; i < 64; i++) scales[i] = i < 4 ? pick_scale(r) : 0.125f;
    if (n > 64) n = (u8(r) & 1) ? 64 : n; /* a count over the 64 scales here must be refused as not the channels' */
    const par_graph_desc *d = par_graph_desc_of(s->g);
    /* The scales must exist for as many channels as the value has, or the call reads past them: only counts that
     * do not match the axis (refused before reading) may exceed the array. */
    if (n > 64 && v >= 0 && v < d->n_values) {
        const par_value *pv = &d->values[v];
        int32_t ax = axis < 0 ? axis + pv->rank : axis;
        if (ax >= 0 && ax < pv->rank && pv->dims[ax] == n) n = 64;
    }
    par_msg m = {{0}};
    changed(s, par_graph_set_channel_quant(s->g, v, axis, scales, n, &m), &m);
}

/* The view must hold only indices that point at something and shapes within the limits. */
static void check_view(const par_graph_desc *d)
{
    for (int32_t i = 0; i < d->n_values; i++) {
        const par_value *v = &d->values[i];
        if (!v->name || v->rank < 0 || v->rank > PAR_MAX_RANK) __builtin_trap();
        int64_t n = 1;
        for (int32_t k = 0; k < v->rank; k++) {
            if (v->dims[k] < 1 || v->dims[k] > (INT64_C(1) << 28)) __builtin_trap();
            n *= v->dims[k];
            if (n > (INT64_C(1) << 28)) __builtin_trap();
        }
        if (n != v->numel || par_dtype_size(v->dtype) == 0 || v->dtype == PAR_DTYPE_F64) __builtin_trap();
        if (v->producer < -1 || v->producer >= d->n_nodes) __builtin_trap();
        if (v->quant_axis >= v->rank) __builtin_trap();
    }
    for (int32_t i = 0; i < d->n_nodes; i++) {
        const par_node *n = &d->nodes[i];
        const par_op_info *info = par_op_of(n);
        if (!info || n->n_inputs < info->in_min || n->n_inputs > info->in_max) __builtin_trap();
        if (n->n_attrs != info->n_attrs || n->n_outputs != info->n_out) __builtin_trap();
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] < -1 || n->inputs[k] >= d->n_values) __builtin_trap();
        for (int32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] < 0 || n->outputs[k] >= d->n_values || d->values[n->outputs[k]].producer != i)
                __builtin_trap();
        for (int32_t k = 0; k < n->n_attrs; k++)
            if (!n->attrs[k].name) __builtin_trap();
    }
    for (int32_t i = 0; i < d->n_inputs; i++)
        if (d->inputs[i] < 0 || d->inputs[i] >= d->n_values) __builtin_trap();
    for (int32_t i = 0; i < d->n_outputs; i++)
        if (d->outputs[i] < 0 || d->outputs[i] >= d->n_values) __builtin_trap();
}

/* The finalized graph as a case: written, read back, written again to the same text. The case takes the graph. */
static void round_trip(state *s)
{
    const par_graph_desc *d = par_graph_desc_of(s->g);
    int64_t total = 0;
    for (int32_t i = 0; i < d->n_values; i++)
        if (d->values[i].kind != PAR_VALUE_NODE) total += d->values[i].numel;
    par_case *c = par_case_create("fuzz_graph", 1);
    if (!c) __builtin_trap();
    par_graph_destroy(c->graph);
    c->graph = s->g;
    s->g = NULL;
    c->srcs = calloc((size_t)(d->n_inputs ? d->n_inputs : 1), sizeof *c->srcs);
    if (!c->srcs) __builtin_trap();
    for (int32_t i = 0; i < d->n_inputs; i++) {
        par_tensor_src *src = &c->srcs[c->n_srcs++];
        src->value = d->inputs[i];
        src->kind = PAR_SRC_GEN;
        src->gen = (par_gen){.dist = PAR_DIST_CONST, .a = 0.0};
        src->gen.seed = par_case_derive_seed(d->values[d->inputs[i]].name, c->seed);
    }
    char *t = par_case_to_json(c, 0);
    if (!t) {
        if (!s->nonfinite_const) broken("a finalized graph without NaN data does not write", NULL, NULL);
        par_case_destroy(c);
        return;
    }
    par_msg m = {{0}};
    par_case *c2 = par_case_parse(t, strlen(t), "fuzz_graph.json", &m);
    if (!c2) {
        if (strncmp(m.text, "fuzz_graph.json: $", 18) != 0) broken("a refusal without a JSON path", t, m.text);
        if (total <= PAR_CASE_MAX_ELEMS) broken("the reader refuses what the builder took", t, m.text);
    } else {
        char *t2 = par_case_to_json(c2, 0);
        if (!t2 || strcmp(t, t2) != 0) broken("the text read back writes differently", t, t2);
        free(t2);
        par_case_destroy(c2);
    }
    free(t);
    par_case_destroy(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd r = {data, size};
    state *s = malloc(sizeof *s);
    if (!s) return 0;
    s->g = par_graph_create(u8(&r) & 1 ? "fuzz" : NULL);
    s->nonfinite_const = 0;
    s->finalized = 0;
    if (!s->g) {
        free(s);
        return 0;
    }
    for (int step = 0; step < MAX_STEPS && r.n > 0; step++) {
        par_msg m = {{0}};
        switch (u8(&r) % 10) {
        case 0: do_input(s, &r); break;
        case 1: do_const(s, &r); break;
        case 2:
        case 3:
        case 4:
        case 5: do_node(s, &r); break;
        case 6: do_quant(s, &r); break;
        case 7: do_channel_quant(s, &r); break;
        case 8: changed(s, par_graph_mark_output(s->g, pick_value(&r, s->g), &m), &m); break;
        default: /* finalize in the middle: every later call must be refused */
            if (u8(&r) < 32) {
                par_status st = par_graph_finalize(s->g, &m);
                trap_unless_msg(st, &m);
                if (st == PAR_OK) s->finalized = 1;
            }
            break;
        }
    }
    par_msg m = {{0}};
    par_status st = par_graph_finalize(s->g, &m);
    trap_unless_msg(st, &m);
    check_view(par_graph_desc_of(s->g));
    if (st == PAR_OK) round_trip(s);
    par_graph_destroy(s->g);
    free(s);
    return 0;
}
