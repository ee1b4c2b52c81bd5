/*
 * tflite_import.c - a TFLite model as a parity case (formats/model.h): the main subgraph's operators mapped one by
 * one onto parity ops through the op table of tflite.c, its weights as constants with their data, its inputs
 * generated from the case seed.
 *
 * Layout. TFLite is NHWC, parity's graphs are logical NCHW. Every TFLite tensor is held as a parity value V and a
 * permutation pv with V = permute(L, pv) (V.dims[i] = L.dims[pv[i]]), L being the tensor as TFLite sees it. The
 * "stored" form of a rank-4 tensor is pv = [0,3,1,2] (NCHW; identity for other ranks): graph inputs, the outputs of
 * convolutions, pools, pads, resizes and concatenations are stored. An op that needs another form asks for it
 * (get) and gets a permute node only when the permutation is not the identity, once per tensor and form. Ops that
 * do not care where their axes are (elementwise ops, reductions, softmax, slices, squeezes) run on V as it is, with
 * their axes mapped through pv, and TRANSPOSE emits nothing: it only changes pv. So an exporter's layout permutes
 * fold away on the way back, and a TFLite graph becomes the parity graph a PyTorch model of it would be.
 *
 *   L (TFLite, NHWC)  --pv-->  V (parity value)       conv, pool, ... want pv = [0,3,1,2]
 *                                                       RESHAPE, FULLY_CONNECTED, BATCH_MATMUL want pv = identity
 *
 * Constants are made lazily, in the form their consumer asks for (the data permuted at import: OHWI -> OIHW for
 * CONV_2D, [1,H,W,C*m] -> [C*m,1,H,W] for DEPTHWISE_CONV_2D). A DEQUANTIZE of a constant (float16 or int8 weights)
 * is folded into an f32 constant. After every op the output's shape is checked against the model's.
 *
 * An op that does not map is listed in par_import_info (op, first output tensor, count, why) and the import fails;
 * the ops that consume its outputs are skipped without being listed.
 *
 * Must not: accept what it cannot express exactly (it says why instead), or write files.
 *
 * Files: this driver (the subgraph, operator by operator; one case per distinct op), tflite_import_ops.c (the op
 * families), tflite_import_util.c (their building blocks), tflite_import_int.h (what the three share).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/tflite_import_int.h"

/* ---- the driver ------------------------------------------------------------------------------------------------ */

static void note_missing(imp *im, const char *op, const char *node, const char *why)
{
    par_import_info *info = im->info;
    if (!info) return;
    for (int32_t i = 0; i < info->n_missing; i++)
        if (!strcmp(info->missing[i].op, op) && !strcmp(info->missing[i].why, why)) {
            info->missing[i].count++;
            return;
        }
    if (info->n_missing >= PAR_IMPORT_MAX_MISSING) return;
    par_import_missing *m = &info->missing[info->n_missing++];
    snprintf(m->op, sizeof m->op, "%s", op);
    snprintf(m->first_node, sizeof m->first_node, "%s", node);
    snprintf(m->why, sizeof m->why, "%s", why);
    m->count = 1;
}

/* Fold every DEQUANTIZE of a constant (float16 or int8 / uint8 weights) into f32 data. */
static int fold_dequantize(imp *im)
{
    const par_tfl_subgraph *g = im->g;
    for (int32_t k = 0; k < g->n_ops; k++) {
        const par_tfl_op *op = &g->ops[k];
        if (im->m->opcodes[op->opcode_index].builtin != PAR_TFL_OP_DEQUANTIZE || op->n_inputs < 1 ||
            op->n_outputs != 1 || op->inputs[0] < 0 || !tbuf(im, op->inputs[0]))
            continue;
        int32_t x = op->inputs[0], y = op->outputs[0];
        const par_tfl_tensor *t = T(im, x);
        if (im->t[y].fold || numel(t) != numel(T(im, y))) continue;
        if (t->type != PAR_TFL_FLOAT16 && !(quantized(t) && t->quant && t->quant->n_scale)) continue;
        im->op = k;
        const uint8_t *b = const_bytes(im, x, par_tfl_type_size(t->type));
        if (!b) return 0;
        int64_t n = numel(t);
        float *f = malloc((size_t)n * sizeof *f + 1);
        if (!f) return fail(im, "out of memory");
        const par_tfl_quant *q = t->quant;
        int64_t inner = 1;
        if (q && q->n_scale > 1)
            for (int32_t i = q->quantized_dimension + 1; i < t->rank; i++) inner *= t->shape[i];
        for (int64_t i = 0; i < n; i++) {
            if (t->type == PAR_TFL_FLOAT16) {
                f[i] = half_to_float((uint16_t)(b[2 * i] | b[2 * i + 1] << 8));
            } else {
                int64_t c = q->n_scale > 1 ? (i / inner) % q->n_scale : 0;
                int32_t qv = t->type == PAR_TFL_INT8 ? (int8_t)b[i] : b[i];
                int64_t zp = c < q->n_zero_point ? q->zero_point[c] : 0;
                f[i] = (float)(q->scale[c] * (double)(qv - zp));
            }
        }
        im->t[y].fold = f;
        if (im->info) im->info->n_folded++;
    }
    im->op = -1;
    return 1;
}

static void gen_for(const par_tfl_tensor *t, par_gen *gen)
{
    memset(gen, 0, sizeof *gen);
    gen->dist = PAR_DIST_UNIFORM;
    if (quantized(t)) {
        gen->a = t->type == PAR_TFL_INT8 ? -128 : 0;
        gen->b = t->type == PAR_TFL_INT8 ? 127 : 255;
    } else if (t->rank == 4 && (t->shape[3] == 1 || t->shape[3] == 3)) {
        gen->a = 0, gen->b = 1; /* an image */
    } else {
        gen->a = -1, gen->b = 1;
    }
}

/* Map subgraph g (of model m) into case c; ops [k0, k1). */
static int import_graph(imp *im)
{
    const par_tfl_subgraph *g = im->g;
    for (int32_t i = 0; i < g->n_inputs; i++) {
        int32_t ti = g->inputs[i];
        const par_tfl_tensor *t = T(im, ti);
        if (im->t[ti].v >= 0 || is_const(im, ti)) continue;
        par_dtype dt = dtype_of(t);
        if (!check_dims(im, ti) || (dt != PAR_DTYPE_F32 && dt != PAR_DTYPE_QS8 && dt != PAR_DTYPE_QU8))
            return fail(im, "input '%s': %s", t->name, im->unmapped ? im->why : "type not f32, int8 or uint8");
        int32_t p[MAXR];
        int64_t d[MAXR];
        stored(t->rank, p);
        for (int32_t j = 0; j < t->rank; j++) d[j] = t->shape[p[j]];
        par_gen gen;
        gen_for(t, &gen);
        int32_t v = par_case_input(im->c, uname(im, ti, ""), dt, t->rank, d, gen);
        if (v >= 0 && dt != PAR_DTYPE_F32)
            par_case_quant(im->c, v, t->quant->scale[0], t->quant->n_zero_point ? (int32_t)t->quant->zero_point[0] : 0);
        if (!builder(im)) return 0;
        im->t[ti].v = v;
        memcpy(im->t[ti].pv, p, sizeof p);
    }
    for (int32_t k = 0; k < g->n_ops; k++) {
        const par_tfl_op *op = &g->ops[k];
        im->op = k;
        im->unmapped = 0;
        int skip = 0;
        for (int32_t i = 0; i < op->n_inputs; i++)
            if (op->inputs[i] >= 0 && im->t[op->inputs[i]].bad) skip = 1;
        if (!skip && map_op(im, op)) continue;
        if (im->failed) return 0;
        /* an op fed by one that did not map is listed only when its own type has no mapping */
        const par_tfl_opcode *oc = &im->m->opcodes[op->opcode_index];
        if (skip && (oc->builtin == PAR_TFL_OP_CUSTOM || !par_tfl_opmap_code(oc->builtin)))
            skip = 0, im->why[0] = 0;
        if (!skip) {
            const char *nm = op->n_outputs ? T(im, op->outputs[0])->name : "";
            note_missing(im, opname(im, op), nm, im->why);
        }
        for (int32_t i = 0; i < op->n_outputs; i++) im->t[op->outputs[i]].bad = 1;
    }
    im->op = -1;
    if (im->info && im->info->n_missing) return 0;
    for (int32_t i = 0; i < g->n_outputs; i++) {
        int32_t v = get_stored(im, g->outputs[i]);
        if (v < 0) return im->failed ? 0 : fail(im, "output '%s': %s", T(im, g->outputs[i])->name, im->why);
        par_case_output(im->c, v);
    }
    if (par_case_finish(im->c) != PAR_OK) return fail(im, "%s", im->c->err.text);
    return 1;
}

static const char *base_name(const char *path, char *buf, size_t len)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(buf, len, "%s", b);
    char *dot = strrchr(buf, '.');
    if (dot && dot != buf) *dot = 0;
    return buf;
}

static par_case *import_sub(const par_tfl_model *m, const par_tfl_subgraph *g, const char *id, const char *origin,
                            const par_import_opts *o, par_import_info *info, par_msg *msg, float **fold)
{
    imp im;
    memset(&im, 0, sizeof im);
    im.m = m;
    im.g = g;
    im.info = info;
    im.msg = msg;
    im.origin = origin;
    im.op = -1;
    im.c = par_case_create(id, o && o->seed ? o->seed : 1);
    im.t = calloc((size_t)g->n_tensors + 1, sizeof *im.t);
    if (!im.c || !im.t) {
        par_msgf(msg, PAR_ERROR, "%s: out of memory", origin);
        goto fail;
    }
    size_t ol = strlen(origin) + 1;
    if ((im.c->origin = malloc(ol))) memcpy(im.c->origin, origin, ol);
    for (int32_t i = 0; i < g->n_tensors; i++) im.t[i].v = -1, im.t[i].pad_of = -1, im.t[i].fold = fold ? fold[i] : NULL;
    for (int32_t k = 0; k < g->n_ops; k++)
        for (int32_t i = 0; i < g->ops[k].n_inputs; i++)
            if (g->ops[k].inputs[i] >= 0) im.t[g->ops[k].inputs[i]].n_uses++;
    for (int32_t i = 0; i < g->n_outputs; i++) im.t[g->outputs[i]].n_uses++;
    if (!fold && !fold_dequantize(&im)) goto fail;
    if (!import_graph(&im)) {
        if (!im.failed && info && info->n_missing)
            par_msgf(msg, PAR_ERROR, "%s: %d op type(s) parity cannot map (first: %s at '%s'%s%s)", origin,
                     (int)info->n_missing, info->missing[0].op, info->missing[0].first_node,
                     info->missing[0].why[0] ? ": " : "", info->missing[0].why);
        goto fail;
    }
    if (!fold)
        for (int32_t i = 0; i < g->n_tensors; i++) free(im.t[i].fold);
    free(im.t);
    return im.c;
fail:
    if (im.t && !fold)
        for (int32_t i = 0; i < g->n_tensors; i++) free(im.t[i].fold);
    free(im.t);
    par_case_destroy(im.c);
    return NULL;
}

par_case *par_tflite_import_model(const par_tfl_model *m, const char *id, const char *origin,
                                  const par_import_opts *o, par_import_info *info, par_msg *msg)
{
    if (info) memset(info, 0, sizeof *info);
    if (m->n_subgraphs < 1) return par_msgf(msg, PAR_ERROR, "%s: no subgraph", origin), NULL;
    if (info) info->n_nodes = m->subgraphs[0].n_ops;
    return import_sub(m, &m->subgraphs[0], id, origin, o, info, msg, NULL);
}

par_case *par_tflite_import(const char *path, const par_import_opts *o, par_import_info *info, par_msg *msg)
{
    char id[256];
    if (info) memset(info, 0, sizeof *info);
    par_tfl_model *m = par_tfl_load(path, msg);
    if (!m) return NULL;
    par_case *c = par_tflite_import_model(m, base_name(path, id, sizeof id), path, o, info, msg);
    par_tfl_free(m);
    return c;
}

/* ---- one case per distinct op ---------------------------------------------------------------------------------- */

/* The identity of an op for de-duplication: code, input shapes and types, options. */
static void op_key(const par_tfl_model *m, const par_tfl_subgraph *g, const par_tfl_op *op, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "%d", (int)m->opcodes[op->opcode_index].builtin);
    for (int32_t i = 0; i < op->n_inputs && k < len; i++) {
        const par_tfl_tensor *t = op->inputs[i] >= 0 ? &g->tensors[op->inputs[i]] : NULL;
        k += (size_t)snprintf(buf + k, len - k, "|%d:", t ? t->type : -1);
        for (int32_t j = 0; t && j < t->rank && k < len; j++) k += (size_t)snprintf(buf + k, len - k, "%d,", (int)t->shape[j]);
    }
    par_tfl_options o = op->opt;
    o.ints = NULL;
    const uint8_t *p = (const uint8_t *)&o;
    for (size_t i = 0; i < sizeof o && k + 3 < len; i++) k += (size_t)snprintf(buf + k, len - k, "%02x", p[i]);
    for (int32_t i = 0; i < op->opt.n_ints && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, ",%d", (int)op->opt.ints[i]);
}

par_status par_tflite_import_ops(const char *path, const par_import_opts *o, par_case ***cases, int32_t *n,
                                 par_import_info *info, par_msg *msg)
{
    *cases = NULL;
    *n = 0;
    if (info) memset(info, 0, sizeof *info);
    par_tfl_model *m = par_tfl_load(path, msg);
    if (!m) return PAR_ERROR;
    const par_tfl_subgraph *g = &m->subgraphs[0];
    char base[200];
    base_name(path, base, sizeof base);
    if (info) info->n_nodes = g->n_ops;
    par_status st = PAR_OK;
    imp im;
    memset(&im, 0, sizeof im);
    im.m = m, im.g = g, im.msg = msg, im.origin = path, im.op = -1, im.info = info;
    im.t = calloc((size_t)g->n_tensors + 1, sizeof *im.t);
    float **fold = calloc((size_t)g->n_tensors + 1, sizeof *fold);
    char (*keys)[512] = calloc((size_t)g->n_ops + 1, sizeof *keys);
    *cases = calloc((size_t)g->n_ops + 1, sizeof **cases);
    if (!im.t || !fold || !keys || !*cases) {
        st = par_msgf(msg, PAR_ERROR, "%s: out of memory", path);
        goto done;
    }
    if (!fold_dequantize(&im)) {
        st = PAR_ERROR;
        goto done;
    }
    for (int32_t i = 0; i < g->n_tensors; i++) fold[i] = im.t[i].fold;
    for (int32_t k = 0; k < g->n_ops; k++) {
        const par_tfl_op *op = &g->ops[k];
        if (op->n_outputs < 1 || fold[op->outputs[0]]) continue;
        op_key(m, g, op, keys[k], sizeof keys[k]);
        int dup = 0;
        for (int32_t j = 0; j < k && !dup; j++) dup = !strcmp(keys[j], keys[k]);
        if (dup) continue;
        /* a subgraph of this one op: its non-constant inputs are the graph's inputs */
        par_tfl_subgraph one = *g;
        int32_t ins[64], n_in = 0;
        for (int32_t i = 0; i < op->n_inputs && n_in < 64; i++) {
            int32_t ti = op->inputs[i], dup_in = 0;
            if (ti < 0 || fold[ti] || (g->tensors[ti].buffer && g->tensors[ti].buffer < (uint32_t)m->n_buffers &&
                                       m->buffers[g->tensors[ti].buffer].size))
                continue;
            for (int32_t j = 0; j < n_in; j++) dup_in |= ins[j] == ti;
            if (!dup_in) ins[n_in++] = ti;
        }
        one.n_inputs = n_in, one.inputs = ins;
        one.n_outputs = op->n_outputs, one.outputs = op->outputs;
        one.n_ops = 1, one.ops = (par_tfl_op *)op;
        char id[300];
        snprintf(id, sizeof id, "%s:%d:%s", base, (int)k, opname(&im, op));
        par_import_info sub;
        memset(&sub, 0, sizeof sub);
        par_msg m2;
        par_case *c = import_sub(m, &one, id, path, o, &sub, &m2, fold);
        if (c) {
            (*cases)[(*n)++] = c;
        } else if (info) {
            if (sub.n_missing) {
                note_missing(&im, sub.missing[0].op, sub.missing[0].first_node, sub.missing[0].why);
            } else {
                char why[160];
                snprintf(why, sizeof why, "%s", m2.text);
                note_missing(&im, opname(&im, op), g->tensors[op->outputs[0]].name, why);
            }
        }
    }
done:
    if (fold)
        for (int32_t i = 0; i < g->n_tensors; i++) free(fold[i]);
    free(fold);
    free(keys);
    free(im.t);
    par_tfl_free(m);
    if (st != PAR_OK) {
        for (int32_t i = 0; i < *n; i++) par_case_destroy((*cases)[i]);
        free(*cases);
        *cases = NULL;
        *n = 0;
    }
    return st;
}
