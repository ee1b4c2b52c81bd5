/*
 * softmax.h - one row of softmax or log_softmax with its budget (softmax.c, the derivation at its top), shared with
 * the kernels that hold a softmax inside (sdpa, attention.c). Nothing outside reference/ may include it.
 */
#ifndef PAR_REF_SOFTMAX_H
#define PAR_REF_SOFTMAX_H

#include "reference.h"

/* The len elements x[j * inner] (values xv, budgets xe, scales xs and flush parts xf, each NULL when absent) to
 * y[j * inner] (yv, ye) under pr's arithmetic; log_form: log_softmax. An exact -inf input (budget 0) is an exact 0
 * term (a masked position). */
void par_softmax_row(const par_prec *pr, int log_form, const double *xv, const double *xe, const double *xs,
                     const double *xf, int64_t len, int64_t inner, double *yv, double *ye);

#endif
