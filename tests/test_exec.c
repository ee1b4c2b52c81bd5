/*
 * test_exec.c - isolated execution (harness/exec.c), the plugin loader and backend specs (harness/plugin.c), and the
 * JSON report (reports/report_json.c, reports/env.c).
 *
 * A correct relu backend defined here and the test plugins of tests/plugins/ (built beside this program, in
 * <build>/tests/plugins/) each exercise one verdict: PASS, CRASH, TIMEOUT, FAIL (out of bounds, unwritten, wrote
 * input), FLAKY, UNSUPPORTED, ERROR. Inputs are a fixed deterministic pattern, so every run is the same.
 */
#include "exec.h"
#include "graph.h"
#include "report.h"
#include "tmain.h"

#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    if (par_plugin_load(inst.plugin_path, &inst.be, &m) != PAR_OK) {
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
    CU_ASSERT_PTR_NOT_NULL(strstr(out.reason, "knob 'threads'"));
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

/* The fork per case must stay cheap: make check forks once per (case, backend). Printed, with a loose bound that
 * only a gross regression (a sleep, a polling loop) breaks. */
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
    fprintf(stderr, "\n  isolated execution: %.3f ms per case\n", per);
    CU_ASSERT_EQUAL(pass, n);
    CU_ASSERT(per < 20.0);
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
    expect("hang", 0.5, PAR_V_TIMEOUT, "no result after 0.5 s (during run)");
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
    CU_ASSERT_EQUAL(par_plugin_load(path, &be, &m), PAR_ERROR);
    CU_ASSERT_PTR_NULL(be);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, part));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, path));
    if (!strstr(m.text, part)) fprintf(stderr, "\n  got: %s\n  expected: %s\n", m.text, part);
}

static void test_load_errors(void)
{
    char p[4200];
    snprintf(p, sizeof p, "%s", plugin("badversion"));
    expect_load_error(p, "was built against backend API version 2; this parity speaks version 1");
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

/* ---------------------------------------------------------------------------------------------------------------
 * Report
 * ------------------------------------------------------------------------------------------------------------- */

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char p[512];
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/parity_test_exec_XXXXXX");
        if (!mkdtemp(tmpdir)) return "/nonexistent/x";
    }
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return p;
}

#define RC 3 /* cases */
#define RB 2 /* backends */

static par_report_case rcases[RC];
static par_backend_inst rbackends[RB];
static par_result rresults[RC * RB];

static par_report sample_report(void)
{
    memset(rcases, 0, sizeof rcases);
    memset(rresults, 0, sizeof rresults);
    snprintf(rcases[0].id, sizeof rcases[0].id, "relu(shape=[3])#seed=1");
    snprintf(rcases[0].origin, sizeof rcases[0].origin, "suite:quick");
    snprintf(rcases[0].ops, sizeof rcases[0].ops, "relu");
    snprintf(rcases[1].id, sizeof rcases[1].id, "conv it's");
    snprintf(rcases[1].origin, sizeof rcases[1].origin, "suite:quick");
    snprintf(rcases[1].ops, sizeof rcases[1].ops, "conv2d,relu");
    snprintf(rcases[2].id, sizeof rcases[2].id, "mobilenet_v2");
    snprintf(rcases[2].origin, sizeof rcases[2].origin, "cases/models/mobile net.json");
    snprintf(rcases[2].ops, sizeof rcases[2].ops, "add,conv2d");
    rbackends[0] = tb_inst(&tb_ok, "tb");
    rbackends[0].usable = 1;
    snprintf(rbackends[0].describe, sizeof rbackends[0].describe, "threads=1");
    rbackends[1] = tb_inst(&tb_nodev, "tb[threads=2]");
    snprintf(rbackends[1].plugin_path, sizeof rbackends[1].plugin_path, "build/plugins/libparity_tb.so");
    snprintf(rbackends[1].unusable_reason, sizeof rbackends[1].unusable_reason, "no device");
    /* backend 0: PASS (ratio 0.25), FAIL (ratio +inf, NaN output), PASS (ratio 0.5); backend 1: UNSUPPORTED, CRASH,
     * not run */
    double ratios[RC] = {0.25, INFINITY, 0.5};
    for (int c = 0; c < RC; c++) {
        par_result *r = &rresults[c * RB + 0];
        r->done = 1;
        r->verdict = c == 1 ? PAR_V_FAIL : PAR_V_PASS;
        r->m.n = 10;
        r->m.max_ratio = ratios[c];
        r->m.max_abs = c == 1 ? NAN : 1e-7;
        r->m.nmse = c == 1 ? INFINITY : 1e-15;
        r->m.worst_output = 0;
        r->m.worst_index = 4;
        r->m.worst_rank = 2;
        r->m.worst_coords[0] = 1;
        r->m.worst_coords[1] = 1;
        r->m.worst_ref = 0.1;
        r->m.worst_got = c == 1 ? NAN : 0.1f;
        r->m.worst_budget = c == 1 ? 0.0 : 1e-8;
        r->t.runs = 2;
        r->t.run_median_ms = 0.125;
        if (c == 1) snprintf(r->reason, sizeof r->reason, "1 element over budget");
    }
    rresults[0 * RB + 1] = (par_result){.done = 1, .verdict = PAR_V_UNSUPPORTED, .reason = "no device"};
    rresults[1 * RB + 1] = (par_result){.done = 1, .verdict = PAR_V_CRASH, .reason = "killed by signal 11"};
    par_report r = {.command_line = "parity run --suite quick",
                    .seed = 18446744073709551615ull,
                    .repeat = 2,
                    .warmup = 1,
                    .jobs = 2,
                    .timeout_s = 10,
                    .wall_s = 1.5,
                    .parity_exe = "build/parity",
                    .n_backends = RB,
                    .backends = rbackends,
                    .n_cases = RC,
                    .cases = rcases,
                    .results = rresults};
    return r;
}

static void test_repro(void)
{
    par_report r = sample_report();
    char buf[1024];
    par_report_repro(&r, 0, 0, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "build/parity run --case 'relu(shape=[3])#seed=1' -b tb");
    par_report_repro(&r, 1, 1, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "build/parity run --case 'conv it'\\''s' -b 'tb[threads=2]' "
                                "--plugin build/plugins/libparity_tb.so");
    par_report_repro(&r, 2, 0, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "build/parity run 'cases/models/mobile net.json' -b tb");
    char small[12];
    par_report_repro(&r, 0, 0, small, sizeof small);
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1); /* cut, terminated */
    par_report_repro(&r, 5, 0, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "");
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

static json_object *jget(json_object *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save)) {
        if (json_object_is_type(o, json_type_array)) o = json_object_array_get_idx(o, (size_t)atoi(k));
        else if (!json_object_object_get_ex(o, k, &o)) return NULL;
    }
    return o;
}

/* No double anywhere in the tree is NaN or infinite (json-c's parser would accept bare NaN/Infinity tokens). */
static int all_finite(json_object *o)
{
    switch (json_object_get_type(o)) {
    case json_type_double: return isfinite(json_object_get_double(o));
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(o); i++)
            if (!all_finite(json_object_array_get_idx(o, i))) return 0;
        return 1;
    case json_type_object: {
        json_object_object_foreach(o, k, v)
        {
            (void)k;
            if (!all_finite(v)) return 0;
        }
        return 1;
    }
    default: return 1;
    }
}

/* Outside strings, the only words in the text are true, false and null: no bare NaN, Infinity or inf. */
static int bare_words_ok(const char *s)
{
    while (*s) {
        if (*s == '"') {
            for (s++; *s && *s != '"'; s++)
                if (*s == '\\' && s[1]) s++;
            if (*s) s++;
        } else if (*s == '-' || (*s >= '0' && *s <= '9')) {
            while (*s == '-' || *s == '+' || *s == '.' || *s == 'e' || *s == 'E' || (*s >= '0' && *s <= '9')) s++;
        } else if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) {
            const char *w = s;
            while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) s++;
            size_t n = (size_t)(s - w);
            if (!((n == 4 && strncmp(w, "true", 4) == 0) || (n == 5 && strncmp(w, "false", 5) == 0) ||
                  (n == 4 && strncmp(w, "null", 4) == 0)))
                return 0;
        } else {
            s++;
        }
    }
    return 1;
}

static int count_tmp_files(void)
{
    DIR *d = opendir(tmpdir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) n += strstr(e->d_name, ".tmp.") != NULL;
    if (d) closedir(d);
    return n;
}

static void test_report_roundtrip(void)
{
    par_report r = sample_report();
    const char *path = tmp_path("report.json");
    char p[512];
    snprintf(p, sizeof p, "%s", path);
    par_msg m = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_report_write_json(&r, p, &m), PAR_OK);
    CU_ASSERT_EQUAL(count_tmp_files(), 0);
    char *text = slurp(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT(bare_words_ok(text));
    enum json_tokener_error jerr;
    json_object *root = json_tokener_parse_verbose(text, &jerr);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT(all_finite(root));
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "schema")), PAR_REPORT_SCHEMA);
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "version")), PAR_REPORT_VERSION);
    const char *created = json_object_get_string(jget(root, "created"));
    CU_ASSERT(created && strlen(created) == 20 && created[10] == 'T' && created[19] == 'Z');
    CU_ASSERT_EQUAL(json_object_get_uint64(jget(root, "config.seed")), 18446744073709551615ull);
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "config.jobs")), 2);
    CU_ASSERT(json_object_get_int(jget(root, "environment.cpu.cores")) >= 1);
    CU_ASSERT(json_object_is_type(jget(root, "environment.cpu.features"), json_type_array));
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "backends.1.label")), "tb[threads=2]");
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "backends.1.knobs.threads")), "2");
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "backends.1.reason")), "no device");
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "backends.0.arith")), "f32");
    /* counts */
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.backends.0.counts.PASS")), 2);
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.backends.0.counts.FAIL")), 1);
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.backends.1.counts.UNSUPPORTED")), 1);
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.backends.1.counts.CRASH")), 1);
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.backends.1.records")), 2);
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.counts.PASS")), 2);
    /* ratio distribution over 0.25, 0.5, inf (nearest rank): median 0.5, max inf -> null */
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.backends.0.max_ratio.compared")), 3);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(jget(root, "summary.backends.0.max_ratio.median")), 0.5, 0);
    CU_ASSERT(json_object_is_type(jget(root, "summary.backends.0.max_ratio.max"), json_type_null));
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.backends.0.max_ratio.nonfinite")), 1);
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "summary.backends.0.worst.case")), "conv it's");
    /* records: 5 done of 6 */
    CU_ASSERT_EQUAL(json_object_array_length(jget(root, "results")), 5);
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "results.2.verdict")), "FAIL");
    CU_ASSERT(json_object_is_type(jget(root, "results.2.metrics.max_abs"), json_type_null));
    CU_ASSERT(json_object_get_boolean(jget(root, "results.2.metrics.max_ratio_infinite")));
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "results.2.worst.backend_class")), "nan");
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "results.0.worst.coords.1")), 1);
    CU_ASSERT((float)json_object_get_double(jget(root, "results.0.worst.backend")) == 0.1f); /* 9 digits: f32 exact */
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "results.0.repro")),
                           "build/parity run --case 'relu(shape=[3])#seed=1' -b tb");
    CU_ASSERT(json_object_is_type(jget(root, "results.1.metrics"), json_type_null)); /* UNSUPPORTED */
    json_object_put(root);
    free(text);
}

static void test_report_write_errors(void)
{
    par_report r = sample_report();
    par_msg m = {{0}};
    char missing[600];
    snprintf(missing, sizeof missing, "%s/no/such/folder/report.json", tmp_path(""));
    CU_ASSERT_EQUAL(par_report_write_json(&r, missing, &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, missing));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "No such file or directory"));

    /* An existing report survives a failed write: the temporary file cannot be created (a folder has its name). */
    char path[512], tmp[600];
    snprintf(path, sizeof path, "%s", tmp_path("keep.json"));
    CU_ASSERT_EQUAL_FATAL(par_report_write_json(&r, path, &m), PAR_OK);
    char *before = slurp(path);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    CU_ASSERT_EQUAL_FATAL(mkdir(tmp, 0755), 0);
    r.n_cases = 1;
    m.text[0] = '\0';
    CU_ASSERT_EQUAL(par_report_write_json(&r, path, &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, path));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, strerror(EISDIR)));
    char *after = slurp(path);
    CU_ASSERT(before && after && strcmp(before, after) == 0);
    rmdir(tmp);
    free(before);
    free(after);

    /* Renaming over a folder fails after the temporary file was written: it must be removed. */
    snprintf(path, sizeof path, "%s", tmp_path("adir.json"));
    CU_ASSERT_EQUAL_FATAL(mkdir(path, 0755), 0);
    CU_ASSERT_EQUAL(par_report_write_json(&r, path, &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "cannot rename"));
    CU_ASSERT_EQUAL(count_tmp_files(), 0);
    rmdir(path);
}

static void test_env(void)
{
    par_env e;
    par_env_collect(&e);
    CU_ASSERT(e.cores >= 1);
    CU_ASSERT(e.cpu_model[0] != '\0');
    CU_ASSERT_STRING_EQUAL(e.os_name, "Linux");
    CU_ASSERT(e.compiler[0] != '\0');
    CU_ASSERT_STRING_EQUAL(e.json_c, json_c_version());
    /* every reported feature is a whole word of the list, never a fragment (avx512f must not yield avx) */
    char f[sizeof e.cpu_features];
    snprintf(f, sizeof f, "%s", e.cpu_features);
    char *save = NULL;
    for (char *w = strtok_r(f, " ", &save); w; w = strtok_r(NULL, " ", &save)) CU_ASSERT(strlen(w) >= 3);
}

static void cleanup_tmpdir(void)
{
    if (!tmpdir[0]) return;
    const char *names[] = {"report.json", "keep.json"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) unlink(tmp_path(names[i]));
    rmdir(tmpdir);
}

static void test_zz_cleanup(void)
{
    cleanup_tmpdir();
    struct stat st;
    CU_ASSERT(!tmpdir[0] || stat(tmpdir, &st) != 0);
}

static void test_setup(void)
{
    make_data();
    CU_ASSERT(input_x[0] < 0.0f && expect_y[N - 1] >= 0.0f);
}

static const CU_TestInfo tests[] = {
    {"setup", test_setup},
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
    {"repro", test_repro},
    {"report roundtrip", test_report_roundtrip},
    {"report write errors", test_report_write_errors},
    {"env", test_env},
    {"cleanup", test_zz_cleanup},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("exec", tests)
