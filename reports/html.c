/*
 * html.c - the HTML report (html.h): the page in the order a reader needs it: the header (run, counts), the heatmap
 * of op and dtype x backend with a compact case list per row, the error/budget and step-difference charts
 * (html_svg.c), the latency chart (html_svg.c), the failures worst first (html_fail.c) and the environment
 * (html_env.c). The page scaffolding (escaping, head, script) is reports/html_out.h.
 *
 * Heatmap rows: a single-op case is filed under its op and dtype ("conv2d qu8"); a multi-op case (a model, a fuzz
 * graph) under its case file's name when it came from a file, else under "graphs". A cell is coloured by the worst
 * verdict of the records that ran (CRASH > TIMEOUT > FAIL > FLAKY > ERROR > PASS; UNSUPPORTED only when every record
 * was), carries that verdict's letter and "passed/run" (run: records not UNSUPPORTED) and how many were
 * unsupported, and links to its row's case list.
 *
 * Size: the case lists are one line per case (a verdict letter per backend and the ID) inside a <details> closed by
 * default, which the browser does not lay out until opened, so the full suite (15,334 cases x 3 backends) stays
 * within a few megabytes and renders fast (docs/reports-html.md has the figures).
 *
 * This file must not judge results nor read anything but the par_report it is given.
 */
#include "html.h"

#include "html_int.h"
#include "groups.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KEY_LEN (sizeof(((par_report_case *)0)->ops) + PAR_DTYPE_LEN + 2)

typedef struct case_key {
    int multi;                  /* 0: an op and dtype row; 1: a file or "graphs" row (after the op rows) */
    char key[KEY_LEN];
    int32_t c;
} case_key;

static int cmp_key(const void *a, const void *b)
{
    const case_key *x = a, *y = b;
    if (x->multi != y->multi) return x->multi - y->multi;
    int k = strcmp(x->key, y->key);
    return k ? k : (x->c > y->c) - (x->c < y->c);
}

/* The heatmap: rows, the row of each case, counts per (row, backend, verdict). */
typedef struct heat {
    int32_t n_rows;
    int32_t *row_of;            /* [n_cases] */
    int32_t *first;             /* [n_rows + 1]: the row's cases are order[first[i] .. first[i + 1]) */
    int32_t *order;             /* [n_cases]: cases sorted by row */
    char (*name)[KEY_LEN];      /* [n_rows] */
    int64_t *count;             /* [n_rows][n_backends][PAR_V_COUNT] */
} heat;

static void heat_free(heat *h)
{
    free(h->row_of);
    free(h->first);
    free(h->order);
    free(h->name);
    free(h->count);
}

static void case_key_of(const par_report_case *pc, int32_t c, case_key *k)
{
    k->c = c;
    k->multi = strchr(pc->ops, ',') != NULL;
    if (!k->multi) {
        /* cases with hazard inputs (NaN, Inf, overflow, ...) get their own row: their failures are about the op's
         * rules for such inputs, not its arithmetic, and must not read as "the op is broken" */
        snprintf(k->key, sizeof k->key, "%s%s%s%s", pc->ops[0] ? pc->ops : "(no op)", pc->dtype[0] ? " " : "",
                 pc->dtype, strstr(pc->id, "=hazard:") ? " hazard inputs" : "");
        return;
    }
    if (pc->origin[0] && strncmp(pc->origin, "suite:", 6) != 0) {
        const char *slash = strrchr(pc->origin, '/');
        snprintf(k->key, sizeof k->key, "%s", slash ? slash + 1 : pc->origin);
    } else {
        snprintf(k->key, sizeof k->key, "graphs");
    }
}

static int heat_build(heat *h, const par_report *r)
{
    memset(h, 0, sizeof *h);
    size_t nc = (size_t)r->n_cases, nb = (size_t)r->n_backends;
    case_key *keys = malloc(sizeof *keys * (nc ? nc : 1));
    h->row_of = malloc(sizeof *h->row_of * (nc ? nc : 1));
    h->order = malloc(sizeof *h->order * (nc ? nc : 1));
    h->first = malloc(sizeof *h->first * (nc + 1));
    h->name = malloc(sizeof *h->name * (nc ? nc : 1));
    if (!keys || !h->row_of || !h->order || !h->first || !h->name) {
        free(keys);
        return -1;
    }
    for (size_t c = 0; c < nc; c++) case_key_of(&r->cases[c], (int32_t)c, &keys[c]);
    qsort(keys, nc, sizeof *keys, cmp_key);
    for (size_t i = 0; i < nc; i++) {
        if (i == 0 || keys[i].multi != keys[i - 1].multi || strcmp(keys[i].key, keys[i - 1].key) != 0) {
            h->first[h->n_rows] = (int32_t)i;
            memcpy(h->name[h->n_rows], keys[i].key, KEY_LEN);
            h->n_rows++;
        }
        h->order[i] = keys[i].c;
        h->row_of[keys[i].c] = h->n_rows - 1;
    }
    h->first[h->n_rows] = (int32_t)nc;
    free(keys);
    h->count = calloc((size_t)(h->n_rows ? h->n_rows : 1) * (nb ? nb : 1) * PAR_V_COUNT, sizeof *h->count);
    if (!h->count) return -1;
    for (size_t c = 0; c < nc; c++)
        for (size_t b = 0; b < nb; b++) {
            const par_result *x = par_html_rec(r, (int32_t)c, (int32_t)b);
            if (x) h->count[((size_t)h->row_of[c] * nb + b) * PAR_V_COUNT + (size_t)x->verdict]++;
        }
    return 0;
}

/* The worst verdict among the records that ran (UNSUPPORTED records did not: a backend that passes what it supports
 * is shown passing), UNSUPPORTED when every record was, or -1 when there is no record. */
static int worst_of(const int64_t *cnt)
{
    int w = -1;
    for (int v = 0; v < PAR_V_COUNT; v++)
        if (v != PAR_V_UNSUPPORTED && cnt[v] > 0 &&
            (w < 0 || par_verdict_severity((par_verdict)v) > par_verdict_severity((par_verdict)w)))
            w = v;
    return w >= 0 ? w : cnt[PAR_V_UNSUPPORTED] > 0 ? PAR_V_UNSUPPORTED : -1;
}

static void counts_words(FILE *f, const int64_t *cnt)
{
    int any = 0;
    for (int v = 0; v < PAR_V_COUNT; v++)
        if (cnt[v] > 0) {
            fprintf(f, "%s%lld %s", any ? ", " : "", (long long)cnt[v], par_verdict_name((par_verdict)v));
            any = 1;
        }
    if (!any) fprintf(f, "no record");
}

/* Section "Where to start": the failure groups (reports/groups.h), each with a link to its first listed failure. */
static void start_here(FILE *f, const par_report *r, const int32_t *fail_row)
{
    par_group *g = NULL;
    int32_t n = 0;
    if (par_groups_compute(r, &g, &n) != 0 || n == 0) {
        free(g);
        return;
    }
    fprintf(f, "<section id=\"start\">\n<h2>Where to start</h2>\n<p class=\"muted\">Failing cases by op and backend, "
               "with the parameter of the case IDs that best separates them from the passing ones.</p>\n<ol "
               "class=\"groups\">\n");
    for (int32_t i = 0; i < n && i < PAR_HTML_MAX_GROUPS; i++) {
        char text[512];
        par_group_text(r, &g[i], text, sizeof text);
        fprintf(f, "<li class=\"%s\">", g[i].hazard ? "hazard" : "fail");
        if (g[i].hazard) fprintf(f, "<span class=\"tag\">hazard inputs</span> ");
        par_html_text(f, text);
        int64_t c = g[i].first_case;
        if (c >= 0 && fail_row && fail_row[(size_t)c * (size_t)r->n_backends + (size_t)g[i].backend] >= 0)
            fprintf(f, " &middot; <a href=\"#f%d\">first failure</a>",
                    (int)fail_row[(size_t)c * (size_t)r->n_backends + (size_t)g[i].backend]);
        if (c >= 0) {
            char repro[2048];
            par_report_repro(r, (int32_t)c, g[i].backend, repro, sizeof repro);
            fprintf(f, "<br><code class=\"repro\">");
            par_html_text(f, repro);
            fprintf(f, "</code>");
        }
        fprintf(f, "</li>\n");
    }
    fprintf(f, "</ol>\n");
    if (n > PAR_HTML_MAX_GROUPS)
        fprintf(f, "<p>... and %d more groups (<code>parity report FILE --groups</code>).</p>\n",
                (int)(n - PAR_HTML_MAX_GROUPS));
    fprintf(f, "</section>\n");
    free(g);
}

/* A row where no record ran: every backend said UNSUPPORTED (or has no record). */
static int row_unsupported(const heat *h, int32_t i, size_t nb)
{
    for (size_t b = 0; b < nb; b++) {
        const int64_t *cnt = &h->count[((size_t)i * nb + b) * PAR_V_COUNT];
        for (int v = 0; v < PAR_V_COUNT; v++)
            if (v != PAR_V_UNSUPPORTED && cnt[v] > 0) return 0;
    }
    return 1;
}

static void header(FILE *f, const par_report *r, const int32_t *fail_row)
{
    int64_t total[PAR_V_COUNT] = {0};
    for (int32_t c = 0; c < r->n_cases; c++)
        for (int32_t b = 0; b < r->n_backends; b++) {
            const par_result *x = par_html_rec(r, c, b);
            if (x) total[x->verdict]++;
        }
    fprintf(f, "<header>\n<h1>parity report</h1>\n");
    if (r->interrupted)
        fprintf(f, "<p class=\"warn\"><strong>INTERRUPTED:</strong> the run was stopped; only the records that "
                   "finished are shown.</p>\n");
    start_here(f, r, fail_row);
    fprintf(f, "<table class=\"kv\">\n<tr><th>command line</th><td><code>");
    par_html_text(f, r->command_line);
    fprintf(f, "</code></td></tr>\n<tr><th>created</th><td>");
    par_html_text(f, r->created ? r->created : "now");
    fprintf(f, "</td></tr>\n<tr><th>wall time</th><td>%.1f s</td></tr>\n", r->wall_s);
    fprintf(f, "<tr><th>cases x backends</th><td>%d x %d</td></tr>\n", (int)r->n_cases, (int)r->n_backends);
    if (r->sel.shard_n > 0)
        fprintf(f, "<tr><th>shard</th><td>%d/%d (this report holds one shard of the selection)</td></tr>\n",
                (int)r->sel.shard_k, (int)r->sel.shard_n);
    if (r->n_shards > 0) fprintf(f, "<tr><th>merged</th><td>from %d shard reports (listed under Environment)</td></tr>\n",
                                 (int)r->n_shards);
    fprintf(f, "<tr><th>interrupted</th><td>%s</td></tr>\n</table>\n", r->interrupted ? "yes" : "no");
    fprintf(f, "<p id=\"counts\">");
    for (int v = 0; v < PAR_V_COUNT; v++) {
        static const par_verdict order[PAR_V_COUNT] = {PAR_V_PASS,  PAR_V_FAIL,    PAR_V_UNSUPPORTED, PAR_V_ERROR,
                                                       PAR_V_CRASH, PAR_V_TIMEOUT, PAR_V_FLAKY};
        par_html_verdict_badge(f, order[v]);
        fprintf(f, " %lld &nbsp; ", (long long)total[order[v]]);
    }
    fprintf(f, "</p>\n<table><thead><tr><th>backend</th>");
    for (int v = 0; v < PAR_V_COUNT; v++) fprintf(f, "<th class=\"n\">%s</th>", par_verdict_name((par_verdict)v));
    fprintf(f, "</tr></thead><tbody>\n");
    for (int32_t b = 0; b < r->n_backends; b++) {
        int64_t cnt[PAR_V_COUNT] = {0};
        for (int32_t c = 0; c < r->n_cases; c++) {
            const par_result *x = par_html_rec(r, c, b);
            if (x) cnt[x->verdict]++;
        }
        fprintf(f, "<tr><td>");
        par_html_text(f, r->backends[b].label);
        fprintf(f, "</td>");
        for (int v = 0; v < PAR_V_COUNT; v++) fprintf(f, "<td class=\"n\">%lld</td>", (long long)cnt[v]);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</tbody></table>\n<nav><a href=\"#heatmap\">heatmap</a> &middot; <a href=\"#error\">error/budget</a> "
               "&middot; <a href=\"#latency\">latency</a> &middot; <a href=\"#failures\">failures</a> &middot; "
               "<a href=\"#environment\">environment</a> &middot; <a href=\"#cases\">cases by row</a></nav>\n"
               "</header>\n");
}

static void heatmap(FILE *f, const par_report *r, const heat *h)
{
    size_t nb = (size_t)r->n_backends;
    int32_t n_folded = 0;
    for (int32_t i = 0; i < h->n_rows; i++) n_folded += row_unsupported(h, i, nb);
    fprintf(f, "<section>\n<h2>Heatmap: op and dtype x backend</h2>\n<p class=\"muted\">Each cell: the worst verdict "
               "of the records that ran (colour and letter: C CRASH, T TIMEOUT, F FAIL, K FLAKY, E ERROR, P PASS), "
               "then passed/run (run: records not UNSUPPORTED) and \"+n U\" for the n unsupported; \"U n\" when all n "
               "were unsupported. Hover "
               "for the counts; a cell or row name leads to the row's case list. Rows of cases with hazard inputs "
               "(NaN, Inf, overflow) are apart, marked <span class=\"tag\">hazard inputs</span>.</p>\n");
    if (n_folded > 0)
        fprintf(f, "<p>%d of %d rows, where every record was UNSUPPORTED, are folded away (listed below the "
                   "table).</p>\n", (int)n_folded, (int)h->n_rows);
    fprintf(f, "<table id=\"heatmap\" class=\"sortable\"><thead><tr><th>op dtype / file</th><th class=\"n\">cases"
               "</th>");
    for (size_t b = 0; b < nb; b++) {
        fprintf(f, "<th>");
        par_html_text(f, r->backends[b].label);
        fprintf(f, "</th>");
    }
    fprintf(f, "</tr></thead>\n<tbody>\n");
    for (int32_t i = 0; i < h->n_rows; i++) {
        if (row_unsupported(h, i, nb)) continue;
        fprintf(f, "<tr><td><a href=\"#g%d\">", (int)i);
        const char *hz = strstr(h->name[i], " hazard inputs");
        if (hz) {
            char name[KEY_LEN];
            snprintf(name, sizeof name, "%.*s", (int)(hz - h->name[i]), h->name[i]);
            par_html_text(f, name);
            fprintf(f, " <span class=\"tag\">hazard inputs</span>");
        } else {
            par_html_text(f, h->name[i]);
        }
        fprintf(f, "</a></td><td class=\"n\">%d</td>", (int)(h->first[i + 1] - h->first[i]));
        for (size_t b = 0; b < nb; b++) {
            const int64_t *cnt = &h->count[((size_t)i * nb + b) * PAR_V_COUNT];
            int w = worst_of(cnt);
            if (w < 0) {
                fprintf(f, "<td data-v=\"-1\"></td>");
                continue;
            }
            int64_t run = 0;
            for (int v = 0; v < PAR_V_COUNT; v++) run += v == PAR_V_UNSUPPORTED ? 0 : cnt[v];
            fprintf(f, "<td class=\"%s\" data-v=\"%d\" title=\"", par_html_verdict_class((par_verdict)w),
                    par_verdict_severity((par_verdict)w));
            par_html_text(f, h->name[i]);
            fprintf(f, " on ");
            par_html_text(f, r->backends[b].label);
            fprintf(f, ": ");
            counts_words(f, cnt);
            fprintf(f, "\"><a href=\"#g%d\">%c ", (int)i, par_html_verdict_letter((par_verdict)w));
            if (run == 0) fprintf(f, "%lld", (long long)cnt[PAR_V_UNSUPPORTED]);
            else fprintf(f, "%lld/%lld", (long long)cnt[PAR_V_PASS], (long long)run);
            if (run > 0 && cnt[PAR_V_UNSUPPORTED] > 0)
                fprintf(f, " <small>+%lld U</small>", (long long)cnt[PAR_V_UNSUPPORTED]);
            fprintf(f, "</a></td>");
        }
        fprintf(f, "</tr>\n");
    }
    if (h->n_rows == 0) fprintf(f, "<tr><td colspan=\"%d\">no cases</td></tr>\n", (int)nb + 2);
    fprintf(f, "</tbody></table>\n");
    if (n_folded > 0) {
        fprintf(f, "<details id=\"folded\"><summary>%d rows where every record was UNSUPPORTED</summary><p>",
                (int)n_folded);
        int any = 0;
        for (int32_t i = 0; i < h->n_rows; i++) {
            if (!row_unsupported(h, i, nb)) continue;
            fprintf(f, "%s<a href=\"#g%d\">", any ? ", " : "", (int)i);
            par_html_text(f, h->name[i]);
            fprintf(f, "</a>");
            any = 1;
        }
        fprintf(f, "</p></details>\n");
    }
    fprintf(f, "</section>\n");
}

/* One <details id="gI"> per heatmap row: one line per case, a verdict letter per backend ("-": no record; a
 * not-passing letter links to its failure row when listed) and the case ID. */
static void case_lists(FILE *f, const par_report *r, const heat *h, const int32_t *fail_row)
{
    size_t nb = (size_t)r->n_backends;
    fprintf(f, "<section id=\"cases\">\n<h2>Cases by heatmap row</h2>\n<p class=\"muted\">One line per case: a "
               "verdict letter per backend, in the order ");
    for (size_t b = 0; b < nb; b++) {
        fprintf(f, "%s<code>", b ? ", " : "");
        par_html_text(f, r->backends[b].label);
        fprintf(f, "</code>");
    }
    fprintf(f, " (\"-\": no record), then the case ID. A not-passing letter links to its failure.</p>\n");
    for (int32_t i = 0; i < h->n_rows; i++) {
        int64_t cnt[PAR_V_COUNT] = {0};
        for (size_t b = 0; b < nb; b++)
            for (int v = 0; v < PAR_V_COUNT; v++) cnt[v] += h->count[((size_t)i * nb + b) * PAR_V_COUNT + (size_t)v];
        fprintf(f, "<details id=\"g%d\"><summary>", (int)i);
        par_html_text(f, h->name[i]);
        fprintf(f, ": %d cases; ", (int)(h->first[i + 1] - h->first[i]));
        counts_words(f, cnt);
        fprintf(f, "</summary><pre class=\"cl\">");
        for (int32_t k = h->first[i]; k < h->first[i + 1]; k++) {
            int32_t c = h->order[k];
            for (size_t b = 0; b < nb; b++) {
                const par_result *x = par_html_rec(r, c, (int32_t)b);
                if (!x) {
                    fputc('-', f);
                } else if (x->verdict == PAR_V_PASS || x->verdict == PAR_V_UNSUPPORTED) {
                    fputc(par_html_verdict_letter(x->verdict), f);
                } else if (fail_row && fail_row[(size_t)c * nb + b] >= 0) {
                    fprintf(f, "<a class=\"%s\" href=\"#f%d\">%c</a>", par_html_verdict_class(x->verdict),
                            (int)fail_row[(size_t)c * nb + b], par_html_verdict_letter(x->verdict));
                } else {
                    fprintf(f, "<b class=\"%s\">%c</b>", par_html_verdict_class(x->verdict),
                            par_html_verdict_letter(x->verdict));
                }
            }
            fputc(' ', f);
            par_html_text(f, r->cases[c].id);
            fputc('\n', f);
        }
        fprintf(f, "</pre></details>\n");
    }
    fprintf(f, "</section>\n");
}

static void page(FILE *f, const par_report *r, const heat *h, const par_html_fail *fails, int64_t n_fails,
                 const int32_t *fail_row)
{
    char title[160];
    snprintf(title, sizeof title, "parity report %s", r->created ? r->created : "");
    par_html_page_begin(f, title);
    header(f, r, fail_row);
    heatmap(f, r, h);
    par_html_error_charts(f, r);
    par_html_latency(f, r, PAR_HTML_SLOWEST);
    par_html_failures(f, r, fails, n_fails, PAR_HTML_MAX_FAILURES);
    par_html_environment(f, r);
    case_lists(f, r, h, fail_row);
    par_html_page_end(f);
}

par_status par_report_write_html(const par_report *r, const char *path, par_msg *msg)
{
    if (!r || !path || !path[0]) return par_msgf(msg, PAR_ERROR, "html: no report or no path");
    if (r->n_cases < 0 || r->n_backends < 0 || (r->n_cases > 0 && r->n_backends > 0 && (!r->results || !r->cases)) ||
        (r->n_backends > 0 && !r->backends))
        return par_msgf(msg, PAR_ERROR, "%s: inconsistent report data (counts without arrays)", path);
    heat h;
    par_html_fail *fails = NULL;
    int32_t *fail_row = NULL;
    size_t nrec = (size_t)r->n_cases * (size_t)r->n_backends;
    int64_t n_fails = par_html_fails_collect(r, &fails);
    if (heat_build(&h, r) != 0 || n_fails < 0 || !(fail_row = malloc(sizeof *fail_row * (nrec ? nrec : 1)))) {
        heat_free(&h);
        free(fails);
        return par_msgf(msg, PAR_ERROR, "%s: out of memory building the page", path);
    }
    for (size_t i = 0; i < nrec; i++) fail_row[i] = -1;
    for (int64_t i = 0; i < n_fails && i < PAR_HTML_MAX_FAILURES; i++)
        fail_row[(size_t)fails[i].c * (size_t)r->n_backends + (size_t)fails[i].b] = (int32_t)i;
    par_html_doc doc;
    par_status st = PAR_ERROR;
    if (par_html_doc_open(&doc, msg) == 0) {
        page(doc.f, r, &h, fails, n_fails, fail_row);
        st = par_html_doc_commit(&doc, path, msg);
    }
    heat_free(&h);
    free(fails);
    free(fail_row);
    return st;
}
