/*
 * report_read_record.c - the report reader's records ("results"): verdict, reason, metrics (with the integer
 * oracle's labels and ties), the worst element, timing (its samples, the device's time), declared algorithms and
 * schemes, the backend's output, the count of diagnostics. Each record is checked against the cases and backends
 * already read: an unknown case or backend, or a second record of one (case, backend), is an error naming the record.
 */
#include "report_read_int.h"

#include "core/requant.h"
#include "oracle/oracle.h"           /* par_metrics_init */
#include "reference/conv_winograd.h" /* par_algo_name */

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------------------
 * Records
 * ------------------------------------------------------------------------------------------------------------- */

/* The metrics of a record: every count at most the elements compared (n), each row's type and range said once. */
static const rr_spec metrics_fields[] = {
    F_I64(par_metrics, n, "n", 0, 0, RR_COUNT_MAX),
    F_I64_LE(par_metrics, n_over, "n_over", 0, 0),
    F_I64_LE(par_metrics, n_nonfinite, "n_nonfinite", 0, 0),
    F_I64_LE(par_metrics, n_unbounded, "n_unbounded", 1, 0),
    F_NUM(par_metrics, max_abs, "max_abs", 0, RR_NUM),
    F_NUM(par_metrics, max_rel, "max_rel", 0, RR_NUM),
    F_NUM(par_metrics, max_ulp, "max_ulp", 0, RR_NUM),
    F_NUM(par_metrics, nmse, "nmse", 0, RR_NUM),
    F_NUM(par_metrics, sqnr_db, "sqnr_db", 1, RR_NUM),
    F_NUM(par_metrics, sqnr_pred_db, "sqnr_pred_db", 1, RR_NUM),
    F_NUM(par_metrics, bias, "bias", 0, RR_NUM),
    F_NUM(par_metrics, max_ratio, "max_ratio", 0, RR_NUM),
    F_NUM(par_metrics, stat_z, "stat_z", 1, RR_NUM),
    F_I64_LE(par_metrics, stat_n, "stat_n", 1, 0),
    F_BOOL(par_metrics, stat_over, "stat_over", 1),
    F_I32(par_metrics, stat_skip, "stat_skip", 1, 0, PAR_STAT_SKIP_N - 1),
};

/* metrics.quant (the integer oracle's labels), after metrics_fields: its counts within the record's n. */
static const rr_spec quant_fields[] = {
    F_BOUND(par_metrics, n, "metrics.n"), /* row 0: read by metrics_fields */
    F_I64_LE(par_metrics, n_exact, "n_exact", 0, 0),
    F_I64_LE(par_metrics, n_labelled, "n_labelled", 0, 0),
    F_NUM(par_metrics, bias_bound, "bias_bound", 1, RR_NUM0),
    F_BOOL(par_metrics, bias_over, "bias_over", 1),
};

static const rr_spec ties_fields[] = {
    F_BOUND(par_metrics, n, "metrics.n"), /* row 0: read by metrics_fields */
    F_I64_LE(par_metrics, tie_n, "n", 0, 0),
    F_I64_LE(par_metrics, tie_other, "other", 0, 1),
    F_BOOL(par_metrics, tie_over, "contradicts", 1),
};

/* metrics.node_companion (the companion on every node's value); first_over and z_first null when no value is over
 * the bound. */
static const rr_spec node_companion_fields[] = {
    F_I32(par_metrics, node_k, "k", 0, 1, INT32_MAX),
    F_NUM(par_metrics, node_bound, "bound", 0, RR_NUM),
    F_NUM(par_metrics, node_z, "z_max", 0, RR_NUM),
    F_LINE(par_metrics, node_at, "node_max", 0),
    F_LINE(par_metrics, node_first, "first_over", 1),
    F_NUM(par_metrics, node_first_z, "z_first", 1, RR_NUM),
};

/* The worst element's scalars (its coordinates, shape and error map are read by hand after them). */
static const rr_spec worst_fields[] = {
    F_I32(par_metrics, worst_output, "output", 0, 0, INT32_MAX),
    F_I64(par_metrics, worst_index, "index", 0, 0, RR_COUNT_MAX - 1),
    F_NUM(par_metrics, worst_ref, "reference", 0, RR_NUM),
    F_NUM(par_metrics, worst_got, "backend", 0, RR_NUM),
    F_NUM(par_metrics, worst_budget, "budget", 0, RR_NUM),
};

static void read_quant(rd *x, json_object *q, const char *w, par_metrics *m)
{
    static const char *const keys[PAR_HIST_BINS] = {"<=-3", "-2", "-1", "0", "+1", "+2", ">=+3"};
    m->quant = 1;
    RR_FIELDS(x, q, w, quant_fields, m);
    json_object *h = rr_obj(x, q, w, "step_histogram", 0);
    char wh[96];
    snprintf(wh, sizeof wh, "%s.step_histogram", w);
    for (int k = 0; h && k < PAR_HIST_BINS; k++) rr_i64(x, h, wh, keys[k], 0, 0, m->n, 0, &m->hist[k]);
}

static void read_ties(rd *x, json_object *t, const char *w, par_metrics *m)
{
    RR_FIELDS(x, t, w, ties_fields, m);
    for (int k = 0; k < PAR_TIE_RULES; k++)
        rr_i64(x, t, w, par_tie_rule_name((par_tie_rule)k), 0, 0, m->tie_n, 0, &m->tie_rule_n[k]);
    const char *decl;
    rr_str(x, t, w, "declared", 1, &decl);
    m->tie_declared = -1;
    for (int k = 0; decl && k < PAR_TIE_RULES; k++)
        if (!strcmp(decl, par_tie_rule_name((par_tie_rule)k))) m->tie_declared = k;
    if (decl && m->tie_declared < 0) rr_fail(x, w, "declared", "\"%s\" is not a tie rule", decl);
}

static void read_metrics(rd *x, json_object *o, const char *w, par_metrics *m)
{
    RR_FIELDS(x, o, w, metrics_fields, m);
    if (isnan(m->max_ratio) && rr_bool(x, o, w, "max_ratio_infinite", 1, 0)) m->max_ratio = INFINITY;
    char ws[96];
    json_object *q = rr_obj(x, o, w, "quant", 1), *t = rr_obj(x, o, w, "ties", 1);
    json_object *nc = rr_obj(x, o, w, "node_companion", 1);
    snprintf(ws, sizeof ws, "%s.quant", w);
    if (q) read_quant(x, q, ws, m);
    snprintf(ws, sizeof ws, "%s.ties", w);
    if (t) read_ties(x, t, ws, m);
    snprintf(ws, sizeof ws, "%s.node_companion", w);
    if (nc && !x->bad) {
        RR_FIELDS(x, nc, ws, node_companion_fields, m);
        if (!x->bad && !(m->node_bound > 0)) rr_fail(x, ws, "bound", "is %g, expected a positive number", m->node_bound);
        if (!x->bad && m->node_first[0] && isnan(m->node_first_z))
            rr_fail(x, ws, "z_first", "is null while first_over names node '%s'", m->node_first);
    }
}

/* An array of at most max integers in [0, RR_COUNT_MAX] (coordinates, dimensions) into out; returns its length. */
static size_t read_ints(rd *x, json_object *o, const char *w, const char *key, int opt, size_t max, int64_t *out)
{
    json_object *a = rr_arr(x, o, w, key, opt);
    size_t n = a ? json_object_array_length(a) : 0;
    if (n > max) rr_fail(x, w, key, "%zu elements, more than %zu", n, max);
    for (size_t i = 0; i < n && !x->bad; i++) {
        char k[48];
        snprintf(k, sizeof k, "%s[%zu]", key, i);
        json_object *e = json_object_array_get_idx(a, i);
        if (!e) rr_fail(x, w, k, "is null, expected an integer");
        else rr_int_of(x, e, w, k, 0, RR_COUNT_MAX, &out[i]);
    }
    return x->bad ? 0 : n;
}

static void read_error_map(rd *x, json_object *em, const char *we, par_metrics *m)
{
    int32_t rows = 0, cols = 0;
    const char *cells = NULL;
    rr_i32(x, em, we, "rows", 0, 1, PAR_EMAP_MAX, 0, &rows);
    rr_i32(x, em, we, "cols", 0, 1, PAR_EMAP_MAX, 0, &cols);
    rr_str(x, em, we, "cells", 0, &cells);
    if (!x->bad && (!cells || strlen(cells) != (size_t)(2 * rows * cols)))
        rr_fail(x, we, "cells", "%zu hex digits, expected %d (2 per cell of %d x %d)", cells ? strlen(cells) : 0,
                2 * rows * cols, (int)rows, (int)cols);
    for (int32_t k = 0; k < rows * cols && !x->bad; k++) {
        unsigned v;
        char two[3] = {cells[2 * k], cells[2 * k + 1], 0};
        if (!isxdigit((unsigned char)two[0]) || !isxdigit((unsigned char)two[1]) || sscanf(two, "%2x", &v) != 1)
            rr_fail(x, we, "cells", "cell %d is not two hex digits", (int)k);
        else m->emap[k] = (uint8_t)v;
    }
    if (!x->bad) {
        m->emap_rows = rows;
        m->emap_cols = cols;
    }
}

static void read_worst(rd *x, json_object *o, const char *w, par_metrics *m)
{
    RR_FIELDS(x, o, w, worst_fields, m);
    size_t n = read_ints(x, o, w, "coords", 0, PAR_MAX_RANK, m->worst_coords);
    m->worst_rank = (int32_t)n;
    const char *cls;
    rr_str(x, o, w, "backend_class", 1, &cls);
    if (cls && !strcmp(cls, "inf")) m->worst_got = INFINITY;
    /* added within version 1: the output's shape (as many dimensions as coords) and the error map; absent in
     * older reports. Every coordinate lies inside its dimension, and the flat index inside the shape. */
    int64_t dims[PAR_MAX_RANK] = {0};
    int has_shape = json_object_object_get_ex(o, "shape", NULL);
    size_t ns = read_ints(x, o, w, "shape", 1, PAR_MAX_RANK, dims);
    if (!x->bad && has_shape && ns != n) rr_fail(x, w, "shape", "%zu dimensions, but %zu coordinates", ns, n);
    int64_t numel = 1;
    for (size_t i = 0; i < ns && !x->bad; i++) {
        char k[32];
        snprintf(k, sizeof k, "coords[%zu]", i);
        if (dims[i] > 0 && m->worst_coords[i] >= dims[i])
            rr_fail(x, w, k, "%lld is outside its dimension (shape[%zu] = %lld)", (long long)m->worst_coords[i], i,
                    (long long)dims[i]);
        else if (dims[i] > 0 && numel > RR_COUNT_MAX / dims[i])
            rr_fail(x, w, "shape", "more than 2^53 elements");
        numel *= dims[i];
        m->worst_dims[i] = dims[i];
    }
    if (!x->bad && ns && numel > 0 && m->worst_index >= numel)
        rr_fail(x, w, "index", "%lld is outside the shape's %lld elements", (long long)m->worst_index,
                (long long)numel);
    json_object *em = rr_obj(x, o, w, "error_map", 1);
    if (em && !x->bad) {
        char we[128];
        snprintf(we, sizeof we, "%s.error_map", w);
        read_error_map(x, em, we, m);
    }
}

static const rr_spec timing_fields[] = {
    F_I32(par_timing, runs, "runs", 0, 0, INT32_MAX),
    F_NUM(par_timing, prepare_ms, "prepare_ms", 0, RR_TIME),
    F_NUM(par_timing, run_median_ms, "run_median_ms", 1, RR_TIME),
    F_NUM(par_timing, run_p10_ms, "run_p10_ms", 1, RR_TIME),
    F_NUM(par_timing, run_p90_ms, "run_p90_ms", 1, RR_TIME),
    F_NUM(par_timing, run_min_ms, "run_min_ms", 1, RR_TIME),
};

/* timing.device (PAR_PROC_DEVICE_TIME): its runs are checked against timing.runs by hand. */
static const rr_spec device_fields[] = {
    F_NUM(par_timing, device_median_ms, "median_ms", 0, RR_TIME),
    F_NUM(par_timing, device_p10_ms, "p10_ms", 0, RR_TIME),
    F_NUM(par_timing, device_p90_ms, "p90_ms", 0, RR_TIME),
};

/* "samples_ms": at most min(runs, PAR_TIMING_SAMPLES) times (finite, >= 0) into out; returns how many. */
static int32_t read_samples(rd *x, json_object *o, const char *w, int32_t runs, double *out)
{
    json_object *s = rr_arr(x, o, w, "samples_ms", 1);
    size_t n = s ? json_object_array_length(s) : 0;
    if (!x->bad && (n > PAR_TIMING_SAMPLES || (int64_t)n > runs))
        rr_fail(x, w, "samples_ms", "%zu samples of %d runs (at most %d are kept)", n, (int)runs, PAR_TIMING_SAMPLES);
    for (size_t i = 0; i < n && !x->bad; i++) {
        char k[32];
        snprintf(k, sizeof k, "samples_ms[%zu]", i);
        json_object *e = json_object_array_get_idx(s, i);
        if (!e) rr_fail(x, w, k, "is null, expected a time");
        else rr_num_of(x, e, w, k, 1, &out[i]);
    }
    return x->bad ? 0 : (int32_t)n;
}

static void read_timing(rd *x, json_object *o, const char *w, par_timing *t)
{
    RR_FIELDS(x, o, w, timing_fields, t);
    t->n_samples = read_samples(x, o, w, t->runs, t->samples_ms);
    /* the device's time (PAR_PROC_DEVICE_TIME), absent when not measured */
    json_object *d = rr_obj(x, o, w, "device", 1);
    if (d && !x->bad) {
        char wd[96];
        snprintf(wd, sizeof wd, "%s.device", w);
        if (t->runs < 1) rr_fail(x, w, "device", "device times of a record without timed runs");
        rr_i32(x, d, wd, "runs", 0, 1, t->runs, 1, &t->device_n);
        RR_FIELDS(x, d, wd, device_fields, t);
        t->device_n_samples = read_samples(x, d, wd, t->device_n, t->device_samples_ms);
        if (x->bad) t->device_n = 0;
    }
}

/* "algorithms" / "node_schemes": {"count", "nodes": [{"node", "name", key}]} with value names looked up. */
static void read_decls(rd *x, json_object *o, const char *w, const char *key, int algos, int32_t *n_out,
                       par_result_decl *list)
{
    int64_t count;
    rr_i64(x, o, w, "count", 0, 0, INT32_MAX, 0, &count);
    *n_out = (int32_t)count;
    json_object *nodes = rr_arr(x, o, w, "nodes", 0);
    size_t n = nodes ? json_object_array_length(nodes) : 0;
    if ((int64_t)n > count || n > PAR_RESULT_ALGOS) rr_fail(x, w, "nodes", "%zu nodes listed for a count of %lld", n,
                                                          (long long)count);
    for (size_t i = 0; i < n && !x->bad; i++) {
        char wn[128];
        snprintf(wn, sizeof wn, "%s.nodes[%zu]", w, i);
        json_object *e = json_object_array_get_idx(nodes, i);
        if (!json_object_is_type(e, json_type_object)) {
            rr_fail(x, wn, NULL, "is %s, expected an object", par_json_type_name(e));
            break;
        }
        rr_i32(x, e, wn, "node", 0, 0, INT32_MAX, 0, &list[i].node);
        rr_buf(x, e, wn, "name", 1, list[i].node_name, sizeof list[i].node_name, 1);
        const char *v;
        rr_str(x, e, wn, key, 0, &v);
        list[i].value = -1;
        if (v && algos) {
            for (int32_t a = 1; a < PAR_ALGO_COUNT; a++)
                if (par_algo_name(a) && !strcmp(par_algo_name(a), v)) list[i].value = a;
        } else if (v) {
            par_requant s;
            if (par_requant_parse(v, &s) == 0) list[i].value = (int32_t)s;
        }
        if (v && list[i].value < 0) rr_fail(x, wn, key, "\"%s\" is not known to this build", v);
    }
}

/* A record's own fields after its verdict (metrics, worst, timing and declarations are objects of their own). */
static const rr_spec record_fields[] = {
    F_LINE(par_result, reason, "reason", 0),
    F_TEXT(par_result, output, "output", 1),
    F_I64(par_result, output_bytes, "output_bytes", 1, 0, INT64_MAX - 1),
    F_I64(par_result, output_dropped, "output_dropped", 1, 0, INT64_MAX - 1),
    F_I32(par_result, n_diagnostics, "diagnostics", 1, 0, INT32_MAX - 1),
    F_LINE(par_result, note, "note", 1),
};

static void read_record(rd *x, json_object *o, const char *w, const id_map *map)
{
    par_report_doc *d = x->d;
    char cid[PAR_ID_LEN], label[128];
    rr_key(x, o, w, "case", cid, sizeof cid);
    rr_key(x, o, w, "backend", label, sizeof label);
    if (x->bad) return;
    int32_t c = rr_map_find(map, d->cases, cid, -1), b = par_report_find_backend(&d->r, label);
    if (c < 0) return rr_fail(x, w, "case", "\"%s\" is not in cases", cid);
    if (b < 0) return rr_fail(x, w, "backend", "\"%s\" is not in backends", label);
    par_result *res = &d->results[(size_t)c * (size_t)d->r.n_backends + (size_t)b];
    if (res->done) return rr_fail(x, w, NULL, "a second record of case \"%s\" on backend %s", cid, label);
    par_metrics_init(&res->m);
    res->done = 1;
    snprintf(res->case_dtype, sizeof res->case_dtype, "%s", d->cases[c].dtype);
    const char *v;
    rr_str(x, o, w, "verdict", 0, &v);
    int found = 0;
    for (int k = 0; v && k < PAR_V_COUNT; k++)
        if (!strcmp(v, par_verdict_name((par_verdict)k))) res->verdict = (par_verdict)k, found = 1;
    if (v && !found) return rr_fail(x, w, "verdict", "\"%s\" is not a verdict", v);
    RR_FIELDS(x, o, w, record_fields, res);
    char ws[96];
    json_object *m = rr_obj(x, o, w, "metrics", 1), *wo = rr_obj(x, o, w, "worst", 1);
    snprintf(ws, sizeof ws, "%s.metrics", w);
    if (m) read_metrics(x, m, ws, &res->m);
    snprintf(ws, sizeof ws, "%s.worst", w);
    if (wo) read_worst(x, wo, ws, &res->m);
    json_object *t = rr_obj(x, o, w, "timing", 0);
    snprintf(ws, sizeof ws, "%s.timing", w);
    if (t) read_timing(x, t, ws, &res->t);
    json_object *al = rr_obj(x, o, w, "algorithms", 1), *ns = rr_obj(x, o, w, "node_schemes", 1);
    snprintf(ws, sizeof ws, "%s.algorithms", w);
    if (al) read_decls(x, al, ws, "algorithm", 1, &res->n_algos, res->algos);
    snprintf(ws, sizeof ws, "%s.node_schemes", w);
    if (ns) read_decls(x, ns, ws, "scheme", 0, &res->n_requants, res->requants);
    json_object *lo = rr_obj(x, o, w, "localization", 1);
    snprintf(ws, sizeof ws, "%s.localization", w);
    if (lo && !x->bad && !d->strips) {
        d->strips = calloc((size_t)d->r.n_cases * (size_t)d->r.n_backends, sizeof *d->strips);
        if (!d->strips) x->bad = x->oom = 1;
        d->r.strips = d->strips;
    }
    if (lo && !x->bad) rr_read_strip(x, lo, ws, &d->strips[(size_t)c * (size_t)d->r.n_backends + (size_t)b]);
}

void rr_read_results(rd *x, json_object *root, const id_map *map)
{
    par_report_doc *d = x->d;
    json_object *a = rr_arr(x, root, "", "results", 0);
    if (x->bad) return;
    size_t n = (size_t)d->r.n_cases * (size_t)d->r.n_backends;
    d->results = calloc(n ? n : 1, sizeof *d->results);
    if (!d->results) {
        x->bad = x->oom = 1;
        return;
    }
    for (size_t i = 0; i < json_object_array_length(a) && !x->bad; i++) {
        char w[32];
        snprintf(w, sizeof w, "results[%zu]", i);
        json_object *o = json_object_array_get_idx(a, i);
        if (!json_object_is_type(o, json_type_object)) rr_fail(x, w, NULL, "is %s, expected an object", par_json_type_name(o));
        else read_record(x, o, w, map);
    }
    d->r.results = d->results;
}
