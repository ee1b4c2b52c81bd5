/*
 * html_strip.c - a failing record's localization strip in the HTML report (html_int.h): one bar per node of the
 * model, in graph order, its height the node's error/budget on a log scale from 1e-6 to 1e3 (a line at 1, the
 * budget), blue while the node passes and in the FAIL colour where it diverges (over budget, non-finite, or the
 * statistical companion fails), the first divergent node outlined. Each bar's title names the node, its op, its
 * error/budget and the companion's z. Below it, where the companion judged the node values, a second strip of the
 * companion's z per node on a log scale from 1e-2 to 1e4 with a line at the bound every node value is held to
 * (that of the case's K node values, docs/oracle.md "The companion on every node"): a layer computed below its
 * declared precision shows there where its error enters, even where the error/budget stays below 1 at every node.
 * So the page shows where the error enters and how it grows without opening the report file.
 *
 * It must not judge anything: it draws what the strip says (campaign/localize.h computed it with the oracle).
 */
#include "html_int.h"

#include <math.h>
#include <stdio.h>

#define STRIP_H 60    /* the bars' area, px */
#define STRIP_W_MAX 900

/* The height of a bar: log10(ratio) from -6 (0 px) to 3 (STRIP_H); non-finite and over 1e3 at the top. */
static double bar_h(double ratio)
{
    if (isnan(ratio)) return 0;
    if (isinf(ratio) || ratio >= 1e3) return STRIP_H;
    if (ratio <= 1e-6) return 1;
    return 1 + (STRIP_H - 1) * (log10(ratio) + 6.0) / 9.0;
}

/* The height of a companion bar: log10(z) from -2 (1 px) to 4 (STRIP_H); non-finite and over 1e4 at the top. */
static double z_h(double z)
{
    if (isnan(z)) return 0;
    if (isinf(z) || z >= 1e4) return STRIP_H;
    if (z <= 1e-2) return 1;
    return 1 + (STRIP_H - 1) * (log10(z) + 2.0) / 6.0;
}

static void num(FILE *f, double v)
{
    if (isnan(v)) fputs("-", f);
    else if (isinf(v)) fputs("inf", f);
    else fprintf(f, "%.3g", v);
}

void par_html_strip(FILE *f, const par_node_strip *s)
{
    if (!s || !s->present) return;
    fprintf(f, "<p>Localization (%s): ", s->by_prefix      ? "by prefixes of the graph"
                                         : s->node_outputs ? "every node's output, as the backend ran the case"
                                                           : "every node's output");
    if (s->first >= 0) {
        fprintf(f, "the first divergent node is %d <code>", (int)s->first);
        par_html_text(f, s->first_name);
        fprintf(f, "</code> (");
        par_html_text(f, s->first_op);
        fprintf(f, "), error/budget ");
        num(f, s->first_ratio);
        fprintf(f, ", companion z ");
        num(f, s->first_z);
    } else {
        fprintf(f, "no node diverges on its own");
    }
    if (s->by_prefix && s->why[0]) {
        fprintf(f, " (per-node outputs unavailable: ");
        par_html_text(f, s->why);
        fputc(')', f);
    }
    fprintf(f, ".</p>");
    if (s->n <= 0) return;
    double w = (double)STRIP_W_MAX / s->n;
    if (w > 12) w = 12;
    const double W = w * s->n, one = STRIP_H - bar_h(1.0);
    fprintf(f, "<svg class=\"strip\" width=\"%.0f\" height=\"%d\" viewBox=\"0 0 %.1f %d\" role=\"img\" "
               "aria-label=\"error/budget per node\"><title>error/budget of each of the %d nodes, graph order, log "
               "scale 1e-6 to 1e3; the line is the budget</title>",
            W, STRIP_H + 2, W, STRIP_H + 2, (int)s->n);
    for (int32_t i = 0; i < s->n; i++) {
        const par_node_verdict *v = &s->nodes[i];
        const double h = bar_h(v->max_ratio);
        fprintf(f, "<rect class=\"%s%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>node %d ",
                v->diverges ? "d" : "p", v->node == s->first ? " first" : "", i * w, STRIP_H - h + 1,
                w > 2 ? w - 0.5 : w, h, (int)v->node);
        par_html_text(f, v->name);
        fputs(" (", f);
        par_html_text(f, v->op);
        fputs("): error/budget ", f);
        num(f, v->max_ratio);
        fputs(", companion z ", f);
        num(f, v->stat_z);
        fprintf(f, ", %lld of %lld elements over</title></rect>", (long long)v->n_over, (long long)v->n);
    }
    fprintf(f, "<line x1=\"0\" x2=\"%.1f\" y1=\"%.2f\" y2=\"%.2f\"/></svg>", W, one + 1, one + 1);
    if (s->stat_k <= 0) return;
    const double zb = STRIP_H - z_h(s->stat_bound);
    fprintf(f, "<p>Companion z per node, held to %.3g, the bound over the case's %d node values:</p>", s->stat_bound,
            (int)s->stat_k);
    fprintf(f, "<svg class=\"strip\" width=\"%.0f\" height=\"%d\" viewBox=\"0 0 %.1f %d\" role=\"img\" "
               "aria-label=\"companion z per node\"><title>the statistical companion's z of each of the %d nodes, "
               "graph order, log scale 1e-2 to 1e4; the line is the bound %.3g</title>",
            W, STRIP_H + 2, W, STRIP_H + 2, (int)s->n, s->stat_bound);
    for (int32_t i = 0; i < s->n; i++) {
        const par_node_verdict *v = &s->nodes[i];
        const double h = z_h(v->stat_z);
        fprintf(f, "<rect class=\"%s%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>node %d ",
                v->stat_z > s->stat_bound ? "d" : "p", v->node == s->first ? " first" : "", i * w, STRIP_H - h + 1,
                w > 2 ? w - 0.5 : w, h, (int)v->node);
        par_html_text(f, v->name);
        fputs(": companion z ", f);
        num(f, v->stat_z);
        fputs("</title></rect>", f);
    }
    fprintf(f, "<line x1=\"0\" x2=\"%.1f\" y1=\"%.2f\" y2=\"%.2f\"/></svg>", W, zb + 1, zb + 1);
}
