/*
 * test_junit.c - the JUnit XML rendering of a report (reports/junit.c) on a sample report of fixed records: one
 * testsuite per backend with the counts of its verdicts, the element each verdict becomes, the timestamp, XML
 * escaping of IDs, reasons and output, the characters XML 1.0 forbids and invalid UTF-8 replaced, records that did
 * not run left out, and a write error that names the path. (Schema validation with xmllint, on a real run's report,
 * is tests/report/test_junit.sh.)
 */
#include "exec/exec.h"
#include "reports/junit.h"
#include "tmain.h"

#include <stdlib.h>
#include <string.h>

static const par_backend tb = {.api_version = PAR_BACKEND_API_VERSION,
                               .struct_size = sizeof(par_backend),
                               .name = "tb",
                               .version = "1.2",
                               .description = "test backend",
                               .arith = PAR_ARITH_F32};

#define RC 3
#define RB 2

static par_report_case rcases[RC];
static par_backend_inst rbackends[RB];
static par_result rresults[RC * RB];
static par_env renv;

/* Backend 0 "tb": PASS, FAIL (worst element, output with control characters and invalid UTF-8), FLAKY.
 * Backend 1 "tb[threads=2]": UNSUPPORTED, CRASH, not run. */
static par_report sample(void)
{
    memset(rcases, 0, sizeof rcases);
    memset(rresults, 0, sizeof rresults);
    memset(rbackends, 0, sizeof rbackends);
    memset(&renv, 0, sizeof renv);
    snprintf(renv.cpu_model, sizeof renv.cpu_model, "Test CPU");
    snprintf(rcases[0].id, sizeof rcases[0].id, "relu(shape=[3])#seed=1");
    snprintf(rcases[0].ops, sizeof rcases[0].ops, "relu");
    snprintf(rcases[1].id, sizeof rcases[1].id, "odd <&\"'> id");
    snprintf(rcases[1].ops, sizeof rcases[1].ops, "conv2d,relu");
    snprintf(rcases[2].id, sizeof rcases[2].id, "add(x=[2])#seed=1");
    snprintf(rcases[2].ops, sizeof rcases[2].ops, "add");
    for (int i = 0; i < RC; i++) snprintf(rcases[i].origin, sizeof rcases[i].origin, "suite:quick");
    par_msg m = {{0}};
    CU_ASSERT_EQUAL(par_backend_spec_parse("tb", &rbackends[0], &m), PAR_OK);
    CU_ASSERT_EQUAL(par_backend_spec_parse("tb[threads=2]", &rbackends[1], &m), PAR_OK);
    for (int b = 0; b < RB; b++) rbackends[b].be = &tb, rbackends[b].usable = 1;

    rresults[0 * RB + 0] = (par_result){.done = 1, .verdict = PAR_V_PASS, .t = {.runs = 3, .run_median_ms = 250}};
    par_result *f = &rresults[1 * RB + 0];
    f->done = 1;
    f->verdict = PAR_V_FAIL;
    snprintf(f->reason, sizeof f->reason, "2 elements over budget & more");
    f->m.n = 10;
    f->m.n_over = 2;
    f->m.max_ratio = 3.5;
    f->m.worst_index = 7;
    f->m.worst_rank = 2;
    f->m.worst_coords[0] = 1;
    f->m.worst_coords[1] = 3;
    f->m.worst_ref = 0.5;
    f->m.worst_got = 0.75;
    f->m.worst_budget = 0.0625;
    /* SOH, ESC, a lone 0xff, a truncated sequence, U+FFFE, and a valid e-acute that must survive */
    snprintf(f->output, sizeof f->output, "a\x01" "b\x1b[31m\xff" "c\xc3(\xef\xbf\xbe\xc3\xa9\n");
    rresults[2 * RB + 0] = (par_result){.done = 1, .verdict = PAR_V_FLAKY, .reason = "run 2 differs from run 1"};
    rresults[0 * RB + 1] = (par_result){.done = 1, .verdict = PAR_V_UNSUPPORTED, .reason = "op 'relu' <not here>"};
    rresults[1 * RB + 1] = (par_result){.done = 1, .verdict = PAR_V_CRASH, .reason = "killed by signal 11"};
    par_report r = {.created = "2025-01-31T12:00:00Z",
                    .parity_version = "0.1.0",
                    .git_revision = "abc123",
                    .env = &renv,
                    .command_line = "parity run",
                    .seed = 42,
                    .repeat = 3,
                    .wall_s = 2,
                    .parity_exe = "build/parity",
                    .n_backends = RB,
                    .backends = rbackends,
                    .n_cases = RC,
                    .cases = rcases,
                    .results = rresults};
    return r;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* The text of the testsuite named name (up to its end tag), in a static buffer; "" when absent. */
static const char *suite(const char *xml, const char *name)
{
    static char buf[16384];
    char open[128];
    snprintf(open, sizeof open, "<testsuite name=\"%s\"", name);
    const char *s = strstr(xml, open), *e = s ? strstr(s, "</testsuite>") : NULL;
    buf[0] = 0;
    if (s && e && (size_t)(e - s) < sizeof buf) memcpy(buf, s, (size_t)(e - s)), buf[e - s] = 0;
    return buf;
}

static void test_counts_and_elements(void)
{
    par_report r = sample();
    char *x = par_report_junit_text(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT(strncmp(x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", 50) == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(x, "<testsuites name=\"parity\" tests=\"5\" failures=\"1\" errors=\"2\""));
    const char *s0 = suite(x, "parity.tb");
    CU_ASSERT_PTR_NOT_NULL(strstr(s0, "tests=\"3\" failures=\"1\" errors=\"1\" skipped=\"0\""));
    CU_ASSERT_EQUAL(count(s0, "<testcase "), 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(s0, "timestamp=\"2025-01-31T12:00:00\""));
    /* the PASS record: 250 ms median is 0.25 s */
    CU_ASSERT_PTR_NOT_NULL(strstr(s0, "classname=\"parity.tb.relu\" name=\"relu(shape=[3])#seed=1\" time=\"0.250000000\">"));
    /* the FAIL record: escaped ID, '+'-joined ops, the reason, the worst element and the repro */
    CU_ASSERT_PTR_NOT_NULL(strstr(s0, "classname=\"parity.tb.conv2d+relu\" name=\"odd &lt;&amp;&quot;'&gt; id\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(s0, "<failure type=\"FAIL\" message=\"2 elements over budget &amp; more\">"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s0, "worst element: output 0 index 7 [1,3]: reference 0.5, backend 0.75, budget 0.0625"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s0, "repro: build/parity run --case 'odd &lt;&amp;\"'\\''&gt; id' -b tb"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s0, "<error type=\"FLAKY\" message=\"run 2 differs from run 1\">"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s0, "<property name=\"backend.version\" value=\"1.2\"/>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s0, "<property name=\"seed\" value=\"42\"/>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s0, "<property name=\"parity.git_revision\" value=\"abc123\"/>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s0, "<property name=\"cpu.model\" value=\"Test CPU\"/>"));

    const char *s1 = suite(x, "parity.tb[threads=2]");
    CU_ASSERT_PTR_NOT_NULL(strstr(s1, "tests=\"2\" failures=\"0\" errors=\"1\" skipped=\"1\""));
    CU_ASSERT_EQUAL(count(s1, "<testcase "), 2); /* the record that did not run is no testcase */
    CU_ASSERT_PTR_NOT_NULL(strstr(s1, "<skipped message=\"op 'relu' &lt;not here&gt;\"/>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s1, "<error type=\"CRASH\" message=\"killed by signal 11\">"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s1, "<property name=\"backend.knob.threads\" value=\"2\"/>"));
    free(x);
}

static void test_forbidden_characters(void)
{
    par_report r = sample();
    char *x = par_report_junit_text(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    /* no C0 control but tab, LF, CR anywhere; no 0xff byte; no U+FFFE */
    int bad = 0;
    for (const unsigned char *p = (const unsigned char *)x; *p; p++)
        bad += (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') || *p == 0xff;
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_PTR_NULL(strstr(x, "\xef\xbf\xbe"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(x, "<system-out>a\\x01b\\x1b[31m\xef\xbf\xbd" "c\xef\xbf\xbd(\xef\xbf\xbd\xc3\xa9\n</system-out>"));
    free(x);
}

static void test_timestamp_malformed(void)
{
    par_report r = sample();
    r.created = "yesterday";
    char *x = par_report_junit_text(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_PTR_NULL(strstr(x, "timestamp="));
    free(x);
}

static void test_write_error(void)
{
    par_report r = sample();
    par_msg m = {{0}};
    CU_ASSERT_EQUAL(par_report_write_junit(&r, "/nonexistent-dir/junit.xml", &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "/nonexistent-dir/junit.xml"));
}

static const CU_TestInfo tests[] = {
    {"counts and elements", test_counts_and_elements},
    {"forbidden characters", test_forbidden_characters},
    {"timestamp malformed", test_timestamp_malformed},
    {"write error", test_write_error},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("junit", tests)
