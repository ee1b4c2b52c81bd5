/*
 * nn_walk.c - the nnapi converter's driver: the lowering table (parity op name -> the function of nn_ops.c or
 * nn_ops_conv.c that lowers it) and the walk over a graph: the model's inputs (4-D ones held NHWC), every node in
 * order (a node that cannot be converted records its status and reason and leaves placeholder operands, so that
 * supports() can answer for every node), and the model's outputs.
 *
 * It calls the lowering files and nn_convert.c's services; they never call back. It must not call the NNAPI library.
 */
#include <stdlib.h>
#include <string.h>

#include "nn_model.h"
#include "nn_ops.h"

/* ---------------------------------------------------------------------------------------------------------------
 * The table
 * ------------------------------------------------------------------------------------------------------------- */
static const nn_lower_entry TABLE[] = {
    {"conv2d", par_nn_lower_conv2d, 0},
    {"conv_transpose2d", par_nn_lower_conv_transpose2d, 0},
    {"linear", par_nn_lower_linear, 0},
    {"matmul", par_nn_lower_matmul, 0},
    {"add", par_nn_lower_binary, ANEURALNETWORKS_ADD},
    {"sub", par_nn_lower_binary, ANEURALNETWORKS_SUB},
    {"mul", par_nn_lower_binary, ANEURALNETWORKS_MUL},
    {"div", par_nn_lower_binary, ANEURALNETWORKS_DIV},
    {"relu", par_nn_lower_unary, NN_CLAMP_BY_BOUNDS},
    {"relu6", par_nn_lower_unary, NN_CLAMP_BY_BOUNDS},
    {"hardtanh", par_nn_lower_unary, NN_CLAMP_BY_BOUNDS},
    {"clamp", par_nn_lower_unary, NN_CLAMP_BY_BOUNDS},
    {"sigmoid", par_nn_lower_unary, ANEURALNETWORKS_LOGISTIC},
    {"tanh", par_nn_lower_unary, ANEURALNETWORKS_TANH},
    {"hardswish", par_nn_lower_unary, ANEURALNETWORKS_HARD_SWISH},
    {"prelu", par_nn_lower_prelu, 0},
    {"leaky_relu", par_nn_lower_leaky_relu, 0},
    {"hardsigmoid", par_nn_lower_hardsigmoid, 0},
    {"softmax", par_nn_lower_softmax, ANEURALNETWORKS_SOFTMAX},
    {"log_softmax", par_nn_lower_softmax, ANEURALNETWORKS_LOG_SOFTMAX},
    {"max_pool2d", par_nn_lower_pool, NN_POOL_MAX},
    {"avg_pool2d", par_nn_lower_pool, NN_POOL_AVG},
    {"global_avg_pool2d", par_nn_lower_pool, NN_POOL_GLOBAL},
    {"adaptive_avg_pool2d", par_nn_lower_pool, NN_POOL_ADAPTIVE},
    {"mean", par_nn_lower_mean, 0},
    {"upsample_nearest2d", par_nn_lower_resize, ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR},
    {"upsample_bilinear2d", par_nn_lower_resize, ANEURALNETWORKS_RESIZE_BILINEAR},
    {"concat", par_nn_lower_concat, 0},
    {"reshape", par_nn_lower_reshape, 0},
    {"flatten", par_nn_lower_reshape, 0},
    {"permute", par_nn_lower_permute, 0},
    {"pad", par_nn_lower_pad, 0},
    {"slice", par_nn_lower_slice, 0},
    {"quantize", par_nn_lower_quantize, ANEURALNETWORKS_QUANTIZE},
    {"dequantize", par_nn_lower_quantize, ANEURALNETWORKS_DEQUANTIZE},
    {"batch_norm", par_nn_lower_batch_norm, 0},
    {"embedding", par_nn_lower_embedding, 0},
    {"rms_norm", par_nn_lower_rms_norm, 0},
    {"layer_norm", par_nn_lower_layer_norm, 0},
    {"silu", par_nn_lower_silu, 0},
    {"rope", par_nn_lower_rope, 0},
    {"sdpa", par_nn_lower_sdpa, 0},
    {"slice_scatter", par_nn_lower_slice_scatter, 0},
    {"masked_fill", par_nn_lower_masked_fill, 0},
};

static const nn_lower_entry *lower_find(const char *op)
{
    for (size_t i = 0; i < sizeof TABLE / sizeof TABLE[0]; i++)
        if (strcmp(TABLE[i].op, op) == 0) return &TABLE[i];
    return NULL;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The walk
 * ------------------------------------------------------------------------------------------------------------- */
static par_status add_inputs(nn_model *m, par_msg *msg)
{
    const par_graph_desc *g = m->g;
    m->in = par_nn_alloc(m, ((size_t)g->n_inputs + 1) * sizeof *m->in);
    if (!m->in) return par_msgf(msg, PAR_ERROR, "out of memory");
    for (int32_t i = 0; i < g->n_inputs; i++) {
        int32_t v = g->inputs[i];
        const par_value *val = &g->values[v];
        par_status st;
        par_msg tmp;
        /* 4-D inputs are held NHWC, permuted on the host at every run. */
        int32_t o = par_nn_out(m, v, val->rank == 4, &st, &tmp);
        if (o < 0 && st == PAR_ERROR) return par_msgf(msg, PAR_ERROR, "%s", tmp.text);
        nn_io *io = &m->in[m->n_in++];
        memset(io, 0, sizeof *io);
        io->value = v;
        io->operand = o;
        io->nhwc = o >= 0 && m->opnd[o].nhwc;
        io->xor80 = val->dtype == PAR_DTYPE_QS8 && m->set.level < 30;
        io->elsize = par_dtype_size(val->dtype);
        io->bytes = (size_t)val->numel * io->elsize;
        for (int32_t k = 0; k < 4 && k < val->rank; k++) io->dims[k] = val->dims[k];
        if (o < 0) m->val_opnd[v] = -1;
    }
    return PAR_OK;
}

static par_status add_outputs(nn_model *m, par_msg *msg)
{
    const par_graph_desc *g = m->g;
    m->out = par_nn_alloc(m, ((size_t)g->n_outputs + 1) * sizeof *m->out);
    if (!m->out) return par_msgf(msg, PAR_ERROR, "out of memory");
    for (int32_t i = 0; i < g->n_outputs; i++) {
        int32_t v = g->outputs[i];
        const par_value *val = &g->values[v];
        nn_io *io = &m->out[m->n_out++];
        memset(io, 0, sizeof *io);
        io->value = v;
        io->operand = m->val_opnd[v];
        io->xor80 = val->dtype == PAR_DTYPE_QS8 && m->set.level < 30;
        io->elsize = par_dtype_size(val->dtype);
        io->bytes = (size_t)val->numel * io->elsize;
        for (int32_t k = 0; k < 4 && k < val->rank; k++) io->dims[k] = val->dims[k];
        if (io->operand >= 0) io->nhwc = m->opnd[io->operand].nhwc;
        if (m->failed >= 0) continue;
        if (val->kind != PAR_VALUE_NODE) {
            /* A graph output that no operation writes (an input or a constant passed through). */
            m->failed = g->n_nodes ? 0 : -1;
            return par_msgf(msg, PAR_UNSUPPORTED, "output '%s' is not computed by any node", val->name);
        }
        /* NNAPI forbids an operand being both a model output and another model output: give a repeated output
         * its own operand is not needed here, since each graph output is a distinct value. */
    }
    return PAR_OK;
}

par_status par_nn_convert(nn_model *m, const par_graph_desc *g, const nn_settings *set, par_msg *msg)
{
    memset(m, 0, sizeof *m);
    m->set = *set;
    m->g = g;
    m->failed = -1;
    size_t nv = (size_t)g->n_values + 1, nn = (size_t)g->n_nodes + 1;
    m->val_opnd = par_nn_alloc(m, nv * sizeof *m->val_opnd);
    m->val_nchw = par_nn_alloc(m, nv * sizeof *m->val_nchw);
    m->node_st = par_nn_alloc(m, nn * sizeof *m->node_st);
    m->node_msg = par_nn_alloc(m, nn * sizeof *m->node_msg);
    if (!m->val_opnd || !m->val_nchw || !m->node_st || !m->node_msg) return par_msgf(msg, PAR_ERROR, "out of memory");
    for (size_t v = 0; v < nv; v++) m->val_opnd[v] = m->val_nchw[v] = -1;
    par_status st = add_inputs(m, msg);
    if (st != PAR_OK) return st;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const par_node *n = &g->nodes[i];
        par_msg *nm = &m->node_msg[i];
        nm->text[0] = 0;
        const nn_lower_entry *e = lower_find(n->op);
        if (!e) st = par_msgf(nm, PAR_UNSUPPORTED, "op '%s' has no NNAPI lowering", n->op);
        else st = e->lower(m, i, e->code, nm);
        m->node_st[i] = st;
        if (st == PAR_OK) continue;
        if (m->failed < 0) m->failed = i;
        /* Placeholders for the outputs, so that later nodes can still be judged. */
        for (int32_t k = 0; k < n->n_outputs; k++) {
            if (m->val_opnd[n->outputs[k]] >= 0) continue;
            par_status s2;
            par_msg t2;
            const par_value *ov = &g->values[n->outputs[k]];
            if (par_nn_out(m, n->outputs[k], ov->rank == 4, &s2, &t2) < 0 && s2 == PAR_ERROR)
                return par_msgf(msg, PAR_ERROR, "%s", t2.text);
        }
    }
    return add_outputs(m, msg);
}
