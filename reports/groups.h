/*
 * groups.h - where to start reading a report with failures: per (op, backend) with failing records, the parameter
 * of the case IDs that best separates its failing cases from its passing ones, as a person would find by hand
 * ("conv2d on mine: 75 of 149 with s=[2,2] fail, 0 of 449 others"; then, when failures remain outside the
 * parameter, "conv2d on mine, without s=[2,2]: 121 of 150 with s=[1,2] fail, 0 of 2159 others"). One function for every renderer: the terminal
 * summary, `parity report --groups` and the HTML page.
 *
 * The features come from the IDs alone (sweep IDs spell their parameters: `conv2d(in=[1,3,8,8],...,s=[2,2])#seed=1`):
 * each `key=value` as written, and derived ones a person would think of: for the input's shape (the first value of 4
 * dimensions, NCHW), its channel count's residue ("input channels % 8 != 0", also 4 and 16) and whether it is 1; each
 * element of a pair ("s[1]=2": a stride of 2 in width only); and
 * "hazard inputs" for any `in=hazard:NAME`. A record counts when it was judged: PASS, or failing (FAIL, ERROR, CRASH, TIMEOUT, FLAKY);
 * UNSUPPORTED records are not cases the backend ran.
 */
#ifndef PAR_GROUPS_H
#define PAR_GROUPS_H

#include <stdio.h>

#include "report.h"

typedef struct par_group {
    char op[64];             /* the op of the cases: the ID up to its '(' (a model's ID as it is) */
    int32_t backend;         /* index into the report's backends */
    int64_t n_fail, n_judged; /* the op's cases on that backend: failing, judged */
    char feature[128];       /* the separating feature ("s=[2,2]", "input channels % 8 != 0", "hazard inputs"); "" when
                              * none separates (every judged case fails, or no feature is better than the op) */
    int32_t hazard;          /* 1: the feature is hazard inputs (the op computes; its NaN / Inf rules differ) */
    int64_t fail_in, n_in;   /* cases with the feature: failing, judged */
    int64_t fail_out, n_out; /* the others */
    int64_t first_case;      /* a failing case with the feature (index into the report's cases), for a repro */
    /* A second group of the same op and backend (rank 1) covers the failures its first group's feature left out:
     * its cases are those without that feature (within), and it is listed right after the first. */
    int32_t rank;            /* 0: the op and backend's first group; 1: the second */
    char within[128];        /* rank 1: the first group's feature, which its cases lack */
    int64_t lead_fail;       /* rank 1: the first group's n_fail (for the order) */
} par_group;

/* The groups of r, most failing cases first: one per (op, backend) with a failing record, and a second one when
 * failures remain outside the first's feature and another feature separates them. *out is malloc'ed (free it); *n
 * may be 0. Returns 0, or -1 when out of memory. */
int par_groups_compute(const par_report *r, par_group **out, int32_t *n);

/* One line in words: "conv2d on mine: 75 of 149 with s=[2,2] fail, 0 of 449 others", "add on xnnpack: 58 of 59
 * with hazard inputs fail (NaN / Inf / overflow), 0 of 40 others", "relu on mine: all 12 judged cases fail". */
void par_group_text(const par_report *r, const par_group *g, char *buf, size_t len);

/* Print the groups, at most max (-1: all), one line each with a leading indent; nothing when there are none. Returns
 * how many were printed. */
int32_t par_groups_print(FILE *f, const par_report *r, const par_group *g, int32_t n, int32_t max, const char *indent);

/* The parameters of a case ID: calls fn(user, key, value) for each `key=value` inside the outer parentheses, split
 * at commas outside brackets (the seed after '#' is not one). Returns how many; 0 for an ID without parentheses. */
int32_t par_id_params(const char *id, void (*fn)(void *user, const char *key, const char *value), void *user);

#endif
