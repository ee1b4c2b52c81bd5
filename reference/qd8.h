/*
 * qd8.h - the reference of a linear layer on dynamic int8 activations (XNNPACK's qd8 rule, par_requant_qd8_qparams)
 * and constant integer weights with float scales per output channel or per output channel and block, f32 out:
 * linear_8da4w (int4 weights in blocks), linear_qd8 and matmul_qd8 (qs8 weights per channel or per tensor), each
 * quantizing x per row (token) or once for the whole tensor. The derivation of the value and of the budget is at the
 * top of qd8.c (docs/quantization.md, "Dynamic int8 activations"; docs/budgets/linear-dynamic.md).
 */
#ifndef PAR_REF_QD8_H
#define PAR_REF_QD8_H

#include "reference.h"

typedef struct par_qd8_gemm {
    int64_t o, k;       /* output channels, inputs */
    int64_t blk, nb;    /* block length and blocks per channel (per channel: blk = k, nb = 1) */
    const int8_t *w;    /* [o][k]: the integer weights, their zero point removed */
    const double *s;    /* [o][nb]: the float scales */
    const double *se;   /* [o][nb]: the scales' budgets (an input with a budget), or NULL */
    const par_rt *bias; /* [o] f32, or NULL */
    int per_tensor;     /* 1: one set of parameters for the whole of x; 0: one per row of x */
} par_qd8_gemm;

/* y [rows, o] from x [rows, k] (rows = x->numel / k): values, budgets and the scale-carrying budgets. Allocates
 * scratch only. PAR_ERROR on out of memory (msg names the node's op). */
par_status par_ref_qd8_gemm(const par_ref_ctx *c, const par_rt *x, const par_qd8_gemm *m, par_rt *y, par_msg *msg);

#endif
