/*
 * junit.c - a report as JUnit XML (reports/junit.h; the mapping is in docs/reports-junit-coverage.md). It reads the
 * par_report's records only, never a backend or a run, and must write a well-formed document whatever the strings
 * hold: every text goes through xml_text, which validates UTF-8 and replaces what XML 1.0 forbids.
 */
#include "junit.h"

#include "core/files.h"
#include "core/requant.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------------------
 * A growing buffer; out of memory is sticky (oom), checked once at the end.
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct xbuf {
    char *p;
    size_t len, cap;
    int oom;
} xbuf;

static void xb_put(xbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void xb_puts(xbuf *b, const char *s) { xb_put(b, s, strlen(s)); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void xb_printf(xbuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    xb_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* The length of the valid UTF-8 sequence at s (at most n bytes), or 0 when it is not one (a stray continuation,
 * an overlong form, a surrogate, a code point above U+10FFFF, a truncated sequence). *cp gets the code point. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t len;
    uint32_t c, min;
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    } else if ((s[0] & 0xe0) == 0xc0) {
        len = 2, c = s[0] & 0x1f, min = 0x80;
    } else if ((s[0] & 0xf0) == 0xe0) {
        len = 3, c = s[0] & 0x0f, min = 0x800;
    } else if ((s[0] & 0xf8) == 0xf0) {
        len = 4, c = s[0] & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
    *cp = c;
    return len;
}

/* s as XML character data (attr: inside a double-quoted attribute value, where tab, LF and CR are written as
 * character references so that attribute normalization keeps them). Invalid UTF-8 and U+FFFE / U+FFFF become
 * U+FFFD; the C0 controls XML 1.0 forbids become the visible text "\xNN". NULL writes nothing. */
static void xml_text(xbuf *b, const char *s, int attr)
{
    static const char hex[] = "0123456789abcdef";
    if (!s) return;
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s), i = 0;
    while (i < n) {
        uint32_t cp;
        size_t len = utf8_seq(u + i, n - i, &cp);
        if (len == 0 || cp == 0xfffe || cp == 0xffff) {
            xb_puts(b, "\xef\xbf\xbd"); /* U+FFFD */
            i += len ? len : 1;
            continue;
        }
        if (len > 1) {
            xb_put(b, s + i, len);
        } else if (cp == '&') {
            xb_puts(b, "&amp;");
        } else if (cp == '<') {
            xb_puts(b, "&lt;");
        } else if (cp == '>') {
            xb_puts(b, "&gt;");
        } else if (cp == '"' && attr) {
            xb_puts(b, "&quot;");
        } else if (cp == '\t' || cp == '\n' || cp == '\r') {
            if (attr) xb_printf(b, "&#%u;", (unsigned)cp);
            else xb_put(b, s + i, 1);
        } else if (cp < 0x20) {
            char esc[4] = {'\\', 'x', hex[cp >> 4], hex[cp & 15]};
            xb_put(b, esc, 4);
        } else {
            xb_put(b, s + i, 1);
        }
        i += len;
    }
}

/* attribute: name="value" with a leading space. */
static void xml_attr(xbuf *b, const char *name, const char *value)
{
    xb_printf(b, " %s=\"", name);
    xml_text(b, value, 1);
    xb_puts(b, "\"");
}

static void xml_property(xbuf *b, const char *name, const char *value)
{
    xb_puts(b, "      <property");
    xml_attr(b, "name", name);
    xml_attr(b, "value", value ? value : "");
    xb_puts(b, "/>\n");
}

/* ---------------------------------------------------------------------------------------------------------------
 * The document
 * ------------------------------------------------------------------------------------------------------------- */
static const par_result *rec(const par_report *r, int32_t c, int32_t b)
{
    return &r->results[(size_t)c * (size_t)r->n_backends + (size_t)b];
}

/* A time in seconds for the time attributes: finite and not negative, else 0. */
static double seconds(double s) { return isfinite(s) && s > 0 ? s : 0; }

/* The median timed run of a record, in seconds (0 when no run was timed). */
static double rec_time(const par_result *x) { return x->t.runs > 0 ? seconds(x->t.run_median_ms / 1000.0) : 0; }

static int is_error(par_verdict v)
{
    return v == PAR_V_ERROR || v == PAR_V_CRASH || v == PAR_V_TIMEOUT || v == PAR_V_FLAKY;
}

/* The JUnit timestamp (xs:dateTime without a zone, the junit-4 schema's pattern) from the report's ISO 8601 UTC
 * "2025-01-31T12:00:00Z"; "" when it does not have that form. */
static void timestamp(const char *created, char *buf, size_t len)
{
    buf[0] = 0;
    if (!created || strlen(created) < 19 || len < 20) return;
    for (int i = 0; i < 19; i++) {
        const char c = created[i];
        const int sep = i == 4 || i == 7 ? '-' : i == 10 ? 'T' : i == 13 || i == 16 ? ':' : 0;
        if (sep ? c != sep : (c < '0' || c > '9')) return;
    }
    memcpy(buf, created, 19);
    buf[19] = 0;
}

static void suite_properties(xbuf *b, const par_report *r, const par_backend_inst *bi, const par_env *env)
{
    char v[512];
    xb_puts(b, "    <properties>\n");
    xml_property(b, "parity.version", r->parity_version ? r->parity_version : "unknown");
    xml_property(b, "parity.git_revision", par_report_git_revision(r));
    snprintf(v, sizeof v, "%llu", (unsigned long long)r->seed);
    xml_property(b, "seed", v);
    snprintf(v, sizeof v, "%d", (int)r->repeat);
    xml_property(b, "repeat", v);
    snprintf(v, sizeof v, "%d", (int)r->warmup);
    xml_property(b, "warmup", v);
    xml_property(b, "command_line", r->command_line);
    if (r->interrupted) xml_property(b, "interrupted", "true");
    xml_property(b, "backend.label", bi->label);
    if (bi->be) {
        xml_property(b, "backend.name", bi->be->name);
        xml_property(b, "backend.version", bi->be->version);
        xml_property(b, "backend.description", bi->be->description);
        xml_property(b, "backend.arith", par_arith_name((par_arith)bi->arith));
    }
    for (int32_t k = 0; k < bi->n_knobs && k < PAR_MAX_KNOBS; k++) {
        char name[96];
        snprintf(name, sizeof name, "backend.knob.%s", bi->knob_key[k]);
        xml_property(b, name, bi->knob_val[k]);
    }
    if (bi->describe[0]) xml_property(b, "backend.describe", bi->describe);
    if (bi->probed) {
        const char *rq = par_requant_name((par_requant)bi->requant);
        xml_property(b, "backend.requant", rq ? rq : "fp32");
    }
    if (bi->plugin_path[0]) xml_property(b, "backend.plugin", bi->plugin_path);
    if (!bi->usable && bi->unusable_reason[0]) xml_property(b, "backend.unusable", bi->unusable_reason);
    xml_property(b, "cpu.model", env->cpu_model);
    xml_property(b, "cpu.features", env->cpu_features);
    snprintf(v, sizeof v, "%d", (int)env->cores);
    xml_property(b, "cpu.cores", v);
    snprintf(v, sizeof v, "%s %s %s", env->os_name, env->os_release, env->machine);
    xml_property(b, "os", v);
    xml_property(b, "compiler", env->compiler);
    xb_puts(b, "    </properties>\n");
}

/* The text of a <failure> or <error>: the reason, the oracle's numbers when it compared, the repro command. */
static void outcome_text(xbuf *b, const par_report *r, int32_t c, int32_t bk, const par_result *x)
{
    char line[1024];
    xml_text(b, x->reason, 0);
    xb_puts(b, "\n");
    if (x->verdict == PAR_V_FAIL && x->m.n > 0) {
        snprintf(line, sizeof line, "compared %lld elements: %lld over budget, %lld non-finite; max |d|/budget %.6g%s\n",
                 (long long)x->m.n, (long long)x->m.n_over, (long long)x->m.n_nonfinite, x->m.max_ratio,
                 isinf(x->m.max_ratio) ? " (d where the budget is 0)" : "");
        xb_puts(b, line);
        if (x->m.worst_index >= 0) {
            char coords[256] = "";
            for (int32_t k = 0; k < x->m.worst_rank && k < PAR_MAX_RANK; k++)
                snprintf(coords + strlen(coords), sizeof coords - strlen(coords), "%s%lld", k ? "," : "",
                         (long long)x->m.worst_coords[k]);
            snprintf(line, sizeof line,
                     "worst element: output %d index %lld [%s]: reference %.9g, backend %.9g, budget %.6g\n",
                     (int)x->m.worst_output, (long long)x->m.worst_index, coords, x->m.worst_ref, x->m.worst_got,
                     x->m.worst_budget);
            xb_puts(b, line);
        }
    }
    char repro[2048];
    par_report_repro(r, c, bk, repro, sizeof repro);
    xb_puts(b, "repro: ");
    xml_text(b, repro, 0);
    xb_puts(b, "\n");
}

static void testcase(xbuf *b, const par_report *r, int32_t c, int32_t bk, const par_result *x)
{
    const par_report_case *pc = &r->cases[c];
    char classname[512], ops[256];
    snprintf(ops, sizeof ops, "%s", pc->ops[0] ? pc->ops : "graph");
    for (char *p = ops; *p; p++)
        if (*p == ',') *p = '+';
    snprintf(classname, sizeof classname, "parity.%s.%s", r->backends[bk].label, ops);
    xb_puts(b, "    <testcase");
    xml_attr(b, "classname", classname);
    xml_attr(b, "name", pc->id);
    xb_printf(b, " time=\"%.9f\">\n", rec_time(x));
    const char *vname = par_verdict_name(x->verdict);
    if (x->verdict == PAR_V_UNSUPPORTED) {
        xb_puts(b, "      <skipped");
        xml_attr(b, "message", x->reason);
        xb_puts(b, "/>\n");
    } else if (x->verdict == PAR_V_FAIL || is_error(x->verdict)) {
        const char *el = x->verdict == PAR_V_FAIL ? "failure" : "error";
        xb_printf(b, "      <%s", el);
        xml_attr(b, "type", vname);
        xml_attr(b, "message", x->reason[0] ? x->reason : vname);
        xb_puts(b, ">");
        outcome_text(b, r, c, bk, x);
        xb_printf(b, "</%s>\n", el);
    }
    if (x->output[0]) {
        xb_puts(b, "      <system-out>");
        if (x->output_dropped > 0)
            xb_printf(b, "[%lld earlier bytes not kept]\n", (long long)x->output_dropped);
        xml_text(b, x->output, 0);
        xb_puts(b, "</system-out>\n");
    }
    xb_puts(b, "    </testcase>\n");
}

char *par_report_junit_text(const par_report *r)
{
    xbuf b = {0};
    par_env here;
    const par_env *env = r->env;
    if (!env) {
        par_env_collect(&here);
        env = &here;
    }
    char ts[32];
    timestamp(r->created, ts, sizeof ts);
    int64_t all[4] = {0}; /* tests, failures, errors, skipped */
    for (int32_t bk = 0; bk < r->n_backends; bk++)
        for (int32_t c = 0; c < r->n_cases; c++) {
            const par_result *x = rec(r, c, bk);
            if (!x->done) continue;
            all[0]++;
            all[1] += x->verdict == PAR_V_FAIL;
            all[2] += is_error(x->verdict);
            all[3] += x->verdict == PAR_V_UNSUPPORTED;
        }
    xb_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xb_printf(&b, "<testsuites name=\"parity\" tests=\"%lld\" failures=\"%lld\" errors=\"%lld\" time=\"%.6f\">\n",
              (long long)all[0], (long long)all[1], (long long)all[2], seconds(r->wall_s));
    for (int32_t bk = 0; bk < r->n_backends; bk++) {
        const par_backend_inst *bi = &r->backends[bk];
        int64_t n[4] = {0};
        double time_s = 0;
        for (int32_t c = 0; c < r->n_cases; c++) {
            const par_result *x = rec(r, c, bk);
            if (!x->done) continue;
            n[0]++;
            n[1] += x->verdict == PAR_V_FAIL;
            n[2] += is_error(x->verdict);
            n[3] += x->verdict == PAR_V_UNSUPPORTED;
            time_s += rec_time(x);
        }
        char name[160];
        snprintf(name, sizeof name, "parity.%s", bi->label);
        xb_puts(&b, "  <testsuite");
        xml_attr(&b, "name", name);
        xb_printf(&b, " id=\"%d\" tests=\"%lld\" failures=\"%lld\" errors=\"%lld\" skipped=\"%lld\" time=\"%.9f\"",
                  (int)bk, (long long)n[0], (long long)n[1], (long long)n[2], (long long)n[3], time_s);
        if (ts[0]) xml_attr(&b, "timestamp", ts);
        /* the machine that ran (not the one rendering); "unknown" in a report from before it was recorded */
        xml_attr(&b, "hostname", env->hostname[0] ? env->hostname : "unknown");
        xb_puts(&b, ">\n");
        suite_properties(&b, r, bi, env);
        for (int32_t c = 0; c < r->n_cases; c++) {
            const par_result *x = rec(r, c, bk);
            if (x->done) testcase(&b, r, c, bk, x);
        }
        xb_puts(&b, "  </testsuite>\n");
    }
    xb_puts(&b, "</testsuites>\n");
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

par_status par_report_write_junit(const par_report *r, const char *path, par_msg *msg)
{
    char *text = par_report_junit_text(r);
    if (!text) return par_msgf(msg, PAR_ERROR, "%s: out of memory while rendering the JUnit XML", path);
    const int rc = par_write_file_atomic(path, text, msg);
    free(text);
    return rc == 0 ? PAR_OK : PAR_ERROR;
}
