/*
 * exec.c - ANeuralNetworksMemory_*, ANeuralNetworksExecution_*, ANeuralNetworksEvent_*: binding the caller's
 * buffers, the contract of an execution (one compute each, every input and output given, lengths and types as
 * declared), and the engine that runs a compilation's operations in order.
 *
 * The engine gives every operand a run-time nn_tensor: constants point at the model's copy, model inputs and
 * outputs at the caller's buffers (shapes from setInput's type where the model left them open), temporaries at
 * buffers allocated when their producer states their shape (nn_ctx.alloc). An operation placed on a float16 device
 * (relaxed float32 on parity-gpu-fp16) or working on TENSOR_FLOAT16 sees float32 copies of its float inputs rounded
 * to float16, and its float outputs are rounded to float16 when it returns: every intermediate result of such a
 * device is a float16 value, the accumulation inside one operation is float32. Kernels see only TENSOR_FLOAT32.
 * Must not know an operation's semantics (ops_*.c) nor place operations (compile.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "nnsim.h"

#define OK ANEURALNETWORKS_NO_ERROR

struct ANeuralNetworksExecution {
    ANeuralNetworksCompilation *comp;
    nn_binding *in, *out;
    int started, status, computed;
    uint32_t *out_rank;
    uint32_t (*out_dims)[NN_MAX_RANK];
    int measure;
    uint64_t duration_ns;
};

struct ANeuralNetworksEvent {
    int status;
};

/* ---- memory ---- */

int ANeuralNetworksMemory_createFromFd(size_t size, int protect, int fd, size_t offset, ANeuralNetworksMemory **mem)
{
    if (!mem) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "memory is NULL");
    *mem = NULL;
    if (!size) return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "size 0");
    if (protect & ~(PROT_READ | PROT_WRITE) || !protect)
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "protect %#x is not PROT_READ and/or PROT_WRITE", protect);
    void *p = mmap(NULL, size, protect, MAP_SHARED, fd, (off_t)offset);
    if (p == MAP_FAILED)
        return nn_err(ANEURALNETWORKS_UNMAPPABLE, __func__, "cannot map fd %d (size %zu, offset %zu)", fd, size,
                      offset);
    ANeuralNetworksMemory *m = calloc(1, sizeof *m);
    if (!m) {
        munmap(p, size);
        return nn_err(ANEURALNETWORKS_OUT_OF_MEMORY, __func__, "out of memory");
    }
    m->base = p;
    m->size = size;
    m->prot = protect;
    *mem = m;
    return OK;
}

void ANeuralNetworksMemory_free(ANeuralNetworksMemory *m)
{
    if (!m) return;
    munmap(m->base, m->size);
    free(m);
}

/* ---- executions ---- */

int ANeuralNetworksExecution_create(ANeuralNetworksCompilation *c, ANeuralNetworksExecution **out)
{
    if (!c || !out) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "compilation or execution is NULL");
    *out = NULL;
    if (!c->finished) return nn_err(ANEURALNETWORKS_BAD_STATE, __func__, "the compilation is not finished");
    const ANeuralNetworksModel *m = c->model;
    ANeuralNetworksExecution *e = calloc(1, sizeof *e);
    if (!e) return nn_err(ANEURALNETWORKS_OUT_OF_MEMORY, __func__, "out of memory");
    e->comp = c;
    e->in = calloc(m->n_inputs + 1, sizeof *e->in);
    e->out = calloc(m->n_outputs + 1, sizeof *e->out);
    e->out_rank = calloc(m->n_outputs + 1, sizeof *e->out_rank);
    e->out_dims = calloc(m->n_outputs + 1, sizeof *e->out_dims);
    if (!e->in || !e->out || !e->out_rank || !e->out_dims) {
        ANeuralNetworksExecution_free(e);
        return nn_err(ANEURALNETWORKS_OUT_OF_MEMORY, __func__, "out of memory");
    }
    *out = e;
    return OK;
}

void ANeuralNetworksExecution_free(ANeuralNetworksExecution *e)
{
    if (!e) return;
    free(e->in);
    free(e->out);
    free(e->out_rank);
    free(e->out_dims);
    free(e);
}

/* setInput / setOutput and their memory variants: the operand's declared type, refined by `type` where the model
 * left dimensions open; the length must be the shape's size (an output of unknown shape takes any length). */
static int bind(ANeuralNetworksExecution *e, int is_out, int32_t index, const ANeuralNetworksOperandType *type,
                void *data, size_t length, int from_memory, const char *func)
{
    if (!e) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, func, "execution is NULL");
    if (!data && length) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, func, "buffer is NULL with length %zu", length);
    if (e->started) return nn_err(ANEURALNETWORKS_BAD_STATE, func, "the execution has already started");
    const ANeuralNetworksModel *m = e->comp->model;
    uint32_t n = is_out ? m->n_outputs : m->n_inputs;
    if (index < 0 || (uint32_t)index >= n)
        return nn_err(ANEURALNETWORKS_BAD_DATA, func, "%s index %d out of range [0, %u)", is_out ? "output" : "input",
                      (int)index, n);
    nn_binding *b = is_out ? &e->out[index] : &e->in[index];
    if (b->set)
        return nn_err(ANEURALNETWORKS_BAD_STATE, func, "%s %d is already set", is_out ? "output" : "input", (int)index);
    const nn_tensor *d = &m->operands[is_out ? m->outputs[index] : m->inputs[index]].t;
    nn_tensor t = *d;
    if (type) {
        if (type->type != d->type || type->scale != d->scale || type->zeroPoint != d->zp)
            return nn_err(ANEURALNETWORKS_BAD_DATA, func,
                          "%s %d: type %s (scale %g, zeroPoint %d) differs from the "
                          "model's %s (scale %g, zeroPoint %d)",
                          is_out ? "output" : "input", (int)index, nn_type_name(type->type), (double)type->scale,
                          (int)type->zeroPoint, nn_type_name(d->type), (double)d->scale, (int)d->zp);
        if (type->dimensionCount) {
            if (!type->dimensions)
                return nn_err(ANEURALNETWORKS_BAD_DATA, func, "dimensionCount %u with NULL dimensions",
                              type->dimensionCount);
            if ((d->rank && type->dimensionCount != d->rank) || type->dimensionCount > NN_MAX_RANK)
                return nn_err(ANEURALNETWORKS_BAD_DATA, func, "%s %d: rank %u, the model declares %u",
                              is_out ? "output" : "input", (int)index, type->dimensionCount, d->rank);
            t.rank = type->dimensionCount;
            for (uint32_t i = 0; i < t.rank; i++) {
                if (d->rank && d->dims[i] && type->dimensions[i] != d->dims[i])
                    return nn_err(ANEURALNETWORKS_BAD_DATA, func, "%s %d: dimension %u is %u, the model declares %u",
                                  is_out ? "output" : "input", (int)index, i, type->dimensions[i], d->dims[i]);
                t.dims[i] = type->dimensions[i];
            }
        }
    }
    int omitted = !data && !length;
    if (!omitted) {
        if (!nn_shape_known(&t) && !is_out)
            return nn_err(ANEURALNETWORKS_BAD_DATA, func, "input %d: the shape is not fully specified", (int)index);
        if (nn_shape_known(&t)) {
            size_t need = nn_type_size(t.type) * (nn_type_is_scalar(t.type) ? 1 : nn_numel(&t));
            if (length != need)
                return nn_err(ANEURALNETWORKS_BAD_DATA, func, "%s %d: length %zu, the shape needs %zu bytes",
                              is_out ? "output" : "input", (int)index, length, need);
        }
    } else if (is_out) {
        return nn_err(ANEURALNETWORKS_BAD_DATA, func, "output %d: a NULL buffer", (int)index);
    }
    b->set = omitted ? 3 : from_memory ? 2 : 1;
    b->data = data;
    b->length = length;
    b->rank = t.rank;
    memcpy(b->dims, t.dims, sizeof b->dims);
    b->has_type = type != NULL;
    return OK;
}

static int memory_span(const ANeuralNetworksMemory *mem, size_t offset, size_t length, const char *func, void **p)
{
    if (!mem) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, func, "memory is NULL");
    if (offset > mem->size || length > mem->size - offset)
        return nn_err(ANEURALNETWORKS_BAD_DATA, func, "offset %zu + length %zu exceeds the memory's %zu bytes", offset,
                      length, mem->size);
    *p = (char *)mem->base + offset;
    return OK;
}

int ANeuralNetworksExecution_setInput(ANeuralNetworksExecution *e, int32_t index,
                                      const ANeuralNetworksOperandType *type, const void *buffer, size_t length)
{
    return bind(e, 0, index, type, (void *)buffer, length, 0, __func__);
}

int ANeuralNetworksExecution_setOutput(ANeuralNetworksExecution *e, int32_t index,
                                       const ANeuralNetworksOperandType *type, void *buffer, size_t length)
{
    return bind(e, 1, index, type, buffer, length, 0, __func__);
}

int ANeuralNetworksExecution_setInputFromMemory(ANeuralNetworksExecution *e, int32_t index,
                                                const ANeuralNetworksOperandType *type,
                                                const ANeuralNetworksMemory *mem, size_t offset, size_t length)
{
    void *p = NULL;
    if (!e) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "execution is NULL");
    int rc = memory_span(mem, offset, length, __func__, &p);
    return rc ? rc : bind(e, 0, index, type, p, length, 1, __func__);
}

int ANeuralNetworksExecution_setOutputFromMemory(ANeuralNetworksExecution *e, int32_t index,
                                                 const ANeuralNetworksOperandType *type,
                                                 const ANeuralNetworksMemory *mem, size_t offset, size_t length)
{
    void *p = NULL;
    if (!e) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "execution is NULL");
    int rc = memory_span(mem, offset, length, __func__, &p);
    if (!rc && !(mem->prot & PROT_WRITE))
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "the memory is not writable");
    return rc ? rc : bind(e, 1, index, type, p, length, 1, __func__);
}

int ANeuralNetworksExecution_setMeasureTiming(ANeuralNetworksExecution *e, bool measure)
{
    if (!e) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "execution is NULL");
    if (!e->comp->for_devices || e->comp->n_devices != 1)
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__,
                      "timing needs a compilation made by createForDevices with one device");
    if (e->started) return nn_err(ANEURALNETWORKS_BAD_STATE, __func__, "the execution has already started");
    e->measure = measure;
    return OK;
}

int ANeuralNetworksExecution_getDuration(const ANeuralNetworksExecution *e, int32_t code, uint64_t *duration)
{
    if (!e || !duration) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "execution or duration is NULL");
    if (!e->computed || e->status != OK)
        return nn_err(ANEURALNETWORKS_BAD_STATE, __func__, "the execution has not completed successfully");
    if (code < ANEURALNETWORKS_DURATION_ON_HARDWARE || code > ANEURALNETWORKS_FENCED_DURATION_IN_DRIVER)
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "unknown duration code %d", (int)code);
    /* The host is the hardware and the driver: every code reports the engine's run time. */
    *duration = e->measure ? e->duration_ns : UINT64_MAX;
    return OK;
}

int ANeuralNetworksExecution_setTimeout(ANeuralNetworksExecution *e, uint64_t duration)
{
    if (!e) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "execution is NULL");
    if (!e->comp->for_devices || e->comp->n_devices != 1)
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__,
                      "a timeout needs a compilation made by createForDevices with one device");
    if (e->started) return nn_err(ANEURALNETWORKS_BAD_STATE, __func__, "the execution has already started");
    (void)duration;
    return OK;
}

int ANeuralNetworksExecution_setLoopTimeout(ANeuralNetworksExecution *e, uint64_t duration)
{
    if (!e) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "execution is NULL");
    if (e->started) return nn_err(ANEURALNETWORKS_BAD_STATE, __func__, "the execution has already started");
    (void)duration;
    return OK;
}

/* ---- the engine ---- */

typedef struct nn_run {
    ANeuralNetworksExecution *e;
    nn_tensor *rt;       /* one per operand */
    void **owned;        /* buffers the engine allocated, per operand */
    int32_t *binding_of; /* operand -> output index, or -1 */
    /* the operation being run: float16 shadows of its outputs */
    nn_tensor shadow[NN_MAX_IO];
    nn_tensor *real[NN_MAX_IO];
    int f16_mode;
    char msg[200];
} nn_run;

static int set_out_shape(nn_ctx *c, uint32_t i, uint32_t rank, const uint32_t *dims, nn_tensor *t, nn_run *r,
                         uint32_t operand)
{
    const ANeuralNetworksModel *m = r->e->comp->model;
    const nn_tensor *declared = &m->operands[operand].t;
    if (declared->rank && declared->rank != rank)
        return nn_fail(c, ANEURALNETWORKS_OP_FAILED, "output %u: computed rank %u, the model declares %u", i, rank,
                       declared->rank);
    for (uint32_t k = 0; k < rank; k++) {
        if (declared->rank && declared->dims[k] && declared->dims[k] != dims[k])
            return nn_fail(c, ANEURALNETWORKS_OP_FAILED,
                           "output %u: computed dimension %u is %u, the model declares %u", i, k, dims[k],
                           declared->dims[k]);
        if (!dims[k]) return nn_fail(c, ANEURALNETWORKS_OP_FAILED, "output %u: computed dimension %u is 0", i, k);
    }
    t->rank = rank;
    memcpy(t->dims, dims, rank * sizeof *dims);
    size_t bytes = nn_type_size(t->type) * nn_numel(t);
    int32_t b = r->binding_of[operand];
    if (b >= 0) {
        nn_binding *ob = &r->e->out[b];
        r->e->out_rank[b] = rank;
        memcpy(r->e->out_dims[b], dims, rank * sizeof *dims);
        if (ob->length < bytes)
            return nn_fail(c, ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE, "output %d needs %zu bytes, the buffer has %zu",
                           (int)b, bytes, ob->length);
        t->data = ob->data;
    } else {
        free(r->owned[operand]);
        r->owned[operand] = calloc(bytes ? bytes : 1, 1);
        if (!r->owned[operand]) return nn_fail(c, ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
        t->data = r->owned[operand];
    }
    t->bytes = bytes;
    return OK;
}

static int engine_alloc(nn_ctx *c, uint32_t i, uint32_t rank, const uint32_t *dims)
{
    nn_run *r = c->run;
    uint32_t operand = c->op->out[i];
    if (rank > NN_MAX_RANK) return nn_fail(c, ANEURALNETWORKS_OP_FAILED, "output %u: rank %u", i, rank);
    if (r->real[i]) { /* a float16 shadow: the real output gets the shape, the shadow float32 storage */
        int rc = set_out_shape(c, i, rank, dims, r->real[i], r, operand);
        if (rc) return rc;
        nn_tensor *s = &r->shadow[i];
        s->rank = rank;
        memcpy(s->dims, dims, rank * sizeof *dims);
        s->bytes = 4 * nn_numel(s);
        free(s->data);
        s->data = calloc(s->bytes ? s->bytes : 1, 1);
        return s->data ? OK : nn_fail(c, ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
    }
    return set_out_shape(c, i, rank, dims, c->out[i], r, operand);
}

/* A float32 copy of a float tensor, rounded to float16. */
static int f16_copy(const nn_tensor *src, nn_tensor *dst)
{
    *dst = *src;
    size_t n = nn_numel(src);
    float *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) return ANEURALNETWORKS_OUT_OF_MEMORY;
    for (size_t k = 0; k < n; k++)
        p[k] = src->type == ANEURALNETWORKS_TENSOR_FLOAT16 ? nn_f16_to_f32(((const uint16_t *)src->data)[k])
                                                           : nn_round_f16(((const float *)src->data)[k]);
    dst->type = ANEURALNETWORKS_TENSOR_FLOAT32;
    dst->data = p;
    dst->bytes = n * sizeof *p;
    return OK;
}

static int run_operation(nn_run *r, uint32_t index)
{
    const ANeuralNetworksCompilation *comp = r->e->comp;
    const ANeuralNetworksModel *m = comp->model;
    const nn_operation *op = &m->ops[index];
    const nn_op_def *d = nn_op_find(op->type);
    nn_ctx c;
    nn_tensor in_shadow[NN_MAX_IO];
    memset(&c, 0, sizeof c);
    c.op = op;
    c.n_in = op->n_in;
    c.n_out = op->n_out;
    c.alloc = engine_alloc;
    c.run = r;
    c.relaxed = comp->relaxed_op[index];
    c.android27 = comp->android27_op[index];
    int rc = OK;
    for (uint32_t i = 0; i < op->n_in; i++) /* an omitted value is allowed where the operation has it optional */
        if (!r->rt[op->in[i]].data && !(op->type == ANEURALNETWORKS_TRANSPOSE && i == 1)) {
            snprintf(r->msg, sizeof r->msg, "operation %u (%s): input %u (operand %u) has no value", index, d->name, i,
                     op->in[i]);
            return ANEURALNETWORKS_OP_FAILED;
        }
    for (uint32_t i = 0; i < op->n_in; i++) {
        nn_tensor *t = &r->rt[op->in[i]];
        c.in[i] = t;
        in_shadow[i].data = NULL;
        int shadow = t->data && (t->type == ANEURALNETWORKS_TENSOR_FLOAT16 ||
                                 (c.relaxed && t->type == ANEURALNETWORKS_TENSOR_FLOAT32));
        if (shadow) {
            if (f16_copy(t, &in_shadow[i])) {
                rc = nn_fail(&c, ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
                op = NULL;
                break;
            }
            c.in[i] = &in_shadow[i];
        }
    }
    for (uint32_t i = 0; op && i < op->n_out; i++) {
        nn_tensor *t = &r->rt[op->out[i]];
        r->real[i] = NULL;
        c.out[i] = t;
        if (t->type == ANEURALNETWORKS_TENSOR_FLOAT16) {
            r->shadow[i] = *t;
            r->shadow[i].type = ANEURALNETWORKS_TENSOR_FLOAT32;
            r->shadow[i].data = NULL;
            r->real[i] = t;
            c.out[i] = &r->shadow[i];
        }
    }
    if (op) rc = d->eval(&c);
    if (rc == ANEURALNETWORKS_BAD_DATA) rc = ANEURALNETWORKS_OP_FAILED; /* a value only the run could see */
    for (uint32_t i = 0; op && i < op->n_out; i++) {
        if (r->real[i]) {
            if (!rc) {
                size_t n = nn_numel(r->real[i]);
                const float *s = r->shadow[i].data;
                for (size_t k = 0; k < n; k++) ((uint16_t *)r->real[i]->data)[k] = nn_f32_to_f16(s[k]);
            }
            free(r->shadow[i].data);
            r->real[i] = NULL;
        } else if (!rc && c.relaxed && c.out[i]->type == ANEURALNETWORKS_TENSOR_FLOAT32) {
            size_t n = nn_numel(c.out[i]);
            float *p = c.out[i]->data;
            for (size_t k = 0; k < n; k++) p[k] = nn_round_f16(p[k]);
        }
    }
    for (uint32_t i = 0; i < c.n_in; i++)
        if (c.in[i] == &in_shadow[i]) free(in_shadow[i].data);
    if (rc) snprintf(r->msg, sizeof r->msg, "operation %u (%s): %s", index, d->name, c.msg);
    return rc;
}

static int engine(ANeuralNetworksExecution *e)
{
    const ANeuralNetworksModel *m = e->comp->model;
    nn_run r;
    memset(&r, 0, sizeof r);
    r.e = e;
    r.rt = calloc(m->n_operands, sizeof *r.rt);
    r.owned = calloc(m->n_operands, sizeof *r.owned);
    r.binding_of = malloc(m->n_operands * sizeof *r.binding_of);
    int rc = OK;
    if (!r.rt || !r.owned || !r.binding_of) {
        rc = ANEURALNETWORKS_OUT_OF_MEMORY;
        snprintf(r.msg, sizeof r.msg, "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < m->n_operands; i++) {
        r.rt[i] = m->operands[i].t;
        r.binding_of[i] = -1;
        if (m->operands[i].lifetime == NN_TEMP || m->operands[i].lifetime == NN_MODEL_OUTPUT) r.rt[i].data = NULL;
    }
    for (uint32_t i = 0; i < m->n_inputs; i++) {
        nn_tensor *t = &r.rt[m->inputs[i]];
        t->data = e->in[i].set == 3 ? NULL : e->in[i].data;
        t->bytes = e->in[i].length;
        t->rank = e->in[i].rank;
        memcpy(t->dims, e->in[i].dims, sizeof t->dims);
    }
    for (uint32_t i = 0; i < m->n_outputs; i++) r.binding_of[m->outputs[i]] = (int32_t)i;
    for (uint32_t k = 0; k < m->n_ops && !rc; k++) rc = run_operation(&r, m->order[k]);
out:
    if (rc) nn_err(rc, "ANeuralNetworksExecution_compute", "%s", r.msg);
    if (r.owned)
        for (uint32_t i = 0; i < m->n_operands; i++) free(r.owned[i]);
    free(r.rt);
    free(r.owned);
    free(r.binding_of);
    return rc;
}

/* The checks before a run: not started, every input and output given. */
static int start(ANeuralNetworksExecution *e, const char *func)
{
    if (!e) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, func, "execution is NULL");
    if (e->started) return nn_err(ANEURALNETWORKS_BAD_STATE, func, "the execution has already been computed");
    const ANeuralNetworksModel *m = e->comp->model;
    for (uint32_t i = 0; i < m->n_inputs; i++)
        if (!e->in[i].set) return nn_err(ANEURALNETWORKS_BAD_DATA, func, "input %u is not set", i);
    for (uint32_t i = 0; i < m->n_outputs; i++)
        if (!e->out[i].set) return nn_err(ANEURALNETWORKS_BAD_DATA, func, "output %u is not set", i);
    e->started = 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    e->status = engine(e);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    e->duration_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)(t1.tv_nsec - t0.tv_nsec);
    e->computed = 1;
    return OK;
}

int ANeuralNetworksExecution_compute(ANeuralNetworksExecution *e)
{
    int rc = start(e, __func__);
    return rc ? rc : e->status;
}

/* The simulator computes synchronously: the event is signalled when startCompute returns; wait reports the run's
 * result. */
int ANeuralNetworksExecution_startCompute(ANeuralNetworksExecution *e, ANeuralNetworksEvent **event)
{
    if (!event) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "event is NULL");
    *event = NULL;
    int rc = start(e, __func__);
    if (rc) return rc;
    ANeuralNetworksEvent *ev = calloc(1, sizeof *ev);
    if (!ev) return nn_err(ANEURALNETWORKS_OUT_OF_MEMORY, __func__, "out of memory");
    ev->status = e->status;
    *event = ev;
    return OK;
}

int ANeuralNetworksEvent_wait(ANeuralNetworksEvent *event)
{
    if (!event) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "event is NULL");
    return event->status;
}

void ANeuralNetworksEvent_free(ANeuralNetworksEvent *event)
{
    free(event);
}

static int output_arg(ANeuralNetworksExecution *e, int32_t index, const void *p, const char *func)
{
    if (!e || !p) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, func, "execution or result pointer is NULL");
    if (!e->computed || (e->status != OK && e->status != ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE))
        return nn_err(ANEURALNETWORKS_BAD_STATE, func, "the execution has not completed");
    if (index < 0 || (uint32_t)index >= e->comp->model->n_outputs)
        return nn_err(ANEURALNETWORKS_BAD_DATA, func, "output index %d out of range [0, %u)", (int)index,
                      e->comp->model->n_outputs);
    return OK;
}

int ANeuralNetworksExecution_getOutputOperandRank(ANeuralNetworksExecution *e, int32_t index, uint32_t *rank)
{
    int rc = output_arg(e, index, rank, __func__);
    if (!rc) *rank = e->out_rank[index];
    return rc;
}

int ANeuralNetworksExecution_getOutputOperandDimensions(ANeuralNetworksExecution *e, int32_t index, uint32_t *dims)
{
    int rc = output_arg(e, index, dims, __func__);
    if (rc) return rc;
    if (!e->out_rank[index]) return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "output %d is a scalar", (int)index);
    memcpy(dims, e->out_dims[index], e->out_rank[index] * sizeof *dims);
    return OK;
}
