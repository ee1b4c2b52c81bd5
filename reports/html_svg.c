/*
 * html_svg.c - the charts of the HTML report (html_int.h), as inline SVG with text labels and a <title> tooltip on
 * every bar: the error/budget distribution and the step-difference histogram per backend, and the latency bars.
 *
 * Error/budget (metrics.max_ratio: the largest |backend - reference| / budget of a record's elements, docs/oracle.md)
 * is binned by decade on a log scale: exact 0, (0, 1e-6], (1e-6, 1e-5], ..., (1e2, 1e3], (1e3, inf), infinite or
 * NaN. The bins are closed above, so a ratio of exactly 1 (within budget) lies left of the budget line and every bin
 * right of it holds only records over budget. Bar heights are on a log scale of counts (log10(1 + count)), so a few
 * records beside ten thousand stay visible; every bar carries its count.
 *
 * This file must not judge anything: it draws what the records say.
 */
#include "html_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int par_html_ratio_bin(double x)
{
    if (isnan(x) || isinf(x)) return PAR_HTML_RATIO_BINS - 1;
    if (x <= 0) return 0;
    if (x <= pow(10, PAR_HTML_DEC_LO)) return 1;
    if (x > pow(10, PAR_HTML_DEC_HI)) return PAR_HTML_RATIO_BINS - 2;
    int k = (int)ceil(log10(x)); /* x in (10^(k-1), 10^k], corrected where log10 rounds across a power of ten */
    while (k > PAR_HTML_DEC_LO && pow(10, k - 1) >= x) k--;
    while (k < PAR_HTML_DEC_HI && pow(10, k) < x) k++;
    return k - PAR_HTML_DEC_LO + 1;
}

static const char *ratio_bin_label(int i, char *buf, size_t len)
{
    if (i == 0) return "0";
    if (i == 1) snprintf(buf, len, "\xE2\x89\xA4" "1e%d", PAR_HTML_DEC_LO);
    else if (i == PAR_HTML_RATIO_BINS - 2) snprintf(buf, len, ">1e%d", PAR_HTML_DEC_HI);
    else if (i == PAR_HTML_RATIO_BINS - 1) snprintf(buf, len, "inf");
    else snprintf(buf, len, "1e%d", i + PAR_HTML_DEC_LO - 1);
    return buf;
}

static const char *ratio_bin_range(int i, char *buf, size_t len)
{
    if (i == 0) snprintf(buf, len, "exactly 0");
    else if (i == 1) snprintf(buf, len, "(0, 1e%d]", PAR_HTML_DEC_LO);
    else if (i == PAR_HTML_RATIO_BINS - 2) snprintf(buf, len, "(1e%d, inf)", PAR_HTML_DEC_HI);
    else if (i == PAR_HTML_RATIO_BINS - 1) snprintf(buf, len, "infinite or NaN");
    else snprintf(buf, len, "(1e%d, 1e%d]", i + PAR_HTML_DEC_LO - 2, i + PAR_HTML_DEC_LO - 1);
    return buf;
}

/* Height of a bar of count n when the largest is max, on a log scale of counts; at least 2 px when n > 0. */
static double bar_h(int64_t n, int64_t max, double full)
{
    if (n <= 0 || max <= 0) return 0;
    double h = full * log10(1.0 + (double)n) / log10(1.0 + (double)max);
    return h < 2 ? 2 : h;
}

/* A bar chart of n bins: labels under the bars, counts above, a <title> per bar, colour per bin; budget_after >= 0
 * draws the budget line after that bin. */
static void bar_chart(FILE *f, int n, const int64_t *count, const char *const *label, const char *const *tip,
                      const char *const *colour, int budget_after, const char *aria)
{
    const double bw = 34, left = 10, top = 18, plot = 110, w = left * 2 + bw * n;
    int64_t max = 0;
    for (int i = 0; i < n; i++) max = count[i] > max ? count[i] : max;
    fprintf(f, "<svg width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"", w, top + plot + 34);
    par_html_text(f, aria);
    fprintf(f, "\">\n<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#888\"/>\n", left, top + plot,
            w - left, top + plot);
    for (int i = 0; i < n; i++) {
        double x = left + bw * i, h = bar_h(count[i], max, plot);
        fprintf(f, "<g><title>");
        par_html_text(f, tip[i]);
        fprintf(f, ": %lld</title><rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" fill=\"%s\"/>", (long long)count[i],
                x + 3, top + plot - h, bw - 6, h, colour[i]);
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"middle\">%lld</text>", x + bw / 2, top + plot - h - 3,
                (long long)count[i]);
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">", x + bw / 2, top + plot + 14);
        par_html_text(f, label[i]);
        fprintf(f, "</text></g>\n");
    }
    if (budget_after >= 0) {
        double x = left + bw * (budget_after + 1);
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#000\" stroke-dasharray=\"4 3\"/>"
                   "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">budget (ratio 1)</text>\n",
                x, top - 6, x, top + plot + 4, x, top + plot + 28);
    }
    fprintf(f, "</svg>\n");
}

static int compared(const par_result *x)
{
    return x && (x->verdict == PAR_V_PASS || x->verdict == PAR_V_FAIL) && x->m.n > 0;
}

static void backend_label(FILE *f, const par_report *r, int32_t b)
{
    par_html_text(f, r->backends[b].label);
}

void par_html_error_charts(FILE *f, const par_report *r)
{
    fprintf(f, "<section id=\"error\">\n<h2>Error / budget</h2>\n"
               "<p class=\"muted\">Per backend, the records the oracle compared (PASS or FAIL with elements) binned by "
               "their largest error / budget ratio, a decade per bin (each bin closed above: a ratio of exactly 1 is "
               "within budget); the dashed line is the budget. Bar heights on a log scale of counts; each bar is "
               "labelled with its count.</p>\n<div class=\"charts\">\n");
    int any = 0;
    for (int32_t b = 0; b < r->n_backends; b++) {
        int64_t cnt[PAR_HTML_RATIO_BINS] = {0}, n = 0, over = 0;
        for (int32_t c = 0; c < r->n_cases; c++) {
            const par_result *x = par_html_rec(r, c, b);
            if (!compared(x)) continue;
            int k = par_html_ratio_bin(x->m.max_ratio);
            cnt[k]++;
            n++;
            over += !(x->m.max_ratio <= 1); /* NaN counts as over */
        }
        if (!n) continue;
        any = 1;
        char lb[PAR_HTML_RATIO_BINS][16], tb[PAR_HTML_RATIO_BINS][40];
        const char *label[PAR_HTML_RATIO_BINS], *tip[PAR_HTML_RATIO_BINS], *colour[PAR_HTML_RATIO_BINS];
        for (int i = 0; i < PAR_HTML_RATIO_BINS; i++) {
            label[i] = ratio_bin_label(i, lb[i], sizeof lb[i]);
            tip[i] = ratio_bin_range(i, tb[i], sizeof tb[i]);
            colour[i] = i == 0 ? "#999" : i <= -PAR_HTML_DEC_LO + 1 ? "#0072b2" : "#d55e00";
        }
        fprintf(f, "<figure><figcaption>");
        backend_label(f, r, b);
        fprintf(f, ": %lld compared, %lld over budget</figcaption>\n", (long long)n, (long long)over);
        char aria[300];
        snprintf(aria, sizeof aria, "error/budget distribution of %s", r->backends[b].label);
        bar_chart(f, PAR_HTML_RATIO_BINS, cnt, label, tip, colour, -PAR_HTML_DEC_LO + 1, aria);
        fprintf(f, "</figure>\n");
    }
    if (!any) fprintf(f, "<p>No record was compared (no PASS or FAIL with elements).</p>\n");
    fprintf(f, "</div>\n");

    /* step differences of quantized outputs */
    static const char *const hl[PAR_HIST_BINS] = {"\xE2\x89\xA4-3", "-2", "-1", "0", "+1", "+2", "\xE2\x89\xA5+3"};
    static const char *const ht[PAR_HIST_BINS] = {"3 or more steps below the reference", "2 steps below",
                                                  "1 step below", "equal to the reference", "1 step above",
                                                  "2 steps above", "3 or more steps above"};
    static const char *const hc[PAR_HIST_BINS] = {"#d55e00", "#e69f00", "#56b4e9", "#0072b2", "#56b4e9", "#e69f00",
                                                  "#d55e00"};
    int header = 0;
    for (int32_t b = 0; b < r->n_backends; b++) {
        int64_t h[PAR_HIST_BINS] = {0}, recs = 0, tot = 0;
        for (int32_t c = 0; c < r->n_cases; c++) {
            const par_result *x = par_html_rec(r, c, b);
            if (!compared(x) || !x->m.quant) continue;
            recs++;
            for (int k = 0; k < PAR_HIST_BINS; k++) h[k] += x->m.hist[k];
        }
        if (!recs) continue;
        if (!header)
            fprintf(f, "<h3>Step differences of quantized outputs</h3>\n"
                       "<p class=\"muted\">Per backend with quantized records: every output element's integer minus "
                       "the reference's integer under the declared scheme (docs/quantization.md), summed over the "
                       "records. The mean counts the outer bins as &#177;3, so it is a bound when they are not "
                       "empty.</p>\n<div class=\"charts\">\n");
        header = 1;
        double sum = 0;
        for (int k = 0; k < PAR_HIST_BINS; k++) {
            tot += h[k];
            sum += (double)(k - PAR_HIST_ZERO) * (double)h[k];
        }
        fprintf(f, "<figure><figcaption>");
        backend_label(f, r, b);
        fprintf(f, ": %lld records, %lld elements, mean step difference %+.4f</figcaption>\n", (long long)recs,
                (long long)tot, tot ? sum / (double)tot : 0.0);
        char aria[300];
        snprintf(aria, sizeof aria, "step-difference histogram of %s", r->backends[b].label);
        bar_chart(f, PAR_HIST_BINS, h, hl, ht, hc, -1, aria);
        fprintf(f, "</figure>\n");
    }
    if (header) fprintf(f, "</div>\n");
    fprintf(f, "</section>\n");
}

/* ---------------------------------------------------------------------------------------------------------------
 * Latency
 * ------------------------------------------------------------------------------------------------------------- */

typedef struct lat_case {
    int32_t c;
    double key;
} lat_case;

static int cmp_lat(const void *a, const void *b)
{
    const lat_case *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? 1 : -1;
    return x->c - y->c;
}

static int is_model(const par_report_case *pc)
{
    return strstr(pc->origin, "cases/models/") != NULL;
}

/* The part of s that fits max bytes, cut at a UTF-8 character boundary, with "..." when cut. */
static void text_cut(FILE *f, const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max) {
        par_html_text(f, s);
        return;
    }
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80) max--;
    char buf[512];
    if (max >= sizeof buf) max = sizeof buf - 1;
    memcpy(buf, s, max);
    buf[max] = 0;
    par_html_text(f, buf);
    fputs("...", f);
}

/* A log10 axis from 10^lo to 10^hi over [x0, x0 + w]. */
static double ax(double v, int lo, int hi, double x0, double w)
{
    double l = v > 0 ? log10(v) : lo;
    if (l < lo) l = lo;
    if (l > hi) l = hi;
    return x0 + w * (l - lo) / (hi - lo);
}

static void decade_ticks(FILE *f, int lo, int hi, double x0, double w, double y0, double y1)
{
    /* a line per decade, a label every `every` decades so that labels stay 60 px apart */
    int every = (int)ceil(60.0 / (w / (hi - lo)));
    for (int k = lo; k <= hi; k++) {
        double x = ax(pow(10, k), lo, hi, x0, w);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ddd\"/>\n", x, y0, x, y1);
        if ((k - lo) % every == 0)
            fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%g ms</text>\n", x, y0 - 4, pow(10, k));
    }
}

static void log_range(double lo_v, double hi_v, int *lo, int *hi)
{
    *lo = lo_v > 0 ? (int)floor(log10(lo_v)) : -3;
    *hi = hi_v > 0 ? (int)ceil(log10(hi_v)) : 0;
    if (*lo < -4) *lo = -4;
    if (*hi <= *lo) *hi = *lo + 1;
}

void par_html_latency(FILE *f, const par_report *r, int32_t n_slowest)
{
    fprintf(f, "<section id=\"latency\">\n<h2>Latency</h2>\n");
    lat_case *list = malloc(sizeof *list * (size_t)(r->n_cases > 0 ? r->n_cases : 1));
    if (!list) {
        fprintf(f, "<p>Out of memory drawing the latency chart.</p>\n</section>\n");
        return;
    }
    int32_t n = 0, models = 0;
    for (int32_t c = 0; c < r->n_cases; c++) models += is_model(&r->cases[c]);
    for (int32_t c = 0; c < r->n_cases; c++) {
        if (models && !is_model(&r->cases[c])) continue;
        double key = -1;
        for (int32_t b = 0; b < r->n_backends; b++) {
            const par_result *x = par_html_rec(r, c, b);
            if (x && x->t.runs > 0 && x->t.run_median_ms > key) key = x->t.run_median_ms;
        }
        if (key >= 0) list[n++] = (lat_case){c, key};
    }
    if (models) {
        fprintf(f, "<p class=\"muted\">The model cases (case files under cases/models), per backend: ");
    } else {
        qsort(list, (size_t)n, sizeof *list, cmp_lat);
        if (n > n_slowest) n = n_slowest;
        fprintf(f, "<p class=\"muted\">No model case ran; the %d slowest cases (largest median run time on any "
                   "backend), per backend: ", (int)n);
    }
    int32_t n_dev = 0;
    for (int32_t i = 0; i < n; i++)
        for (int32_t b = 0; b < r->n_backends; b++) {
            const par_result *x = par_html_rec(r, list[i].c, b);
            n_dev += x && x->t.runs > 0 && x->t.device_n > 0;
        }
    fprintf(f, "run time as a bar from the 10th to the 90th percentile of the timed runs with the median marked, and "
               "prepare time beside it, both on log scales. Device time (the device's own clock, "
               "PAR_PROC_DEVICE_TIME): a thin green bar under the run's, on the same scale, from its 10th to its 90th "
               "percentile; %s</p>\n",
            n_dev ? "a backend without one does not time its device." : "no record here has one (no backend timed "
                                                                       "its device).");
    if (n == 0) {
        fprintf(f, "<p>No record was timed.</p>\n</section>\n");
        free(list);
        return;
    }
    double rmin = INFINITY, rmax = 0, pmin = INFINITY, pmax = 0;
    int32_t rows = 0;
    for (int32_t i = 0; i < n; i++)
        for (int32_t b = 0; b < r->n_backends; b++) {
            const par_result *x = par_html_rec(r, list[i].c, b);
            if (!x || x->t.runs <= 0) continue;
            rows++;
            if (x->t.run_p10_ms > 0 && x->t.run_p10_ms < rmin) rmin = x->t.run_p10_ms;
            if (x->t.run_p90_ms > rmax) rmax = x->t.run_p90_ms;
            if (x->t.device_n > 0 && x->t.device_p10_ms > 0 && x->t.device_p10_ms < rmin) rmin = x->t.device_p10_ms;
            if (x->t.device_n > 0 && x->t.device_p90_ms > rmax) rmax = x->t.device_p90_ms;
            if (x->t.prepare_ms > 0 && x->t.prepare_ms < pmin) pmin = x->t.prepare_ms;
            if (x->t.prepare_ms > pmax) pmax = x->t.prepare_ms;
        }
    int rlo, rhi, plo, phi;
    log_range(rmin, rmax, &rlo, &rhi);
    log_range(pmin, pmax, &plo, &phi);
    const double lab = 200, rx = 210, rw = 520, px = 800, pw = 280, rh = 16, top = 34;
    double height = top + (double)(rows + n) * rh + 10;
    /* without a model case the slowest single ops are a footnote (microseconds, not a benchmark): folded */
    if (!models)
        fprintf(f, "<details id=\"latency-cases\"><summary>the %d slowest cases: a single op's run takes microseconds "
                   "and is no benchmark (run cases/models, or parity bench, for that); open for the chart</summary>\n",
                (int)n);
    fprintf(f, "<svg width=\"1180\" height=\"%.0f\" role=\"img\" aria-label=\"latency per case and backend\">\n",
            height);
    fprintf(f, "<text x=\"%.0f\" y=\"12\" font-weight=\"bold\">run (p10..p90, median)</text>"
               "<text x=\"%.0f\" y=\"12\" font-weight=\"bold\">prepare</text>\n",
            rx, px);
    decade_ticks(f, rlo, rhi, rx, rw, top - 4, height - 6);
    decade_ticks(f, plo, phi, px, pw, top - 4, height - 6);
    double y = top;
    for (int32_t i = 0; i < n; i++) {
        const par_report_case *pc = &r->cases[list[i].c];
        const char *name = pc->id;
        if (models) {
            const char *slash = strrchr(pc->origin, '/');
            name = slash ? slash + 1 : pc->origin;
        }
        fprintf(f, "<g><title>");
        par_html_text(f, pc->id);
        fprintf(f, "</title><text x=\"0\" y=\"%.0f\" font-weight=\"bold\">", y + 12);
        text_cut(f, name, 150);
        fprintf(f, "</text></g>\n");
        y += rh;
        for (int32_t b = 0; b < r->n_backends; b++) {
            const par_result *x = par_html_rec(r, list[i].c, b);
            if (!x || x->t.runs <= 0) continue;
            const par_timing *t = &x->t;
            double x0 = ax(t->run_p10_ms, rlo, rhi, rx, rw), x1 = ax(t->run_p90_ms, rlo, rhi, rx, rw);
            double xm = ax(t->run_median_ms, rlo, rhi, rx, rw), xp = ax(t->prepare_ms, plo, phi, px, pw);
            if (x1 - x0 < 2) x1 = x0 + 2;
            fprintf(f, "<g><title>");
            par_html_text(f, r->backends[b].label);
            fprintf(f, ": run median %.4g ms, p10 %.4g, p90 %.4g (%d runs); prepare %.4g ms", t->run_median_ms,
                    t->run_p10_ms, t->run_p90_ms, (int)t->runs, t->prepare_ms);
            if (t->device_n > 0)
                fprintf(f, "; device median %.4g ms, p10 %.4g, p90 %.4g (%d runs)", t->device_median_ms,
                        t->device_p10_ms, t->device_p90_ms, (int)t->device_n);
            fprintf(f, "</title>");
            fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">", lab, y + 12);
            text_cut(f, r->backends[b].label, 40);
            fprintf(f, "</text><rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"10\" fill=\"#56b4e9\"/>"
                       "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#000\" stroke-width=\"2\"/>",
                    x0, y + 3, x1 - x0, xm, y + 1, xm, y + 15);
            if (t->device_n > 0) {
                double d0 = ax(t->device_p10_ms, rlo, rhi, rx, rw), d1 = ax(t->device_p90_ms, rlo, rhi, rx, rw);
                double dm = ax(t->device_median_ms, rlo, rhi, rx, rw);
                if (d1 - d0 < 4) d0 = dm - 2, d1 = dm + 2;
                fprintf(f, "<rect class=\"device\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"4\" fill=\"#009e73\"/>",
                        d0, y + 12, d1 - d0);
                if (d1 > x1) x1 = d1;
                fprintf(f, "<text x=\"%.1f\" y=\"%.0f\">%.3g ms (device %.3g ms)</text>", x1 + 4, y + 12,
                        t->run_median_ms, t->device_median_ms);
            } else {
                fprintf(f, "<text x=\"%.1f\" y=\"%.0f\">%.3g ms</text>", x1 + 4, y + 12, t->run_median_ms);
            }
            fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.1f\" height=\"10\" fill=\"#e69f00\"/>"
                       "<text x=\"%.1f\" y=\"%.0f\">%.3g ms</text></g>\n",
                    px, y + 3, xp - px > 1 ? xp - px : 1, (xp > px ? xp : px) + 4, y + 12, t->prepare_ms);
            y += rh;
        }
    }
    fprintf(f, "</svg>\n%s</section>\n", models ? "" : "</details>\n");
    free(list);
}
