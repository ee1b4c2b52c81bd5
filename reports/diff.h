/*
 * diff.h - two reports compared (BASE, an earlier run; NEW, this one) and a gate for CI: PASS, WARN or FAIL.
 *
 * Records are matched by (case ID, backend label). The diff lists new failures, fixed failures, every other verdict
 * change, cases and backends present on one side only, accuracy drift (metrics.max_ratio, error / budget, moved by
 * a factor) and latency changes judged by a significance test on the per-run samples (timing.samples_ms) with the
 * Holm correction over the records judged, together with an effect threshold on the ratio of medians; where both
 * records carry the device's own times (timing.device, PAR_PROC_DEVICE_TIME), those are judged the same way, as
 * latency items of their own (device = 1), in the same Holm family.
 * docs/reports-diff.md explains each choice and its default.
 *
 * The gate: FAIL on a new failure or a latency regression (significant, and both the ratio of medians and the ratio
 * of the fastest runs at least 1 + latency_fail);
 * WARN on a verdict change, lost coverage (a passing record, case or backend gone, PASS -> UNSUPPORTED), accuracy
 * drift for the worse, or a smaller significant slowdown (at least 1 + latency_warn); PASS otherwise.
 */
#ifndef PAR_DIFF_H
#define PAR_DIFF_H

#include <stdio.h>

#include "report.h"

typedef enum par_gate { PAR_GATE_PASS = 0, PAR_GATE_WARN = 1, PAR_GATE_FAIL = 2 } par_gate;

const char *par_gate_name(par_gate g); /* "PASS", "WARN", "FAIL" */

typedef struct par_diff_opts {
    double latency_warn;     /* WARN when significantly slower by at least this fraction (0.05) */
    double latency_fail;     /* FAIL when significantly slower by at least this fraction (0.15) */
    double alpha;            /* family-wise error rate of the latency tests, after Holm (0.01) */
    int32_t min_samples;     /* a record's latency is judged only with at least this many samples on both sides (5) */
    double latency_floor_ms; /* nor when both medians are below this (0.01 ms) */
    double drift_factor;     /* accuracy drift: error / budget moved by at least this factor (4) */
    double drift_floor;      /* ... and the larger of the two ratios is at least this (0.01) */
} par_diff_opts;

void par_diff_opts_default(par_diff_opts *o);

/* What an item says, in the order items are listed (worst first): the gate of each kind is par_diff_kind_gate. */
typedef enum par_diff_kind {
    PAR_DIFF_NEW_FAILURE = 0,   /* PASS or UNSUPPORTED (or absent) in BASE, failing in NEW: FAIL */
    PAR_DIFF_LATENCY_FAIL,      /* significantly slower, ratio of medians >= 1 + latency_fail: FAIL */
    PAR_DIFF_CHANGED,           /* failing in both with another verdict, failing -> UNSUPPORTED or not run: WARN */
    PAR_DIFF_COVERAGE_LOST,     /* PASS -> UNSUPPORTED, or a passing record not run in NEW: WARN */
    PAR_DIFF_CASE_GONE,         /* a case of BASE absent from NEW: WARN */
    PAR_DIFF_BACKEND_GONE,      /* a backend of BASE absent from NEW: WARN */
    PAR_DIFF_DRIFT_WORSE,       /* error / budget grew by drift_factor or more: WARN */
    PAR_DIFF_LATENCY_WARN,      /* significantly slower, ratio >= 1 + latency_warn: WARN */
    PAR_DIFF_LATENCY_UNCONFIRMED, /* a latency regression that a second timing did not show (par_diff_confirm): WARN */
    PAR_DIFF_FIXED,             /* failing in BASE, PASS in NEW */
    PAR_DIFF_COVERAGE_GAINED,   /* UNSUPPORTED in BASE, PASS in NEW */
    PAR_DIFF_DRIFT_BETTER,      /* error / budget shrank by drift_factor or more */
    PAR_DIFF_FASTER,            /* significantly faster, ratio <= 1 / (1 + latency_warn) */
    PAR_DIFF_CASE_ADDED,        /* a case of NEW absent from BASE */
    PAR_DIFF_BACKEND_ADDED,     /* a backend of NEW absent from BASE */
    PAR_DIFF_KIND_COUNT
} par_diff_kind;

const char *par_diff_kind_name(par_diff_kind k); /* "new failure", "latency regression", ... */
par_gate par_diff_kind_gate(par_diff_kind k);

typedef struct par_diff_item {
    par_diff_kind kind;
    int32_t c, b;                /* case and backend in NEW, -1 when absent there */
    char case_id[PAR_ID_LEN];    /* "" for a backend item */
    char backend[128];           /* "" for a case item */
    int32_t v_base, v_new;       /* verdicts (par_verdict), -1 when the record is absent on that side */
    char reason[PAR_REASON_LEN]; /* NEW's reason (BASE's for a fixed failure or a record gone) */
    double ratio_base, ratio_new; /* metrics.max_ratio (drift items) */
    double med_base, med_new;    /* median run time, ms (latency items) */
    double min_base, min_new;    /* the fastest run, ms (latency items) */
    int32_t n_base, n_new;       /* samples */
    double p, p_adj;             /* one-sided Mann-Whitney p-value, and Holm-adjusted */
    double effect;               /* new / base: the ratio of medians (latency) or of error / budget (drift) */
    double confirm_effect;       /* latency regressions after par_diff_confirm: the second timing's ratio of
                                  * medians when it showed a significant change, NaN when it showed none or none ran */
    char repro[1024];            /* the record's repro command on NEW, "" when not in NEW */
    int32_t device;              /* latency items: 1 when judged on the device's own times (timing.device samples,
                                  * PAR_PROC_DEVICE_TIME) rather than the wall times */
} par_diff_item;

typedef struct par_diff {
    par_diff_opts opts;
    par_gate gate;
    int64_t counts[PAR_DIFF_KIND_COUNT];
    int32_t n_items;
    par_diff_item *items;        /* worst first */
    int64_t records_base, records_new, records_both; /* records that ran */
    int64_t latency_judged;      /* records in both with >= min_samples samples on each side, above the floor */
    int64_t latency_few;         /* records in both with samples, but fewer than min_samples on a side */
    int64_t latency_below_floor; /* judged out: both medians below latency_floor_ms */
    int64_t device_judged;       /* records whose device times were judged too (counted in latency_judged as well) */
    int64_t drift_compared;      /* records compared by the oracle on both sides (metrics present) */
    int base_interrupted, new_interrupted;
    int seeds_differ;            /* the runs' seeds differ: a case whose ID fixes no seed had other inputs */
    int machines_differ;         /* the environments name different CPU models (latency compares machines) */
    char cpu_base[128], cpu_new[128];
} par_diff;

/* Compare base and cur (o NULL: the defaults). Returns PAR_OK and *out (free with par_diff_free), or PAR_ERROR with
 * msg (bad options, out of memory). */
par_status par_diff_compute(const par_report *base, const par_report *cur, const par_diff_opts *o, par_diff **out,
                            par_msg *msg);

par_gate par_diff_gate(const par_diff *d);

/* A second opinion on the latency regressions of d: again is the diff of the same BASE against a second timing of
 * (at least) d's regressed records, made in fresh processes after the first (`parity run --baseline` does this). A
 * regression stays one only when again has it too (the same case and backend, again a latency regression); the
 * others become PAR_DIFF_LATENCY_UNCONFIRMED (WARN), and the counts and the gate follow. Returns how many stayed. */
int64_t par_diff_confirm(par_diff *d, const par_diff *again);

/* The summary (the gate, the counts per kind, what latency judged), then the items worst first with their repro
 * commands, at most max_items (< 0: all; the rest are counted). Texts from reports are printed with control
 * characters escaped, so each item stays on its lines. */
void par_diff_print(FILE *f, const par_diff *d, int color, int32_t max_items);

/* The diff as a self-contained HTML page, written atomically (reports/diff_html.c). */
par_status par_diff_write_html(const par_diff *d, const char *path, par_msg *msg);

void par_diff_free(par_diff *d);

#endif
