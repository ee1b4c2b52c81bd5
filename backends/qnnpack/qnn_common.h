/*
 * qnn_common.h - private to the qnnpack backend: the plan services (qnn_common.c) that the driver (qnnpack.c) and
 * the op lowerings (qnn_conv.c, qnn_ops.c) share. The lowerings include this header, never call into qnnpack.c.
 */
#ifndef QNN_COMMON_H
#define QNN_COMMON_H

#include "qnnpack.h"

/* Plan memory: zeroed, 64-byte aligned, freed at release. NULL on failure. */
void *par_qnn_alloc(qnn_plan *p, size_t bytes);
/* Append a step. PAR_ERROR on allocation failure. */
par_status par_qnn_add_step(qnn_plan *p, qnn_step_fn fn, const void *op, par_msg *msg);
/* The buffer of value v in `layout`, scheduling a conversion from the other layout when needed (a constant is
 * converted at once). NULL with msg set on failure. */
const uint8_t *par_qnn_need(qnn_plan *p, int32_t v, int layout, par_msg *msg);
/* The output buffer of value v in `layout` (allocated now). NULL on failure. */
uint8_t *par_qnn_produce(qnn_plan *p, int32_t v, int layout, par_msg *msg);
/* The layout a value is available in (QNN_NHWC preferred), or -1. */
int par_qnn_have(const qnn_plan *p, int32_t v);

/* After node ni is lowered: the buffers of the values it was the last reader of become free for reuse. */
void par_qnn_release_dead(qnn_plan *p, int32_t ni);

#endif /* QNN_COMMON_H */
