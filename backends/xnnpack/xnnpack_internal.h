/*
 * xnnpack_internal.h - the xnnpack backend's private interface: the execution plan that xnnpack.c builds at
 * prepare and walks at run, and the lowering of each parity op to operators of the system XNNPACK library
 * (xnnpack_lower.c) with the layout helpers (xnnpack_layout.c).
 *
 * The plan keeps every 4-D value in NHWC (XNNPACK's layout) and every other value in its logical row-major order.
 * Graph inputs are converted NCHW -> NHWC into the plan's own buffers at the start of run, graph outputs back at
 * the end; a value needed in the other layout inside the graph gets a converted copy (a conversion step). Every
 * buffer an XNNPACK operator reads is the plan's own, with XNN_EXTRA_BYTES of readable padding after it.
 *
 * Nothing here may read a graph through anything but the public ABI (parity_backend.h), and nothing may allocate
 * at run time.
 */
#ifndef PAR_XNNPACK_INTERNAL_H
#define PAR_XNNPACK_INTERNAL_H

#include <pthreadpool.h>
#include <xnnpack.h>

#include "parity_backend.h"

typedef enum xa_layout {
    XA_LOGICAL = 0, /* the logical row-major order (NCHW for 4-D values) */
    XA_NHWC = 1,    /* 4-D values only: channels innermost */
} xa_layout;

typedef enum xa_step_kind {
    XA_STEP_OP = 0,       /* run an XNNPACK operator (already set up) */
    XA_STEP_TO_NHWC = 1,  /* src [n][c][hw] -> dst [n][hw][c] */
    XA_STEP_TO_NCHW = 2,  /* src [n][hw][c] -> dst [n][c][hw] */
} xa_step_kind;

typedef struct xa_step {
    xa_step_kind kind;
    xnn_operator_t op;
    const float *src;
    float *dst;
    int64_t n, c, hw;
} xa_step;

typedef struct xa_plan {
    const par_graph_desc *g;
    pthreadpool_t pool;       /* NULL: single-threaded */
    float **buf;              /* per value: its buffer in lay[v], or NULL */
    xa_layout *lay;
    float **alt;              /* per value: a converted copy in the other layout, made on demand */
    int32_t *n_uses;          /* per value: how many node inputs read it */
    unsigned char *is_output; /* per value: a graph output */
    unsigned char *skip;      /* per node: folded into an earlier node (batch norm, clamp) */
    int32_t *final_out;       /* per node: the value its (fused) result lands in */
    int32_t *bn_of;           /* per node: the batch_norm node folded into this conv2d, or -1 */
    float *out_min, *out_max; /* per node: fused clamp */
    int64_t *cap, *alt_cap;   /* per value: capacity (elements) of buf[v] and alt[v] */
    int32_t *last_use;        /* per value: the last node that reads it */
    float **free_buf;         /* activation buffers free for reuse (liveness at prepare), with their capacities */
    int64_t *free_cap;
    int32_t n_free;
    xa_step *steps;
    int32_t n_steps, cap_steps;
    void **mem;
    int32_t n_mem, cap_mem;
    const void *const *inputs; /* bound */
    void *const *outputs;
} xa_plan;

/* xnnpack_layout.c */
float *par_xnn_alloc(xa_plan *p, int64_t numel);
par_status par_xnn_add_step(xa_plan *p, const xa_step *s, par_msg *msg);
void par_xnn_to_nhwc(const float *src, float *dst, int64_t n, int64_t c, int64_t hw);
void par_xnn_to_nchw(const float *src, float *dst, int64_t n, int64_t c, int64_t hw);
/* The buffer of value v in layout `want` (4-D values; others have one layout), converting when needed: a constant
 * is converted now, a computed value by a step placed before the consumer. NULL with msg on failure. */
const float *par_xnn_input(xa_plan *p, int32_t v, xa_layout want, par_msg *msg);
/* Value v (rank <= 4) viewed as 4-D with leading ones, in NHWC memory order: a broadcasting operand of an NHWC
 * elementwise op. */
const float *par_xnn_input_nhwc4(xa_plan *p, int32_t v, par_msg *msg);
/* Allocate the buffer of value v in layout lay. */
float *par_xnn_output(xa_plan *p, int32_t v, xa_layout lay, par_msg *msg);
/* After node ni is lowered: its inputs read for the last time give their buffers back for reuse. */
void par_xnn_release_inputs(xa_plan *p, int32_t ni);
/* Physical dims of a value in a layout: NHWC permutes a 4-D shape to [N, H, W, C]. */
void par_xnn_phys_dims(const par_value *v, xa_layout lay, size_t *dims);
/* The physical axis of logical axis a in layout lay. */
int32_t par_xnn_phys_axis(const par_value *v, xa_layout lay, int32_t a);
const char *par_xnn_status_name(enum xnn_status s);

/* xnnpack_lower.c */
/* Can XNNPACK (through this adapter) run node n? PAR_OK or PAR_UNSUPPORTED with the precise reason. */
par_status par_xnn_check(const par_graph_desc *g, const par_node *n, par_msg *msg);
/* Plan the fusions (conv2d + batch_norm, producer + clamp) into p->skip, final_out, bn_of, out_min/out_max. */
void par_xnn_plan_fusions(xa_plan *p);
/* Create and set up the operators of node index ni, appending their steps. */
par_status par_xnn_lower(xa_plan *p, int32_t ni, par_msg *msg);

#endif
