/*
 * test_reduce.c - localization of the first divergent node (campaign/localize.h), the reducer and the C repro
 * (campaign/reduce.h), against the test plugin tests/plugins/offbyone.c, whose conv2d leaves out the last input
 * channel, and the example plugin, which is correct. The case is built here by hand: eight nodes around one conv2d,
 * so every claim (which node, how small, same signature, still failing, passing elsewhere) is checked against a
 * bug whose place is known.
 */
#include <libgen.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tmain.h"
#include "campaign/case_edit.h"
#include "campaign/localize.h"
#include "campaign/reduce.h"
#include "campaign/reduce_pass.h"
#include "exec/exec.h"

static const char *build_path(const char *rel)
{
    static char path[4096 + 128];
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return "";
    exe[n] = '\0';
    snprintf(path, sizeof path, "%s/%s", dirname(exe), rel);
    return path;
}

/* A probed instance of the plugin at rel (beside this program); spec gives its label and knobs. */
static int load_inst(par_backend_inst *inst, const char *rel, const char *spec)
{
    par_msg m = {{0}};
    memset(inst, 0, sizeof *inst);
    if (par_backend_spec_parse(spec, inst, &m) != PAR_OK) return fprintf(stderr, "%s\n", m.text), -1;
    snprintf(inst->plugin_path, sizeof inst->plugin_path, "%s", build_path(rel));
    if (par_plugin_load(inst->plugin_path, 0, &inst->be, &m) != PAR_OK) return fprintf(stderr, "%s\n", m.text), -1;
    par_exec_probe(inst, 10.0);
    return inst->usable ? 0 : -1;
}

static par_run_config config(par_backend_inst *inst)
{
    par_run_config cfg = {0};
    cfg.backends = inst;
    cfg.n_backends = 1;
    cfg.exec = (par_exec_opts){.warmup = 0, .repeat = 2, .timeout_s = 10, .isolate = 1};
    cfg.jobs = 2;
    return cfg;
}

/* x -> sigmoid(0) -> mul(1) -> add(2) -> conv2d(3) -> relu(4) -> add(5) -> softmax(6) -> mul(7), with branches
 * reading x, node 0 and node 2: the conv2d (node 3, 4 input channels) is where the values first diverge. */
static par_case *eight_node_case(void)
{
    par_case *c = par_case_create("reduce-test-8", 5);
    int64_t xd[4] = {1, 4, 6, 6}, wd[4] = {4, 4, 3, 3}, bd[1] = {4};
    par_gen u = {.dist = PAR_DIST_UNIFORM, .a = -1, .b = 1};
    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, 4, xd, u);
    int32_t w = par_case_const(c, "w", PAR_DTYPE_F32, 4, wd, u);
    int32_t b = par_case_const(c, "b", PAR_DTYPE_F32, 1, bd, u);
    int32_t s = par_case_node(c, "sigmoid", 1, &x, 0, NULL, NULL);
    int32_t m = par_case_node(c, "mul", 2, (int32_t[]){x, s}, 0, NULL, NULL);
    int32_t a = par_case_node(c, "add", 2, (int32_t[]){m, x}, 0, NULL, NULL);
    int64_t pad[4] = {1, 1, 1, 1};
    par_attr pa = par_a_ints("padding", 4, pad);
    int32_t cv = par_case_node(c, "conv2d", 3, (int32_t[]){a, w, b}, 1, &pa, NULL);
    int32_t r = par_case_node(c, "relu", 1, &cv, 0, NULL, NULL);
    int32_t a2 = par_case_node(c, "add", 2, (int32_t[]){r, a}, 0, NULL, NULL);
    par_attr ax = par_a_int("axis", 1);
    int32_t sm = par_case_node(c, "softmax", 1, &a2, 1, &ax, NULL);
    int32_t out = par_case_node(c, "mul", 2, (int32_t[]){sm, s}, 0, NULL, NULL);
    par_case_output(c, out);
    if (par_case_finish(c) != PAR_OK) {
        fprintf(stderr, "eight_node_case: %s\n", c->err.text);
        par_case_destroy(c);
        return NULL;
    }
    return c;
}

/* Seven nodes with a row-broadcast add at node 2 and two outputs (nodes 5 and 6): for the add and pair bugs. */
static par_case *broadcast_case(void)
{
    par_case *c = par_case_create("reduce-test-bcast", 9);
    int64_t xd[3] = {2, 3, 5}, cd[2] = {3, 1}, wd[2] = {4, 5};
    par_gen u = {.dist = PAR_DIST_UNIFORM, .a = -1, .b = 1};
    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, 3, xd, u);
    int32_t col = par_case_const(c, "col", PAR_DTYPE_F32, 2, cd, u);
    int32_t w = par_case_const(c, "w", PAR_DTYPE_F32, 2, wd, u);
    int32_t s = par_case_node(c, "sigmoid", 1, &x, 0, NULL, NULL);
    int32_t m = par_case_node(c, "mul", 2, (int32_t[]){s, x}, 0, NULL, NULL);
    int32_t a = par_case_node(c, "add", 2, (int32_t[]){m, col}, 0, NULL, NULL);
    int32_t r = par_case_node(c, "relu", 1, &a, 0, NULL, NULL);
    int32_t l = par_case_node(c, "linear", 2, (int32_t[]){r, w}, 0, NULL, NULL);
    int32_t sm = par_case_node(c, "softmax", 1, &l, 0, NULL, NULL);
    int32_t s2 = par_case_node(c, "sigmoid", 1, &r, 0, NULL, NULL);
    par_case_output(c, sm);
    par_case_output(c, s2);
    if (par_case_finish(c) != PAR_OK) {
        fprintf(stderr, "broadcast_case: %s\n", c->err.text);
        par_case_destroy(c);
        return NULL;
    }
    return c;
}

static void test_prefix(void)
{
    par_case *c = eight_node_case();
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    par_msg m = {{0}};
    /* node 3's prefix: its ancestors 0, 1, 2 and itself; its output the graph's */
    par_case *p = par_case_prefix(c, 3, &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    const par_graph_desc *d = par_graph_desc_of(p->graph);
    CU_ASSERT_EQUAL(d->n_nodes, 4);
    CU_ASSERT_EQUAL(d->n_outputs, 1);
    CU_ASSERT_STRING_EQUAL(d->nodes[3].op, "conv2d");
    CU_ASSERT_EQUAL(d->values[d->outputs[0]].producer, 3);
    par_case_destroy(p);
    /* node 0's prefix reads x alone: the weights are dropped */
    p = par_case_prefix(c, 0, &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(par_graph_desc_of(p->graph)->n_nodes, 1);
    CU_ASSERT_EQUAL(p->n_srcs, 1);
    par_case_destroy(p);
    CU_ASSERT_PTR_NULL(par_case_prefix(c, 8, &m));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "node 8"));
    par_case_destroy(c);
}

static void test_localize(void)
{
    par_backend_inst inst;
    CU_ASSERT_EQUAL_FATAL(load_inst(&inst, "plugins/offbyone.so", "tp_offbyone"), 0);
    par_case *c = eight_node_case();
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    par_run_config cfg = config(&inst);
    par_divergence dv;
    par_msg m = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_localize(c, &cfg, &dv, &m), 0);
    CU_ASSERT_EQUAL(dv.node, 3);
    CU_ASSERT_STRING_EQUAL(dv.op, "conv2d");
    CU_ASSERT_EQUAL(dv.rec.verdict, PAR_V_FAIL);
    par_signature sig;
    par_result rec;
    CU_ASSERT_EQUAL_FATAL(par_reduce_signature(c, &cfg, &sig, &rec, &m), 0);
    CU_ASSERT_EQUAL(sig.verdict, PAR_V_FAIL);
    CU_ASSERT_EQUAL(rec.verdict, PAR_V_FAIL);
    CU_ASSERT_STRING_EQUAL(sig.op, "conv2d");
    CU_ASSERT_STRING_EQUAL(sig.backend, "tp_offbyone");
    /* with the bug turned off, the same case passes and has no divergent node */
    par_backend_inst fixed;
    CU_ASSERT_EQUAL_FATAL(load_inst(&fixed, "plugins/offbyone.so", "tp_offbyone[bug=off]"), 0);
    cfg = config(&fixed);
    CU_ASSERT_EQUAL_FATAL(par_reduce_signature(c, &cfg, &sig, &rec, &m), 0);
    CU_ASSERT_EQUAL(sig.verdict, PAR_V_PASS);
    CU_ASSERT_STRING_EQUAL(sig.op, "");
    par_case_destroy(c);
}

/* Reduce the eight-node case on the buggy plugin: at most 3 nodes, the same signature, and the reduced case passes on
 * the correct example plugin (the reducer kept the bug, not something any backend fails). */
static void test_reduce(void)
{
    par_backend_inst inst, example;
    CU_ASSERT_EQUAL_FATAL(load_inst(&inst, "plugins/offbyone.so", "tp_offbyone"), 0);
    CU_ASSERT_EQUAL_FATAL(load_inst(&example, "../plugins/libparity_example.so", "example"), 0);
    par_case *c = eight_node_case();
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    par_run_config cfg = config(&inst);
    par_signature sig, sig2;
    par_msg m = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_reduce_signature(c, &cfg, &sig, NULL, &m), 0);
    par_reduce_opts o = {.time_s = 30, .max_tests = 500, .verbose = par_test_verbose_()};
    par_reduce_stats st;
    par_case *r = par_reduce(c, &cfg, &sig, &o, &st, &m);
    if (!r) fprintf(stderr, "par_reduce: %s\n", m.text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    const par_graph_desc *d = par_graph_desc_of(r->graph);
    PAR_TEST_NOTE("reduce: %d -> %d nodes, %lld -> %lld elements, %d tests, %.2f s\n", (int)st.nodes_before,
                  (int)st.nodes_after, (long long)st.elems_before, (long long)st.elems_after, (int)st.tests, st.wall_s);
    CU_ASSERT_EQUAL(st.nodes_before, 8);
    CU_ASSERT_EQUAL(st.nodes_after, d->n_nodes);
    CU_ASSERT(d->n_nodes <= 3);
    CU_ASSERT(st.elems_after < st.elems_before);
    CU_ASSERT_EQUAL(st.budget_hit, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r->id, "-reduced"));
    int has_conv = 0;
    for (int32_t k = 0; k < d->n_nodes; k++) has_conv |= strcmp(d->nodes[k].op, "conv2d") == 0;
    CU_ASSERT(has_conv);
    /* the reduced case still fails the same way, and the example plugin passes it */
    CU_ASSERT_EQUAL_FATAL(par_reduce_signature(r, &cfg, &sig2, NULL, &m), 0);
    CU_ASSERT(par_signature_eq(&sig, &sig2));
    par_run_config ecfg = config(&example);
    CU_ASSERT_EQUAL_FATAL(par_reduce_signature(r, &ecfg, &sig2, NULL, &m), 0);
    CU_ASSERT_EQUAL(sig2.verdict, PAR_V_PASS);
    /* it survives the case format: written and read back, it fails the same way */
    char *json = par_case_to_json(r, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    par_case *back = par_case_parse(json, strlen(json), "reduced.json", &m);
    if (!back) fprintf(stderr, "reduced.json: %s\n", m.text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT_EQUAL_FATAL(par_reduce_signature(back, &cfg, &sig2, NULL, &m), 0);
    CU_ASSERT(par_signature_eq(&sig, &sig2));
    par_case_destroy(back);
    free(json);
    par_case_destroy(r);
    /* a signature the case does not show is refused */
    par_signature other = sig;
    snprintf(other.op, sizeof other.op, "softmax");
    CU_ASSERT_PTR_NULL(par_reduce(c, &cfg, &other, &o, &st, &m));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "not"));
    par_case_destroy(c);
}

/* Write the C repro of c for inst into dir, compile it as its comment says, run it; returns its exit status, or -1
 * when it could not be written or compiled. */
static int repro_status(const par_case *c, const par_backend_inst *inst, const char *dir, const char *name)
{
    char path[4096], line[8192], exe[4096];
    snprintf(path, sizeof path, "%s/%s.c", dir, name);
    par_msg m = {{0}};
    if (par_repro_write_c(c, inst, NULL, path, &m) != PAR_OK) return fprintf(stderr, "repro: %s\n", m.text), -1;
    par_repro_compile_line(inst, path, line, sizeof line);
    par_repro_exe_path(path, exe, sizeof exe);
    /* the compile line is the one the file's comment gives */
    FILE *f = fopen(path, "r");
    char *text = f ? calloc(1, 1 << 20) : NULL;
    if (text && fread(text, 1, (1 << 20) - 1, f) == 0) text[0] = '\0';
    if (f) fclose(f);
    int in_comment = text && strstr(text, line) != NULL;
    free(text);
    if (!in_comment) return fprintf(stderr, "repro: %s: the compile line is not in the file\n", path), -1;
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "%s 2>&1", line);
    if (system(cmd) != 0) return fprintf(stderr, "repro: %s failed\n", line), -1;
    snprintf(cmd, sizeof cmd, "%s > %s.out 2>&1", exe, exe);
    int st = system(cmd);
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    /* the verdict line must agree with the status (an aborted program exits 1 too) */
    snprintf(cmd, sizeof cmd, "%s.out", exe);
    char out[1 << 14] = "";
    f = fopen(cmd, "r");
    if (f) {
        size_t n = fread(out, 1, sizeof out - 1, f);
        out[n] = '\0';
        fclose(f);
    }
    const char *want = code == 1 ? "REPRODUCED: " : code == 0 ? "not reproduced: " : NULL;
    if (!want || !strstr(out, want)) return fprintf(stderr, "repro: %s exited %d:\n%s\n", exe, code, out), -1;
    return code;
}

/* The reduced case's C repro compiles with -Wall -Werror, reproduces on the buggy plugin (1), not with its bug
 * knob off (0: the knob is applied), nor on the example plugin (0). */
static void test_repro(void)
{
    par_backend_inst inst, fixed, example;
    CU_ASSERT_EQUAL_FATAL(load_inst(&inst, "plugins/offbyone.so", "tp_offbyone"), 0);
    CU_ASSERT_EQUAL_FATAL(load_inst(&fixed, "plugins/offbyone.so", "tp_offbyone[bug=off]"), 0);
    CU_ASSERT_EQUAL_FATAL(load_inst(&example, "../plugins/libparity_example.so", "example"), 0);
    par_case *c = eight_node_case();
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char dir[] = "/tmp/par_repro_XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    /* the whole eight-node case as well as its reduction */
    CU_ASSERT_EQUAL(repro_status(c, &inst, dir, "whole"), 1);
    par_run_config cfg = config(&inst);
    par_signature sig;
    par_msg m = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_reduce_signature(c, &cfg, &sig, NULL, &m), 0);
    par_reduce_opts o = {.time_s = 30, .max_tests = 500};
    par_case *r = par_reduce(c, &cfg, &sig, &o, NULL, &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(repro_status(r, &inst, dir, "reduced"), 1);
    CU_ASSERT_EQUAL(repro_status(r, &fixed, dir, "fixed"), 0);
    CU_ASSERT_EQUAL(repro_status(r, &example, dir, "example"), 0);
    CU_ASSERT_EQUAL(repro_status(c, &example, dir, "example_whole"), 0);
    /* a built-in backend: the program links parity's library and calls par_backend_cpu() */
    int32_t nb = 0;
    const par_backend *const *builtin = par_builtin_backends(&nb);
    par_backend_inst cpu = {0};
    for (int32_t i = 0; i < nb; i++)
        if (strcmp(builtin[i]->name, "cpu") == 0) cpu.be = builtin[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(cpu.be);
    snprintf(cpu.label, sizeof cpu.label, "cpu");
    par_exec_probe(&cpu, 10.0);
    CU_ASSERT_EQUAL(repro_status(r, &cpu, dir, "cpu"), 0);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
    par_case_destroy(r);
    par_case_destroy(c);
}

/* Run a shell command quietly; its exit status (-1 when it did not exit). */
static int sh(const char *fmt, ...)
{
    char cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    strcat(cmd, " > /dev/null 2>&1");
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

/* `parity reduce` on a case file and on a findings folder, and its exit codes 1 and 2. */
static void test_cli(void)
{
    char dir[] = "/tmp/par_reduce_cli_XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char parity[4096 + 64], plug[4096 + 64], example[4096 + 64], path[4096];
    snprintf(parity, sizeof parity, "%s", build_path("../parity"));
    snprintf(plug, sizeof plug, "%s", build_path("plugins/offbyone.so"));
    snprintf(example, sizeof example, "%s", build_path("../plugins/libparity_example.so"));
    par_case *c = eight_node_case();
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char *json = par_case_to_json(c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    snprintf(path, sizeof path, "%s/case.json", dir);
    CU_ASSERT_EQUAL_FATAL(write_file(path, json), 0);
    free(json);
    par_case_destroy(c);

    /* a case file: reduced.json (at most 3 nodes, a case file run accepts) and repro.c in --out */
    CU_ASSERT_EQUAL(sh("%s reduce %s -b tp_offbyone --plugin %s --out %s/o", parity, path, plug, dir), 0);
    snprintf(path, sizeof path, "%s/o/reduced.json", dir);
    par_msg m = {{0}};
    par_case *r = par_case_load(path, &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT(par_graph_desc_of(r->graph)->n_nodes <= 3);
    par_case_destroy(r);
    CU_ASSERT_EQUAL(sh("%s run %s -b tp_offbyone --plugin %s --out %s/run --no-progress", parity, path, plug, dir), 1);
    CU_ASSERT_EQUAL(sh("%s run %s -b example --plugin %s --out %s/run --no-progress", parity, path, example, dir), 0);
    CU_ASSERT_EQUAL(sh("test -s %s/o/repro.c", dir), 0);

    /* a findings folder: the backend from finding.json, the results beside the case */
    CU_ASSERT_EQUAL(sh("mkdir -p %s/findings/f1 && cp %s/case.json %s/findings/f1/", dir, dir, dir), 0);
    snprintf(path, sizeof path, "%s/findings/f1/finding.json", dir);
    CU_ASSERT_EQUAL(write_file(path, "{\"signature\": {\"backend\": \"tp_offbyone\", \"verdict\": \"FAIL\"}}\n"), 0);
    CU_ASSERT_EQUAL(sh("%s reduce %s/findings/f1 --plugin %s", parity, dir, plug), 0);
    CU_ASSERT_EQUAL(sh("test -s %s/findings/f1/reduced.json && test -s %s/findings/f1/repro.c", dir, dir), 0);

    /* 1: the case does not fail there */
    CU_ASSERT_EQUAL(sh("%s reduce %s/case.json -b example --plugin %s --out %s/o2", parity, dir, example, dir), 1);
    CU_ASSERT_EQUAL(sh("%s reduce %s/case.json -b 'tp_offbyone[bug=off]' --plugin %s --out %s/o2", parity, dir, plug,
                       dir), 1);
    /* 2: usage and input errors */
    CU_ASSERT_EQUAL(sh("%s reduce %s/case.json --plugin %s", parity, dir, plug), 2);            /* no -b */
    CU_ASSERT_EQUAL(sh("%s reduce %s/missing.json -b cpu", parity, dir), 2);                   /* no such case */
    CU_ASSERT_EQUAL(sh("%s reduce %s/case.json -b cpu --time -1", parity, dir), 2);            /* bad budget */
    CU_ASSERT_EQUAL(sh("%s reduce %s/case.json -b cpu,example --plugin %s", parity, dir, example), 2);
    CU_ASSERT_EQUAL(sh("%s reduce %s/case.json %s/case.json -b cpu", parity, dir, dir), 2);    /* two cases */
    CU_ASSERT_EQUAL(sh("mkdir -p %s/findings/empty", dir), 0);
    CU_ASSERT_EQUAL(sh("%s reduce %s/findings/empty -b cpu", parity, dir), 2);                 /* no case.json */
    CU_ASSERT_EQUAL(sh("cp %s/case.json %s/findings/empty/ && echo '{}' > %s/findings/empty/finding.json", dir, dir,
                       dir), 0);
    CU_ASSERT_EQUAL(sh("%s reduce %s/findings/empty", parity, dir), 2);                        /* no backend */
    CU_ASSERT_EQUAL(sh("rm -rf '%s'", dir), 0);
}

/* The add bug: localized at the add (node 2), reduced to at most 3 nodes around it. The pair bug: no single node
 * fails (node -1, no op in the signature), and the reduction keeps two outputs. */
static void test_other_bugs(void)
{
    par_backend_inst add_bug, pair_bug;
    CU_ASSERT_EQUAL_FATAL(load_inst(&add_bug, "plugins/offbyone.so", "tp_offbyone[bug=add]"), 0);
    CU_ASSERT_EQUAL_FATAL(load_inst(&pair_bug, "plugins/offbyone.so", "tp_offbyone[bug=pair]"), 0);
    par_case *c = broadcast_case();
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    par_msg m = {{0}};
    par_divergence dv;
    par_signature sig, sig2;
    par_reduce_opts o = {.time_s = 30, .max_tests = 500};
    par_reduce_stats st;

    par_run_config cfg = config(&add_bug);
    CU_ASSERT_EQUAL_FATAL(par_localize(c, &cfg, &dv, &m), 0);
    CU_ASSERT_EQUAL(dv.node, 2);
    CU_ASSERT_STRING_EQUAL(dv.op, "add");
    CU_ASSERT_EQUAL_FATAL(par_reduce_signature(c, &cfg, &sig, NULL, &m), 0);
    CU_ASSERT_STRING_EQUAL(sig.op, "add");
    par_case *r = par_reduce(c, &cfg, &sig, &o, &st, &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    PAR_TEST_NOTE("add bug: %d -> %d nodes, %lld -> %lld elements, %d tests, %.2f s\n", (int)st.nodes_before,
                  (int)st.nodes_after, (long long)st.elems_before, (long long)st.elems_after, (int)st.tests, st.wall_s);
    CU_ASSERT(st.nodes_after <= 3);
    CU_ASSERT_EQUAL_FATAL(par_reduce_signature(r, &cfg, &sig2, NULL, &m), 0);
    CU_ASSERT(par_signature_eq(&sig, &sig2));
    par_case_destroy(r);

    cfg = config(&pair_bug);
    CU_ASSERT_EQUAL_FATAL(par_localize(c, &cfg, &dv, &m), 0);
    CU_ASSERT_EQUAL(dv.node, -1);
    CU_ASSERT_STRING_EQUAL(dv.op, "");
    CU_ASSERT_EQUAL(dv.rec.verdict, PAR_V_FAIL);
    CU_ASSERT_EQUAL_FATAL(par_reduce_signature(c, &cfg, &sig, NULL, &m), 0);
    CU_ASSERT_EQUAL(sig.verdict, PAR_V_FAIL);
    CU_ASSERT_STRING_EQUAL(sig.op, "");
    r = par_reduce(c, &cfg, &sig, &o, &st, &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    PAR_TEST_NOTE("pair bug: %d -> %d nodes, %lld -> %lld elements, %d tests, %.2f s\n", (int)st.nodes_before,
                  (int)st.nodes_after, (long long)st.elems_before, (long long)st.elems_after, (int)st.tests, st.wall_s);
    CU_ASSERT_EQUAL(par_graph_desc_of(r->graph)->n_outputs, 2);
    CU_ASSERT(st.nodes_after < st.nodes_before);
    CU_ASSERT_EQUAL_FATAL(par_reduce_signature(r, &cfg, &sig2, NULL, &m), 0);
    CU_ASSERT(par_signature_eq(&sig, &sig2));
    par_case_destroy(r);
    par_case_destroy(c);
}

/* Every pass's candidates on cases of every kind of data (generated, inline, a sidecar file, quantized per tensor and
 * per channel, dynamically quantized, an infinite attribute): each candidate is a finished case smaller than the
 * original in what its pass shrinks, and survives the case format. */
static void test_candidates(void)
{
    static const char *const files[] = {
        "tests/data/cases/qs8_conv.json", "tests/data/cases/quant_add.json", "tests/data/cases/sidecar.json",
        "tests/data/cases/clamp_inf.json", "tests/data/cases/conv_small.json", "cases/models/mlp.json",
        "cases/models/transformer_encoder_dynq.json",
    };
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", PAR_SOURCE_DIR, files[f]);
        par_msg m = {{0}};
        par_case *c = par_case_load(path, &m);
        if (!c) fprintf(stderr, "%s\n", m.text);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        const par_graph_desc *d = par_graph_desc_of(c->graph);
        int64_t elems = par_case_data_elems(c);
        int built = 0, bad = 0;
        for (int p = 0; p < PAR_RD_PASS_COUNT; p++) {
            int end = 0;
            /* the first candidates of each pass: the models' weights are generated again for every one */
            for (int32_t i = 0; i < 10 && !end; i++) {
                char what[160];
                par_case *k = par_rd_candidate(c, (par_rd_pass)p, d->n_nodes - 1, i, what, sizeof what, &end);
                if (!k) continue;
                built++;
                const par_graph_desc *kd = par_graph_desc_of(k->graph);
                /* a node candidate has fewer nodes or outputs (a cut may trade weights for a larger input), an output
                 * candidate fewer outputs, the others no more data */
                int ok = k->status == PAR_OK && kd->n_outputs >= 1 && kd->n_nodes <= d->n_nodes;
                if (p == PAR_RD_NODES) ok = ok && (kd->n_nodes < d->n_nodes || kd->n_outputs < d->n_outputs);
                else if (p == PAR_RD_OUTPUTS) ok = ok && kd->n_outputs < d->n_outputs;
                else ok = ok && par_case_data_elems(k) <= elems;
                char *json = par_case_to_json(k, 0);
                par_case *back = json ? par_case_parse(json, strlen(json), "candidate", &m) : NULL;
                ok = ok && back && par_graph_desc_of(back->graph)->n_nodes == kd->n_nodes;
                if (!ok) {
                    fprintf(stderr, "%s: %s candidate %d (%s): %s\n", files[f], par_rd_pass_name((par_rd_pass)p),
                            (int)i, what, back ? "not smaller" : m.text);
                    bad++;
                }
                par_case_destroy(back);
                free(json);
                par_case_destroy(k);
            }
        }
        PAR_TEST_NOTE("%s: %d candidates, %.2f s\n", files[f], built, (double)clock() / CLOCKS_PER_SEC);
        CU_ASSERT(built > 0);
        CU_ASSERT_EQUAL(bad, 0);
        par_case_destroy(c);
    }
}

static const CU_TestInfo tests[] = {
    {"prefix", test_prefix},
    {"candidates", test_candidates},
    {"localize", test_localize},
    {"reduce", test_reduce},
    {"other_bugs", test_other_bugs},
    {"repro", test_repro},
    {"cli", test_cli},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("reduce", tests)
