/*
 * oracle.h - compares a backend's outputs with the reference's values and error budgets (docs/oracle.md).
 * An element passes when |backend - reference| <= budget. NaN/Inf policy: a NaN or Inf where the reference is
 * finite fails; a reference Inf must be matched with the same sign; a reference NaN must be matched by a NaN.
 */
#ifndef PAR_ORACLE_H
#define PAR_ORACLE_H

#include "reference/reference.h"
#include "core/result.h"

/* Compare one output buffer (dtype of ref->dtype) against its reference tensor. m is reset and filled. Returns the
 * number of failing elements (over budget or non-finite), plus 1 when an integer output's bias exceeds its bound
 * (docs/quantization.md: ql - e <= got <= qh + e per element, |mean signed difference| <= bias_bound). */
int64_t par_oracle_compare(const par_rt *ref, const void *got, par_metrics *m);

/* Fold an output's metrics into a case's (worst over outputs; counts summed). output: its index. */
void par_metrics_merge(par_metrics *acc, const par_metrics *m, int32_t output);
void par_metrics_init(par_metrics *m);

/* The precision profile of a backend instance, from the answers its probe recorded (par_exec_probe: its arithmetic,
 * its requantization scheme, PAR_PROC_REQUANT, fp32 when absent, and its strict promise, PAR_PROC_REQUANT_EXACT).
 * The runner and the bench both judge through it, so a backend is checked the same way by either, and nothing
 * starts the backend again to ask. Values out of range read as the defaults (f32, fp32, not strict). */
par_prec par_prec_of_backend(const par_backend_inst *inst);

#endif
