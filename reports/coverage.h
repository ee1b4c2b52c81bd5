/*
 * coverage.h - op coverage per backend (`parity coverage`, docs/reports-junit-coverage.md): for every op of the
 * op table and every dtype a graph of it computes in, whether the backend claims it, how many cases of the report
 * (or of a selection) reach it, and how many of those passed. This module only tabulates: the claims are probed by
 * runner/coverage_probe.h (in child processes, through the runner) and written into the table; the cases and passes
 * come from a par_report's records or from a list of selected cases. It must not run anything itself.
 */
#ifndef PAR_COVERAGE_H
#define PAR_COVERAGE_H

#include "core/ops.h"
#include "report.h"

#include <stdio.h>

/* The dtypes tabulated: par_dtype values (a graph's compute dtype, par_graph_compute_dtype), up to the last one the ABI
 * names. */
#define PAR_COV_DTYPES (PAR_DTYPE_QS16 + 1)

typedef struct par_cov_cell {
    int32_t probes;          /* representative graphs of this op and dtype run on the backend */
    int32_t claims;          /* of them, the graphs the backend did not answer UNSUPPORTED */
    char why_not[160];       /* the first UNSUPPORTED reason (one line), "" when none */
    int64_t cases;           /* cases of this op and dtype that ran on the backend (or were selected) */
    int64_t passed;          /* of them, PASS records (counted only when passes are known) */
} par_cov_cell;

typedef struct par_coverage {
    int32_t n_backends;
    char (*labels)[128];
    par_cov_cell *cells;     /* [(backend * PAR_OP_COUNT + op) * PAR_COV_DTYPES + dtype] */
    int passes_known;        /* 1: cases and passes from a report's records; 0: cases from a selection only */
    char source[512];        /* the report's path, or a description of the selection */
} par_coverage;

/* Allocate the table for n backends labelled labels[i]. PAR_OK, or PAR_ERROR (out of memory) with msg. */
par_status par_coverage_init(par_coverage *cov, int32_t n, const char *const *labels, par_msg *msg);
void par_coverage_free(par_coverage *cov);

par_cov_cell *par_coverage_cell(const par_coverage *cov, int32_t b, par_op_id op, par_dtype dt);

/* The dtype named name ("f32", "qu8", ...), PAR_DTYPE_INVALID when none. */
par_dtype par_coverage_dtype(const char *name);

/* Count the report's records into the table: a record that ran on a backend of the table (matched by label) counts
 * as a case of every op in its case's ops, in the case's dtype, and as passed when PASS. Sets passes_known. */
void par_coverage_add_report(par_coverage *cov, const par_report *r);

/* Count one selected case (ops comma-separated, its compute dtype) for every backend, without pass information. */
void par_coverage_add_case(par_coverage *cov, const char *ops, par_dtype dt);

/* The terminal table of every backend: the ops no case reaches first, then the claimed combinations without a case,
 * then the rest. */
void par_coverage_print(FILE *f, const par_coverage *cov);

/* The table as JSON (schema "parity.coverage", version 1) written atomically to path. PAR_OK or PAR_ERROR with msg
 * naming the file and the reason. */
par_status par_coverage_write_json(const par_coverage *cov, const char *path, par_msg *msg);

#endif
