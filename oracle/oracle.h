/*
 * oracle.h - compares a backend's outputs with the reference's values and error budgets (docs/oracle.md).
 * An element passes when |backend - reference| <= budget. NaN/Inf policy: a NaN or Inf where the reference is
 * finite fails; a reference Inf must be matched with the same sign; a reference NaN must be matched by a NaN.
 */
#ifndef PAR_ORACLE_H
#define PAR_ORACLE_H

#include "reference/reference.h"
#include "core/case.h"
#include "core/result.h"

/* Compare one output buffer (dtype of ref->dtype) against its reference tensor. m is reset and filled. Returns the
 * number of failing elements (over budget or non-finite), plus 1 when an integer output's bias exceeds its bound
 * (docs/quantization.md: ql - e <= got <= qh + e per element, |mean signed difference| <= bias_bound). */
int64_t par_oracle_compare(const par_rt *ref, const void *got, par_metrics *m);
/* The same, with the output's ideal values (ideal: NULL, or the same tensor from the reference run in exact
 * arithmetic, par_prec_ideal): an "anything" element (value NaN, budget +Inf: docs/oracle.md, "NaN and Inf policy")
 * passes unjudged as before, but where its ideal value is finite and the backend's is finite, the difference enters
 * the metrics (max_abs, max_rel, max_ulp, nmse, bias), so that an unjudged output still shows what the backend did. */
int64_t par_oracle_compare_ideal(const par_rt *ref, const par_rt *ideal, const void *got, par_metrics *m);

/* The statistical companion of the element-wise rule over one float output (docs/oracle.md, "The statistical
 * companion"): stat is the same output from the reference run with par_prec.stat_scale (its scales t), ref the
 * judging reference (its values, budgets and flush parts). Over the elements the rule judged (finite value and
 * budget) whose backend value is finite and whose t is finite and above 0: z = max(0, |d| - f) / t, and m->stat_z
 * their root-mean-square, m->stat_n their count, m->stat_over whether stat_z exceeds PAR_STAT_BOUND; with no such
 * element, stat_z NaN and stat_skip PAR_STAT_SKIP_NONE. Nothing else of m changes. Returns m->stat_over. */
int par_oracle_companion(const par_rt *ref, const par_rt *stat, const void *got, par_metrics *m);

/* The bound on the largest stat_z of k outputs or node values of one case that holds the probability that a correct
 * backend exceeds it at any of them to PAR_STAT_BOUND's 3e-8 (docs/oracle.md, "The companion on every node"): by the
 * union bound over Markov's inequality for each, k sqrt(2) exp(-q / 4) = 3e-8, sqrt(q) = sqrt(4 ln(sqrt(2) k /
 * 3e-8)); PAR_STAT_BOUND for k <= 1. */
double par_stat_bound_of(int32_t k);

/* Whether the statistical companion applies to case c (quant: its graph has quantized values): PAR_STAT_APPLIED, or
 * why it stands down. It assumes independent mean-zero roundings, which quantized graphs (integer roundings and
 * their labels) and data from a constant, edge or hazard generator (all-equal values, ties, cancellation,
 * subnormals: roundings that repeat) do not give. */
par_stat_skip par_stat_applies(const par_case *c, int quant);

/* Where the unjudged elements of a reference come from (docs/oracle.md, "NaN and Inf policy"): the first node, in
 * graph order, with an output element whose budget is infinite at a value that is not a certain Inf: its name, op,
 * how many of its elements are "anything" (value NaN: an intermediate may overflow the arithmetic's range) or
 * unbounded (finite value: the budget's interval reaches the storage's overflow threshold or a point where the op
 * is unbounded; the kernel's own reason instead where it gave one, par_rt.why_unbounded), and the largest finite budget and value among its float inputs, which show how the budget grew
 * before it. Written into buf (n bytes) as a clause; returns 0 and writes "" when no node has one. */
int par_unjudged_origin(const par_graph_desc *g, const par_ref_result *ref, char *buf, size_t n);

/* Fold an output's metrics into a case's (worst over outputs; counts summed). output: its index. */
void par_metrics_merge(par_metrics *acc, const par_metrics *m, int32_t output);
void par_metrics_init(par_metrics *m);

/* The precision profile of a backend instance, from the answers its probe recorded (par_exec_probe: its arithmetic,
 * its requantization scheme, PAR_PROC_REQUANT, fp32 when absent, and its strict promise, PAR_PROC_REQUANT_EXACT).
 * The runner and the bench both judge through it, so a backend is checked the same way by either, and nothing
 * starts the backend again to ask. Values out of range read as the defaults (f32, fp32, not strict). */
par_prec par_prec_of_backend(const par_backend_inst *inst);

#endif
