/*
 * test_exec.c - isolated execution (exec/exec.c), the plugin loader and backend specs (exec/plugin.c). The JSON
 * report has its own program, tests/test_report.c.
 *
 * A correct relu backend defined here and the test plugins of tests/plugins/ (built beside this program, in
 * <build>/tests/plugins/) each exercise one verdict: PASS, CRASH, TIMEOUT, FAIL (out of bounds, unwritten, wrote
 * input), FLAKY, UNSUPPORTED, ERROR. Inputs are a fixed deterministic pattern, so every run is the same.
 */
#include "exec/exec.h"
#include "core/graph.h"
#include "tmain.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define N 37 /* not a multiple of 16: the output ends inside a 64-byte block, so padding guards matter */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Fixtures: a one-node relu graph, its input, the expected output, a test plugin's path.
 * ------------------------------------------------------------------------------------------------------------- */

static par_graph *relu_graph(void)
{
    par_msg m = {{0}};
    par_graph *g = par_graph_create("relu1");
    int64_t dims[1] = {N};
    int32_t x = par_graph_add_input(g, "x", PAR_DTYPE_F32, 1, dims, &m);
    par_out_spec os = {.name = "y"};
    int32_t node = par_graph_add_node(g, "relu", "relu0", 1, &x, 0, NULL, &os, &m);
    int32_t y = par_graph_find_value(g, "y");
    if (x < 0 || node < 0 || y < 0 || par_graph_mark_output(g, y, &m) != PAR_OK || par_graph_finalize(g, &m) != PAR_OK) {
        fprintf(stderr, "relu graph: %s\n", m.text);
        par_graph_destroy(g);
        return NULL;
    }
    return g;
}

static float input_x[N];
static float expect_y[N];

static void make_data(void)
{
    for (int i = 0; i < N; i++) {
        input_x[i] = (float)((i * 7) % 13 - 6) * 0.375f; /* negatives, zeros and positives */
        expect_y[i] = input_x[i] > 0.0f ? input_x[i] : 0.0f;
    }
}

static char plugin_dir[4096];

static const char *plugin(const char *name)
{
    static char path[4096 + 64];
    if (!plugin_dir[0]) {
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) return "";
        exe[n] = '\0';
        snprintf(plugin_dir, sizeof plugin_dir, "%s/plugins", dirname(exe));
    }
    snprintf(path, sizeof path, "%s/%s.so", plugin_dir, name);
    return path;
}

/* An instance of a test plugin, loaded; NULL when loading failed (the test then fails on it). */
static par_backend_inst *load_inst(const char *name, const char *spec)
{
    static par_backend_inst inst;
    par_msg m = {{0}};
    if (par_backend_spec_parse(spec, &inst, &m) != PAR_OK) {
        fprintf(stderr, "spec %s: %s\n", spec, m.text);
        return NULL;
    }
    snprintf(inst.plugin_path, sizeof inst.plugin_path, "%s", plugin(name));
    if (par_plugin_load(inst.plugin_path, 0, &inst.be, &m) != PAR_OK) {
        fprintf(stderr, "%s\n", m.text);
        return NULL;
    }
    return &inst;
}

static void run_case(const par_backend_inst *inst, int isolate, double timeout_s, par_exec_out *out)
{
    par_graph *g = relu_graph();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const void *inputs[1] = {input_x};
    par_exec_opts o = {.warmup = 1, .repeat = 3, .timeout_s = timeout_s, .isolate = isolate};
    par_exec_run(inst, par_graph_desc_of(g), inputs, &o, out);
    par_graph_destroy(g);
}

/* ---------------------------------------------------------------------------------------------------------------
 * A correct relu backend defined in this program (a built-in backend's path: no plugin).
 * ------------------------------------------------------------------------------------------------------------- */

typedef struct tb_prep {
    int64_t n;
    const float *in;
    float *out;
} tb_prep;

static char tb_threads[16] = "1";

static par_status tb_init(void **ctx, par_msg *msg)
{
    static int c;
    *ctx = &c;
    return PAR_OK;
}
static par_status tb_init_unsupported(void **ctx, par_msg *msg)
{
    return par_msgf(msg, PAR_UNSUPPORTED, "no device on this machine");
}
static void tb_destroy(void *ctx) {}
static par_status tb_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    return strcmp(g->nodes[node].op, "relu") == 0 ? PAR_OK : par_msgf(msg, PAR_UNSUPPORTED, "only relu");
}
static par_status tb_supports_none(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    return par_msgf(msg, PAR_UNSUPPORTED, "op not implemented");
}
static par_status tb_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    tb_prep *p = calloc(1, sizeof *p);
    if (!p) return par_msgf(msg, PAR_ERROR, "out of memory");
    p->n = g->values[g->outputs[0]].numel;
    *prepared = p;
    return PAR_OK;
}
static par_status tb_bind(void *ctx, void *prepared, const void *const *in, void *const *out, par_msg *msg)
{
    tb_prep *p = prepared;
    p->in = in[0];
    p->out = out[0];
    return PAR_OK;
}
static par_status tb_run(void *ctx, void *prepared, par_msg *msg)
{
    tb_prep *p = prepared;
    for (int64_t i = 0; i < p->n; i++) p->out[i] = p->in[i] > 0.0f ? p->in[i] : 0.0f;
    return PAR_OK;
}
static void tb_release(void *ctx, void *prepared)
{
    free(prepared);
}
static par_status tb_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    if (strcmp(key, "threads") != 0) return par_msgf(msg, PAR_ERROR, "unknown knob '%s'", key);
    snprintf(tb_threads, sizeof tb_threads, "%s", value);
    return PAR_OK;
}
static size_t tb_describe(void *ctx, char *buf, size_t len)
{
    return (size_t)snprintf(buf, len, "threads=%s", tb_threads);
}
static void *tb_get_proc(void *ctx, const char *name)
{
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)tb_set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)tb_describe;
    return NULL;
}

#define TB_TABLE(INIT, SUPPORTS, GET_PROC)                                                                          \
    {.api_version = PAR_BACKEND_API_VERSION, .struct_size = sizeof(par_backend), .name = "tb", .version = "1",     \
     .description = "test relu", .arith = PAR_ARITH_F32, .init = INIT, .destroy = tb_destroy,                      \
     .supports = SUPPORTS, .prepare = tb_prepare, .bind = tb_bind, .run = tb_run, .release = tb_release,           \
     .get_proc = GET_PROC}

static const par_backend tb_ok = TB_TABLE(tb_init, tb_supports, tb_get_proc);
static const par_backend tb_noknobs = TB_TABLE(tb_init, tb_supports, NULL);
static const par_backend tb_nodev = TB_TABLE(tb_init_unsupported, tb_supports, tb_get_proc);
static const par_backend tb_refuses = TB_TABLE(tb_init, tb_supports_none, tb_get_proc);

static par_backend_inst tb_inst(const par_backend *be, const char *spec)
{
    par_backend_inst inst;
    par_msg m = {{0}};
    memset(&inst, 0, sizeof inst);
    CU_ASSERT_EQUAL(par_backend_spec_parse(spec, &inst, &m), PAR_OK);
    inst.be = be;
    return inst;
}

static void check_outputs_equal_expectation(const par_exec_out *out)
{
    CU_ASSERT_EQUAL_FATAL(out->n_outputs, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out->outputs);
    CU_ASSERT_EQUAL(memcmp(out->outputs[0], expect_y, sizeof expect_y), 0);
}

static void test_pass_isolated(void)
{
    par_backend_inst inst = tb_inst(&tb_ok, "tb[threads=2]");
    par_exec_out out;
    run_case(&inst, 1, 10.0, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_PASS);
    if (out.verdict != PAR_V_PASS) fprintf(stderr, "reason: %s\n", out.reason);
    check_outputs_equal_expectation(&out);
    CU_ASSERT_EQUAL(out.t.runs, 3);
    CU_ASSERT(out.t.prepare_ms >= 0.0);
    CU_ASSERT(out.t.run_min_ms >= 0.0);
    CU_ASSERT(out.t.run_min_ms <= out.t.run_p10_ms && out.t.run_p10_ms <= out.t.run_median_ms &&
              out.t.run_median_ms <= out.t.run_p90_ms);
    par_exec_out_free(&out);
    CU_ASSERT_PTR_NULL(out.outputs);
    par_exec_out_free(&out); /* twice is harmless */
}

static void test_pass_in_process(void)
{
    par_backend_inst inst = tb_inst(&tb_ok, "tb");
    par_exec_out out;
    run_case(&inst, 0, 0.0, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_PASS);
    check_outputs_equal_expectation(&out);
    par_exec_out_free(&out);
}

static void test_one_run_still_checks_unwritten(void)
{
    par_backend_inst *inst = load_inst("unwritten", "tp_unwritten");
    CU_ASSERT_PTR_NOT_NULL_FATAL(inst);
    par_graph *g = relu_graph();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const void *inputs[1] = {input_x};
    par_exec_opts o = {.warmup = 0, .repeat = 1, .timeout_s = 10.0, .isolate = 1};
    par_exec_out out;
    par_exec_run(inst, par_graph_desc_of(g), inputs, &o, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_FAIL);
    CU_ASSERT_EQUAL(out.t.runs, 1);
    par_exec_out_free(&out);
    par_graph_destroy(g);
}

static void test_bad_options(void)
{
    par_backend_inst inst = tb_inst(&tb_ok, "tb");
    par_graph *g = relu_graph();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const void *inputs[1] = {input_x};
    par_exec_opts o = {.warmup = 0, .repeat = 0, .timeout_s = 1.0, .isolate = 1};
    par_exec_out out;
    par_exec_run(&inst, par_graph_desc_of(g), inputs, &o, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.reason, "repeat"));
    const void *none[1] = {NULL};
    o.repeat = 1;
    par_exec_run(&inst, par_graph_desc_of(g), none, &o, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.reason, "input 0 ('x'): no data"));
    par_graph_destroy(g);
}

static void test_knobs(void)
{
    par_backend_inst inst = tb_inst(&tb_ok, "tb[threads=4]");
    par_exec_probe(&inst, 10.0);
    CU_ASSERT_EQUAL(inst.usable, 1);
    CU_ASSERT_STRING_EQUAL(inst.describe, "threads=4");

    par_backend_inst bad = tb_inst(&tb_ok, "tb[fast=1]");
    par_exec_probe(&bad, 10.0);
    CU_ASSERT_EQUAL(bad.usable, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(bad.unusable_reason, "knob 'fast=1': unknown knob 'fast'"));
    par_exec_out out;
    run_case(&bad, 1, 10.0, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.reason, "knob 'fast=1'"));

    par_backend_inst nok = tb_inst(&tb_noknobs, "tb[threads=2]");
    run_case(&nok, 1, 10.0, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.reason, "knob 'threads=2': backend 'tb' has no knobs"));
}

static void test_unsupported(void)
{
    par_backend_inst nodev = tb_inst(&tb_nodev, "tb");
    par_exec_out out;
    run_case(&nodev, 1, 10.0, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_UNSUPPORTED);
    CU_ASSERT_STRING_EQUAL(out.reason, "no device on this machine");
    par_exec_probe(&nodev, 10.0);
    CU_ASSERT_EQUAL(nodev.usable, 0);
    CU_ASSERT_STRING_EQUAL(nodev.unusable_reason, "no device on this machine");

    par_backend_inst refuses = tb_inst(&tb_refuses, "tb");
    run_case(&refuses, 1, 10.0, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_UNSUPPORTED);
    CU_ASSERT_STRING_EQUAL(out.reason, "node 'relu0' (relu): op not implemented");
}

/* The fork per case, 200 times over: every case passes and the cost per case is printed. Its speed is not
 * asserted here (a timed unit test fails on a loaded machine, under qemu or a sanitizer, and proves nothing on an
 * idle one): the quick suite's rate on cpu, `parity run --suite quick -b cpu -j 2` (docs/reliability.md), is where
 * a regression of the per-case cost shows. */
static void test_overhead(void)
{
    par_backend_inst inst = tb_inst(&tb_ok, "tb");
    par_graph *g = relu_graph();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const void *inputs[1] = {input_x};
    par_exec_opts o = {.warmup = 0, .repeat = 2, .timeout_s = 10.0, .isolate = 1};
    const int n = 200;
    int pass = 0;
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        par_exec_out out;
        par_exec_run(&inst, par_graph_desc_of(g), inputs, &o, &out);
        pass += out.verdict == PAR_V_PASS;
        par_exec_out_free(&out);
    }
    double per = (now_s() - t0) / n * 1e3;
    PAR_TEST_NOTE("\n  isolated execution: %.3f ms per case\n", per);
    CU_ASSERT_EQUAL(pass, n);
    par_graph_destroy(g);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Misbehaving plugins
 * ------------------------------------------------------------------------------------------------------------- */

static void expect(const char *plugin_name, double timeout_s, par_verdict v, const char *reason_part)
{
    par_backend_inst *inst = load_inst(plugin_name, "tp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(inst);
    par_exec_out out;
    run_case(inst, 1, timeout_s, &out);
    CU_ASSERT_EQUAL(out.verdict, v);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.reason, reason_part));
    if (out.verdict != v || !strstr(out.reason, reason_part))
        fprintf(stderr, "\n  %s: %s: %s (expected %s: %s)\n", plugin_name, par_verdict_name(out.verdict), out.reason,
                par_verdict_name(v), reason_part);
    CU_ASSERT_EQUAL(out.n_outputs, v == PAR_V_PASS ? 1 : 0);
    par_exec_out_free(&out);
}

static void test_plugin_relu(void)
{
    par_backend_inst *inst = load_inst("relu", "tp_relu[mode=fast]");
    CU_ASSERT_PTR_NOT_NULL_FATAL(inst);
    CU_ASSERT_STRING_EQUAL(inst->be->name, "tp_relu");
    par_exec_probe(inst, 10.0);
    CU_ASSERT_EQUAL(inst->usable, 1);
    CU_ASSERT_STRING_EQUAL(inst->describe, "mode=fast");
    par_exec_out out;
    run_case(inst, 1, 10.0, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_PASS);
    check_outputs_equal_expectation(&out);
    par_exec_out_free(&out);
}

static void test_crash(void)
{
    expect("segv", 10.0, PAR_V_CRASH, "killed by signal 11 (Segmentation fault) during run");
}

static void test_timeout(void)
{
    double t0 = now_s();
    expect("hang", 0.5, PAR_V_TIMEOUT, "no result after 0.5 s (during run 1)");
    double dt = now_s() - t0;
    CU_ASSERT(dt >= 0.5);
    CU_ASSERT(dt < 0.5 + 0.5);
}

static void test_out_of_bounds(void)
{
    expect("oob", 10.0, PAR_V_FAIL, "out-of-bounds write after output 0 (byte offset 148; the output has 148 bytes)");
}

static void test_underrun(void)
{
    expect("underrun", 10.0, PAR_V_FAIL, "out-of-bounds write before output 0 (byte offset -1)");
}

static void test_unwritten(void)
{
    expect("unwritten", 10.0, PAR_V_FAIL, "output 0 element 36 never written (1 element in all)");
}

static void test_flaky(void)
{
    expect("flaky", 10.0, PAR_V_FLAKY, "run 2 differs from run 1 at output 0 element 1");
}

static void test_wrote_input(void)
{
    expect("writeinput", 10.0, PAR_V_FAIL, "backend wrote into input 0 (element 0 first, during run 1)");
}

static void test_straggler(void)
{
    double t0 = now_s();
    expect("forks", 10.0, PAR_V_PASS, "");
    CU_ASSERT(now_s() - t0 < 1.0); /* the leftover process neither delays the case nor times it out */
}

/* ---------------------------------------------------------------------------------------------------------------
 * Loader and specs
 * ------------------------------------------------------------------------------------------------------------- */

static void expect_load_error(const char *path, const char *part)
{
    static const par_backend dummy;
    const par_backend *be = &dummy;
    par_msg m = {{0}};
    CU_ASSERT_EQUAL(par_plugin_load(path, 0, &be, &m), PAR_ERROR);
    CU_ASSERT_PTR_NULL(be);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, part));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, path));
    if (!strstr(m.text, part)) fprintf(stderr, "\n  got: %s\n  expected: %s\n", m.text, part);
}

static void test_load_errors(void)
{
    char p[4200];
    snprintf(p, sizeof p, "%s", plugin("badversion"));
    expect_load_error(p, "was built against backend API version 3; this parity speaks version 2");
    snprintf(p, sizeof p, "%s", plugin("abiv1"));
    expect_load_error(p, "was built against backend API version 1; this parity speaks version 2");
    snprintf(p, sizeof p, "%s", plugin("noentry"));
    expect_load_error(p, "does not export parity_backend_entry");
    snprintf(p, sizeof p, "%s", plugin("norun"));
    expect_load_error(p, "has no run()");
    snprintf(p, sizeof p, "%s", plugin("badname"));
    expect_load_error(p, "name 'Tp Badname' is not [a-z0-9_]+");
    snprintf(p, sizeof p, "%s", plugin("no_such_plugin"));
    expect_load_error(p, "cannot open: ");
    snprintf(p, sizeof p, "%s", plugin_dir); /* a folder, not a file */
    expect_load_error(p, "cannot open: ");
    expect_load_error("/etc/hostname", "cannot open: "); /* a file, not a shared object */
}

static void test_builtin_list(void)
{
    int32_t n = -1;
    const par_backend *const *list = par_builtin_backends(&n);
    CU_ASSERT_PTR_NOT_NULL(list);
    CU_ASSERT(n >= 0);
    for (int32_t i = 0; i < n; i++) CU_ASSERT_PTR_NOT_NULL(list[i]);
}

static void expect_spec_error(const char *spec, const char *part)
{
    par_backend_inst inst;
    memset(&inst, 0, sizeof inst);
    snprintf(inst.label, sizeof inst.label, "untouched");
    par_msg m = {{0}};
    CU_ASSERT_EQUAL(par_backend_spec_parse(spec, &inst, &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, part));
    CU_ASSERT_STRING_EQUAL(inst.label, "untouched");
    if (!strstr(m.text, part)) fprintf(stderr, "\n  spec '%s': got: %s\n", spec, m.text);
}

static void test_spec_parse(void)
{
    par_backend_inst inst;
    par_msg m = {{0}};
    CU_ASSERT_EQUAL(par_backend_spec_parse("cpu", &inst, &m), PAR_OK);
    CU_ASSERT_STRING_EQUAL(inst.label, "cpu");
    CU_ASSERT_EQUAL(inst.n_knobs, 0);
    CU_ASSERT_PTR_NULL(inst.be);
    CU_ASSERT_EQUAL(par_backend_spec_parse("cpu[threads=2,kernels=scalar]", &inst, &m), PAR_OK);
    CU_ASSERT_STRING_EQUAL(inst.label, "cpu[threads=2,kernels=scalar]");
    CU_ASSERT_EQUAL_FATAL(inst.n_knobs, 2);
    CU_ASSERT_STRING_EQUAL(inst.knob_key[0], "threads");
    CU_ASSERT_STRING_EQUAL(inst.knob_val[0], "2");
    CU_ASSERT_STRING_EQUAL(inst.knob_key[1], "kernels");
    CU_ASSERT_STRING_EQUAL(inst.knob_val[1], "scalar");
    CU_ASSERT_EQUAL(par_backend_spec_parse("vulkan[device=0,fp16=1.5e-3]", &inst, &m), PAR_OK);
    CU_ASSERT_STRING_EQUAL(inst.knob_val[1], "1.5e-3");

    expect_spec_error("", "empty");
    expect_spec_error("Cpu", "expected a backend name");
    expect_spec_error("cpu x", "character ' ' at position 3");
    expect_spec_error("cpu[", "expected a knob name at position 4");
    expect_spec_error("cpu[]", "empty knob list");
    expect_spec_error("cpu[threads]", "knob 'threads' has no '=value'");
    expect_spec_error("cpu[threads=]", "knob 'threads' has an empty value");
    expect_spec_error("cpu[threads=2", "missing ']'");
    expect_spec_error("cpu[threads=2]x", "unexpected text after ']'");
    expect_spec_error("cpu[threads=2,]", "expected a knob name at position 14");
    expect_spec_error("cpu[a=1,a=2]", "knob 'a' given twice");
    expect_spec_error("cpu[a=1 b=2]", "unexpected character ' '");
    char many[256] = "cpu[";
    for (int i = 0; i <= PAR_MAX_KNOBS; i++) {
        char kv[16];
        snprintf(kv, sizeof kv, "%sk%d=1", i ? "," : "", i);
        strcat(many, kv);
    }
    strcat(many, "]");
    expect_spec_error(many, "more than 16 knobs");
}


/* A stray write that flips the same bits on every run cancels out over an even number of runs: only a check after
 * every run catches it (on run 1). */
static void test_toggle_caught_after_run_1(void)
{
    expect("toggle", 10.0, PAR_V_FAIL, "out-of-bounds write after output 0 (byte offset 148; the output has 148 "
                                       "bytes), found after run 1");
}

/* A backend's stdout and stderr are captured: a bounded tail is kept and the byte count says what was dropped. */
static void test_output_captured(void)
{
    par_backend_inst *inst = load_inst("noisy", "tp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(inst);
    par_exec_out out;
    run_case(inst, 1, 10.0, &out); /* 4 runs */
    CU_ASSERT_EQUAL(out.verdict, PAR_V_PASS);
    const int64_t per_run = 1024 * 1024 + (int64_t)strlen("noisy: run done\n");
    CU_ASSERT_EQUAL(out.output_bytes, 4 * per_run);
    size_t tail = strlen(out.output);
    CU_ASSERT(tail > 0 && tail < PAR_OUTPUT_TAIL);
    CU_ASSERT(tail >= 16 && strcmp(out.output + tail - 16, "noisy: run done\n") == 0);
    par_exec_out_free(&out);
}

/* Strings from a backend come back as valid UTF-8 (U+FFFD for invalid bytes), control characters escaped. */
static void test_backend_strings_cleaned(void)
{
    par_backend_inst *inst = load_inst("badutf8", "tp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(inst);
    par_exec_probe(inst, 10.0);
    CU_ASSERT_EQUAL(inst->usable, 1);
    CU_ASSERT_STRING_EQUAL(inst->describe, "mode=\xef\xbf\xbd\xef\xbf\xbd;bad=\xef\xbf\xbd(");
    par_exec_out out;
    run_case(inst, 1, 10.0, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_ERROR);
    CU_ASSERT_STRING_EQUAL(out.reason, "run 1 failed: broken \xef\xbf\xbd\xef\xbf\xbd text\\x1b[31m red");
    par_exec_out_free(&out);

    char buf[16];
    CU_ASSERT_EQUAL(par_text_clean(buf, sizeof buf, "ok \xc3\xa9", 6, 1), 0);
    CU_ASSERT_STRING_EQUAL(buf, "ok \xc3\xa9");
    CU_ASSERT_EQUAL(par_text_clean(buf, sizeof buf, "\xed\xa0\x80", 4, 1), 1); /* a surrogate */
    CU_ASSERT_STRING_EQUAL(buf, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    CU_ASSERT_EQUAL(par_text_clean(buf, 6, "abcdef\xc3\xa9", 9, 1), 1); /* cut at a character boundary */
    CU_ASSERT_STRING_EQUAL(buf, "abcde");
}

/* A record from another process is checked before use: a verdict out of range is refused, strings repaired. */
static void test_record_check(void)
{
    par_result *r = calloc(1, sizeof *r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    char why[128];
    r->done = 1;
    r->verdict = PAR_V_FAIL;
    snprintf(r->reason, sizeof r->reason, "fine");
    CU_ASSERT_EQUAL(par_result_check(r, why, sizeof why), 0);
    r->verdict = (par_verdict)0x4D4D4D4D;
    CU_ASSERT_EQUAL(par_result_check(r, why, sizeof why), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "verdict"));
    r->verdict = PAR_V_PASS;
    r->done = 7;
    CU_ASSERT_EQUAL(par_result_check(r, why, sizeof why), -1);
    r->done = 1;
    memset(r->reason, 'A', sizeof r->reason); /* no terminator */
    r->reason[3] = '\xff';
    CU_ASSERT_EQUAL(par_result_check(r, why, sizeof why), 1);
    CU_ASSERT(memchr(r->reason, 0, sizeof r->reason) != NULL);
    CU_ASSERT(strncmp(r->reason, "AAA\xef\xbf\xbd" "AAA", 9) == 0);
    free(r);
}

/* A backend that leaves a setsid() daemon behind: the worker kills it when the job ends. */
static void test_setsid_daemon_killed(void)
{
    int sub = 0; /* the worker adopts orphans as a child subreaper: where it cannot, the daemon is out of reach */
    if (prctl(PR_GET_CHILD_SUBREAPER, &sub) != 0)
        PAR_TEST_SKIP("no PR_SET_CHILD_SUBREAPER here (qemu-user has none): an orphan cannot be adopted");
    char pidfile[64], spec[160];
    snprintf(pidfile, sizeof pidfile, "/tmp/parity_setsid.%d", (int)getpid());
    snprintf(spec, sizeof spec, "tp_setsid[pidfile=%s]", pidfile);
    unlink(pidfile);
    par_backend_inst *inst = load_inst("setsid", spec);
    CU_ASSERT_PTR_NOT_NULL_FATAL(inst);
    par_exec_out out;
    run_case(inst, 1, 10.0, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_PASS);
    par_exec_out_free(&out);
    FILE *f = fopen(pidfile, "r");
    int pid = 0;
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fscanf(f, "%d", &pid), 1);
    fclose(f);
    unlink(pidfile);
    CU_ASSERT_FATAL(pid > 1);
    int gone = kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    CU_ASSERT(gone);
    if (!gone) kill((pid_t)pid, SIGKILL);
}

/* The memory limit: a child above it is killed, and the reason says so. */
static void test_memory_limit(void)
{
    par_backend_inst *inst = load_inst("hog", "tp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(inst);
    par_graph *g = relu_graph();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const void *inputs[1] = {input_x};
    par_exec_opts o = {.warmup = 0, .repeat = 1, .timeout_s = 20.0, .isolate = 1, .mem_limit = (int64_t)64 << 20};
    par_exec_out out;
    par_exec_run(inst, par_graph_desc_of(g), inputs, &o, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_CRASH);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.reason, "out of memory (RSS > 64 MiB) in phase run 1"));
    if (!strstr(out.reason, "out of memory")) fprintf(stderr, "\n  hog: %s\n", out.reason);
    par_exec_out_free(&out);
    par_graph_destroy(g);
}

static void test_invalid_status(void)
{
    expect("badstatus", 10.0, PAR_V_ERROR, "run 1 returned invalid status 77");
}

/* A plugin that crashes in its constructor or its entry function is refused, and this process lives on. */
static void test_load_crash(void)
{
    char p[4200];
    snprintf(p, sizeof p, "%s", plugin("ctorcrash"));
    expect_load_error(p, "killed by signal 11 (Segmentation fault) while loading");
    snprintf(p, sizeof p, "%s", plugin("entrycrash"));
    expect_load_error(p, "killed by signal 11 (Segmentation fault) while loading");
}

/* The shared knobs are checked once, by the harness. */
static void test_shared_knobs(void)
{
    par_backend_inst inst;
    par_msg m = {{0}};
    int32_t t = 0;
    CU_ASSERT_EQUAL(par_knob_threads_parse("64", &t, &m), PAR_OK);
    CU_ASSERT_EQUAL(t, 64);
    CU_ASSERT_EQUAL(par_knob_threads_parse("0", &t, &m), PAR_ERROR);
    CU_ASSERT_EQUAL(par_knob_threads_parse("65", &t, &m), PAR_ERROR);
    CU_ASSERT_EQUAL(par_knob_threads_parse("2x", &t, &m), PAR_ERROR);
    CU_ASSERT_EQUAL(par_knob_threads_parse("", &t, &m), PAR_ERROR);
    CU_ASSERT_EQUAL(par_knob_threads_parse("99999999999", &t, &m), PAR_ERROR);
    CU_ASSERT_EQUAL(par_backend_spec_parse("cpu[threads=4,kernels=avx2]", &inst, &m), PAR_OK);
    expect_spec_error("cpu[threads=65]", "knob 'threads': '65' is not an integer in [1, 64]");
    expect_spec_error("cpu[kernels=Avx2]", "knob kernels 'Avx2': not a name");
}


/* The same checks through a fork server (the way parity run executes): the child is forked by the server and
 * receives the graph and the buffers as memfds. */
/* A fork server for the test plugin tp_<name>, the relu graph and the options of a job through it (fatal on failure). */
static par_exec_server *server_setup(const char *name, par_backend_inst **inst, par_graph **g, par_exec_opts *o)
{
    *inst = load_inst(name, "tp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(*inst);
    par_msg m = {{0}};
    par_exec_server *srv = par_exec_server_start(*inst, &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
    *g = relu_graph();
    CU_ASSERT_PTR_NOT_NULL_FATAL(*g);
    *o = (par_exec_opts){.warmup = 1, .repeat = 3, .timeout_s = 10.0, .isolate = 1, .server = srv};
    return srv;
}

static void via_server(const char *name, par_verdict v, const char *part)
{
    par_backend_inst *inst;
    par_graph *g;
    par_exec_opts o;
    par_exec_server *srv = server_setup(name, &inst, &g, &o);
    const void *inputs[1] = {input_x};
    for (int rep = 0; rep < 2; rep++) { /* a server serves job after job */
        par_exec_out out;
        par_exec_run(inst, par_graph_desc_of(g), inputs, &o, &out);
        CU_ASSERT_EQUAL(out.verdict, v);
        CU_ASSERT_PTR_NOT_NULL(strstr(out.reason, part));
        if (out.verdict != v || !strstr(out.reason, part))
            fprintf(stderr, "\n  %s via server: %s: %s\n", name, par_verdict_name(out.verdict), out.reason);
        if (v == PAR_V_PASS) check_outputs_equal_expectation(&out);
        par_exec_out_free(&out);
    }
    par_graph_destroy(g);
    par_exec_server_stop(srv);
}

static void test_fork_server(void)
{
    via_server("relu", PAR_V_PASS, "");
    via_server("segv", PAR_V_CRASH, "killed by signal 11 (Segmentation fault) during run 1");
    via_server("writeinput", PAR_V_FAIL, "backend wrote into input 0 (element 0 first, during run");
    via_server("toggle", PAR_V_FAIL, "found after run 1");
    via_server("badstatus", PAR_V_ERROR, "run 1 returned invalid status 77");
}

/* Kill every direct child of this process (the fork servers it started): the way a server dies mid-run. */
static int kill_children(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int n = 0, pid;
    while (fscanf(f, "%d", &pid) == 1) n += kill(pid, SIGKILL) == 0;
    fclose(f);
    return n;
}

/* A fork server that dies mid-run costs the job that finds it gone (an ERROR naming it), not every later one: the
 * worker forks those itself, as without a server, and they pass. */
static void test_server_lost(void)
{
    par_backend_inst *inst;
    par_graph *g;
    par_exec_opts o;
    par_exec_server *srv = server_setup("relu", &inst, &g, &o);
    const void *inputs[1] = {input_x};
    par_exec_out out;
    par_exec_run(inst, par_graph_desc_of(g), inputs, &o, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_PASS);
    par_exec_out_free(&out);
    CU_ASSERT_FATAL(kill_children() >= 1);
    usleep(100 * 1000);
    par_exec_run(inst, par_graph_desc_of(g), inputs, &o, &out);
    CU_ASSERT_EQUAL(out.verdict, PAR_V_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.reason, "fork server"));
    CU_ASSERT(par_exec_server_lost(srv));
    par_exec_out_free(&out);
    for (int rep = 0; rep < 2; rep++) {
        par_exec_run(inst, par_graph_desc_of(g), inputs, &o, &out);
        CU_ASSERT_EQUAL(out.verdict, PAR_V_PASS);
        if (out.verdict != PAR_V_PASS) fprintf(stderr, "\n  after the server died: %s: %s\n", par_verdict_name(out.verdict), out.reason);
        else check_outputs_equal_expectation(&out);
        par_exec_out_free(&out);
    }
    par_graph_destroy(g);
    par_exec_server_stop(srv);
}

/* Two jobs open at once, driven run by run and interleaved (the way parity bench drives them): each keeps its own
 * buffers, checks and timings; a job whose verdict is decided makes no more runs; the end fills the result as
 * par_exec_run does (its timed runs only). */
static void test_interleaved_jobs(void)
{
    par_backend_inst g1, g2, *good = &g1, *bad = &g2; /* load_inst returns the same static instance */
    CU_ASSERT_PTR_NOT_NULL_FATAL(load_inst("relu", "tp"));
    g1 = *load_inst("relu", "tp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(load_inst("segv", "tp"));
    g2 = *load_inst("segv", "tp");
    par_msg m = {{0}};
    par_exec_server *s1 = par_exec_server_start(good, &m), *s2 = par_exec_server_start(bad, &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s2);
    par_graph *g = relu_graph();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const void *inputs[1] = {input_x};
    par_exec_opts o1 = {.warmup = 1, .repeat = 3, .timeout_s = 10.0, .isolate = 1, .server = s1}, o2 = o1;
    o2.server = s2;
    par_exec_job *j1 = par_exec_begin(good, par_graph_desc_of(g), inputs, &o1);
    par_exec_job *j2 = par_exec_begin(bad, par_graph_desc_of(g), inputs, &o2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j2);
    int ok1 = 0, ok2 = 0;
    for (int r = 0; r < 4; r++) {
        par_exec_run_info ri = {0};
        ok1 += par_exec_step(j1, 5.0, &ri);
        CU_ASSERT(ri.ms >= 0);
        ok2 += par_exec_step(j2, 5.0, NULL);
    }
    CU_ASSERT_EQUAL(ok1, 4);
    CU_ASSERT_EQUAL(ok2, 0); /* it crashes in its first run, and runs no more */
    par_exec_out out1, out2;
    par_exec_end(j1, &out1);
    par_exec_end(j2, &out2);
    CU_ASSERT_EQUAL(out1.verdict, PAR_V_PASS);
    if (out1.verdict != PAR_V_PASS) fprintf(stderr, "\n  interleaved: %s: %s\n", par_verdict_name(out1.verdict), out1.reason);
    CU_ASSERT_EQUAL(out1.t.runs, 3);
    check_outputs_equal_expectation(&out1);
    CU_ASSERT_EQUAL(out2.verdict, PAR_V_CRASH);
    CU_ASSERT_PTR_NOT_NULL(strstr(out2.reason, "during run 1"));
    par_exec_out_free(&out1);
    par_exec_out_free(&out2);
    par_graph_destroy(g);
    par_exec_server_stop(s1);
    par_exec_server_stop(s2);
}

static void test_setup(void)
{
    make_data();
    CU_ASSERT(input_x[0] < 0.0f && expect_y[N - 1] >= 0.0f);
}

static const CU_TestInfo tests[] = {
    {"setup", test_setup},
    {"interleaved jobs", test_interleaved_jobs},
    {"a fork server lost mid-run", test_server_lost},
    {"pass isolated", test_pass_isolated},
    {"pass in process", test_pass_in_process},
    {"bad options", test_bad_options},
    {"knobs", test_knobs},
    {"unsupported", test_unsupported},
    {"overhead", test_overhead},
    {"plugin relu", test_plugin_relu},
    {"crash", test_crash},
    {"timeout", test_timeout},
    {"out of bounds", test_out_of_bounds},
    {"underrun", test_underrun},
    {"unwritten", test_unwritten},
    {"one run still checks unwritten", test_one_run_still_checks_unwritten},
    {"flaky", test_flaky},
    {"wrote input", test_wrote_input},
    {"straggler", test_straggler},
    {"load errors", test_load_errors},
    {"builtin list", test_builtin_list},
    {"spec parse", test_spec_parse},
    {"toggling stray write caught after run 1", test_toggle_caught_after_run_1},
    {"output captured", test_output_captured},
    {"backend strings cleaned", test_backend_strings_cleaned},
    {"record check", test_record_check},
    {"setsid daemon killed", test_setsid_daemon_killed},
    {"memory limit", test_memory_limit},
    {"invalid status", test_invalid_status},
    {"plugin crashing while loading", test_load_crash},
    {"shared knobs", test_shared_knobs},
    {"through a fork server", test_fork_server},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("exec", tests)
