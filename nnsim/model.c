/*
 * model.c - ANeuralNetworksModel_*: building a model and enforcing the API contract as the NDK reference documents
 * it (NULL arguments UNEXPECTED_NULL, changes after finish BAD_STATE, bad indices, lengths, types and quantization
 * BAD_DATA), then finish's validation: every operation checked by its kernel family's check (op_table.c), every
 * temporary written exactly once, no cycle, and the order that runs producers first.
 * Must not execute anything nor know about devices (device.c decides support, compile.c placement).
 */
#include <stdlib.h>
#include <string.h>

#include "nnsim.h"

#define OK ANEURALNETWORKS_NO_ERROR

int ANeuralNetworksModel_create(ANeuralNetworksModel **model)
{
    if (!model) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "model is NULL");
    *model = calloc(1, sizeof **model);
    if (!*model) return nn_err(ANEURALNETWORKS_OUT_OF_MEMORY, __func__, "out of memory");
    return OK;
}

void ANeuralNetworksModel_free(ANeuralNetworksModel *m)
{
    if (!m) return;
    for (uint32_t i = 0; i < m->n_operands; i++) {
        free(m->operands[i].t.data);
        free(m->operands[i].scales);
    }
    for (uint32_t i = 0; i < m->n_ops; i++) {
        free(m->ops[i].in);
        free(m->ops[i].out);
    }
    free(m->operands);
    free(m->ops);
    free(m->inputs);
    free(m->outputs);
    free(m->order);
    free(m);
}

/* The usual guard of a model-changing call. */
static int editable(const ANeuralNetworksModel *m, const char *func)
{
    if (!m) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, func, "model is NULL");
    if (m->finished) return nn_err(ANEURALNETWORKS_BAD_STATE, func, "the model is already finished");
    return OK;
}

/* Android's validateOperandType: a known code, scalars without dimensions, quantization where the type has it. */
static int check_operand_type(const ANeuralNetworksOperandType *t, const char *func, const char *what)
{
    if (t->type < 0 || t->type > ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED || !nn_type_size(t->type)) {
        if (t->type == ANEURALNETWORKS_MODEL)
            return nn_err(ANEURALNETWORKS_BAD_DATA, func, "%s: MODEL operands (control flow) are not simulated", what);
        return nn_err(ANEURALNETWORKS_BAD_DATA, func, "%s: unknown operand type %d", what, (int)t->type);
    }
    const char *tn = nn_type_name(t->type);
    if (nn_type_is_scalar(t->type)) {
        if (t->dimensionCount || t->dimensions)
            return nn_err(ANEURALNETWORKS_BAD_DATA, func, "%s: scalar %s with %u dimensions", what, tn,
                          t->dimensionCount);
    } else {
        if (t->dimensionCount > NN_MAX_RANK)
            return nn_err(ANEURALNETWORKS_BAD_DATA, func, "%s: rank %u exceeds the simulator's %d", what,
                          t->dimensionCount, NN_MAX_RANK);
        if (t->dimensionCount && !t->dimensions)
            return nn_err(ANEURALNETWORKS_BAD_DATA, func, "%s: dimensionCount %u with NULL dimensions", what,
                          t->dimensionCount);
    }
    switch (t->type) {
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM:
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED:
    case ANEURALNETWORKS_TENSOR_QUANT16_ASYMM: {
        int32_t lo = t->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM          ? 0
                     : t->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED ? -128
                                                                             : 0;
        int32_t hi = t->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM          ? 255
                     : t->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED ? 127
                                                                             : 65535;
        if (!(t->scale > 0))
            return nn_err(ANEURALNETWORKS_BAD_DATA, func, "%s: %s scale %g must be > 0", what, tn, (double)t->scale);
        if (t->zeroPoint < lo || t->zeroPoint > hi)
            return nn_err(ANEURALNETWORKS_BAD_DATA, func, "%s: %s zeroPoint %d outside [%d, %d]", what, tn,
                          (int)t->zeroPoint, (int)lo, (int)hi);
        break;
    }
    case ANEURALNETWORKS_TENSOR_QUANT8_SYMM:
    case ANEURALNETWORKS_TENSOR_QUANT16_SYMM:
        if (!(t->scale > 0) || t->zeroPoint)
            return nn_err(ANEURALNETWORKS_BAD_DATA, func, "%s: %s needs scale > 0 and zeroPoint 0", what, tn);
        break;
    case ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL:
        if (t->scale != 0 || t->zeroPoint)
            return nn_err(ANEURALNETWORKS_BAD_DATA, func,
                          "%s: %s takes scale 0 and zeroPoint 0 (scales come from setOperandSymmPerChannelQuantParams)",
                          what, tn);
        break;
    case ANEURALNETWORKS_TENSOR_INT32:
        if (!(t->scale >= 0))
            return nn_err(ANEURALNETWORKS_BAD_DATA, func, "%s: TENSOR_INT32 scale %g must be >= 0", what,
                          (double)t->scale);
        break;
    default:
        if (t->scale != 0 || t->zeroPoint)
            return nn_err(ANEURALNETWORKS_BAD_DATA, func, "%s: %s must have scale 0 and zeroPoint 0", what, tn);
    }
    return OK;
}

int ANeuralNetworksModel_addOperand(ANeuralNetworksModel *m, const ANeuralNetworksOperandType *type)
{
    int rc = editable(m, __func__);
    if (rc) return rc;
    if (!type) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "type is NULL");
    if ((rc = check_operand_type(type, __func__, "operand"))) return rc;
    if (m->n_operands == m->cap_operands) {
        uint32_t cap = m->cap_operands ? 2 * m->cap_operands : 16;
        nn_operand *p = realloc(m->operands, cap * sizeof *p);
        if (!p) return nn_err(ANEURALNETWORKS_OUT_OF_MEMORY, __func__, "out of memory");
        m->operands = p;
        m->cap_operands = cap;
    }
    nn_operand *o = &m->operands[m->n_operands++];
    memset(o, 0, sizeof *o);
    o->t.type = type->type;
    o->t.rank = type->dimensionCount;
    for (uint32_t i = 0; i < type->dimensionCount; i++) o->t.dims[i] = type->dimensions[i];
    o->t.scale = type->scale;
    o->t.zp = type->zeroPoint;
    return OK;
}

static int operand_at(const ANeuralNetworksModel *m, int32_t index, const char *func, nn_operand **o)
{
    if (index < 0 || (uint32_t)index >= m->n_operands)
        return nn_err(ANEURALNETWORKS_BAD_DATA, func, "operand index %d out of range [0, %u)", (int)index,
                      m->n_operands);
    *o = &m->operands[index];
    return OK;
}

/* Copies the value: the simulator keeps its own copy whatever the length (Android copies up to
 * ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES and references larger buffers). */
static int set_value(ANeuralNetworksModel *m, int32_t index, const void *buffer, size_t length, const char *func)
{
    nn_operand *o = NULL;
    int rc = editable(m, func);
    if (rc || (rc = operand_at(m, index, func, &o))) return rc;
    if (o->lifetime == NN_MODEL_INPUT || o->lifetime == NN_MODEL_OUTPUT)
        return nn_err(ANEURALNETWORKS_BAD_DATA, func, "operand %d is a model input or output", (int)index);
    if (!buffer) {
        if (length)
            return nn_err(ANEURALNETWORKS_BAD_DATA, func, "operand %d: NULL buffer with length %zu", (int)index,
                          length);
        free(o->t.data);
        o->t.data = NULL;
        o->t.bytes = 0;
        o->lifetime = NN_NO_VALUE;
        return OK;
    }
    if (!nn_shape_known(&o->t))
        return nn_err(ANEURALNETWORKS_BAD_DATA, func, "operand %d: a constant needs fully specified dimensions",
                      (int)index);
    size_t need = nn_type_size(o->t.type) * (nn_type_is_scalar(o->t.type) ? 1 : nn_numel(&o->t));
    if (length != need)
        return nn_err(ANEURALNETWORKS_BAD_DATA, func, "operand %d (%s): length %zu, the type needs %zu bytes",
                      (int)index, nn_type_name(o->t.type), length, need);
    void *copy = malloc(need ? need : 1);
    if (!copy) return nn_err(ANEURALNETWORKS_OUT_OF_MEMORY, func, "out of memory");
    memcpy(copy, buffer, need);
    free(o->t.data);
    o->t.data = copy;
    o->t.bytes = need;
    o->lifetime = NN_CONST;
    return OK;
}

int ANeuralNetworksModel_setOperandValue(ANeuralNetworksModel *m, int32_t index, const void *buffer, size_t length)
{
    return set_value(m, index, buffer, length, __func__);
}

int ANeuralNetworksModel_setOperandValueFromMemory(ANeuralNetworksModel *m, int32_t index,
                                                   const ANeuralNetworksMemory *memory, size_t offset, size_t length)
{
    int rc = editable(m, __func__);
    if (rc) return rc;
    if (!memory) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "memory is NULL");
    if (offset > memory->size || length > memory->size - offset)
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "offset %zu + length %zu exceeds the memory's %zu bytes",
                      offset, length, memory->size);
    if (!length) return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "length 0");
    return set_value(m, index, (const char *)memory->base + offset, length, __func__);
}

int ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(ANeuralNetworksModel *m, int32_t index,
                                                             const ANeuralNetworksSymmPerChannelQuantParams *q)
{
    nn_operand *o = NULL;
    int rc = editable(m, __func__);
    if (rc) return rc;
    if (!q) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "channelQuant is NULL");
    if ((rc = operand_at(m, index, __func__, &o))) return rc;
    if (o->t.type != ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL)
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "operand %d is %s, not TENSOR_QUANT8_SYMM_PER_CHANNEL",
                      (int)index, nn_type_name(o->t.type));
    if (q->channelDim >= o->t.rank)
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "channelDim %u >= rank %u", q->channelDim, o->t.rank);
    if (q->scaleCount != o->t.dims[q->channelDim])
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "scaleCount %u != dimension %u (%u)", q->scaleCount,
                      q->channelDim, o->t.dims[q->channelDim]);
    if (!q->scales) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "scales is NULL");
    for (uint32_t i = 0; i < q->scaleCount; i++)
        if (!(q->scales[i] > 0))
            return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "scales[%u] = %g must be > 0", i, (double)q->scales[i]);
    float *s = malloc(q->scaleCount * sizeof *s);
    if (!s) return nn_err(ANEURALNETWORKS_OUT_OF_MEMORY, __func__, "out of memory");
    memcpy(s, q->scales, q->scaleCount * sizeof *s);
    free(o->scales);
    o->scales = s;
    o->t.ch_scales = s;
    o->t.ch_dim = q->channelDim;
    o->t.ch_count = q->scaleCount;
    return OK;
}

/* Runs an operation's check over the model's declared operands (values only for constants). */
static int check_operation(const ANeuralNetworksModel *m, nn_operation *op, const char *func, uint32_t index)
{
    const nn_op_def *d = nn_op_find(op->type);
    nn_ctx c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.validating = 1;
    c.n_in = op->n_in;
    c.n_out = op->n_out;
    for (uint32_t i = 0; i < op->n_in; i++) c.in[i] = &m->operands[op->in[i]].t;
    for (uint32_t i = 0; i < op->n_out; i++) c.out[i] = &m->operands[op->out[i]].t;
    c.level = d->level;
    int rc = d->check(&c);
    if (rc) return nn_err(rc, func, "operation %u (%s): %s", index, d->name, c.msg);
    /* The operand types raise the level: float16, per-channel, bool and symmetric types came with 29, signed
     * asymmetric quant8 with 30. */
    for (uint32_t k = 0; k < op->n_in + op->n_out; k++) {
        int32_t t = (k < op->n_in ? c.in[k] : c.out[k - op->n_in])->type;
        int l = t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED ? 30
                : (t == ANEURALNETWORKS_TENSOR_FLOAT16 || t == ANEURALNETWORKS_FLOAT16 || t == ANEURALNETWORKS_BOOL ||
                   t == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL || t == ANEURALNETWORKS_TENSOR_QUANT8_SYMM ||
                   t == ANEURALNETWORKS_TENSOR_QUANT16_SYMM || t == ANEURALNETWORKS_TENSOR_QUANT16_ASYMM ||
                   t == ANEURALNETWORKS_TENSOR_BOOL8)
                    ? 29
                    : 27;
        if (l > c.level) c.level = l;
    }
    /* Dynamic shapes (an operation output, or a tensor input, without full dimensions) came with 29. */
    for (uint32_t k = 0; k < op->n_in + op->n_out; k++) {
        const nn_tensor *t = k < op->n_in ? c.in[k] : c.out[k - op->n_in];
        if (!nn_type_is_scalar(t->type) && !nn_shape_known(t) && c.level < 29) c.level = 29;
    }
    op->level = c.level;
    int32_t t0 = c.in[0]->type, to = c.out[0]->type;
    op->kind = (t0 == ANEURALNETWORKS_TENSOR_FLOAT32 && to == t0)   ? NN_KIND_FLOAT32
               : (t0 == ANEURALNETWORKS_TENSOR_FLOAT16 && to == t0) ? NN_KIND_FLOAT16
               : (nn_type_is_quant8(t0) && nn_type_is_quant8(to))   ? NN_KIND_QUANT
                                                                    : NN_KIND_OTHER;
    return OK;
}

int ANeuralNetworksModel_addOperation(ANeuralNetworksModel *m, ANeuralNetworksOperationType type, uint32_t n_in,
                                      const uint32_t *inputs, uint32_t n_out, const uint32_t *outputs)
{
    int rc = editable(m, __func__);
    if (rc) return rc;
    if ((n_in && !inputs) || (n_out && !outputs))
        return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "inputs or outputs is NULL");
    const nn_op_def *d = nn_op_find(type);
    if (!d) {
        if (type >= 0 && type <= ANEURALNETWORKS_RANK)
            return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "operation type %d is not simulated", (int)type);
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "unknown operation type %d", (int)type);
    }
    if (!n_in || !n_out || n_in > NN_MAX_IO || n_out > NN_MAX_IO)
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "%s: %u inputs and %u outputs", d->name, n_in, n_out);
    for (uint32_t i = 0; i < n_in + n_out; i++) {
        uint32_t k = i < n_in ? inputs[i] : outputs[i - n_in];
        if (k >= m->n_operands)
            return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "%s: operand index %u out of range [0, %u)", d->name, k,
                          m->n_operands);
    }
    for (uint32_t i = 0; i < n_out; i++) {
        nn_operand *o = &m->operands[outputs[i]];
        if (o->lifetime == NN_CONST || o->lifetime == NN_NO_VALUE || o->lifetime == NN_MODEL_INPUT)
            return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "%s: output operand %u has a value or is a model input",
                          d->name, outputs[i]);
        if (o->written)
            return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "%s: operand %u is already written by another operation",
                          d->name, outputs[i]);
        if (nn_type_is_scalar(o->t.type))
            return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "%s: output operand %u is a scalar", d->name, outputs[i]);
    }
    if (m->n_ops == m->cap_ops) {
        uint32_t cap = m->cap_ops ? 2 * m->cap_ops : 8;
        nn_operation *p = realloc(m->ops, cap * sizeof *p);
        if (!p) return nn_err(ANEURALNETWORKS_OUT_OF_MEMORY, __func__, "out of memory");
        m->ops = p;
        m->cap_ops = cap;
    }
    nn_operation op = {.type = type, .n_in = n_in, .n_out = n_out};
    op.in = malloc(n_in * sizeof *op.in);
    op.out = malloc(n_out * sizeof *op.out);
    if (!op.in || !op.out) {
        free(op.in);
        free(op.out);
        return nn_err(ANEURALNETWORKS_OUT_OF_MEMORY, __func__, "out of memory");
    }
    memcpy(op.in, inputs, n_in * sizeof *op.in);
    memcpy(op.out, outputs, n_out * sizeof *op.out);
    /* Counts and types now, as Android validates at addOperation; parameter values again at finish. */
    if ((rc = check_operation(m, &op, __func__, m->n_ops))) {
        free(op.in);
        free(op.out);
        return rc;
    }
    for (uint32_t i = 0; i < n_out; i++) m->operands[outputs[i]].written = 1;
    m->ops[m->n_ops++] = op;
    return OK;
}

int ANeuralNetworksModel_identifyInputsAndOutputs(ANeuralNetworksModel *m, uint32_t n_in, const uint32_t *inputs,
                                                  uint32_t n_out, const uint32_t *outputs)
{
    int rc = editable(m, __func__);
    if (rc) return rc;
    if ((n_in && !inputs) || (n_out && !outputs))
        return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "inputs or outputs is NULL");
    for (uint32_t i = 0; i < n_in + n_out; i++) {
        uint32_t k = i < n_in ? inputs[i] : outputs[i - n_in];
        if (k >= m->n_operands)
            return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "operand index %u out of range [0, %u)", k,
                          m->n_operands);
        const nn_operand *o = &m->operands[k];
        /* Android: only a temporary may become an input or output (not a constant, not one already identified,
         * not one listed twice). */
        if (o->lifetime != NN_TEMP)
            return nn_err(ANEURALNETWORKS_BAD_DATA, __func__,
                          "operand %u cannot be an input or output: it has a value or is already one", k);
        for (uint32_t j = 0; j < i; j++)
            if ((j < n_in ? inputs[j] : outputs[j - n_in]) == k)
                return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "operand %u is listed twice", k);
        if (i < n_in && o->written)
            return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "input operand %u is written by an operation", k);
    }
    uint32_t *pi = malloc((n_in ? n_in : 1) * sizeof *pi), *po = malloc((n_out ? n_out : 1) * sizeof *po);
    if (!pi || !po) {
        free(pi);
        free(po);
        return nn_err(ANEURALNETWORKS_OUT_OF_MEMORY, __func__, "out of memory");
    }
    if (n_in) memcpy(pi, inputs, n_in * sizeof *pi);
    if (n_out) memcpy(po, outputs, n_out * sizeof *po);
    for (uint32_t i = 0; i < n_in; i++) m->operands[pi[i]].lifetime = NN_MODEL_INPUT;
    for (uint32_t i = 0; i < n_out; i++) m->operands[po[i]].lifetime = NN_MODEL_OUTPUT;
    free(m->inputs);
    free(m->outputs);
    m->inputs = pi;
    m->outputs = po;
    m->n_inputs = n_in;
    m->n_outputs = n_out;
    m->identified = 1;
    return OK;
}

int ANeuralNetworksModel_relaxComputationFloat32toFloat16(ANeuralNetworksModel *m, bool allow)
{
    int rc = editable(m, __func__);
    if (rc) return rc;
    m->relaxed = allow;
    return OK;
}

/* Kahn's order over the operations: an operation runs once every operand it reads is a constant, a model input, an
 * omitted value or written by an operation already placed. */
static int order_operations(ANeuralNetworksModel *m)
{
    m->order = malloc((m->n_ops ? m->n_ops : 1) * sizeof *m->order);
    unsigned char *ready = calloc(m->n_operands ? m->n_operands : 1, 1), *done = calloc(m->n_ops ? m->n_ops : 1, 1);
    int rc = OK;
    if (!m->order || !ready || !done) {
        rc = nn_err(ANEURALNETWORKS_OUT_OF_MEMORY, "ANeuralNetworksModel_finish", "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < m->n_operands; i++) ready[i] = !m->operands[i].written;
    uint32_t placed = 0;
    for (int progress = 1; progress && placed < m->n_ops;) {
        progress = 0;
        for (uint32_t k = 0; k < m->n_ops; k++) {
            if (done[k]) continue;
            const nn_operation *op = &m->ops[k];
            uint32_t i = 0;
            while (i < op->n_in && ready[op->in[i]]) i++;
            if (i < op->n_in) continue;
            for (i = 0; i < op->n_out; i++) ready[op->out[i]] = 1;
            done[k] = 1;
            m->order[placed++] = k;
            progress = 1;
        }
    }
    if (placed < m->n_ops)
        rc = nn_err(ANEURALNETWORKS_BAD_DATA, "ANeuralNetworksModel_finish", "the operations form a cycle");
out:
    free(ready);
    free(done);
    return rc;
}

int ANeuralNetworksModel_finish(ANeuralNetworksModel *m)
{
    static const char *const fn = "ANeuralNetworksModel_finish";
    int rc = editable(m, fn);
    if (rc) return rc;
    if (m->invalid) return nn_err(ANEURALNETWORKS_BAD_STATE, fn, "an earlier finish of this model failed");
    m->invalid = 1; /* until it succeeds */
    if (!m->identified || !m->n_outputs)
        return nn_err(ANEURALNETWORKS_BAD_DATA, fn, "no model outputs identified (identifyInputsAndOutputs)");
    if (!m->n_ops) return nn_err(ANEURALNETWORKS_BAD_DATA, fn, "the model has no operation");
    for (uint32_t i = 0; i < m->n_operands; i++) {
        const nn_operand *o = &m->operands[i];
        if (o->lifetime == NN_TEMP && !o->written) {
            int used = 0;
            for (uint32_t k = 0; k < m->n_ops && !used; k++)
                for (uint32_t j = 0; j < m->ops[k].n_in; j++) used |= m->ops[k].in[j] == i;
            if (used)
                return nn_err(ANEURALNETWORKS_BAD_DATA, fn,
                              "operand %u is read but has no value, is no model input and no operation writes it", i);
        }
        if (o->lifetime == NN_MODEL_OUTPUT && !o->written)
            return nn_err(ANEURALNETWORKS_BAD_DATA, fn, "model output operand %u is written by no operation", i);
        if (o->t.type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL && !o->scales)
            return nn_err(ANEURALNETWORKS_BAD_DATA, fn, "operand %u is TENSOR_QUANT8_SYMM_PER_CHANNEL without scales",
                          i);
    }
    for (uint32_t k = 0; k < m->n_ops; k++) {
        const nn_operation *op = &m->ops[k];
        for (uint32_t i = 0; i < op->n_in; i++)
            if (m->operands[op->in[i]].lifetime == NN_NO_VALUE && !(op->type == ANEURALNETWORKS_TRANSPOSE && i == 1))
                return nn_err(ANEURALNETWORKS_BAD_DATA, fn,
                              "operation %u (%s): input %u (operand %u) is required but "
                              "was set to no value",
                              k, nn_op_name(op->type), i, op->in[i]);
        if ((rc = check_operation(m, &m->ops[k], fn, k))) return rc;
    }
    if ((rc = order_operations(m))) return rc;
    m->invalid = 0;
    m->finished = 1;
    return OK;
}
