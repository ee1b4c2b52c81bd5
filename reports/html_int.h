/*
 * html_int.h - what the parts of the HTML report share (html.c calls them; none calls back into html.c): the
 * records, the failures worst first, the charts (html_svg.c), the failure table (html_fail.c) and the environment
 * (html_env.c). Internal to reports/html*.c.
 */
#ifndef PAR_HTML_INT_H
#define PAR_HTML_INT_H

#include "html_out.h"
#include "report.h"

/* The record of (c, b), or NULL when it did not run (done == 0) or its verdict is out of range. */
const par_result *par_html_rec(const par_report *r, int32_t c, int32_t b);

/* The failure groups listed in "Where to start" at most. */
#define PAR_HTML_MAX_GROUPS 12

/* A not-passing record (verdict worse than UNSUPPORTED), ranked worst first. */
typedef struct par_html_fail {
    int32_t c, b;
    int rank;          /* par_verdict_severity */
    double ratio;      /* metrics.max_ratio, NaN counted as infinite */
} par_html_fail;

/* The not-passing records of r worst first (verdict badness, then max_ratio, infinite first, then case and
 * backend order). *out is malloc'ed (free it); returns their count, or -1 when out of memory. */
int64_t par_html_fails_collect(const par_report *r, par_html_fail **out);

/* Section "Failures, worst first": the first cap of fails (table id="failures", row i has id "f<i>"). */
void par_html_failures(FILE *f, const par_report *r, const par_html_fail *fails, int64_t n, int64_t cap);

/* Section "Error / budget": per backend the distribution of max_ratio of compared records on a log scale, and for
 * backends with quantized records the summed step-difference histogram. */
void par_html_error_charts(FILE *f, const par_report *r);

/* Section "Latency": model cases (origin under cases/models), or when none the n_slowest slowest cases. */
void par_html_latency(FILE *f, const par_report *r, int32_t n_slowest);

/* Section "Environment": machine, build, backends, configuration. */
void par_html_environment(FILE *f, const par_report *r);
/* A record's localization strip (html_strip.c): a sentence naming the first divergent node, then one bar per node;
 * nothing when s is NULL or not present. */
void par_html_strip(FILE *f, const par_node_strip *s);

/* The bins of the error/budget distribution (exposed for the tests' expectations in the docs): bin 0 exact 0, bins
 * 1 .. PAR_HTML_DECADES + 2 the decades (0, 1e-6], (1e-6, 1e-5], ..., (1e2, 1e3], (1e3, inf), then infinite or NaN. */
#define PAR_HTML_DEC_LO (-6)
#define PAR_HTML_DEC_HI 3
#define PAR_HTML_RATIO_BINS (PAR_HTML_DEC_HI - PAR_HTML_DEC_LO + 4)
int par_html_ratio_bin(double ratio);

#endif
