/*
 * diff_html.c - a report diff (reports/diff.h) as one self-contained HTML page: the gate, the counts per kind, what
 * the latency test judged, and every item worst first with its repro command. No script, no external resource, so
 * the page can be attached to a CI job as it is. Written atomically (core/files.h).
 *
 * It must not compute anything the diff did not (it renders a par_diff), and every text from a report goes through
 * html_text (case IDs, labels and reasons come from backends and case files).
 *
 * The escaping and the page head are local until the shared HTML scaffolding (reports/html_out.h) is available;
 * then this file uses it.
 */
#include "diff.h"

#include "core/files.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Text as HTML character data or a quoted attribute value: & < > " ' escaped, control characters other than tab as
 * U+FFFD (they are not allowed in HTML text). The input is valid UTF-8 (the report's strings are). */
static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default:
            if ((c < 0x20 && c != '\t') || c == 0x7F) fputs("&#xFFFD;", f);
            else fputc((int)c, f);
        }
    }
}

static const char *gate_class(par_gate g) { return g == PAR_GATE_FAIL ? "fail" : g == PAR_GATE_WARN ? "warn" : "ok"; }

static const char *vname(int32_t v) { return v >= 0 && v < PAR_V_COUNT ? par_verdict_name((par_verdict)v) : "absent"; }

static void item_row(FILE *f, const par_diff_item *it)
{
    const par_gate g = par_diff_kind_gate(it->kind);
    fprintf(f, "<tr class=\"%s\"><td>%s</td><td>", gate_class(g), g == PAR_GATE_PASS ? "" : par_gate_name(g));
    html_text(f, par_diff_kind_name(it->kind));
    fputs("</td><td class=\"id\">", f);
    html_text(f, it->case_id);
    fputs("</td><td>", f);
    html_text(f, it->backend);
    fputs("</td><td>", f);
    switch (it->kind) {
    case PAR_DIFF_LATENCY_FAIL:
    case PAR_DIFF_LATENCY_WARN:
    case PAR_DIFF_FASTER:
        fprintf(f,
                "median %.4g &rarr; %.4g ms (&times;%.3f), fastest %.4g &rarr; %.4g ms (&times;%.3f), %d/%d "
                "samples, p %.2g, Holm %.2g",
                it->med_base, it->med_new, it->effect, it->min_base, it->min_new,
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
        fprintf(f, "%s &rarr; %s", vname(it->v_base), vname(it->v_new));
        if (it->reason[0]) {
            fputs(": ", f);
            html_text(f, it->reason);
        }
    }
    fputs("</td><td><code>", f);
    html_text(f, it->repro);
    fputs("</code></td></tr>\n", f);
}

static void page(FILE *f, const par_diff *d)
{
    const par_diff_opts *o = &d->opts;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>parity diff: ", f);
    fputs(par_gate_name(d->gate), f);
    fputs("</title>\n<style>\n"
          "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\n"
          "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;"
          "text-align:left;vertical-align:top}\n"
          "td.id,code{font-family:ui-monospace,monospace;font-size:90%;word-break:break-all}\n"
          ".fail td:first-child,.gate.fail{color:#fff;background:#c62828}\n"
          ".warn td:first-child,.gate.warn{background:#f9a825}\n"
          ".gate.ok{color:#fff;background:#2e7d32}.gate{padding:.1em .5em;border-radius:3px}\n"
          "</style></head><body>\n",
          f);
    fprintf(f, "<h1>parity diff: <span class=\"gate %s\">%s</span></h1>\n", gate_class(d->gate),
            par_gate_name(d->gate));
    fprintf(f, "<p>Records: %lld in BASE, %lld in NEW, %lld in both.%s%s</p>\n", (long long)d->records_base,
            (long long)d->records_new, (long long)d->records_both,
            d->base_interrupted ? " BASE was interrupted." : "", d->new_interrupted ? " NEW was interrupted." : "");
    fputs("<table><tr><th>kind</th><th>count</th><th>gate</th></tr>\n", f);
    for (int k = 0; k < PAR_DIFF_KIND_COUNT; k++) {
        const par_gate g = par_diff_kind_gate((par_diff_kind)k);
        const char *cls = !d->counts[k] || g == PAR_GATE_PASS ? ""
                          : g == PAR_GATE_FAIL                ? " class=\"fail\""
                                                              : " class=\"warn\"";
        fprintf(f, "<tr%s><td>", cls);
        html_text(f, par_diff_kind_name((par_diff_kind)k));
        fprintf(f, "</td><td>%lld</td><td>%s</td></tr>\n", (long long)d->counts[k],
                g == PAR_GATE_PASS ? "" : par_gate_name(g));
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
        fprintf(f, "<h2>Items, worst first (%d)</h2>\n<table><tr><th></th><th>kind</th><th>case</th><th>backend</th>"
                   "<th>what</th><th>repro</th></tr>\n",
                (int)d->n_items);
        for (int32_t i = 0; i < d->n_items; i++) item_row(f, &d->items[i]);
        fputs("</table>\n", f);
    }
    fputs("</body></html>\n", f);
}

par_status par_diff_write_html(const par_diff *d, const char *path, par_msg *msg)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return par_msgf(msg, PAR_ERROR, "%s: %s", path, strerror(errno));
    page(f, d);
    if (fclose(f) != 0) {
        free(text);
        return par_msgf(msg, PAR_ERROR, "%s: out of memory", path);
    }
    const int rc = par_write_file_atomic(path, text, msg);
    free(text);
    return rc == 0 ? PAR_OK : PAR_ERROR;
}
