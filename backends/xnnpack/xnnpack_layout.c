/*
 * xnnpack_layout.c - memory and layouts of the xnnpack backend's plan: padded buffers (XNN_EXTRA_BYTES of readable
 * bytes after every buffer, since XNNPACK's micro-kernels may read past the last element), NCHW <-> NHWC
 * conversion, the physical view of a logical shape, the on-demand converted copies of values, and the reuse of
 * activation buffers once their last reader is lowered (as XNNPACK's own runtime plans memory; it keeps the working
 * set in cache).
 *
 * Buffers are sized in bytes from the value's dtype (f32 activations, qu8/qs8 activations of one byte), so that
 * float and quantized values share one pool. Conversions move elements only (bit-exact, 4-byte or 1-byte
 * elements); they are the adapter's own code, not XNNPACK's, and they are part of what the harness tests. Nothing
 * here runs XNNPACK operators or allocates at run time.
 */
#include <stdlib.h>

#include "xnnpack_internal.h"

static int track(xa_plan *p, void *ptr)
{
    if (p->n_mem == p->cap_mem) {
        int32_t cap = p->cap_mem ? 2 * p->cap_mem : 64;
        void **m = realloc(p->mem, (size_t)cap * sizeof *m);
        if (!m) return 0;
        p->mem = m;
        p->cap_mem = cap;
    }
    p->mem[p->n_mem++] = ptr;
    return 1;
}

/* 64-byte aligned (XNNPACK's own buffers are), zeroed, with XNN_EXTRA_BYTES readable after the last byte. */
void *par_xnn_alloc_bytes(xa_plan *p, int64_t nbytes)
{
    if (nbytes < 0 || nbytes > (INT64_C(1) << 42)) return NULL;
    size_t bytes = (size_t)nbytes + XNN_EXTRA_BYTES;
    bytes = (bytes + 63) & ~(size_t)63;
    void *f = aligned_alloc(64, bytes);
    if (!f) return NULL;
    memset(f, 0, bytes);
    if (!track(p, f)) {
        free(f);
        return NULL;
    }
    return f;
}

float *par_xnn_alloc(xa_plan *p, int64_t numel)
{
    if (numel < 0 || numel > (INT64_C(1) << 40)) return NULL;
    return par_xnn_alloc_bytes(p, numel * (int64_t)sizeof(float));
}

int64_t par_xnn_value_bytes(const par_value *v)
{
    return v->numel * (int64_t)par_dtype_size(v->dtype);
}

par_status par_xnn_add_step(xa_plan *p, const xa_step *s, par_msg *msg)
{
    if (p->n_steps == p->cap_steps) {
        int32_t cap = p->cap_steps ? 2 * p->cap_steps : 64;
        xa_step *st = realloc(p->steps, (size_t)cap * sizeof *st);
        if (!st) {
            if (s->op) xnn_delete_operator(s->op);
            return par_msgf(msg, PAR_ERROR, "prepare: out of memory for the step list");
        }
        p->steps = st;
        p->cap_steps = cap;
    }
    p->steps[p->n_steps] = *s;
    p->steps[p->n_steps++].node = p->cur_node;
    return PAR_OK;
}

/* Blocked over channels so that both sides stream through cache lines. */
#define TRANSPOSE(T, src_, dst_, to_nhwc)                                                                           \
    do {                                                                                                             \
        const T *s_ = (const T *)(src_);                                                                             \
        T *d_ = (T *)(dst_);                                                                                         \
        for (int64_t b = 0; b < n; b++, s_ += c * hw, d_ += c * hw)                                                  \
            for (int64_t c0 = 0; c0 < c; c0 += 16) {                                                                 \
                int64_t c1 = c0 + 16 < c ? c0 + 16 : c;                                                              \
                if (to_nhwc)                                                                                         \
                    for (int64_t i = 0; i < hw; i++)                                                                 \
                        for (int64_t ch = c0; ch < c1; ch++) d_[i * c + ch] = s_[ch * hw + i];                       \
                else                                                                                                 \
                    for (int64_t ch = c0; ch < c1; ch++)                                                             \
                        for (int64_t i = 0; i < hw; i++) d_[ch * hw + i] = s_[i * c + ch];                           \
            }                                                                                                        \
    } while (0)

void par_xnn_transpose(const void *src, void *dst, int64_t n, int64_t c, int64_t hw, size_t esize, int to_nhwc)
{
    if (esize == 1) TRANSPOSE(uint8_t, src, dst, to_nhwc);
    else if (esize == 2) TRANSPOSE(uint16_t, src, dst, to_nhwc);
    else TRANSPOSE(uint32_t, src, dst, to_nhwc);
}

void par_xnn_to_nhwc(const float *src, float *dst, int64_t n, int64_t c, int64_t hw)
{
    par_xnn_transpose(src, dst, n, c, hw, sizeof(float), 1);
}

void par_xnn_to_nchw(const float *src, float *dst, int64_t n, int64_t c, int64_t hw)
{
    par_xnn_transpose(src, dst, n, c, hw, sizeof(float), 0);
}

void par_xnn_phys_dims(const par_value *v, xa_layout lay, size_t *dims)
{
    for (int32_t i = 0; i < v->rank; i++) dims[i] = (size_t)v->dims[i];
    if (lay == XA_NHWC && v->rank == 4) {
        dims[1] = (size_t)v->dims[2];
        dims[2] = (size_t)v->dims[3];
        dims[3] = (size_t)v->dims[1];
    }
}

int32_t par_xnn_phys_axis(const par_value *v, xa_layout lay, int32_t a)
{
    if (a < 0) a += v->rank;
    if (lay != XA_NHWC || v->rank != 4) return a;
    static const int32_t pos[4] = {0, 3, 1, 2}; /* logical N C H W -> physical N H W C */
    return pos[a];
}

/* The logical data of a value: its buffer when it has one in XA_LOGICAL, or a padded copy of a constant. */
static const void *const_buffer(xa_plan *p, int32_t v, par_msg *msg)
{
    const par_value *val = &p->g->values[v];
    if (p->buf[v]) return p->buf[v];
    if (val->kind != PAR_VALUE_CONST || !val->data) {
        par_msgf(msg, PAR_ERROR, "prepare: value '%s' is read before it is computed", val->name);
        return NULL;
    }
    void *b = par_xnn_alloc_bytes(p, par_xnn_value_bytes(val));
    if (!b) {
        par_msgf(msg, PAR_ERROR, "prepare: out of memory for constant '%s'", val->name);
        return NULL;
    }
    memcpy(b, val->data, (size_t)par_xnn_value_bytes(val));
    p->buf[v] = b;
    p->lay[v] = XA_LOGICAL;
    return b;
}

/* An activation buffer of at least nbytes bytes: the smallest free one that fits, or a new one. */
static void *take(xa_plan *p, int64_t nbytes, int64_t *cap)
{
    int32_t best = -1;
    for (int32_t i = 0; i < p->n_free; i++)
        if (p->free_cap[i] >= nbytes && (best < 0 || p->free_cap[i] < p->free_cap[best])) best = i;
    if (best >= 0) {
        void *b = p->free_buf[best];
        *cap = p->free_cap[best];
        p->free_buf[best] = p->free_buf[p->n_free - 1];
        p->free_cap[best] = p->free_cap[p->n_free - 1];
        p->n_free--;
        return b;
    }
    *cap = nbytes;
    return par_xnn_alloc_bytes(p, nbytes);
}

static void give_back(xa_plan *p, void *b, int64_t cap)
{
    if (!b) return;
    p->free_buf[p->n_free] = b;
    p->free_cap[p->n_free++] = cap;
}

void par_xnn_release_inputs(xa_plan *p, int32_t ni)
{
    const par_node *n = &p->g->nodes[ni];
    for (int32_t i = 0; i < n->n_inputs; i++) {
        int32_t v = n->inputs[i];
        if (v < 0 || p->last_use[v] != ni || p->is_output[v] || p->g->values[v].kind == PAR_VALUE_CONST) continue;
        int dup = 0;
        for (int32_t k = 0; k < i; k++) dup |= n->inputs[k] == v;
        if (dup) continue;
        give_back(p, p->buf[v], p->cap[v]);
        give_back(p, p->alt[v], p->alt_cap[v]);
        p->alt[v] = NULL;
    }
}

static const void *converted(xa_plan *p, int32_t v, xa_layout want, int64_t n, int64_t c, int64_t hw,
                             par_msg *msg)
{
    const par_value *val = &p->g->values[v];
    if (p->alt[v]) return p->alt[v];
    const void *src = p->buf[v] ? p->buf[v] : const_buffer(p, v, msg);
    if (!src) return NULL;
    int64_t bytes = par_xnn_value_bytes(val);
    size_t es = par_dtype_size(val->dtype);
    void *dst = val->kind == PAR_VALUE_CONST ? par_xnn_alloc_bytes(p, bytes) : take(p, bytes, &p->alt_cap[v]);
    if (!dst) {
        par_msgf(msg, PAR_ERROR, "prepare: out of memory for a layout copy of '%s'", val->name);
        return NULL;
    }
    if (val->kind == PAR_VALUE_CONST) {
        par_xnn_transpose(src, dst, n, c, hw, es, want == XA_NHWC);
    } else {
        xa_step s = {.kind = want == XA_NHWC ? XA_STEP_TO_NHWC : XA_STEP_TO_NCHW, .src = src, .dst = dst,
                     .n = n, .c = c, .hw = hw, .esize = es};
        if (par_xnn_add_step(p, &s, msg) != PAR_OK) return NULL;
    }
    p->alt[v] = dst;
    return dst;
}

const void *par_xnn_input(xa_plan *p, int32_t v, xa_layout want, par_msg *msg)
{
    const par_value *val = &p->g->values[v];
    if (!p->buf[v] && !const_buffer(p, v, msg)) return NULL;
    if (val->rank != 4 || p->lay[v] == want) return p->buf[v];
    return converted(p, v, want, val->dims[0], val->dims[1], val->dims[2] * val->dims[3], msg);
}

const void *par_xnn_input_nhwc4(xa_plan *p, int32_t v, par_msg *msg)
{
    const par_value *val = &p->g->values[v];
    if (val->rank == 4) return par_xnn_input(p, v, XA_NHWC, msg);
    if (!p->buf[v] && !const_buffer(p, v, msg)) return NULL;
    int64_t d[4] = {1, 1, 1, 1};
    for (int32_t i = 0; i < val->rank; i++) d[4 - val->rank + i] = val->dims[i];
    /* [a, b, c, d] -> [a, c, d, b]: the same memory when b == 1 or c * d == 1 */
    if (d[1] == 1 || d[2] * d[3] == 1) return p->buf[v];
    return converted(p, v, XA_NHWC, d[0], d[1], d[2] * d[3], msg);
}

void *par_xnn_output(xa_plan *p, int32_t v, xa_layout lay, par_msg *msg)
{
    const par_value *val = &p->g->values[v];
    if (p->buf[v]) {
        par_msgf(msg, PAR_ERROR, "prepare: value '%s' is produced twice", val->name);
        return NULL;
    }
    void *b = take(p, par_xnn_value_bytes(val), &p->cap[v]);
    if (!b) {
        par_msgf(msg, PAR_ERROR, "prepare: out of memory for value '%s' (%lld elements)", val->name,
                 (long long)val->numel);
        return NULL;
    }
    p->buf[v] = b;
    p->lay[v] = val->rank == 4 ? lay : XA_LOGICAL;
    return b;
}

const char *par_xnn_status_name(enum xnn_status s)
{
    switch (s) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid_parameter";
    case xnn_status_invalid_state: return "invalid_state";
    case xnn_status_unsupported_parameter: return "unsupported_parameter";
    case xnn_status_unsupported_hardware: return "unsupported_hardware";
    case xnn_status_out_of_memory: return "out_of_memory";
    default: return "unknown status";
    }
}
