/*
 * diff_html.c - a report diff (reports/diff.h) as one self-contained HTML page: the gate, the counts per kind, what
 * the latency test judged, and every item worst first with its repro command, in a table sortable by any column.
 * Built with the scaffolding of every parity page (reports/html_out.h: escaping, head and stylesheet, script,
 * verdict badges, the atomic write), so it can be attached to a CI job as it is.
 *
 * It must not compute anything the diff did not (it renders a par_diff), and every text from a report goes through
 * par_html_text (case IDs, labels and reasons come from backends and case files).
 */
#include "diff.h"

#include "html_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The gate's colour: the stylesheet's FAIL for FAIL, ERROR (yellow) for WARN, PASS for PASS; the word is always
 * written too, so the gate never relies on colour alone. */
static const char *gate_class(par_gate g) { return g == PAR_GATE_FAIL ? "vF" : g == PAR_GATE_WARN ? "vE" : "vP"; }

static void verdict(FILE *f, int32_t v)
{
    if (v >= 0 && v < PAR_V_COUNT) par_html_verdict_badge(f, (par_verdict)v);
    else fputs("absent", f);
}

static void item_row(FILE *f, const par_diff_item *it)
{
    const par_gate g = par_diff_kind_gate(it->kind);
    fprintf(f, "<tr><td class=\"%s\">%s</td><td>", g == PAR_GATE_PASS ? "" : gate_class(g),
            g == PAR_GATE_PASS ? "" : par_gate_name(g));
    par_html_text(f, par_diff_kind_name(it->kind));
    fputs("</td><td class=\"id\">", f);
    par_html_text(f, it->case_id);
    fputs("</td><td>", f);
    par_html_text(f, it->backend);
    fputs("</td><td>", f);
    switch (it->kind) {
    case PAR_DIFF_LATENCY_FAIL:
    case PAR_DIFF_LATENCY_WARN:
    case PAR_DIFF_LATENCY_UNCONFIRMED:
    case PAR_DIFF_FASTER:
        fprintf(f,
                "%smedian %.4g &rarr; %.4g ms (&times;%.3f), fastest %.4g &rarr; %.4g ms (&times;%.3f), %d/%d "
                "samples, p %.2g, Holm %.2g",
                it->device ? "device time: " : "", it->med_base, it->med_new, it->effect, it->min_base, it->min_new,
                it->min_base > 0 ? it->min_new / it->min_base : NAN, (int)it->n_base, (int)it->n_new, it->p, it->p_adj);
        break;
    case PAR_DIFF_DRIFT_WORSE:
    case PAR_DIFF_DRIFT_BETTER:
        fprintf(f, "error/budget %.3g &rarr; %.3g (&times;%.3g)", it->ratio_base, it->ratio_new, it->effect);
        break;
    case PAR_DIFF_CASE_GONE:
    case PAR_DIFF_CASE_ADDED:
    case PAR_DIFF_BACKEND_GONE:
    case PAR_DIFF_BACKEND_ADDED: break;
    default:
        verdict(f, it->v_base);
        fputs(" &rarr; ", f);
        verdict(f, it->v_new);
        if (it->reason[0]) {
            fputs(": ", f);
            par_html_text(f, it->reason);
        }
    }
    fputs("</td><td><code>", f);
    par_html_text(f, it->repro);
    fputs("</code></td></tr>\n", f);
}

static void page(FILE *f, const par_diff *d)
{
    const par_diff_opts *o = &d->opts;
    char title[64];
    snprintf(title, sizeof title, "parity diff: %s", par_gate_name(d->gate));
    par_html_page_begin(f, title);
    fprintf(f, "<h1>parity diff: <span class=\"gate %s\">%s</span></h1>\n", gate_class(d->gate),
            par_gate_name(d->gate));
    fprintf(f, "<p>Records: %lld in BASE, %lld in NEW, %lld in both.%s%s</p>\n", (long long)d->records_base,
            (long long)d->records_new, (long long)d->records_both,
            d->base_interrupted ? " BASE was interrupted." : "", d->new_interrupted ? " NEW was interrupted." : "");
    fputs("<table><tr><th>kind</th><th class=\"n\">count</th><th>gate</th></tr>\n", f);
    for (int k = 0; k < PAR_DIFF_KIND_COUNT; k++) {
        const par_gate g = par_diff_kind_gate((par_diff_kind)k);
        fputs("<tr><td>", f);
        par_html_text(f, par_diff_kind_name((par_diff_kind)k));
        fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"%s\">%s</td></tr>\n", (long long)d->counts[k],
                d->counts[k] && g != PAR_GATE_PASS ? gate_class(g) : "", g == PAR_GATE_PASS ? "" : par_gate_name(g));
    }
    fputs("</table>\n", f);
    fprintf(f,
            "<p>Latency: %lld records judged (one-sided Mann-Whitney, Holm over the records judged, alpha %g; warn "
            "+%g%%, fail +%g%% of the median and of the fastest run); %lld with fewer than %d samples on a side; "
            "%lld below %g ms.<br>\n"
            "Accuracy: %lld records compared on both sides; drift when error/budget moves by &times;%g or more with "
            "the larger ratio at least %g.</p>\n",
            (long long)d->latency_judged, o->alpha, 100 * o->latency_warn, 100 * o->latency_fail,
            (long long)d->latency_few, (int)o->min_samples, (long long)d->latency_below_floor, o->latency_floor_ms,
            (long long)d->drift_compared, o->drift_factor, o->drift_floor);
    if (d->n_items) {
        fprintf(f, "<h2>Items, worst first (%d)</h2>\n<table class=\"sortable\"><thead><tr><th>gate</th><th>kind</th>"
                   "<th>case</th><th>backend</th><th>what</th><th>repro</th></tr></thead>\n<tbody>\n",
                (int)d->n_items);
        for (int32_t i = 0; i < d->n_items; i++) item_row(f, &d->items[i]);
        fputs("</tbody></table>\n", f);
    }
    par_html_page_end(f);
}

par_status par_diff_write_html(const par_diff *d, const char *path, par_msg *msg)
{
    par_html_doc doc;
    if (par_html_doc_open(&doc, msg) != 0) return PAR_ERROR;
    page(doc.f, d);
    return par_html_doc_commit(&doc, path, msg);
}
