/*
 * test_html.c - the HTML report (reports/html.c and its parts) on reports built here, whose expected pages are
 * written by hand: every report string escaped (case IDs, reasons, labels, output, command line with markup in
 * them), failures worst first (CRASH, then FAIL by error/budget with the infinite one first), the cap on listed
 * failures and the count of the rest, the heatmap's worst-verdict cell, the error/budget bins at their edges, the
 * step histogram's mean, a report without records, the header of an interrupted shard and the environment of an
 * unusable backend, and write errors that name the path. The page scaffolding
 * (reports/html_out.h) is checked on its own.
 *
 * Files go to a temporary folder under /tmp, removed by the last test.
 */
#include "reports/html.h"
#include "reports/html_int.h"
#include "tmain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static const par_backend tb = {.api_version = PAR_BACKEND_API_VERSION,
                               .struct_size = sizeof(par_backend),
                               .name = "tb",
                               .version = "1",
                               .description = "test <backend>",
                               .arith = PAR_ARITH_F32};

/* A report of nc cases x nb backends with every record PASS; the caller sets what it tests. */
typedef struct sample {
    par_report r;
    par_report_case *cases;
    par_result *res;
    par_backend_inst be[2];
} sample;

static void sample_init(sample *s, int32_t nc)
{
    memset(s, 0, sizeof *s);
    s->cases = calloc((size_t)(nc ? nc : 1), sizeof *s->cases);
    s->res = calloc((size_t)(nc ? nc : 1) * 2, sizeof *s->res);
    CU_ASSERT_FATAL(s->cases && s->res);
    for (int b = 0; b < 2; b++) {
        s->be[b].be = &tb;
        s->be[b].usable = 1;
        s->be[b].probed = 1;
    }
    snprintf(s->be[0].label, sizeof s->be[0].label, "tb");
    snprintf(s->be[1].label, sizeof s->be[1].label, "tb[x=<b>&\"'</b>]");
    for (int32_t c = 0; c < nc; c++) {
        snprintf(s->cases[c].id, sizeof s->cases[c].id, "relu(x=[%d])#seed=1", (int)c);
        snprintf(s->cases[c].origin, sizeof s->cases[c].origin, "suite:quick");
        snprintf(s->cases[c].ops, sizeof s->cases[c].ops, "relu");
        snprintf(s->cases[c].dtype, sizeof s->cases[c].dtype, "f32");
        for (int b = 0; b < 2; b++) {
            par_result *x = &s->res[c * 2 + b];
            x->done = 1;
            x->verdict = PAR_V_PASS;
            x->m.n = 10;
            x->m.max_ratio = 0.5;
            x->m.worst_index = -1;
        }
    }
    s->r.created = "2026-01-01T00:00:00Z";
    s->r.command_line = "parity run <script>alert(1)</script>";
    s->r.parity_exe = "parity";
    s->r.n_backends = 2;
    s->r.backends = s->be;
    s->r.n_cases = nc;
    s->r.cases = s->cases;
    s->r.results = s->res;
}

static void sample_free(sample *s)
{
    free(s->cases);
    free(s->res);
}

/* Render and read back the page (malloc'ed, NUL-terminated), NULL on failure. */
static char *render(const par_report *r, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    par_msg msg = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_report_write_html(r, path, &msg), PAR_OK);
    FILE *f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = 0;
    fclose(f);
    return text;
}

static void test_setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/parity_test_html_XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
}

static void test_text_escaping(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    par_html_text(f, "<a href=\"x\">&'\x01\tz");
    par_html_text(f, NULL);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(buf, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;\xEF\xBF\xBD\tz");
    free(buf);
    CU_ASSERT_EQUAL(par_html_verdict_letter(PAR_V_FLAKY), 'K');
    CU_ASSERT_EQUAL(par_html_verdict_letter(PAR_V_CRASH), 'C');
    CU_ASSERT(par_verdict_severity(PAR_V_CRASH) > par_verdict_severity(PAR_V_TIMEOUT));
    CU_ASSERT(par_verdict_severity(PAR_V_TIMEOUT) > par_verdict_severity(PAR_V_FAIL));
    CU_ASSERT(par_verdict_severity(PAR_V_FAIL) > par_verdict_severity(PAR_V_FLAKY));
    CU_ASSERT(par_verdict_severity(PAR_V_FLAKY) > par_verdict_severity(PAR_V_ERROR));
    CU_ASSERT(par_verdict_severity(PAR_V_ERROR) > par_verdict_severity(PAR_V_UNSUPPORTED));
    CU_ASSERT(par_verdict_severity(PAR_V_UNSUPPORTED) > par_verdict_severity(PAR_V_PASS));
}

/* Bins: 0 exact 0; 1 (0, 1e-6]; 2 (1e-6, 1e-5] ... 7 (0.1, 1]; 8 (1, 10] ... 10 (100, 1e3]; 11 above; 12 inf/NaN. */
static void test_ratio_bins(void)
{
    CU_ASSERT_EQUAL(PAR_HTML_RATIO_BINS, 13);
    CU_ASSERT_EQUAL(par_html_ratio_bin(0.0), 0);
    CU_ASSERT_EQUAL(par_html_ratio_bin(1e-300), 1);
    CU_ASSERT_EQUAL(par_html_ratio_bin(1e-6), 1);
    CU_ASSERT_EQUAL(par_html_ratio_bin(1.5e-6), 2);
    CU_ASSERT_EQUAL(par_html_ratio_bin(1e-5), 2);
    CU_ASSERT_EQUAL(par_html_ratio_bin(0.1), 6);
    CU_ASSERT_EQUAL(par_html_ratio_bin(0.5), 7);
    CU_ASSERT_EQUAL(par_html_ratio_bin(1.0), 7);
    CU_ASSERT_EQUAL(par_html_ratio_bin(nextafter(1.0, 2.0)), 8);
    CU_ASSERT_EQUAL(par_html_ratio_bin(1e3), 10);
    CU_ASSERT_EQUAL(par_html_ratio_bin(1001.0), 11);
    CU_ASSERT_EQUAL(par_html_ratio_bin(INFINITY), 12);
    CU_ASSERT_EQUAL(par_html_ratio_bin(NAN), 12);
}

/* Markup in every report string comes out as text; failures worst first. */
static void test_escaping_and_order(void)
{
    sample s;
    sample_init(&s, 5);
    snprintf(s.cases[1].id, sizeof s.cases[1].id, "relu(x=[1])#<script>alert(1)</script>");
    par_result *crash = &s.res[1 * 2 + 1], *f_inf = &s.res[2 * 2 + 0], *f5 = &s.res[3 * 2 + 0],
               *f50 = &s.res[4 * 2 + 1];
    crash->verdict = PAR_V_CRASH;
    crash->m.n = 0;
    snprintf(crash->reason, sizeof crash->reason, "signal 11 </details><b>");
    snprintf(crash->output, sizeof crash->output, "</pre><img src=x onerror=alert(1)>");
    crash->output_bytes = (int64_t)strlen(crash->output);
    f_inf->verdict = PAR_V_FAIL;
    f_inf->m.max_ratio = INFINITY;
    f5->verdict = PAR_V_FAIL;
    f5->m.max_ratio = 5;
    f50->verdict = PAR_V_FAIL;
    f50->m.max_ratio = 50;
    s.res[0].verdict = PAR_V_UNSUPPORTED;
    char *p = render(&s.r, "esc.html");
    CU_ASSERT_PTR_NULL(strstr(p, "<script>alert"));
    CU_ASSERT_PTR_NULL(strstr(p, "<img"));
    CU_ASSERT_PTR_NULL(strstr(p, "<b>&"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "relu(x=[1])#&lt;script&gt;alert(1)&lt;/script&gt;"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "parity run &lt;script&gt;alert(1)&lt;/script&gt;"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "&lt;/pre&gt;&lt;img src=x onerror=alert(1)&gt;"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "tb[x=&lt;b&gt;&amp;&quot;&#39;&lt;/b&gt;]"));
    /* rows f0..f3: the crash (case 1), FAIL inf (case 2), FAIL 50 (case 4), FAIL 5 (case 3); no f4 */
    const char *r0 = strstr(p, "<tr id=\"f0\""), *r1 = strstr(p, "<tr id=\"f1\""), *r2 = strstr(p, "<tr id=\"f2\""),
               *r3 = strstr(p, "<tr id=\"f3\"");
    CU_ASSERT_FATAL(r0 && r1 && r2 && r3 && r0 < r1 && r1 < r2 && r2 < r3);
    CU_ASSERT_PTR_NULL(strstr(p, "<tr id=\"f4\""));
    const char *c1 = strstr(r0, "#&lt;script"), *c2 = strstr(r0, "relu(x=[2])"), *c4 = strstr(r0, "relu(x=[4])"),
               *c3 = strstr(r0, "relu(x=[3])");
    CU_ASSERT(c1 && c1 < r1);
    CU_ASSERT(c2 && c2 > r1 && c2 < r2);
    CU_ASSERT(c4 && c4 > r2 && c4 < r3);
    CU_ASSERT(c3 && c3 > r3);
    /* the heatmap's one row: tb's worst is FAIL (3 passed of 4 run: one UNSUPPORTED), the other's CRASH */
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "<td class=\"vF\" data-v=\"4\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "<a href=\"#g0\">F 2/4 <small>+1 U</small></a>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "<a href=\"#g0\">C 3/5</a>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "4 records did not pass"));
    free(p);
    sample_free(&s);
}

/* More failures than the page lists: the first PAR_HTML_MAX_FAILURES, and the count of the rest. */
static void test_failure_cap(void)
{
    sample s;
    const int32_t nc = PAR_HTML_MAX_FAILURES + 50;
    sample_init(&s, nc);
    for (int32_t c = 0; c < nc; c++) {
        s.res[c * 2].verdict = PAR_V_FAIL;
        s.res[c * 2].m.max_ratio = 2 + c;
    }
    char *p = render(&s.r, "cap.html");
    char row[32];
    snprintf(row, sizeof row, "<tr id=\"f%d\"", PAR_HTML_MAX_FAILURES - 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(p, row));
    snprintf(row, sizeof row, "<tr id=\"f%d\"", PAR_HTML_MAX_FAILURES);
    CU_ASSERT_PTR_NULL(strstr(p, row));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "50 more are in the report file"));
    /* the worst (largest ratio: the last case) first */
    char id[64];
    snprintf(id, sizeof id, "relu(x=[%d])", (int)nc - 1);
    const char *f0 = strstr(p, "<tr id=\"f0\""), *f1 = strstr(p, "<tr id=\"f1\"");
    CU_ASSERT_FATAL(f0 && f1);
    const char *hit = strstr(f0, id);
    CU_ASSERT(hit && hit < f1);
    free(p);
    sample_free(&s);
}

/* The step histogram of quantized records, summed, with its mean: bins 0: 8, +1: 2 -> mean +0.2. */
static void test_step_histogram(void)
{
    sample s;
    sample_init(&s, 2);
    for (int c = 0; c < 2; c++) {
        par_result *x = &s.res[c * 2 + 1];
        x->m.quant = 1;
        x->m.hist[PAR_HIST_ZERO] = 4;
        x->m.hist[PAR_HIST_ZERO + 1] = 1;
    }
    char *p = render(&s.r, "hist.html");
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "Step differences of quantized outputs"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, ": 2 records, 10 elements, mean step difference +0.2000"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "1 step above: 2</title>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "equal to the reference: 8</title>"));
    /* error/budget: 2 records of tb at 0.5 in (0.1, 1] */
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "tb: 2 compared, 0 over budget"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "(1e-1, 1e0]: 2</title>"));
    free(p);
    sample_free(&s);
}

static void test_empty_report(void)
{
    sample s;
    sample_init(&s, 0);
    char *p = render(&s.r, "empty.html");
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "id=\"heatmap\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "id=\"failures\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "No failures"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "</html>\n"));
    free(p);
    sample_free(&s);
}

/* The header says when a run was interrupted and which shard a report holds; the environment shows each backend
 * as probed, an unusable one with its reason (escaped). */
static void test_header_and_environment(void)
{
    sample s;
    sample_init(&s, 1);
    s.r.interrupted = 1;
    s.r.sel.shard_k = 2;
    s.r.sel.shard_n = 3;
    s.be[1].usable = 0;
    snprintf(s.be[1].unusable_reason, sizeof s.be[1].unusable_reason, "needs <AVX-512>");
    s.be[0].n_knobs = 1;
    snprintf(s.be[0].knob_key[0], sizeof s.be[0].knob_key[0], "kernels");
    snprintf(s.be[0].knob_val[0], sizeof s.be[0].knob_val[0], "scalar");
    par_env env;
    memset(&env, 0, sizeof env);
    snprintf(env.cpu_model, sizeof env.cpu_model, "Test CPU <9000>");
    env.cores = 7;
    s.r.env = &env;
    char *p = render(&s.r, "header.html");
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "<strong>INTERRUPTED:</strong>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "<tr><th>shard</th><td>2/3 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "<tr><th>interrupted</th><td>yes</td>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "<strong>no</strong>: needs &lt;AVX-512&gt;"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "<code>kernels=scalar</code>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "<tr><th>CPU</th><td>Test CPU &lt;9000&gt;</td></tr>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "<tr><th>cores</th><td>7</td></tr>"));
    free(p);
    sample_free(&s);
}

static void test_write_errors(void)
{
    sample s;
    sample_init(&s, 1);
    par_msg msg = {{0}};
    CU_ASSERT_EQUAL(par_report_write_html(&s.r, "/nonexistent_parity_dir/r.html", &msg), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "/nonexistent_parity_dir/r.html"));
    /* an inconsistent report is refused, not dereferenced */
    s.r.results = NULL;
    char path[128];
    snprintf(path, sizeof path, "%s/bad.html", dir);
    CU_ASSERT_EQUAL(par_report_write_html(&s.r, path, &msg), PAR_ERROR);
    CU_ASSERT_EQUAL(access(path, F_OK), -1);
    sample_free(&s);
}

static void test_cleanup(void)
{
    static const char *const files[] = {"esc.html", "cap.html", "hist.html", "empty.html", "header.html"};
    char path[128];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        CU_ASSERT_EQUAL(unlink(path), 0);
    }
    CU_ASSERT_EQUAL(rmdir(dir), 0); /* nothing else left: no temporary file */
}

static const CU_TestInfo tests[] = {
    {"setup", test_setup},
    {"text_escaping", test_text_escaping},
    {"ratio_bins", test_ratio_bins},
    {"escaping_and_order", test_escaping_and_order},
    {"failure_cap", test_failure_cap},
    {"step_histogram", test_step_histogram},
    {"empty_report", test_empty_report},
    {"header_and_environment", test_header_and_environment},
    {"write_errors", test_write_errors},
    {"cleanup", test_cleanup},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("html", tests)
