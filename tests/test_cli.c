/*
 * test_cli.c - build/parity end to end: help and exit codes, malformed case files (exit 2, message naming the file
 * and the field), a backend that crashes or hangs (CRASH / TIMEOUT verdicts, the run completes, the report is
 * written), and a passing run whose report parses. Runs the binary beside this test's build folder.
 */
#include <json-c/json.h>
#include <limits.h>
#include <libgen.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/graph.h"
#include "tmain.h"

static char exe[PATH_MAX], build_dir[PATH_MAX], tmp_dir[PATH_MAX];
static char out[1 << 16];

/* Run a shell command line; captures stdout+stderr into out; returns the exit code. */
static int sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char full[8400];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void expect_in_output(const char *needle)
{
    if (!strstr(out, needle)) {
        fprintf(stderr, "\n    expected '%s' in:\n%s\n", needle, out);
        CU_FAIL("output lacks an expected text");
    }
}

static void test_help_and_usage(void)
{
    CU_ASSERT_EQUAL(sh("%s --help", exe), 0);
    expect_in_output("run [CASES...]");
    CU_ASSERT_EQUAL(sh("%s run --help", exe), 0);
    expect_in_output("--shard K/N");
    CU_ASSERT_EQUAL(sh("%s frobnicate", exe), 2);
    CU_ASSERT_EQUAL(sh("%s run --shard 3/2", exe), 2);
    CU_ASSERT_EQUAL(sh("%s run --repeat x", exe), 2);
    CU_ASSERT_EQUAL(sh("%s list", exe), 2);
}

static void test_list_ops_shows_every_op(void)
{
    CU_ASSERT_EQUAL_FATAL(sh("%s list ops", exe), 0);
    for (int i = 0; i < PAR_OP_COUNT; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "\n%s ", par_op_get((par_op_id)i)->name);
        expect_in_output(needle);
    }
}

static void bad_file(const char *name, const char *field)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "tests/data/cli/%s", name);
    int rc = sh("%s run %s --plugin %s/plugins/libparity_example.so -b example --out %s/bad", exe, path, build_dir,
                tmp_dir);
    CU_ASSERT_EQUAL(rc, 2);
    expect_in_output(path);
    expect_in_output(field);
}

static void test_malformed_files_exit_2(void)
{
    bad_file("syntax_error.json", "syntax");
    bad_file("wrong_type.json", "$.inputs[0].shape");
    bad_file("negative_dim.json", "$.inputs[0].shape");
    bad_file("shape_mismatch.json", "conv0");
    bad_file("does_not_exist.json", "no such file");
}

static int report_verdicts(const char *path, int *n_records, char verdicts[][16], int max)
{
    json_object *root = json_object_from_file(path);
    if (!root) return -1;
    json_object *schema, *results;
    int ok = json_object_object_get_ex(root, "schema", &schema) &&
             strcmp(json_object_get_string(schema), "parity.report") == 0 &&
             json_object_object_get_ex(root, "results", &results);
    *n_records = 0;
    if (ok)
        for (size_t i = 0; i < json_object_array_length(results) && *n_records < max; i++) {
            json_object *v;
            if (json_object_object_get_ex(json_object_array_get_idx(results, i), "verdict", &v))
                snprintf(verdicts[(*n_records)++], 16, "%s", json_object_get_string(v));
        }
    json_object_put(root);
    return ok ? 0 : -1;
}

static void test_crash_and_hang_become_verdicts(void)
{
    int rc = sh("%s run tests/data/cli/relu.json --plugin %s/tests/plugins/segv.so --plugin %s/tests/plugins/hang.so "
                "--plugin %s/plugins/libparity_example.so -b tp_segv,tp_hang,example --timeout 2 --out %s/crash",
                exe, build_dir, build_dir, build_dir, tmp_dir);
    CU_ASSERT_EQUAL(rc, 1);
    expect_in_output("CRASH");
    expect_in_output("TIMEOUT");
    expect_in_output("signal 11");
    expect_in_output("repro: ");
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/crash/report.json", tmp_dir);
    char v[8][16];
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(report_verdicts(path, &n, v, 8), 0);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_STRING_EQUAL(v[0], "CRASH");
    CU_ASSERT_STRING_EQUAL(v[1], "TIMEOUT");
    CU_ASSERT_STRING_EQUAL(v[2], "PASS"); /* the run went on after both */
}

static void test_passing_run_and_report(void)
{
    int rc = sh("%s run tests/data/cli/relu.json tests/data/cases/conv_small.json --plugin %s/plugins/libparity_example.so "
                "-b example --out %s/pass", exe, build_dir, tmp_dir);
    CU_ASSERT_EQUAL(rc, 0);
    expect_in_output("example");
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/pass/report.json", tmp_dir);
    char v[8][16];
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(report_verdicts(path, &n, v, 8), 0);
    CU_ASSERT_EQUAL(n, 2);
    for (int i = 0; i < n; i++) CU_ASSERT_STRING_EQUAL(v[i], "PASS");
    /* show and export of a file case */
    CU_ASSERT_EQUAL(sh("%s show tests/data/cases/conv_small.json", exe), 0);
    expect_in_output("conv2d(x, w, b)");
    CU_ASSERT_EQUAL(sh("%s export tests/data/cli/relu.json --out %s/relu_export.json", exe, tmp_dir), 0);
    snprintf(path, sizeof path, "%s/relu_export.json", tmp_dir);
    json_object *root = json_object_from_file(path), *ref = NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT(json_object_object_get_ex(root, "reference", &ref));
    json_object_put(root);
}

static void test_unknown_backend_and_case(void)
{
    CU_ASSERT_EQUAL(sh("%s run tests/data/cli/relu.json -b nosuch", exe), 2);
    expect_in_output("nosuch");
    CU_ASSERT_EQUAL(sh("%s run --case 'nosuch(x=1)#seed=1' --plugin %s/plugins/libparity_example.so", exe,
                       build_dir), 2);
    expect_in_output("no case");
    CU_ASSERT_EQUAL(sh("%s run tests/data/cli/relu.json --plugin %s/tests/plugins/badversion.so", exe, build_dir), 2);
    expect_in_output("version");
}

static const CU_TestInfo tests[] = {
    {"help and usage errors", test_help_and_usage},
    {"list ops shows every op", test_list_ops_shows_every_op},
    {"malformed case files: exit 2 naming file and field", test_malformed_files_exit_2},
    {"crash and hang become verdicts, the run completes", test_crash_and_hang_become_verdicts},
    {"a passing run, its report, show and export", test_passing_run_and_report},
    {"unknown backend, case ID, bad plugin", test_unknown_backend_and_case},
    CU_TEST_INFO_NULL,
};

/* Locate build/parity from this program's path (build/tests/test_cli) and make a scratch folder. */
__attribute__((constructor)) static void locate(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return;
    self[n] = 0;
    snprintf(build_dir, sizeof build_dir, "%s", dirname(dirname(self)));
    snprintf(exe, sizeof exe, "%s/parity", build_dir);
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/parity_test_cli.XXXXXX");
    if (!mkdtemp(tmp_dir)) snprintf(tmp_dir, sizeof tmp_dir, "/tmp");
}

PAR_TEST_MAIN("cli", tests)
