/*
 * report_json.c - writes the JSON report (docs/report-schema.md), the source of truth for every renderer, and
 * builds the repro command of a record.
 *
 * Numbers: every double goes through par_json_num(): finite values are written with 9 significant digits (%.9g: enough to
 * give back any f32 exactly, and stable across runs for diffs), non-finite ones (an infinite ratio when a budget is
 * 0, a NaN a backend produced) as null, since NaN and Infinity are not JSON and json-c would write them bare.
 *
 * Writing is atomic: the text goes to <path>.tmp.<pid> in the same folder, is fsync'ed, then renamed over path; on
 * any error the temporary file is removed and an existing report stays as it was.
 *
 * This file must not judge results (the runner and the oracle did) nor read anything but the par_report it is given
 * and the environment.
 */
#include "report.h"

#include "core/requant.h"
#include "json_out.h"
#include "report_strip.h"
#include "reference/conv_winograd.h" /* par_algo_name */

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef PAR_GIT_REV
#define PAR_GIT_REV "unknown"
#endif
#ifndef PAR_VERSION
#define PAR_VERSION "0.1.0"
#endif

const char *par_report_version(const par_report *r)
{
    return r && r->parity_version ? r->parity_version : PAR_VERSION;
}

const char *par_report_git_revision(const par_report *r)
{
    return r && r->git_revision ? r->git_revision : PAR_GIT_REV;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Repro commands
 * ------------------------------------------------------------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, o;
} sbuf;

static void sb_putc(sbuf *b, char c)
{
    if (b->o + 1 < b->len) b->p[b->o++] = c;
    if (b->len) b->p[b->o < b->len ? b->o : b->len - 1] = '\0';
}

static void sb_puts(sbuf *b, const char *s)
{
    for (; *s; s++) sb_putc(b, *s);
}

/* Quote for sh: single quotes, with each ' written as '\''. A string with control characters is written as
 * $'...' instead, each control character as \xNN (and ' and \ escaped), so the command stays on one line and
 * the shell (bash, zsh, ksh, POSIX.1-2024 sh) gives back the same bytes. */
static void sb_quoted(sbuf *b, const char *s)
{
    int ctl = 0;
    for (const char *q = s; *q; q++) ctl |= (unsigned char)*q < 0x20 || *q == 0x7F;
    if (ctl) {
        static const char hex[] = "0123456789abcdef";
        sb_puts(b, "$'");
        for (; *s; s++) {
            unsigned char c = (unsigned char)*s;
            if (c < 0x20 || c == 0x7F) {
                sb_puts(b, "\\x");
                sb_putc(b, hex[c >> 4]);
                sb_putc(b, hex[c & 15]);
            } else if (c == '\'' || c == '\\') {
                sb_putc(b, '\\');
                sb_putc(b, (char)c);
            } else {
                sb_putc(b, (char)c);
            }
        }
        sb_putc(b, '\'');
        return;
    }
    sb_putc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'') sb_puts(b, "'\\''");
        else sb_putc(b, *s);
    }
    sb_putc(b, '\'');
}

/* A word: as is when it has only characters sh never interprets, else quoted. */
static void sb_word(sbuf *b, const char *s)
{
    int safe = *s != '\0';
    for (const char *q = s; *q && safe; q++)
        safe = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
               strchr("_@%+=:,./-", *q) != NULL;
    if (safe) sb_puts(b, s);
    else sb_quoted(b, s);
}

static int is_suite_origin(const char *origin)
{
    return origin[0] == '\0' || strncmp(origin, "suite:", 6) == 0;
}

void par_report_repro(const par_report *r, int32_t c, int32_t b, char *buf, size_t len)
{
    if (!buf || len == 0) return;
    buf[0] = '\0';
    if (!r || c < 0 || c >= r->n_cases || b < 0 || b >= r->n_backends) return;
    sbuf s = {buf, len, 0};
    const par_report_case *pc = &r->cases[c];
    const par_backend_inst *bi = &r->backends[b];
    sb_word(&s, r->parity_exe && r->parity_exe[0] ? r->parity_exe : "parity");
    sb_puts(&s, " run ");
    if (is_suite_origin(pc->origin)) {
        sb_puts(&s, "--case ");
        sb_quoted(&s, pc->id);
    } else {
        sb_word(&s, pc->origin);
    }
    sb_puts(&s, " -b ");
    sb_word(&s, bi->label);
    if (bi->plugin_path[0]) {
        sb_puts(&s, " --plugin ");
        sb_word(&s, bi->plugin_path);
    }
}

/* ---------------------------------------------------------------------------------------------------------------
 * JSON building
 * ------------------------------------------------------------------------------------------------------------- */

/* A string, or null when empty. */
static json_object *jstr_or_null(const char *s)
{
    return (s && s[0]) ? par_json_str(s) : NULL;
}

static void put(json_object *o, const char *key, json_object *v)
{
    json_object_object_add(o, key, v);
}

static json_object *env_json(const par_env *given)
{
    par_env e;
    if (given) e = *given;
    else par_env_collect(&e);
    json_object *env = json_object_new_object(), *cpu = json_object_new_object(), *os = json_object_new_object();
    json_object *feat = json_object_new_array();
    put(cpu, "model", par_json_str(e.cpu_model));
    put(cpu, "cores", json_object_new_int(e.cores));
    char f[sizeof e.cpu_features];
    memcpy(f, e.cpu_features, sizeof f);
    char *save = NULL;
    for (char *w = strtok_r(f, " ", &save); w; w = strtok_r(NULL, " ", &save))
        json_object_array_add(feat, json_object_new_string(w));
    put(cpu, "features", feat);
    put(os, "name", par_json_str(e.os_name));
    put(os, "release", par_json_str(e.os_release));
    put(os, "version", par_json_str(e.os_version));
    put(os, "machine", par_json_str(e.machine));
    put(env, "cpu", cpu);
    put(env, "os", os);
    put(env, "arch", e.arch[0] ? par_json_str(e.arch) : NULL);
    put(env, "compiler", par_json_str(e.compiler));
    put(env, "json_c", par_json_str(e.json_c));
    put(env, "hostname", jstr_or_null(e.hostname));
    return env;
}

const char *par_describe_kernels(const char *describe, char *buf, size_t len)
{
    if (len) buf[0] = 0;
    for (const char *p = describe; p && *p;) {
        size_t n = strcspn(p, ";");
        if (n > 8 && strncmp(p, "kernels=", 8) == 0) {
            int v = (int)strcspn(p + 8, ";(");
            snprintf(buf, len, "%.*s", v, p + 8);
            return buf;
        }
        p += n;
        if (*p == ';') p++;
    }
    return buf;
}

static json_object *backend_json(const par_backend_inst *bi)
{
    json_object *o = json_object_new_object(), *knobs = json_object_new_object();
    const par_backend *be = bi->be;
    put(o, "label", par_json_str(bi->label));
    put(o, "name", be ? par_json_str(be->name) : NULL);
    put(o, "version", be ? par_json_str(be->version) : NULL);
    put(o, "description", be ? par_json_str(be->description) : NULL);
    put(o, "arith", be ? par_json_str(par_arith_name((par_arith)bi->arith)) : NULL); /* the probe's: PAR_PROC_ARITH */
    for (int32_t k = 0; k < bi->n_knobs && k < PAR_MAX_KNOBS; k++) put(knobs, bi->knob_key[k], par_json_str(bi->knob_val[k]));
    put(o, "knobs", knobs);
    put(o, "describe", par_json_str(bi->describe));
    char kern[64];
    put(o, "kernels", jstr_or_null(par_describe_kernels(bi->describe, kern, sizeof kern)));
    put(o, "plugin", jstr_or_null(bi->plugin_path));
    const char *rq = par_requant_name((par_requant)bi->requant);
    put(o, "requant", bi->probed ? par_json_str(rq ? rq : "fp32") : NULL);
    put(o, "requant_exact", bi->probed ? json_object_new_boolean(bi->requant_exact != 0) : NULL);
    json_object *flags = bi->probed ? json_object_new_array() : NULL; /* PAR_PROC_ARITH_FLAGS, by name */
    for (uint32_t bit = 1; flags && bit; bit <<= 1)
        if ((bi->arith_flags & bit) && par_arith_flag_name(bit))
            json_object_array_add(flags, par_json_str(par_arith_flag_name(bit)));
    put(o, "arith_flags", flags);
    put(o, "usable", json_object_new_boolean(bi->usable != 0));
    put(o, "reason", bi->usable ? NULL : par_json_str(bi->unusable_reason));
    return o;
}

static json_object *timing_json(const par_timing *t)
{
    json_object *o = json_object_new_object();
    put(o, "runs", json_object_new_int(t->runs));
    put(o, "prepare_ms", par_json_num(t->prepare_ms));
    put(o, "run_median_ms", t->runs ? par_json_num(t->run_median_ms) : NULL);
    put(o, "run_p10_ms", t->runs ? par_json_num(t->run_p10_ms) : NULL);
    put(o, "run_p90_ms", t->runs ? par_json_num(t->run_p90_ms) : NULL);
    put(o, "run_min_ms", t->runs ? par_json_num(t->run_min_ms) : NULL);
    json_object *samples = json_object_new_array();
    for (int32_t i = 0; i < t->n_samples && i < PAR_TIMING_SAMPLES; i++)
        json_object_array_add(samples, par_json_num(t->samples_ms[i]));
    put(o, "samples_ms", samples);
    if (t->device_n > 0) { /* PAR_PROC_DEVICE_TIME: absent when the device did not time the runs */
        json_object *d = json_object_new_object();
        put(d, "runs", json_object_new_int(t->device_n));
        put(d, "median_ms", par_json_num(t->device_median_ms));
        put(d, "p10_ms", par_json_num(t->device_p10_ms));
        put(d, "p90_ms", par_json_num(t->device_p90_ms));
        json_object *ds = json_object_new_array();
        for (int32_t i = 0; i < t->device_n_samples && i < PAR_TIMING_SAMPLES; i++)
            json_object_array_add(ds, par_json_num(t->device_samples_ms[i]));
        put(d, "samples_ms", ds);
        put(o, "device", d);
    }
    return o;
}

/* Was this record compared by the oracle (it has metrics)? */
static int compared(const par_result *res)
{
    return res->done && (res->verdict == PAR_V_PASS || res->verdict == PAR_V_FAIL) && res->m.n > 0;
}

/* The step-difference histogram of integer outputs (docs/quantization.md), keyed by bin. */
static json_object *hist_json(const int64_t *hist)
{
    static const char *const keys[PAR_HIST_BINS] = {"<=-3", "-2", "-1", "0", "+1", "+2", ">=+3"};
    json_object *h = json_object_new_object();
    for (int k = 0; k < PAR_HIST_BINS; k++) put(h, keys[k], json_object_new_int64(hist[k]));
    return h;
}

static json_object *quant_json(const par_metrics *m)
{
    json_object *q = json_object_new_object();
    put(q, "n_exact", json_object_new_int64(m->n_exact));
    put(q, "n_labelled", json_object_new_int64(m->n_labelled));
    put(q, "step_histogram", hist_json(m->hist));
    put(q, "bias_bound", par_json_num(m->bias_bound));
    put(q, "bias_over", json_object_new_boolean(m->bias_over != 0));
    return q;
}

/* Ties (docs/quantization.md, "Ties"): how many, how many each rule explains, the rules consistent with all of them,
 * the declared scheme's rule and whether they contradict it. */
static json_object *ties_json(const par_metrics *m)
{
    json_object *t = json_object_new_object(), *cons = json_object_new_array();
    put(t, "n", json_object_new_int64(m->tie_n));
    for (int k = 0; k < PAR_TIE_RULES; k++) {
        put(t, par_tie_rule_name((par_tie_rule)k), json_object_new_int64(m->tie_rule_n[k]));
        if (m->tie_n > 0 && m->tie_rule_n[k] == m->tie_n)
            json_object_array_add(cons, par_json_str(par_tie_rule_name((par_tie_rule)k)));
    }
    put(t, "other", json_object_new_int64(m->tie_other));
    put(t, "consistent", cons);
    put(t, "declared", m->tie_declared >= 0 ? par_json_str(par_tie_rule_name((par_tie_rule)m->tie_declared)) : NULL);
    put(t, "contradicts", json_object_new_boolean(m->tie_over != 0));
    return t;
}

/* The companion on every node's value (docs/oracle.md, "The companion on every node"): K, the bound, the largest z
 * and its node, the first node over the bound. */
static json_object *node_companion_json(const par_metrics *m)
{
    json_object *o = json_object_new_object();
    put(o, "k", json_object_new_int(m->node_k));
    put(o, "bound", par_json_num(m->node_bound));
    put(o, "z_max", par_json_num(m->node_z));
    put(o, "node_max", par_json_str(m->node_at));
    put(o, "first_over", m->node_first[0] ? par_json_str(m->node_first) : NULL);
    put(o, "z_first", m->node_first[0] ? par_json_num(m->node_first_z) : NULL);
    return o;
}

static json_object *metrics_json(const par_metrics *m)
{
    json_object *o = json_object_new_object();
    put(o, "n", json_object_new_int64(m->n));
    put(o, "n_over", json_object_new_int64(m->n_over));
    put(o, "n_nonfinite", json_object_new_int64(m->n_nonfinite));
    put(o, "n_unbounded", json_object_new_int64(m->n_unbounded));
    put(o, "max_abs", par_json_num(m->max_abs));
    put(o, "max_rel", par_json_num(m->max_rel));
    put(o, "max_ulp", par_json_num(m->max_ulp));
    put(o, "nmse", par_json_num(m->nmse));
    put(o, "sqnr_db", par_json_num(m->sqnr_db));
    put(o, "sqnr_pred_db", par_json_num(m->sqnr_pred_db));
    put(o, "stat_z", par_json_num(m->stat_z));
    put(o, "stat_n", json_object_new_int64(m->stat_n));
    put(o, "stat_over", json_object_new_boolean(m->stat_over));
    put(o, "stat_skip", json_object_new_int(m->stat_skip));
    put(o, "bias", par_json_num(m->bias));
    put(o, "max_ratio", par_json_num(m->max_ratio));
    put(o, "max_ratio_infinite", json_object_new_boolean(isinf(m->max_ratio) != 0));
    if (m->quant) put(o, "quant", quant_json(m));
    if (m->tie_n > 0) put(o, "ties", ties_json(m));
    if (m->node_k > 0) put(o, "node_companion", node_companion_json(m));
    return o;
}

static json_object *worst_json(const par_metrics *m)
{
    if (m->worst_index < 0) return NULL;
    json_object *o = json_object_new_object(), *coords = json_object_new_array();
    put(o, "output", json_object_new_int(m->worst_output));
    put(o, "index", json_object_new_int64(m->worst_index));
    for (int32_t i = 0; i < m->worst_rank && i < PAR_MAX_RANK; i++)
        json_object_array_add(coords, json_object_new_int64(m->worst_coords[i]));
    put(o, "coords", coords);
    put(o, "reference", par_json_num(m->worst_ref));
    put(o, "backend", par_json_num(m->worst_got));
    put(o, "backend_class", par_json_str(isnan(m->worst_got) ? "nan" : isinf(m->worst_got) ? "inf" : "finite"));
    put(o, "budget", par_json_num(m->worst_budget));
    json_object *shape = json_object_new_array();
    for (int32_t i = 0; i < m->worst_rank && i < PAR_MAX_RANK; i++)
        json_object_array_add(shape, json_object_new_int64(m->worst_dims[i]));
    put(o, "shape", shape);
    if (m->emap_rows > 0 && m->emap_cols > 0) {
        /* the error map: rows x cols cells, each a byte (the share failing, 0..255) as two hex digits */
        json_object *em = json_object_new_object();
        char hex[2 * PAR_EMAP_MAX * PAR_EMAP_MAX + 1];
        int32_t n = m->emap_rows * m->emap_cols;
        for (int32_t k = 0; k < n; k++) snprintf(hex + 2 * k, 3, "%02x", m->emap[k]);
        hex[2 * n] = 0;
        put(em, "rows", json_object_new_int(m->emap_rows));
        put(em, "cols", json_object_new_int(m->emap_cols));
        put(em, "cells", json_object_new_string(hex));
        put(o, "error_map", em);
    }
    return o;
}

/* The value names of a per-node declaration (par_algo_name, par_requant_name). */
static const char *algo_value_name(int32_t v) { return par_algo_name(v); }
static const char *scheme_value_name(int32_t v) { return par_requant_name((par_requant)v); }

/* The nodes a record lists as declared (PAR_PROC_NODE_ALGO: key "algorithm"; PAR_PROC_NODE_REQUANT: key "scheme"):
 * {"count", "nodes": [{"node", "name", key}]}. */
static json_object *decls_json(int32_t n, const par_result_decl *list, const char *key,
                               const char *(*name_of)(int32_t))
{
    json_object *o = json_object_new_object(), *arr = json_object_new_array();
    put(o, "count", json_object_new_int64(n));
    for (int32_t i = 0; i < n && i < PAR_RESULT_ALGOS; i++) {
        const char *name = name_of(list[i].value);
        json_object *e = json_object_new_object();
        put(e, "node", json_object_new_int64(list[i].node));
        put(e, "name", par_json_str(list[i].node_name));
        put(e, key, name ? par_json_str(name) : NULL);
        json_object_array_add(arr, e);
    }
    put(o, "nodes", arr);
    return o;
}

static json_object *record_json(const par_report *r, int32_t c, int32_t b)
{
    const par_result *res = &r->results[(size_t)c * (size_t)r->n_backends + (size_t)b];
    json_object *o = json_object_new_object();
    char repro[2048];
    par_report_repro(r, c, b, repro, sizeof repro);
    put(o, "case", par_json_str(r->cases[c].id));
    put(o, "backend", par_json_str(r->backends[b].label));
    put(o, "ops", par_json_str(r->cases[c].ops));
    put(o, "verdict", par_json_str(par_verdict_name(res->verdict)));
    put(o, "reason", par_json_str(res->reason));
    put(o, "repro", par_json_str(repro));
    put(o, "metrics", compared(res) ? metrics_json(&res->m) : NULL);
    put(o, "worst", compared(res) ? worst_json(&res->m) : NULL);
    put(o, "timing", timing_json(&res->t));
    put(o, "output", res->output_bytes > 0 ? par_json_str(res->output) : NULL);
    put(o, "output_bytes", json_object_new_int64(res->output_bytes));
    put(o, "output_dropped", json_object_new_int64(res->output_dropped));
    if (res->n_algos > 0) put(o, "algorithms", decls_json(res->n_algos, res->algos, "algorithm", algo_value_name));
    if (res->n_requants > 0)
        put(o, "node_schemes", decls_json(res->n_requants, res->requants, "scheme", scheme_value_name));
    if (res->n_diagnostics > 0) put(o, "diagnostics", json_object_new_int(res->n_diagnostics));
    if (res->note[0]) put(o, "note", par_json_str(res->note));
    if (r->strips && r->strips[(size_t)c * (size_t)r->n_backends + (size_t)b].present)
        put(o, "localization", par_strip_json(&r->strips[(size_t)c * (size_t)r->n_backends + (size_t)b]));
    return o;
}

/* Sort key of a ratio: NaN counts as the worst. */
static double ratio_key(double x)
{
    return isnan(x) ? INFINITY : x;
}

static int cmp_ratio(const void *a, const void *b)
{
    double x = ratio_key(*(const double *)a), y = ratio_key(*(const double *)b);
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array (p in (0, 100]). */
static double nearest_rank(const double *s, size_t n, double p)
{
    size_t k = (size_t)ceil(p / 100.0 * (double)n);
    if (k < 1) k = 1;
    if (k > n) k = n;
    return s[k - 1];
}

static json_object *summary_json(const par_report *r, int *oom)
{
    json_object *sum = json_object_new_object(), *arr = json_object_new_array();
    int64_t total[PAR_V_COUNT] = {0};
    double *ratios = malloc(sizeof(double) * (size_t)(r->n_cases > 0 ? r->n_cases : 1));
    if (!ratios) *oom = 1;
    for (int32_t b = 0; b < r->n_backends && ratios; b++) {
        int64_t cnt[PAR_V_COUNT] = {0}, records = 0, q_records = 0, q_labelled_records = 0, t_records = 0,
                t_contra = 0;
        par_metrics tsum;
        memset(&tsum, 0, sizeof tsum);
        par_metrics qsum;
        memset(&qsum, 0, sizeof qsum);
        size_t nr = 0;
        int32_t worst = -1;
        for (int32_t c = 0; c < r->n_cases; c++) {
            const par_result *res = &r->results[(size_t)c * (size_t)r->n_backends + (size_t)b];
            if (!res->done) continue;
            records++;
            if ((unsigned)res->verdict < PAR_V_COUNT) cnt[res->verdict]++;
            if (!compared(res)) continue;
            if (res->m.quant) {
                q_records++;
                q_labelled_records += res->m.n_labelled > 0;
                qsum.n_exact += res->m.n_exact;
                qsum.n_labelled += res->m.n_labelled;
                for (int k = 0; k < PAR_HIST_BINS; k++) qsum.hist[k] += res->m.hist[k];
            }
            if (res->m.tie_n > 0) {
                t_records++;
                t_contra += res->m.tie_over != 0;
                tsum.tie_n += res->m.tie_n;
                tsum.tie_other += res->m.tie_other;
                for (int k = 0; k < PAR_TIE_RULES; k++) tsum.tie_rule_n[k] += res->m.tie_rule_n[k];
            }
            ratios[nr++] = res->m.max_ratio;
            if (worst < 0 ||
                ratio_key(res->m.max_ratio) >
                    ratio_key(r->results[(size_t)worst * (size_t)r->n_backends + (size_t)b].m.max_ratio))
                worst = c;
        }
        json_object *o = json_object_new_object(), *counts = json_object_new_object();
        put(o, "backend", par_json_str(r->backends[b].label));
        put(o, "records", json_object_new_int64(records));
        for (int v = 0; v < PAR_V_COUNT; v++) {
            put(counts, par_verdict_name((par_verdict)v), json_object_new_int64(cnt[v]));
            total[v] += cnt[v];
        }
        put(o, "counts", counts);
        json_object *dist = json_object_new_object();
        put(dist, "compared", json_object_new_int64((int64_t)nr));
        if (nr > 0) {
            qsort(ratios, nr, sizeof *ratios, cmp_ratio);
            put(dist, "median", par_json_num(nearest_rank(ratios, nr, 50)));
            put(dist, "p90", par_json_num(nearest_rank(ratios, nr, 90)));
            put(dist, "p99", par_json_num(nearest_rank(ratios, nr, 99)));
            put(dist, "max", par_json_num(ratios[nr - 1]));
            size_t n_inf = 0;
            for (size_t i = 0; i < nr; i++) n_inf += !isfinite(ratios[i]);
            put(dist, "nonfinite", json_object_new_int64((int64_t)n_inf));
        } else {
            put(dist, "median", NULL);
            put(dist, "p90", NULL);
            put(dist, "p99", NULL);
            put(dist, "max", NULL);
            put(dist, "nonfinite", json_object_new_int64(0));
        }
        put(o, "max_ratio", dist);
        if (q_records > 0) {
            json_object *q = json_object_new_object();
            put(q, "records", json_object_new_int64(q_records));
            put(q, "records_labelled", json_object_new_int64(q_labelled_records));
            put(q, "n_exact", json_object_new_int64(qsum.n_exact));
            put(q, "n_labelled", json_object_new_int64(qsum.n_labelled));
            put(q, "step_histogram", hist_json(qsum.hist));
            put(o, "quant", q);
        }
        if (t_records > 0) {
            json_object *t = ties_json(&tsum);
            json_object_object_del(t, "declared");
            json_object_object_del(t, "contradicts");
            put(t, "records", json_object_new_int64(t_records));
            put(t, "records_contradicting", json_object_new_int64(t_contra));
            put(o, "ties", t);
        }
        if (worst >= 0) {
            const par_result *res = &r->results[(size_t)worst * (size_t)r->n_backends + (size_t)b];
            json_object *w = json_object_new_object();
            char repro[2048];
            par_report_repro(r, worst, b, repro, sizeof repro);
            put(w, "case", par_json_str(r->cases[worst].id));
            put(w, "verdict", par_json_str(par_verdict_name(res->verdict)));
            put(w, "max_ratio", par_json_num(res->m.max_ratio));
            put(w, "repro", par_json_str(repro));
            put(o, "worst", w);
        } else {
            put(o, "worst", NULL);
        }
        json_object_array_add(arr, o);
    }
    free(ratios);
    json_object *counts = json_object_new_object();
    for (int v = 0; v < PAR_V_COUNT; v++) put(counts, par_verdict_name((par_verdict)v), json_object_new_int64(total[v]));
    put(sum, "cases", json_object_new_int(r->n_cases));
    put(sum, "counts", counts);
    put(sum, "backends", arr);
    return sum;
}

static json_object *shard_json(int32_t k, int32_t n)
{
    if (n <= 0) return NULL;
    char t[32];
    snprintf(t, sizeof t, "%d/%d", (int)k, (int)n);
    return par_json_str(t);
}

static json_object *selection_json(const par_report_selection *sel)
{
    json_object *o = json_object_new_object(), *paths = json_object_new_array();
    put(o, "suite", jstr_or_null(sel->suite));
    for (int32_t i = 0; i < sel->n_paths && sel->paths; i++) json_object_array_add(paths, par_json_str(sel->paths[i]));
    put(o, "paths", paths);
    put(o, "case", jstr_or_null(sel->case_id));
    put(o, "ops", jstr_or_null(sel->ops));
    put(o, "filter", jstr_or_null(sel->filter));
    return o;
}

static json_object *shards_json(const par_report *r)
{
    json_object *arr = json_object_new_array();
    for (int32_t i = 0; i < r->n_shards; i++) {
        const par_report_shard *sh = &r->shards[i];
        json_object *o = json_object_new_object();
        put(o, "shard", shard_json(sh->k, sh->n));
        put(o, "path", par_json_str(sh->path ? sh->path : ""));
        put(o, "created", par_json_str(sh->created ? sh->created : ""));
        put(o, "command_line", par_json_str(sh->command_line ? sh->command_line : ""));
        put(o, "git_revision", par_json_str(sh->git_revision ? sh->git_revision : ""));
        put(o, "wall_s", par_json_num(sh->wall_s));
        put(o, "cases", json_object_new_int(sh->n_cases));
        put(o, "environment", env_json(&sh->env));
        json_object_array_add(arr, o);
    }
    return arr;
}

static json_object *report_json(const par_report *r, int *oom)
{
    json_object *root = json_object_new_object();
    put(root, "schema", par_json_str(PAR_REPORT_SCHEMA));
    put(root, "version", json_object_new_int(PAR_REPORT_VERSION));
    char created[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    put(root, "created", par_json_str(r->created ? r->created : created));
    put(root, "command_line", par_json_str(r->command_line));
    json_object *par = json_object_new_object();
    put(par, "version", par_json_str(par_report_version(r)));
    put(par, "git_revision", par_json_str(par_report_git_revision(r)));
    put(par, "backend_api_version", json_object_new_int(PAR_BACKEND_API_VERSION));
    put(par, "executable", par_json_str(r->parity_exe && r->parity_exe[0] ? r->parity_exe : "parity"));
    put(root, "parity", par);
    put(root, "environment", env_json(r->env));
    json_object *cfg = json_object_new_object();
    put(cfg, "seed", json_object_new_uint64(r->seed));
    put(cfg, "repeat", json_object_new_int(r->repeat));
    put(cfg, "warmup", json_object_new_int(r->warmup));
    put(cfg, "rounds", json_object_new_int(r->rounds > 1 ? r->rounds : 1));
    put(cfg, "timeout_s", par_json_num(r->timeout_s));
    put(cfg, "jobs", json_object_new_int(r->jobs));
    put(cfg, "selection", selection_json(&r->sel));
    put(cfg, "shard", shard_json(r->sel.shard_k, r->sel.shard_n));
    put(root, "config", cfg);
    if (r->n_shards > 0) put(root, "shards", shards_json(r));
    put(root, "wall_s", par_json_num(r->wall_s));
    put(root, "interrupted", json_object_new_boolean(r->interrupted != 0));
    if (r->campaign) put(root, "campaign", par_report_campaign_json(r));

    json_object *bes = json_object_new_array();
    for (int32_t b = 0; b < r->n_backends; b++) json_object_array_add(bes, backend_json(&r->backends[b]));
    put(root, "backends", bes);
    json_object *cases = json_object_new_array();
    for (int32_t c = 0; c < r->n_cases; c++) {
        json_object *o = json_object_new_object();
        put(o, "id", par_json_str(r->cases[c].id));
        put(o, "origin", par_json_str(r->cases[c].origin));
        put(o, "ops", par_json_str(r->cases[c].ops));
        put(o, "dtype", jstr_or_null(r->cases[c].dtype));
        put(o, "index", json_object_new_int64(r->cases[c].index));
        json_object_array_add(cases, o);
    }
    put(root, "cases", cases);
    put(root, "summary", summary_json(r, oom));
    json_object *results = json_object_new_array();
    for (int32_t c = 0; c < r->n_cases; c++)
        for (int32_t b = 0; b < r->n_backends; b++)
            if (r->results[(size_t)c * (size_t)r->n_backends + (size_t)b].done)
                json_object_array_add(results, record_json(r, c, b));
    put(root, "results", results);
    return root;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Atomic write
 * ------------------------------------------------------------------------------------------------------------- */

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* fsync the folder holding path, so that the rename itself survives a crash (best effort). */
static void sync_dir(const char *path)
{
    char *copy = strdup(path);
    if (!copy) return;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

par_status par_report_write_json(const par_report *r, const char *path, par_msg *msg)
{
    if (!r || !path || !path[0]) return par_msgf(msg, PAR_ERROR, "report: no report or no path");
    if (r->n_cases < 0 || r->n_backends < 0 || (r->n_cases > 0 && r->n_backends > 0 && (!r->results || !r->cases)) ||
        (r->n_backends > 0 && !r->backends))
        return par_msgf(msg, PAR_ERROR, "report %s: inconsistent report data (counts without arrays)", path);
    int oom = 0;
    json_object *root = report_json(r, &oom);
    const char *text = root ? json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
                                                                       JSON_C_TO_STRING_NOSLASHESCAPE)
                            : NULL;
    if (!text || oom) {
        json_object_put(root);
        return par_msgf(msg, PAR_ERROR, "report %s: out of memory building the JSON", path);
    }
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 32);
    if (!tmp) {
        json_object_put(root);
        return par_msgf(msg, PAR_ERROR, "report %s: out of memory", path);
    }
    snprintf(tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
    const char *step = "cannot create";
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int err = 0;
    if (fd < 0) {
        err = errno;
    } else {
        step = "cannot write";
        if (write_all(fd, text, strlen(text)) != 0 || write_all(fd, "\n", 1) != 0) err = errno;
        if (!err) {
            step = "cannot sync";
            if (fsync(fd) != 0) err = errno;
        }
        if (close(fd) != 0 && !err) {
            step = "cannot close";
            err = errno;
        }
        if (!err) {
            step = "cannot rename";
            if (rename(tmp, path) != 0) err = errno;
        }
        if (err) unlink(tmp);
    }
    json_object_put(root);
    if (err) {
        if (strcmp(step, "cannot rename") == 0)
            par_msgf(msg, PAR_ERROR, "report %s: cannot rename %s to it: %s", path, tmp, strerror(err));
        else
            par_msgf(msg, PAR_ERROR, "report %s: %s %s: %s", path, step, tmp, strerror(err));
        free(tmp);
        return PAR_ERROR;
    }
    free(tmp);
    sync_dir(path);
    return PAR_OK;
}
