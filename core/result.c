/*
 * result.c - names of the record types' enums, the check of a record that crossed a process boundary, and the
 * text cleaner every string from a backend goes through (core/result.h). Plain data only: no I/O, no allocation.
 */
#include "result.h"

#include <math.h>
#include <stdlib.h>
#include "requant.h"

#include <string.h>

const char *par_verdict_name(par_verdict v)
{
    static const char *names[PAR_V_COUNT] = {"PASS", "FAIL", "UNSUPPORTED", "ERROR", "CRASH", "TIMEOUT", "FLAKY"};
    return (v >= 0 && v < PAR_V_COUNT) ? names[v] : "?";
}

const char *par_stat_skip_name(int32_t k)
{
    static const char *names[PAR_STAT_SKIP_N] = {"applied", "data", "quantized", "no scale", "flushing"};
    return (k >= 0 && k < PAR_STAT_SKIP_N) ? names[k] : NULL;
}

int par_verdict_severity(par_verdict v)
{
    switch (v) {
    case PAR_V_CRASH: return 6;
    case PAR_V_TIMEOUT: return 5;
    case PAR_V_FAIL: return 4;
    case PAR_V_FLAKY: return 3;
    case PAR_V_ERROR: return 2;
    case PAR_V_UNSUPPORTED: return 1;
    case PAR_V_PASS: return 0;
    default: return 7;
    }
}

static int cmp_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *v, int32_t n, double q)
{
    double pos = q * (double)(n - 1);
    int32_t lo = (int32_t)pos;
    if (lo >= n - 1) return v[n - 1];
    return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

void par_timing_quantiles(par_timing *t, double *ms, int32_t n)
{
    if (n <= 0) return;
    qsort(ms, (size_t)n, sizeof *ms, cmp_ms);
    t->run_min_ms = ms[0];
    t->run_median_ms = quantile(ms, n, 0.5);
    t->run_p10_ms = quantile(ms, n, 0.1);
    t->run_p90_ms = quantile(ms, n, 0.9);
}

void par_timing_device_quantiles(par_timing *t, double *ms, int32_t n)
{
    if (n <= 0) return;
    qsort(ms, (size_t)n, sizeof *ms, cmp_ms);
    t->device_median_ms = quantile(ms, n, 0.5);
    t->device_p10_ms = quantile(ms, n, 0.1);
    t->device_p90_ms = quantile(ms, n, 0.9);
}

/* Length of the valid UTF-8 sequence at s (n bytes available), or 0 when it is not one. Overlong forms,
 * surrogates and code points above U+10FFFF are invalid (RFC 3629). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    unsigned min;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) len = 2, min = 0x80, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, min = 0x800, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, min = 0x10000, cp = c & 0x07;
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

int par_text_clean(char *dst, size_t dst_cap, const char *src, size_t src_cap, int one_line)
{
    if (!dst || dst_cap == 0) return 1;
    size_t o = 0, i = 0;
    int changed = 0;
    const unsigned char *s = (const unsigned char *)(src ? src : "");
    if (!src) src_cap = 0;
    while (i < src_cap && s[i]) {
        size_t avail = 0;
        while (i + avail < src_cap && s[i + avail] && avail < 4) avail++;
        size_t len = utf8_len(s + i, avail);
        char tmp[8];
        size_t tlen;
        if (len == 0) {
            memcpy(tmp, "\xEF\xBF\xBD", 3); /* U+FFFD for one invalid byte */
            tlen = 3;
            len = 1;
            changed = 1;
        } else if (one_line && len == 1 && (s[i] < 0x20 || s[i] == 0x7F)) {
            static const char hex[] = "0123456789abcdef";
            tmp[0] = '\\', tmp[1] = 'x', tmp[2] = hex[s[i] >> 4], tmp[3] = hex[s[i] & 15];
            tlen = 4;
            changed = 1;
        } else {
            memcpy(tmp, s + i, len);
            tlen = len;
        }
        if (o + tlen + 1 > dst_cap) {
            changed = 1;
            break;
        }
        memcpy(dst + o, tmp, tlen);
        o += tlen;
        i += len;
    }
    if (i < src_cap && s[i]) changed = 1;
    if (i == src_cap && src_cap > 0) changed = 1; /* no terminator within the field */
    dst[o] = '\0';
    return changed;
}

/* Clean a fixed-size field in place (through a copy: the cleaner does not work in place). */
static int clean_field(char *f, size_t cap, int one_line)
{
    char tmp[PAR_OUTPUT_TAIL > PAR_REASON_LEN ? PAR_OUTPUT_TAIL : PAR_REASON_LEN];
    if (cap > sizeof tmp) cap = sizeof tmp;
    memcpy(tmp, f, cap);
    return par_text_clean(f, cap, tmp, cap, one_line);
}

int par_result_check(par_result *r, char *why, size_t why_len)
{
    const char *bad = NULL;
    if (r->done != 0 && r->done != 1) bad = "field done is neither 0 nor 1";
    else if ((int)r->verdict < 0 || (int)r->verdict >= PAR_V_COUNT) bad = "verdict out of range";
    else if (r->m.worst_output < 0 || r->m.worst_rank < 0 || r->m.worst_rank > PAR_MAX_RANK || r->m.n < 0 ||
             r->m.n_over < 0 || r->m.n_unbounded < 0 || r->t.runs < 0 || r->t.n_samples < 0 ||
             r->t.n_samples > PAR_TIMING_SAMPLES || r->t.n_samples > r->t.runs || r->output_bytes < 0 ||
             r->output_dropped < 0 || r->n_algos < 0 || r->n_requants < 0 || r->n_diagnostics < 0 ||
             r->t.device_n < 0 || r->t.device_n > r->t.runs || r->t.device_n_samples < 0 ||
             r->t.device_n_samples > PAR_TIMING_SAMPLES || r->t.device_n_samples > r->t.device_n ||
             r->m.tie_n < 0 || r->m.tie_other < 0 || r->m.tie_declared < -1 || r->m.tie_declared >= PAR_TIE_RULES ||
             r->m.stat_n < 0 || r->m.stat_n > r->m.n || (r->m.stat_over != 0 && r->m.stat_over != 1) ||
             r->m.stat_skip < 0 || r->m.stat_skip >= PAR_STAT_SKIP_N || r->m.node_k < 0)
        bad = "a count or index out of range";
    for (int k = 0; !bad && k < PAR_TIE_RULES; k++)
        if (r->m.tie_rule_n[k] < 0 || r->m.tie_rule_n[k] > r->m.tie_n) bad = "a tie count out of range";
    for (int32_t i = 0; !bad && i < r->n_algos && i < PAR_RESULT_ALGOS; i++)
        if (r->algos[i].node < 0 || r->algos[i].value <= PAR_ALGO_DIRECT || r->algos[i].value >= PAR_ALGO_COUNT)
            bad = "a declared algorithm out of range";
    for (int32_t i = 0; !bad && i < r->n_requants && i < PAR_RESULT_ALGOS; i++)
        if (r->requants[i].node < 0 || r->requants[i].value < 0 || r->requants[i].value >= PAR_REQUANT_N_SCHEMES)
            bad = "a declared requantization scheme out of range";
    if (!bad && r->t.device_n > 0 &&
        !(isfinite(r->t.device_median_ms) && isfinite(r->t.device_p10_ms) && isfinite(r->t.device_p90_ms) &&
          r->t.device_p10_ms >= 0 && r->t.device_median_ms >= 0 && r->t.device_p90_ms >= 0))
        bad = "a device time that is not a time";
    for (int32_t i = 0; !bad && i < r->t.device_n_samples; i++)
        if (!(isfinite(r->t.device_samples_ms[i]) && r->t.device_samples_ms[i] >= 0))
            bad = "a device time that is not a time";
    if (bad) {
        if (why && why_len) snprintf(why, why_len, "%s", bad);
        return -1;
    }
    int fixed = 0;
    fixed |= clean_field(r->reason, sizeof r->reason, 1);
    fixed |= clean_field(r->output, sizeof r->output, 0);
    fixed |= clean_field(r->case_dtype, sizeof r->case_dtype, 1);
    fixed |= clean_field(r->note, sizeof r->note, 1);
    fixed |= clean_field(r->m.node_at, sizeof r->m.node_at, 1);
    fixed |= clean_field(r->m.node_first, sizeof r->m.node_first, 1);
    for (int32_t i = 0; i < r->n_algos && i < PAR_RESULT_ALGOS; i++)
        fixed |= clean_field(r->algos[i].node_name, sizeof r->algos[i].node_name, 1);
    for (int32_t i = 0; i < r->n_requants && i < PAR_RESULT_ALGOS; i++)
        fixed |= clean_field(r->requants[i].node_name, sizeof r->requants[i].node_name, 1);
    if (fixed && why && why_len) snprintf(why, why_len, "a string was not terminated or not valid UTF-8");
    return fixed ? 1 : 0;
}
