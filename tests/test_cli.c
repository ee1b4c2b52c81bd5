/*
 * test_cli.c - build/parity end to end: help and exit codes, malformed case files (exit 2, message naming the file
 * and the field), a backend that crashes or hangs (CRASH / TIMEOUT verdicts, the run completes, the report is
 * written), a passing run whose report parses, and the misbehaviours of docs/reliability.md that only a whole run
 * shows: a backend that scribbles over shared memory, SIGTERM during a run, plugins that crash while loading, a
 * plugin named like a built-in backend, control characters in a case ID. Runs the binary beside this test's build
 * folder.
 */
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/graph.h"
#include "cli_helpers.h"
#include "tmain.h"


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

/* parity budgets: x = 255.9 everywhere, y = x * x = 65485: finite, but its interval under f16 arithmetic (the
 * input's storage rounding, 0.125, times 2x, plus the product's half ULP, 32) reaches binary16's overflow threshold
 * 65520, so every output element is unjudged and the node is named; under f32 none is. The saved budgets of
 * one profile compare with another's: f32's are all smaller than f16's (exit 0), f16's larger than f32's (exit 1). */
static void test_budgets(void)
{
    char path[PATH_MAX + 32], bin[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/square.json", tmp_dir);
    snprintf(bin, sizeof bin, "%s/square.bud", tmp_dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("{\"schema\": \"parity.case\", \"version\": 1, \"id\": \"square\",\n"
          " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [2, 3], \"init\": {\"dist\": \"const\", "
          "\"value\": 255.9}}],\n"
          " \"nodes\": [{\"name\": \"sq\", \"op\": \"mul\", \"inputs\": [\"x\", \"x\"], \"outputs\": [\"y\"]}],\n"
          " \"outputs\": [\"y\"]}\n", f);
    fclose(f);
    CU_ASSERT_EQUAL(sh("%s budgets %s --arith f16 --nodes --save %s", exe, path, bin), 0);
    expect_in_output("square f16: 6 output elements, 6 unjudged");
    expect_in_output("unjudged from node 'sq' (mul): 6 of 6 elements");
    expect_in_output("sq                               n=6        unjudged=6 ");
    CU_ASSERT_EQUAL(sh("%s budgets %s --arith f32", exe, path), 0);
    expect_in_output("square f32: 6 output elements, 0 unjudged, largest budget ");
    expect_in_output("on values up to 6.548e+04");
    CU_ASSERT_PTR_NULL(strstr(out, "unjudged from"));
    CU_ASSERT_EQUAL(sh("%s budgets %s --arith f32 --against %s", exe, path, bin), 0);
    expect_in_output("6 elements, 0 larger, 6 smaller");
    CU_ASSERT_EQUAL(sh("%s budgets %s --arith f32 --save %s", exe, path, bin), 0);
    CU_ASSERT_EQUAL(sh("%s budgets %s --arith f16 --against %s", exe, path, bin), 1);
    expect_in_output("6 elements, 6 larger (up to xinf at 'sq', the first at 'sq'), 0 smaller");
    CU_ASSERT_EQUAL(sh("%s budgets %s --arith f12", exe, path), 2);
    expect_in_output("--arith: 'f12' is not");
    CU_ASSERT_EQUAL(sh("%s budgets tests/data/cli/relu.json --against %s", exe, bin), 2);
    expect_in_output("short file");
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

/* A case whose memory estimate exceeds the worker's share of PARITY_MEM_LIMIT is refused before anything is
 * allocated for it, with the estimate's parts; the same case under the default limit passes. */
static void test_memory_limit_refuses_case(void)
{
    CU_ASSERT_EQUAL(sh("%s run tests/data/cli/relu.json -b cpu --no-progress --out %s/mem_ok", exe, tmp_dir), 0);
    CU_ASSERT_EQUAL(sh("PARITY_MEM_LIMIT=4K %s run tests/data/cli/relu.json -b cpu --no-progress --out %s/mem_refused",
                       exe, tmp_dir), 1);
    expect_in_output("case refused: needs ~");
    expect_in_output("(PARITY_MEM_LIMIT / jobs)");
}

static int count_char(const char *s, char c)
{
    int n = 0;
    for (; *s; s++) n += *s == c;
    return n;
}

/* A backend that fills every writable shared mapping of its process (the results, when the harness shares them)
 * cannot change another record: the crash stays a CRASH and the harness does not die of garbage verdicts. */
static void test_scribbler_cannot_touch_records(void)
{
    int rc = sh("%s run tests/data/cli/relu.json --plugin %s/tests/plugins/segv.so --plugin %s/tests/plugins/scribble.so "
                "-b tp_segv,tp_scribble --out %s/scribble", exe, build_dir, build_dir, tmp_dir);
    CU_ASSERT_EQUAL(rc, 1);
    expect_in_output("conformance: 1 passed, 1 failed, 0 skipped");
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/scribble/report.json", tmp_dir);
    char v[8][16];
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(report_verdicts(path, &n, v, 8), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(v[0], "CRASH");
    CU_ASSERT_STRING_EQUAL(v[1], "PASS");
}

/* Processes (not zombies) of session sid. */
static int session_alive(pid_t sid)
{
    DIR *d = opendir("/proc");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char p[300], buf[1024];
        snprintf(p, sizeof p, "/proc/%s/stat", e->d_name);
        int fd = open(p, O_RDONLY);
        if (fd < 0) continue;
        ssize_t k = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (k <= 0) continue;
        buf[k] = 0;
        char *rp = strrchr(buf, ')');
        char state;
        int ppid, pgrp, session;
        if (rp && sscanf(rp + 2, "%c %d %d %d", &state, &ppid, &pgrp, &session) == 4 && session == sid &&
            state != 'Z')
            n++;
    }
    closedir(d);
    return n;
}

/* SIGTERM during a run: exit 143, the summary and a partial report marked interrupted with what finished, and no
 * worker or backend process left. */
static void test_sigterm_partial_report(void)
{
    char log[PATH_MAX + 32], outd[PATH_MAX + 32], segv[PATH_MAX + 64], hang[PATH_MAX + 64], ex[PATH_MAX + 64];
    snprintf(log, sizeof log, "%s/term.log", tmp_dir);
    snprintf(outd, sizeof outd, "%s/term", tmp_dir);
    snprintf(hang, sizeof hang, "%s/tests/plugins/hang.so", build_dir);
    snprintf(segv, sizeof segv, "%s/tests/plugins/segv.so", build_dir);
    snprintf(ex, sizeof ex, "%s/plugins/libparity_example.so", build_dir);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        setsid();
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execl(exe, exe, "run", "tests/data/cli/relu.json", "tests/data/cases/conv_small.json", "--plugin", ex,
              "--plugin", hang, "-b", "example,tp_hang", "-j", "2", "--timeout", "60", "--out", outd, (char *)NULL);
        _exit(127);
    }
    (void)segv;
    struct timespec ts = {1, 500 * 1000 * 1000};
    nanosleep(&ts, NULL);
    CU_ASSERT(session_alive(pid) >= 3); /* parent, workers, the hanging backend child */
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    CU_ASSERT(WIFEXITED(st));
    CU_ASSERT_EQUAL(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 143);
    int left = -1;
    for (int i = 0; i < 60; i++) {
        left = session_alive(pid);
        if (left == 0) break;
        struct timespec t = {0, 50 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
    CU_ASSERT_EQUAL(left, 0);
    FILE *f = fopen(log, "r");
    size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
    out[n] = 0;
    if (f) fclose(f);
    expect_in_output("INTERRUPTED");
    expect_in_output("conformance: 2 passed, 0 failed, 1 skipped");
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/report.json", outd);
    json_object *root = json_object_from_file(path), *intr = NULL, *res = NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT(json_object_object_get_ex(root, "interrupted", &intr) && json_object_get_boolean(intr));
    CU_ASSERT(json_object_object_get_ex(root, "results", &res) && json_object_array_length(res) == 3);
    json_object_put(root);
}

/* Plugins that crash while loading are refused with one line naming the file and the signal (exit 2). */
static void test_plugin_crash_on_load(void)
{
    CU_ASSERT_EQUAL(sh("%s run tests/data/cli/relu.json --plugin %s/tests/plugins/ctorcrash.so", exe, build_dir), 2);
    expect_in_output("ctorcrash.so: killed by signal 11");
    CU_ASSERT_EQUAL(count_char(out, '\n'), 1);
    CU_ASSERT_EQUAL(sh("%s run tests/data/cli/relu.json --plugin %s/tests/plugins/entrycrash.so", exe, build_dir), 2);
    expect_in_output("entrycrash.so: killed by signal 11");
    CU_ASSERT_EQUAL(count_char(out, '\n'), 1);
}

/* A plugin named like a built-in backend, and bad knobs: usage errors (exit 2), one line each. */
static void test_name_clash_and_knobs(void)
{
    CU_ASSERT_EQUAL(sh("%s run tests/data/cli/relu.json --plugin %s/tests/plugins/cpuname.so", exe, build_dir), 2);
    expect_in_output("backend name 'cpu' is already taken by the built-in backend");
    CU_ASSERT_EQUAL(count_char(out, '\n'), 1);
    CU_ASSERT_EQUAL(sh("%s run tests/data/cli/relu.json -b 'cpu[threads=65]'", exe), 2);
    expect_in_output("knob 'threads': '65' is not an integer in [1, 64]");
    CU_ASSERT_EQUAL(count_char(out, '\n'), 1);
    CU_ASSERT_EQUAL(sh("%s run tests/data/cli/relu.json -b 'cpu[kernels=a;b]'", exe), 2);
    expect_in_output("kernels");
    CU_ASSERT_EQUAL(sh("%s run tests/data/cli/relu.json -b 'cpu[frobs=1]'", exe), 2);
    expect_in_output("cpu[frobs=1]");
    expect_in_output("frobs");
    CU_ASSERT_EQUAL(count_char(out, '\n'), 1);
    CU_ASSERT_EQUAL(sh("%s bench tests/data/cli/relu.json -b cpu --threads 0", exe), 2);
    expect_in_output("not an integer in [1, 64]");
}

/* A control character in a case ID stays escaped in the one-line summary and in the repro command. */
static void test_control_chars_in_ids(void)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/ctl.json", tmp_dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("{\"schema\": \"parity.case\", \"version\": 1, \"id\": \"evil\\u001b[2J\\nFAIL x\",\n"
          " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [4], \"init\": {\"dist\": \"uniform\", "
          "\"low\": -1, \"high\": 1}}],\n"
          " \"nodes\": [{\"name\": \"r\", \"op\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}],\n"
          " \"outputs\": [\"y\"]}\n", f);
    fclose(f);
    int rc = sh("%s run %s --plugin %s/tests/plugins/segv.so -b tp_segv --out %s/ctl", exe, path, build_dir, tmp_dir);
    CU_ASSERT_EQUAL(rc, 1);
    expect_in_output("evil\\x1b[2J\\x0aFAIL x: killed by signal 11");
    CU_ASSERT_PTR_NULL(strchr(out, '\033'));
}

static const CU_TestInfo tests[] = {
    {"help and usage errors", test_help_and_usage},
    {"list ops shows every op", test_list_ops_shows_every_op},
    {"malformed case files: exit 2 naming file and field", test_malformed_files_exit_2},
    {"crash and hang become verdicts, the run completes", test_crash_and_hang_become_verdicts},
    {"a passing run, its report, show and export", test_passing_run_and_report},
    {"budgets: unjudged elements per node, saved budgets compared", test_budgets},
    {"unknown backend, case ID, bad plugin", test_unknown_backend_and_case},
    {"a scribbling backend cannot touch the records", test_scribbler_cannot_touch_records},
    {"SIGTERM: exit 143, partial report, nothing left running", test_sigterm_partial_report},
    {"plugins that crash while loading are refused", test_plugin_crash_on_load},
    {"name clash with a built-in backend, bad knobs", test_name_clash_and_knobs},
    {"control characters in case IDs stay escaped", test_control_chars_in_ids},
    {"a case over the memory limit is refused with its estimate", test_memory_limit_refuses_case},
    CU_TEST_INFO_NULL,
};

PAR_CLI_LOCATE("test_cli")

PAR_TEST_MAIN("cli", tests)
