/*
 * qnn_common.c - the qnnpack backend's plan services, shared by the driver (qnnpack.c) and the op lowerings
 * (qnn_conv.c, qnn_ops.c): plan memory, the step list, activation buffers reused by liveness, and values in the
 * layout an op asks for (NCHW <-> NHWC conversion steps scheduled on demand).
 *
 * It must not call the driver or any op lowering: they call it. It allocates at prepare only; cvt_run (a step) only
 * reads and writes plan buffers.
 */
#include <stdlib.h>

#include "qnn_common.h"

/* ---------------------------------------------------------------------------------------------------------------
 * Plan memory and steps
 * ------------------------------------------------------------------------------------------------------------- */
void *par_qnn_alloc(qnn_plan *p, size_t bytes)
{
    if (p->n_allocs == p->cap_allocs) {
        int32_t cap = p->cap_allocs ? 2 * p->cap_allocs : 64;
        void **a = realloc(p->allocs, sizeof *a * (size_t)cap);
        if (!a) return NULL;
        p->allocs = a;
        p->cap_allocs = cap;
    }
    size_t sz = (bytes + 63) & ~(size_t)63;
    void *m = aligned_alloc(64, sz ? sz : 64);
    if (!m) return NULL;
    memset(m, 0, sz ? sz : 64);
    p->allocs[p->n_allocs++] = m;
    return m;
}

par_status par_qnn_add_step(qnn_plan *p, qnn_step_fn fn, const void *op, par_msg *msg)
{
    if (p->n_steps == p->cap_steps) {
        int32_t cap = p->cap_steps ? 2 * p->cap_steps : 32;
        qnn_step *s = realloc(p->steps, sizeof *s * (size_t)cap);
        if (!s) return par_msgf(msg, PAR_ERROR, "prepare: out of memory (steps)");
        p->steps = s;
        p->cap_steps = cap;
    }
    p->steps[p->n_steps++] = (qnn_step){fn, op};
    return PAR_OK;
}

/* Layout conversion of a rank-4 tensor [N, C, H, W]: NCHW <-> NHWC. */
typedef struct cvt_op {
    const uint8_t *src;
    uint8_t *dst;
    size_t n, c, hw;
    int to_nhwc;
} cvt_op;

static void cvt_run(const void *opv, qnn_plan *p)
{
    const cvt_op *o = opv;
    for (size_t b = 0; b < o->n; b++) {
        const uint8_t *s = o->src + b * o->c * o->hw;
        uint8_t *d = o->dst + b * o->c * o->hw;
        if (o->to_nhwc && o->c == 3 && p->uk->nhwc3) /* an image */
            p->uk->nhwc3(o->hw, s, d);
        else if (o->to_nhwc && o->c == 3)
            for (size_t i = 0; i < o->hw; i++) {
                d[3 * i] = s[i];
                d[3 * i + 1] = s[o->hw + i];
                d[3 * i + 2] = s[2 * o->hw + i];
            }
        else if (o->to_nhwc)
            for (size_t c = 0; c < o->c; c++)
                for (size_t i = 0; i < o->hw; i++) d[i * o->c + c] = s[c * o->hw + i];
        else
            for (size_t i = 0; i < o->hw; i++)
                for (size_t c = 0; c < o->c; c++) d[c * o->hw + i] = s[i * o->c + c];
    }
}

static int same_layouts(const qnn_tensor *t)
{
    return t->rank != 4 || t->dims[1] == 1 || t->dims[2] * t->dims[3] == 1;
}

/* An activation buffer of at least `bytes` (+ slack): the smallest free one that fits, else a new one. */
static uint8_t *buf_get(qnn_plan *p, size_t bytes)
{
    bytes += QNN_SLACK;
    int32_t best = -1;
    for (int32_t i = 0; i < p->n_bufs; i++)
        if (!p->bufs[i].busy && p->bufs[i].size >= bytes && (best < 0 || p->bufs[i].size < p->bufs[best].size))
            best = i;
    if (best >= 0) {
        p->bufs[best].busy = 1;
        return p->bufs[best].ptr;
    }
    if (p->n_bufs == p->cap_bufs) {
        int32_t cap = p->cap_bufs ? 2 * p->cap_bufs : 32;
        qnn_buf *b = realloc(p->bufs, sizeof *b * (size_t)cap);
        if (!b) return NULL;
        p->bufs = b;
        p->cap_bufs = cap;
    }
    uint8_t *m = par_qnn_alloc(p, bytes);
    if (!m) return NULL;
    p->bufs[p->n_bufs++] = (qnn_buf){m, bytes, 1};
    return m;
}

static void buf_put(qnn_plan *p, const uint8_t *ptr)
{
    for (int32_t i = 0; i < p->n_bufs; i++)
        if (p->bufs[i].ptr == ptr) p->bufs[i].busy = 0;
}

/* After node ni is lowered: the buffers of the values it was the last reader of become free. */
void par_qnn_release_dead(qnn_plan *p, int32_t ni)
{
    const par_node *n = &p->g->nodes[ni];
    for (int32_t k = 0; k < n->n_inputs; k++) {
        int32_t v = n->inputs[k];
        if (v < 0 || p->last_use[v] > ni) continue;
        qnn_tensor *t = &p->t[v];
        if (t->buf[0]) buf_put(p, t->buf[0]);
        if (t->buf[1] && t->buf[1] != t->buf[0]) buf_put(p, t->buf[1]);
        p->last_use[v] = INT32_MAX; /* released once */
    }
}

int par_qnn_have(const qnn_plan *p, int32_t v)
{
    if (p->t[v].buf[QNN_NHWC]) return QNN_NHWC;
    if (p->t[v].buf[QNN_LOGICAL]) return QNN_LOGICAL;
    return -1;
}

uint8_t *par_qnn_produce(qnn_plan *p, int32_t v, int layout, par_msg *msg)
{
    qnn_tensor *t = &p->t[v];
    uint8_t *b = p->g->values[v].kind == PAR_VALUE_CONST ? par_qnn_alloc(p, (size_t)t->numel + QNN_SLACK)
                                                         : buf_get(p, (size_t)t->numel);
    if (!b) {
        par_msgf(msg, PAR_ERROR, "prepare: out of memory (value '%s')", p->g->values[v].name);
        return NULL;
    }
    t->buf[0] = t->buf[1] = NULL;
    if (same_layouts(t)) t->buf[0] = t->buf[1] = b; /* one memory order serves both */
    else t->buf[layout] = b;
    return b;
}

const uint8_t *par_qnn_need(qnn_plan *p, int32_t v, int layout, par_msg *msg)
{
    qnn_tensor *t = &p->t[v];
    if (t->buf[layout]) return t->buf[layout];
    const uint8_t *src = t->buf[!layout];
    if (!src || t->rank != 4) {
        par_msgf(msg, PAR_ERROR, "prepare: value '%s' is not available in the layout its consumer needs",
                 p->g->values[v].name);
        return NULL;
    }
    uint8_t *dst = p->g->values[v].kind == PAR_VALUE_CONST ? par_qnn_alloc(p, (size_t)t->numel + QNN_SLACK)
                                                           : buf_get(p, (size_t)t->numel);
    cvt_op *o = par_qnn_alloc(p, sizeof *o);
    if (!dst || !o) {
        par_msgf(msg, PAR_ERROR, "prepare: out of memory (layout of '%s')", p->g->values[v].name);
        return NULL;
    }
    *o = (cvt_op){src, dst, (size_t)t->dims[0], (size_t)t->dims[1], (size_t)(t->dims[2] * t->dims[3]),
                  layout == QNN_NHWC};
    t->buf[layout] = dst;
    if (p->g->values[v].kind == PAR_VALUE_CONST) cvt_run(o, p);
    else if (par_qnn_add_step(p, cvt_run, o, msg) != PAR_OK) return NULL;
    return dst;
}

