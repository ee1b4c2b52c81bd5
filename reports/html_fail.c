/*
 * html_fail.c - the failures of the HTML report (html_int.h): the not-passing records worst first (verdict badness,
 * then error/budget, infinite first), each a row of table#failures whose case cell opens (<details>) onto
 * everything the record says: the case, the reason, the worst element, the metrics, the declared algorithms and
 * node schemes, the localization strip of a model, the backend's output and the repro command.
 *
 * Size: the page lists at most `cap` failures and says how many more the report has. The backend's output is shown
 * whole (the report keeps its last 4 KiB) in the first 100 rows, the worst, where crashes come first and their
 * output says why; in the rows after them its last 256 bytes. Each row's details are compact tables. So 2,000 rows
 * stay within about 3 MB (docs/reports-html.md).
 *
 * This file must not judge anything: it lists what the records say, in the order their verdicts and ratios give.
 */
#include "html_int.h"

#include "core/requant.h"
#include "reference/conv_winograd.h" /* par_algo_name */

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The backend output shown: the whole tail the report keeps (4 KiB) in the first OUTPUT_FULL_ROWS rows, the worst
 * (crashes come first), and its last OUTPUT_SHORT bytes in the others. */
#define OUTPUT_FULL_ROWS 100
#define OUTPUT_SHORT 256

const par_result *par_html_rec(const par_report *r, int32_t c, int32_t b)
{
    const par_result *x = &r->results[(size_t)c * (size_t)r->n_backends + (size_t)b];
    if (!x->done || (int)x->verdict < 0 || x->verdict >= PAR_V_COUNT) return NULL;
    return x;
}

static int cmp_fail(const void *a, const void *b)
{
    const par_html_fail *x = a, *y = b;
    if (x->rank != y->rank) return y->rank - x->rank;
    if (x->ratio != y->ratio) return x->ratio < y->ratio ? 1 : -1;
    if (x->c != y->c) return x->c < y->c ? -1 : 1;
    return x->b - y->b;
}

int64_t par_html_fails_collect(const par_report *r, par_html_fail **out)
{
    int64_t n = 0;
    *out = malloc(sizeof **out * ((size_t)r->n_cases * (size_t)r->n_backends + 1));
    if (!*out) return -1;
    for (int32_t c = 0; c < r->n_cases; c++)
        for (int32_t b = 0; b < r->n_backends; b++) {
            const par_result *x = par_html_rec(r, c, b);
            if (!x || par_verdict_severity(x->verdict) < 2) continue;
            double ratio = isnan(x->m.max_ratio) ? INFINITY : x->m.max_ratio;
            (*out)[n++] = (par_html_fail){c, b, par_verdict_severity(x->verdict), ratio};
        }
    qsort(*out, (size_t)n, sizeof **out, cmp_fail);
    return n;
}

static int compared(const par_result *x)
{
    return (x->verdict == PAR_V_PASS || x->verdict == PAR_V_FAIL) && x->m.n > 0;
}

/* The details of a row are compact tables, a row of names over a row of values, with the closing tags HTML makes
 * implicit left out: 2,000 of them must stay a few megabytes. */
static void cell_d(FILE *f, double v)
{
    fputs("<td>", f);
    if (isnan(v) || isinf(v)) par_html_num(f, v);
    else fprintf(f, "%.6g", v);
}

static void metrics(FILE *f, const par_metrics *m)
{
    fprintf(f, "<table class=\"m\"><tr><th>compared<th>over budget<th>non-finite<th>unbounded<th>max |d|"
               "<th>max rel<th>max ULP<th>NMSE<th>SQNR dB<th>predicted SQNR dB<th>companion stat_z"
               "<th>bias (mean d)<th>error/budget"
               "<tr><td>%lld<td>%lld<td>%lld<td>%lld",
            (long long)m->n, (long long)m->n_over, (long long)m->n_nonfinite, (long long)m->n_unbounded);
    cell_d(f, m->max_abs);
    cell_d(f, m->max_rel);
    cell_d(f, m->max_ulp);
    cell_d(f, m->nmse);
    cell_d(f, m->sqnr_db);
    cell_d(f, m->sqnr_pred_db);
    if (m->stat_n > 0) cell_d(f, m->stat_z);
    else if (m->stat_skip != PAR_STAT_APPLIED && par_stat_skip_name(m->stat_skip))
        fprintf(f, "<td>stood down: %s", par_stat_skip_name(m->stat_skip));
    else fputs("<td>-", f);
    cell_d(f, m->bias);
    cell_d(f, m->max_ratio);
    fputs("</table>", f);
    if (m->node_k > 0) { /* the companion on every node's value (docs/oracle.md) */
        fprintf(f, "<p>Companion on every node: %d node values judged, each held to %.3g; the largest z %.3g at <code>",
                (int)m->node_k, m->node_bound, m->node_z);
        par_html_text(f, m->node_at);
        fputs("</code>", f);
        if (m->node_first[0]) {
            fprintf(f, "; the first over the bound, where the error enters: <code>");
            par_html_text(f, m->node_first);
            fprintf(f, "</code> (z %.3g)", m->node_first_z);
        }
        fputs("</p>", f);
    }
    if (m->quant) {
        fprintf(f, "<table class=\"m\"><tr><th>exact<th>labelled<th>&#8804;-3<th>-2<th>-1<th>0<th>+1<th>+2"
                   "<th>&#8805;+3<th>bias bound<th>bias over<tr><td>%lld<td>%lld",
                (long long)m->n_exact, (long long)m->n_labelled);
        for (int k = 0; k < PAR_HIST_BINS; k++) fprintf(f, "<td>%lld", (long long)m->hist[k]);
        cell_d(f, m->bias_bound);
        fprintf(f, "<td>%s</table>", m->bias_over ? "yes" : "no");
    }
    if (m->tie_n > 0) {
        fprintf(f, "<p>Ties: %lld judged", (long long)m->tie_n);
        for (int k = 0; k < PAR_TIE_RULES; k++)
            fprintf(f, "; %s %lld", par_tie_rule_name((par_tie_rule)k), (long long)m->tie_rule_n[k]);
        fprintf(f, "; other %lld; declared %s%s</p>", (long long)m->tie_other,
                m->tie_declared >= 0 ? par_tie_rule_name((par_tie_rule)m->tie_declared) : "-",
                m->tie_over ? "; CONTRADICTS the declared rule" : "");
    }
}

static void dims_text(FILE *f, const int64_t *d, int32_t rank)
{
    fputc('[', f);
    for (int32_t i = 0; i < rank && i < PAR_MAX_RANK; i++) fprintf(f, "%s%lld", i ? "," : "", (long long)d[i]);
    fputc(']', f);
}

/* The error map (core/result.h) as a small inline SVG: the output as rows (every dimension but the last) x columns
 * (the last), folded into at most 32 x 32 cells; a cell with failing elements is drawn in the FAIL colour, more
 * opaque the larger its share of them. Nothing when the record has no map. */
static void error_map(FILE *f, const par_metrics *m)
{
    int32_t R = m->emap_rows, C = m->emap_cols, bad = 0;
    if (R <= 0 || C <= 0 || R > PAR_EMAP_MAX || C > PAR_EMAP_MAX) return;
    for (int32_t k = 0; k < R * C; k++) bad += m->emap[k] > 0;
    int cell = (R > C ? R : C) <= 8 ? 8 : (R > C ? R : C) <= 16 ? 5 : 3;
    fprintf(f, "<svg class=\"emap\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
               "aria-label=\"where the output fails\"><title>output ",
            C * cell, R * cell, C * cell, R * cell);
    dims_text(f, m->worst_dims, m->worst_rank);
    fprintf(f, " as rows x columns (the last dimension), in %d x %d cells: %d with failing elements</title>"
               "<rect class=\"o\" width=\"%d\" height=\"%d\"/>",
            (int)R, (int)C, (int)bad, C * cell, R * cell);
    for (int32_t r = 0; r < R; r++)
        for (int32_t c = 0; c < C; c++) {
            int v = m->emap[r * C + c];
            if (v)
                fprintf(f, "<rect class=\"e\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                           "fill-opacity=\"%.2f\"/>",
                        c * cell, r * cell, cell, cell, 0.35 + 0.65 * v / 255.0);
        }
    fputs("</svg>", f);
}

static void worst(FILE *f, const par_metrics *m)
{
    if (m->worst_index < 0) return;
    fprintf(f, "<table class=\"m\"><tr><th>worst: output<th>shape<th>flat index<th>coordinates<th>reference<th>backend"
               "<th>budget<tr><td>%d<td>",
            (int)m->worst_output);
    dims_text(f, m->worst_dims, m->worst_rank);
    fprintf(f, "<td>%lld<td>", (long long)m->worst_index);
    dims_text(f, m->worst_coords, m->worst_rank);
    cell_d(f, m->worst_ref);
    cell_d(f, m->worst_got);
    cell_d(f, m->worst_budget);
    fputs("</table>", f);
}

static void decls(FILE *f, const char *title, int32_t n, const par_result_decl *list, int algos)
{
    if (n <= 0) return;
    fprintf(f, "<p>%s (%d):</p><ul>", title, (int)n);
    for (int32_t i = 0; i < n && i < PAR_RESULT_ALGOS; i++) {
        const char *v = algos ? par_algo_name(list[i].value) : par_requant_name((par_requant)list[i].value);
        fprintf(f, "<li>node %d <code>", (int)list[i].node);
        par_html_text(f, list[i].node_name);
        fprintf(f, "</code>: ");
        par_html_text(f, v ? v : "?");
        fprintf(f, "</li>");
    }
    if (n > PAR_RESULT_ALGOS) fprintf(f, "<li>... and %d more</li>", (int)(n - PAR_RESULT_ALGOS));
    fprintf(f, "</ul>");
}

static void output_tail(FILE *f, const par_result *x, int full)
{
    if (x->output_bytes <= 0 || !x->output[0]) return;
    const char *s = x->output;
    size_t len = strnlen(s, sizeof x->output);
    int64_t before = x->output_dropped;
    if (!full && len > OUTPUT_SHORT) {
        size_t skip = len - OUTPUT_SHORT;
        while (skip < len && ((unsigned char)s[skip] & 0xC0) == 0x80) skip++;
        before += (int64_t)skip;
        s += skip;
    }
    fprintf(f, "<p>Backend output (last bytes");
    if (before > 0) fprintf(f, "; %lld bytes before them not shown", (long long)before);
    fprintf(f, "):</p><pre>");
    par_html_text(f, s);
    fprintf(f, "</pre>");
}

static void row(FILE *f, const par_report *r, const par_html_fail *fl, int64_t i)
{
    const par_result *x = par_html_rec(r, fl->c, fl->b);
    const par_report_case *pc = &r->cases[fl->c];
    fprintf(f, "<tr id=\"f%lld\"><td class=\"n\" data-v=\"%lld\">%lld</td><td data-v=\"%d\">", (long long)i,
            (long long)i, (long long)i + 1, 6 - fl->rank);
    par_html_verdict_badge(f, x->verdict);
    fprintf(f, "</td><td>");
    par_html_text(f, r->backends[fl->b].label);
    fprintf(f, "</td><td>");
    par_html_text(f, pc->ops);
    fprintf(f, "</td><td>");
    par_html_text(f, pc->dtype);
    if (compared(x)) {
        /* the sort key in full precision, the label in 3 digits */
        if (isinf(fl->ratio)) fprintf(f, "</td><td class=\"n\" data-v=\"Infinity\">");
        else fprintf(f, "</td><td class=\"n\" data-v=\"%.17g\">", fl->ratio);
        par_html_num(f, x->m.max_ratio);
    } else {
        fprintf(f, "</td><td class=\"n\" data-v=\"-1\">-");
    }
    fprintf(f, "</td><td>");
    if (compared(x)) error_map(f, &x->m);
    fprintf(f, "</td><td><details><summary><code>");
    par_html_text(f, pc->id);
    fprintf(f, "</code><br>");
    par_html_text(f, x->reason);
    fprintf(f, "</summary><p>origin ");
    par_html_text(f, pc->origin);
    fprintf(f, "; %d timed runs, median %.4g ms", (int)x->t.runs, x->t.run_median_ms);
    if (x->t.device_n > 0) fprintf(f, " (device %.4g ms)", x->t.device_median_ms);
    if (x->n_diagnostics > 1) fprintf(f, "; %d diagnostics from the backend", (int)x->n_diagnostics);
    if (x->note[0]) {
        fprintf(f, "; the backend's note: ");
        par_html_text(f, x->note);
    }
    fprintf(f, "</p>");
    if (compared(x)) {
        worst(f, &x->m);
        metrics(f, &x->m);
    }
    decls(f, "Declared algorithms", x->n_algos, x->algos, 1);
    decls(f, "Node requantization schemes", x->n_requants, x->requants, 0);
    if (r->strips) par_html_strip(f, &r->strips[(size_t)fl->c * (size_t)r->n_backends + (size_t)fl->b]);
    output_tail(f, x, i < OUTPUT_FULL_ROWS);
    char repro[2048];
    par_report_repro(r, fl->c, fl->b, repro, sizeof repro);
    fprintf(f, "<p>Repro:</p><pre class=\"repro\"><code>");
    par_html_text(f, repro);
    fprintf(f, "</code></pre></details></td></tr>\n");
}

void par_html_failures(FILE *f, const par_report *r, const par_html_fail *fails, int64_t n, int64_t cap)
{
    int64_t shown = n < cap ? n : cap;
    fprintf(f, "<section>\n<h2>Failures, worst first</h2>\n");
    if (n == 0) {
        fprintf(f, "<p>No failures: every record passed or was unsupported.</p>\n");
        fprintf(f, "<table id=\"failures\" class=\"sortable\"><thead><tr><th>verdict</th></tr></thead><tbody>"
                   "</tbody></table>\n</section>\n");
        return;
    }
    fprintf(f, "<p>%lld record%s did not pass (CRASH, TIMEOUT, FAIL, FLAKY, ERROR), ordered by verdict, then by "
               "error/budget (infinite first).",
            (long long)n, n == 1 ? "" : "s");
    if (shown < n)
        fprintf(f, " <strong>The first %lld are listed; %lld more are in the report file.</strong>", (long long)shown,
                (long long)(n - shown));
    fprintf(f, " Where: the output as rows (every dimension but the last) x columns (the last), folded into at most 32 x 32 "
               "cells, the cells with failing elements in red. Open a case for its details and its repro command; click a "
               "header to sort.</p>\n"
               "<input data-filter=\"failures\" placeholder=\"filter rows (case, backend, op, reason)\" "
               "aria-label=\"filter failures\">\n"
               "<table id=\"failures\" class=\"sortable\"><thead><tr><th class=\"n\">#</th><th>verdict</th>"
               "<th>backend</th><th>op</th><th>dtype</th><th class=\"n\">error/budget</th><th>where</th>"
               "<th>case and reason (open for details)</th></tr></thead>\n<tbody>\n");
    for (int64_t i = 0; i < shown; i++) row(f, r, &fails[i], i);
    fprintf(f, "</tbody></table>\n");
    if (shown < n) fprintf(f, "<p>... and %lld more in the report file.</p>\n", (long long)(n - shown));
    fprintf(f, "</section>\n");
}
