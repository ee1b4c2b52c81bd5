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

static void read_quant(rd *x, json_object *q, const char *w, par_metrics *m)
{
    static const char *const keys[PAR_HIST_BINS] = {"<=-3", "-2", "-1", "0", "+1", "+2", ">=+3"};
    m->quant = 1;
    rr_i64(x, q, w, "n_exact", 0, 0, INT64_MAX, 0, &m->n_exact);
    rr_i64(x, q, w, "n_labelled", 0, 0, INT64_MAX, 0, &m->n_labelled);
    json_object *h = rr_obj(x, q, w, "step_histogram", 0);
    char wh[96];
    snprintf(wh, sizeof wh, "%s.step_histogram", w);
    for (int k = 0; h && k < PAR_HIST_BINS; k++) rr_i64(x, h, wh, keys[k], 0, 0, INT64_MAX, 0, &m->hist[k]);
    m->bias_bound = rr_num_or(x, q, w, "bias_bound", 1, 0);
    m->bias_over = rr_bool(x, q, w, "bias_over", 1, 0);
}

static void read_ties(rd *x, json_object *t, const char *w, par_metrics *m)
{
    rr_i64(x, t, w, "n", 0, 0, INT64_MAX, 0, &m->tie_n);
    for (int k = 0; k < PAR_TIE_RULES; k++)
        rr_i64(x, t, w, par_tie_rule_name((par_tie_rule)k), 0, 0, m->tie_n, 0, &m->tie_rule_n[k]);
    rr_i64(x, t, w, "other", 0, 0, m->tie_n, 0, &m->tie_other);
    const char *decl;
    rr_str(x, t, w, "declared", 1, &decl);
    m->tie_declared = -1;
    for (int k = 0; decl && k < PAR_TIE_RULES; k++)
        if (!strcmp(decl, par_tie_rule_name((par_tie_rule)k))) m->tie_declared = k;
    if (decl && m->tie_declared < 0) rr_fail(x, w, "declared", "\"%s\" is not a tie rule", decl);
    m->tie_over = rr_bool(x, t, w, "contradicts", 1, 0);
}

static void read_metrics(rd *x, json_object *o, const char *w, par_metrics *m)
{
    rr_i64(x, o, w, "n", 0, 0, INT64_MAX, 0, &m->n);
    rr_i64(x, o, w, "n_over", 0, 0, INT64_MAX, 0, &m->n_over);
    rr_i64(x, o, w, "n_nonfinite", 0, 0, INT64_MAX, 0, &m->n_nonfinite);
    rr_i64(x, o, w, "n_unbounded", 1, 0, INT64_MAX, 0, &m->n_unbounded);
    rr_num(x, o, w, "max_abs", 0, &m->max_abs);
    rr_num(x, o, w, "max_rel", 0, &m->max_rel);
    rr_num(x, o, w, "max_ulp", 0, &m->max_ulp);
    rr_num(x, o, w, "nmse", 0, &m->nmse);
    rr_num(x, o, w, "bias", 0, &m->bias);
    rr_num(x, o, w, "max_ratio", 0, &m->max_ratio);
    if (isnan(m->max_ratio) && rr_bool(x, o, w, "max_ratio_infinite", 1, 0)) m->max_ratio = INFINITY;
    char ws[96];
    json_object *q = rr_obj(x, o, w, "quant", 1), *t = rr_obj(x, o, w, "ties", 1);
    snprintf(ws, sizeof ws, "%s.quant", w);
    if (q) read_quant(x, q, ws, m);
    snprintf(ws, sizeof ws, "%s.ties", w);
    if (t) read_ties(x, t, ws, m);
}

static void read_worst(rd *x, json_object *o, const char *w, par_metrics *m)
{
    rr_i32(x, o, w, "output", 0, 0, INT32_MAX, 0, &m->worst_output);
    rr_i64(x, o, w, "index", 0, 0, INT64_MAX, -1, &m->worst_index);
    json_object *c = rr_arr(x, o, w, "coords", 0);
    size_t n = c ? json_object_array_length(c) : 0;
    if (n > PAR_MAX_RANK) rr_fail(x, w, "coords", "%zu coordinates, more than %d", n, PAR_MAX_RANK);
    for (size_t i = 0; i < n && !x->bad; i++) {
        json_object *e = json_object_array_get_idx(c, i);
        if (!json_object_is_type(e, json_type_int)) rr_fail(x, w, "coords", "element %zu is not an integer", i);
        m->worst_coords[i] = json_object_get_int64(e);
    }
    m->worst_rank = (int32_t)n;
    rr_num(x, o, w, "reference", 0, &m->worst_ref);
    rr_num(x, o, w, "backend", 0, &m->worst_got);
    const char *cls;
    rr_str(x, o, w, "backend_class", 1, &cls);
    if (cls && !strcmp(cls, "inf")) m->worst_got = INFINITY;
    rr_num(x, o, w, "budget", 0, &m->worst_budget);
    /* added within version 1: the output's shape (as many dimensions as coords) and the error map; absent in
     * older reports */
    json_object *s = rr_arr(x, o, w, "shape", 1);
    size_t ns = s ? json_object_array_length(s) : 0;
    if (s && ns != n) rr_fail(x, w, "shape", "%zu dimensions, but %zu coordinates", ns, n);
    for (size_t i = 0; i < ns && i < PAR_MAX_RANK && !x->bad; i++) {
        json_object *e = json_object_array_get_idx(s, i);
        if (!json_object_is_type(e, json_type_int) || json_object_get_int64(e) < 0)
            rr_fail(x, w, "shape", "element %zu is not a dimension", i);
        else if (m->worst_coords[i] >= json_object_get_int64(e) && json_object_get_int64(e) > 0)
            rr_fail(x, w, "shape", "coordinate %zu (%lld) is outside its dimension (%lld)", i,
                    (long long)m->worst_coords[i], (long long)json_object_get_int64(e));
        else m->worst_dims[i] = json_object_get_int64(e);
    }
    json_object *em = rr_obj(x, o, w, "error_map", 1);
    if (em && !x->bad) {
        char we[128];
        snprintf(we, sizeof we, "%s.error_map", w);
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
}

static void read_timing(rd *x, json_object *o, const char *w, par_timing *t)
{
    rr_i32(x, o, w, "runs", 0, 0, INT32_MAX, 0, &t->runs);
    t->prepare_ms = rr_num_or(x, o, w, "prepare_ms", 0, 0);
    t->run_median_ms = rr_num_or(x, o, w, "run_median_ms", 1, 0);
    t->run_p10_ms = rr_num_or(x, o, w, "run_p10_ms", 1, 0);
    t->run_p90_ms = rr_num_or(x, o, w, "run_p90_ms", 1, 0);
    t->run_min_ms = rr_num_or(x, o, w, "run_min_ms", 1, 0);
    json_object *s = rr_arr(x, o, w, "samples_ms", 1);
    size_t n = s ? json_object_array_length(s) : 0;
    if (n > PAR_TIMING_SAMPLES || (int64_t)n > t->runs)
        rr_fail(x, w, "samples_ms", "%zu samples of %d runs (at most %d are kept)", n, (int)t->runs, PAR_TIMING_SAMPLES);
    for (size_t i = 0; i < n && !x->bad; i++) {
        json_object *e = json_object_array_get_idx(s, i);
        if (!json_object_is_type(e, json_type_int) && !json_object_is_type(e, json_type_double))
            rr_fail(x, w, "samples_ms", "element %zu is %s, expected a number", i, par_json_type_name(e));
        t->samples_ms[i] = json_object_get_double(e);
        if (!(t->samples_ms[i] >= 0) || !isfinite(t->samples_ms[i]))
            rr_fail(x, w, "samples_ms", "element %zu is not a time", i);
    }
    t->n_samples = (int32_t)n;
    /* the device's time (PAR_PROC_DEVICE_TIME), absent when not measured */
    json_object *d = rr_obj(x, o, w, "device", 1);
    if (d && !x->bad) {
        char wd[96];
        snprintf(wd, sizeof wd, "%s.device", w);
        if (t->runs < 1) rr_fail(x, w, "device", "device times of a record without timed runs");
        rr_i32(x, d, wd, "runs", 0, 1, t->runs, 1, &t->device_n);
        double *q[3] = {&t->device_median_ms, &t->device_p10_ms, &t->device_p90_ms};
        static const char *const keys[3] = {"median_ms", "p10_ms", "p90_ms"};
        for (int k = 0; k < 3 && !x->bad; k++) {
            rr_num(x, d, wd, keys[k], 0, q[k]);
            if (!x->bad && !(*q[k] >= 0 && isfinite(*q[k]))) rr_fail(x, wd, keys[k], "%g is not a time", *q[k]);
        }
        json_object *ds = rr_arr(x, d, wd, "samples_ms", 1);
        size_t nd = ds ? json_object_array_length(ds) : 0;
        if (!x->bad && (nd > PAR_TIMING_SAMPLES || (int64_t)nd > t->device_n))
            rr_fail(x, wd, "samples_ms", "%zu samples of %d runs (at most %d are kept)", nd, (int)t->device_n,
                    PAR_TIMING_SAMPLES);
        for (size_t i = 0; i < nd && !x->bad; i++) {
            json_object *e = json_object_array_get_idx(ds, i);
            if (!json_object_is_type(e, json_type_int) && !json_object_is_type(e, json_type_double))
                rr_fail(x, wd, "samples_ms", "element %zu is %s, expected a number", i, par_json_type_name(e));
            t->device_samples_ms[i] = json_object_get_double(e);
            if (!(t->device_samples_ms[i] >= 0) || !isfinite(t->device_samples_ms[i]))
                rr_fail(x, wd, "samples_ms", "element %zu is not a time", i);
        }
        t->device_n_samples = x->bad ? 0 : (int32_t)nd;
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
    rr_buf(x, o, w, "reason", 0, res->reason, sizeof res->reason, 1);
    char ws[96];
    json_object *m = rr_obj(x, o, w, "metrics", 1), *wo = rr_obj(x, o, w, "worst", 1);
    snprintf(ws, sizeof ws, "%s.metrics", w);
    if (m) read_metrics(x, m, ws, &res->m);
    snprintf(ws, sizeof ws, "%s.worst", w);
    if (wo) read_worst(x, wo, ws, &res->m);
    json_object *t = rr_obj(x, o, w, "timing", 0);
    snprintf(ws, sizeof ws, "%s.timing", w);
    if (t) read_timing(x, t, ws, &res->t);
    rr_buf(x, o, w, "output", 1, res->output, sizeof res->output, 0);
    rr_i64(x, o, w, "output_bytes", 1, 0, INT64_MAX, 0, &res->output_bytes);
    rr_i64(x, o, w, "output_dropped", 1, 0, INT64_MAX, 0, &res->output_dropped);
    json_object *al = rr_obj(x, o, w, "algorithms", 1), *ns = rr_obj(x, o, w, "node_schemes", 1);
    snprintf(ws, sizeof ws, "%s.algorithms", w);
    if (al) read_decls(x, al, ws, "algorithm", 1, &res->n_algos, res->algos);
    snprintf(ws, sizeof ws, "%s.node_schemes", w);
    if (ns) read_decls(x, ns, ws, "scheme", 0, &res->n_requants, res->requants);
    rr_i32(x, o, w, "diagnostics", 1, 0, INT32_MAX, 0, &res->n_diagnostics);
    rr_buf(x, o, w, "note", 1, res->note, sizeof res->note, 1);
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
