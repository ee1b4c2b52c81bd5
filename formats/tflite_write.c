/*
 * tflite_write.c - encode a par_tfl_model as a TFLite flatbuffer (schema.fbs, identifier "TFL3") with fb.h's
 * builder. Children are built before their parents (the builder grows backwards), buffer data aligned to 16 bytes
 * as the converter aligns it. Option tables are written from the same field table the reader uses (tflite.c), so
 * the two cannot disagree on a slot or a default; an options type parity does not know is written as NONE.
 *
 * Must not: write anything the reader would refuse (indices are checked first), or data past the flatbuffer
 * (models of 2 GiB or more are refused).
 */
#include "formats/tflite.h"

#include <stdlib.h>
#include <string.h>

#include "formats/fb.h"

static par_fb_off str(par_fbb *b, const char *s) { return par_fbb_string(b, s ? s : "", s ? strlen(s) : 0); }

static par_fb_off write_options(par_fbb *b, const par_tfl_op *op)
{
    int32_t nf;
    const par_tfl_field *fs = par_tfl_fields(&nf);
    par_fb_off ints = 0;
    for (int32_t k = 0; k < nf; k++)
        if (fs[k].options_type == op->options_type && fs[k].kind == PAR_TFL_F_INTS && op->opt.has_ints)
            ints = par_fbb_vector(b, op->opt.ints, (uint32_t)op->opt.n_ints, 4, 4);
    par_fbb_start(b);
    for (int32_t k = 0; k < nf; k++) {
        const par_tfl_field *f = &fs[k];
        if (f->options_type != op->options_type) continue;
        const char *src = (const char *)&op->opt + f->member;
        switch (f->kind) {
        case PAR_TFL_F_BYTE: par_fbb_add_u8(b, f->slot, (uint8_t)*(const int32_t *)src, (uint8_t)(int32_t)f->def); break;
        case PAR_TFL_F_INT: par_fbb_add_i32(b, f->slot, *(const int32_t *)src, (int32_t)f->def); break;
        case PAR_TFL_F_FLOAT: par_fbb_add_f32(b, f->slot, *(const float *)src, (float)f->def); break;
        case PAR_TFL_F_INTS: par_fbb_add_off(b, f->slot, ints); break;
        default: break;
        }
    }
    return par_fbb_end(b);
}

static par_fb_off write_quant(par_fbb *b, const par_tfl_quant *q)
{
    par_fb_off mn = q->n_min ? par_fbb_vector(b, q->min, (uint32_t)q->n_min, 4, 4) : 0;
    par_fb_off mx = q->n_max ? par_fbb_vector(b, q->max, (uint32_t)q->n_max, 4, 4) : 0;
    par_fb_off sc = q->n_scale ? par_fbb_vector(b, q->scale, (uint32_t)q->n_scale, 4, 4) : 0;
    par_fb_off zp = q->n_zero_point ? par_fbb_vector(b, q->zero_point, (uint32_t)q->n_zero_point, 8, 8) : 0;
    par_fbb_start(b);
    par_fbb_add_off(b, 0, mn);
    par_fbb_add_off(b, 1, mx);
    par_fbb_add_off(b, 2, sc);
    par_fbb_add_off(b, 3, zp);
    par_fbb_add_i32(b, 6, q->quantized_dimension, 0);
    return par_fbb_end(b);
}

static par_fb_off write_tensor(par_fbb *b, const par_tfl_tensor *t)
{
    par_fb_off shape = par_fbb_vector(b, t->shape, (uint32_t)t->rank, 4, 4);
    par_fb_off sig = t->has_shape_signature ? par_fbb_vector(b, t->shape_signature, (uint32_t)t->rank, 4, 4) : 0;
    par_fb_off name = str(b, t->name);
    par_fb_off q = t->quant ? write_quant(b, t->quant) : 0;
    par_fbb_start(b);
    par_fbb_add_off(b, 0, shape);
    par_fbb_add_u8(b, 1, (uint8_t)t->type, 0);
    par_fbb_add_i32(b, 2, (int32_t)t->buffer, 0);
    par_fbb_add_off(b, 3, name);
    par_fbb_add_off(b, 4, q);
    par_fbb_add_u8(b, 5, (uint8_t)(t->is_variable != 0), 0);
    par_fbb_add_off(b, 7, sig);
    return par_fbb_end(b);
}

static par_fb_off write_op(par_fbb *b, const par_tfl_op *op)
{
    par_fb_off in = par_fbb_vector(b, op->inputs, (uint32_t)op->n_inputs, 4, 4);
    par_fb_off out = par_fbb_vector(b, op->outputs, (uint32_t)op->n_outputs, 4, 4);
    int known = op->options_type && par_tfl_options_known(op->options_type);
    par_fb_off opt = known ? write_options(b, op) : 0;
    par_fb_off custom = op->n_custom_options ? par_fbb_vector(b, op->custom_options, op->n_custom_options, 1, 1) : 0;
    par_fbb_start(b);
    par_fbb_add_i32(b, 0, (int32_t)op->opcode_index, 0);
    par_fbb_add_off(b, 1, in);
    par_fbb_add_off(b, 2, out);
    par_fbb_add_u8(b, 3, known ? op->options_type : 0, 0);
    par_fbb_add_off(b, 4, opt);
    par_fbb_add_off(b, 5, custom);
    return par_fbb_end(b);
}

/* Indices the reader would refuse: a message and 0. */
static int check(const par_tfl_model *m, par_msg *msg)
{
    if (m->n_subgraphs < 1) return par_msgf(msg, PAR_ERROR, "tflite write: no subgraph"), 0;
    for (int32_t s = 0; s < m->n_subgraphs; s++) {
        const par_tfl_subgraph *g = &m->subgraphs[s];
        for (int32_t i = 0; i < g->n_tensors; i++) {
            const par_tfl_tensor *t = &g->tensors[i];
            if (t->rank < 0 || t->rank > PAR_TFL_MAX_RANK || (t->buffer && t->buffer >= (uint32_t)m->n_buffers))
                return par_msgf(msg, PAR_ERROR, "tflite write: subgraphs[%d].tensors[%d]: bad rank or buffer",
                                (int)s, (int)i), 0;
        }
        for (int32_t i = 0; i < g->n_inputs + g->n_outputs; i++) {
            int32_t x = i < g->n_inputs ? g->inputs[i] : g->outputs[i - g->n_inputs];
            if (x < 0 || x >= g->n_tensors)
                return par_msgf(msg, PAR_ERROR, "tflite write: subgraphs[%d]: tensor %d out of range", (int)s,
                                (int)x), 0;
        }
        for (int32_t k = 0; k < g->n_ops; k++) {
            const par_tfl_op *op = &g->ops[k];
            if (op->opcode_index >= (uint32_t)m->n_opcodes)
                return par_msgf(msg, PAR_ERROR, "tflite write: subgraphs[%d].operators[%d]: bad opcode index",
                                (int)s, (int)k), 0;
            for (int32_t i = 0; i < op->n_inputs + op->n_outputs; i++) {
                int32_t x = i < op->n_inputs ? op->inputs[i] : op->outputs[i - op->n_inputs];
                if (x < (i < op->n_inputs ? -1 : 0) || x >= g->n_tensors)
                    return par_msgf(msg, PAR_ERROR, "tflite write: subgraphs[%d].operators[%d]: tensor %d out of "
                                    "range", (int)s, (int)k, (int)x), 0;
            }
        }
    }
    return 1;
}

uint8_t *par_tfl_write(const par_tfl_model *m, size_t *len, par_msg *msg)
{
    *len = 0;
    if (!check(m, msg)) return NULL;
    par_fbb b;
    par_fbb_init(&b);
    par_fb_off *offs = calloc((size_t)m->n_buffers + (size_t)m->n_opcodes + (size_t)m->n_subgraphs + 1, sizeof *offs);
    par_fb_off *sub = NULL;
    uint8_t *out = NULL;
    if (!offs) goto oom;
    /* buffers */
    for (int32_t i = 0; i < m->n_buffers; i++) {
        const par_tfl_buffer *bf = &m->buffers[i];
        if (bf->size > 0x7fffffffu) {
            par_msgf(msg, PAR_ERROR, "tflite write: buffers[%d]: %llu bytes: models of 2 GiB or more are not "
                     "written", (int)i, (unsigned long long)bf->size);
            goto done;
        }
        par_fb_off d = bf->size ? par_fbb_vector(&b, bf->data, (uint32_t)bf->size, 1, 16) : 0;
        par_fbb_start(&b);
        par_fbb_add_off(&b, 0, d);
        offs[i] = par_fbb_end(&b);
    }
    par_fb_off buffers = par_fbb_vector_offsets(&b, offs, (uint32_t)m->n_buffers);
    /* operator codes */
    for (int32_t i = 0; i < m->n_opcodes; i++) {
        const par_tfl_opcode *c = &m->opcodes[i];
        par_fb_off cc = c->custom ? str(&b, c->custom) : 0;
        par_fbb_start(&b);
        par_fbb_add_u8(&b, 0, (uint8_t)(c->builtin < 127 ? c->builtin : 127), 0);
        par_fbb_add_off(&b, 1, cc);
        par_fbb_add_i32(&b, 2, c->version, 1);
        par_fbb_add_i32(&b, 3, c->builtin, 0);
        offs[i] = par_fbb_end(&b);
    }
    par_fb_off opcodes = par_fbb_vector_offsets(&b, offs, (uint32_t)m->n_opcodes);
    /* subgraphs */
    for (int32_t s = 0; s < m->n_subgraphs; s++) {
        const par_tfl_subgraph *g = &m->subgraphs[s];
        int32_t most = g->n_tensors > g->n_ops ? g->n_tensors : g->n_ops;
        sub = calloc((size_t)most + 1, sizeof *sub);
        if (!sub) goto oom;
        for (int32_t i = 0; i < g->n_tensors; i++) sub[i] = write_tensor(&b, &g->tensors[i]);
        par_fb_off tensors = par_fbb_vector_offsets(&b, sub, (uint32_t)g->n_tensors);
        for (int32_t i = 0; i < g->n_ops; i++) sub[i] = write_op(&b, &g->ops[i]);
        par_fb_off ops = par_fbb_vector_offsets(&b, sub, (uint32_t)g->n_ops);
        free(sub);
        sub = NULL;
        par_fb_off in = par_fbb_vector(&b, g->inputs, (uint32_t)g->n_inputs, 4, 4);
        par_fb_off out_ = par_fbb_vector(&b, g->outputs, (uint32_t)g->n_outputs, 4, 4);
        par_fb_off name = str(&b, g->name);
        par_fbb_start(&b);
        par_fbb_add_off(&b, 0, tensors);
        par_fbb_add_off(&b, 1, in);
        par_fbb_add_off(&b, 2, out_);
        par_fbb_add_off(&b, 3, ops);
        par_fbb_add_off(&b, 4, name);
        offs[s] = par_fbb_end(&b);
    }
    par_fb_off subgraphs = par_fbb_vector_offsets(&b, offs, (uint32_t)m->n_subgraphs);
    par_fb_off desc = str(&b, m->description);
    par_fbb_start(&b);
    par_fbb_add_i32(&b, 0, (int32_t)m->version, 0);
    par_fbb_add_off(&b, 1, opcodes);
    par_fbb_add_off(&b, 2, subgraphs);
    par_fbb_add_off(&b, 3, desc);
    par_fbb_add_off(&b, 4, buffers);
    par_fb_off root = par_fbb_end(&b);
    size_t size;
    const uint8_t *bytes = par_fbb_finish(&b, root, PAR_TFL_IDENT, &size);
    if (!bytes) {
        par_msgf(msg, PAR_ERROR, "tflite write: the model does not fit in 2 GiB (or out of memory)");
        goto done;
    }
    out = malloc(size);
    if (!out) goto oom;
    memcpy(out, bytes, size);
    *len = size;
    goto done;
oom:
    par_msgf(msg, PAR_ERROR, "tflite write: out of memory");
done:
    free(sub);
    free(offs);
    par_fbb_free(&b);
    return out;
}
