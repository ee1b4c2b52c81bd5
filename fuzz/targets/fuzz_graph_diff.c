/*
 * fuzz_graph_diff.c - structured libFuzzer target: the fuzzer's bytes decode into a random valid graph
 * (par_fuzz_case_from_bytes: max_nodes 6, max_elems 1024, the usual quantized and hazard shares), which runs on the
 * built-in backends cpu and qnnpack in this process and is judged by the oracle against the reference computed with
 * each backend's precision profile, as the runner does (runner/judge.c). A FAIL, ERROR, CRASH, TIMEOUT or FLAKY
 * verdict (UNSUPPORTED is fine), a reference that refuses a generated case, or a generator that fails to decode
 * bytes, prints the case JSON to stderr and aborts, so libFuzzer keeps the input.
 *
 * Build and run: fuzz/Makefile.inc builds every fuzz/targets/fuzz_*.c. Must not: write files, or keep state between
 * inputs other than the backends' probe answers (taken once, at the first input).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "gen/gen.h"
#include "oracle/oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const BACKENDS[] = {"cpu", "qnnpack"};
#define N_BACKENDS (sizeof BACKENDS / sizeof BACKENDS[0])

static par_backend_inst insts[N_BACKENDS];
static int n_insts = -1;

/* Resolve and probe the backends once (the probe starts each in a child, as parity run does). */
static void setup(void)
{
    if (n_insts >= 0) return;
    n_insts = 0;
    int32_t nb;
    const par_backend *const *all = par_builtin_backends(&nb);
    for (size_t k = 0; k < N_BACKENDS; k++) {
        for (int32_t i = 0; i < nb; i++) {
            if (strcmp(all[i]->name, BACKENDS[k]) != 0) continue;
            par_backend_inst *inst = &insts[n_insts];
            memset(inst, 0, sizeof *inst);
            snprintf(inst->label, sizeof inst->label, "%s", BACKENDS[k]);
            inst->be = all[i];
            par_exec_probe(inst, 30.0);
            if (inst->usable) n_insts++;
            else fprintf(stderr, "fuzz_graph_diff: backend %s unusable: %s\n", BACKENDS[k], inst->unusable_reason);
        }
    }
}

static void die(const par_case *c, const char *what)
{
    char *t = c ? par_case_to_json(c, 1) : NULL;
    fprintf(stderr, "fuzz_graph_diff: %s\n%s\n", what, t ? t : "(no case)");
    free(t);
    abort();
}

static int has_quant(const par_graph_desc *g)
{
    for (int32_t i = 0; i < g->n_values; i++)
        if (g->values[i].dtype == PAR_DTYPE_QU8 || g->values[i].dtype == PAR_DTYPE_QS8) return 1;
    return 0;
}

/* Judge one backend's outputs: the number of failing elements (0: pass). */
static int64_t judge(const par_graph_desc *g, const par_ref_result *ref, const par_exec_out *out, char *why,
                     size_t len)
{
    int64_t bad = 0;
    for (int32_t k = 0; k < g->n_outputs; k++) {
        const par_rt *t = &ref->values[g->outputs[k]];
        for (int64_t i = 0; t->e && i < t->numel; i++)
            if (isnan(t->e[i]) && !isnan(t->v[i])) {
                snprintf(why, len, "reference: output '%s' element %lld has a NaN budget", g->values[g->outputs[k]].name,
                         (long long)i);
                return 1;
            }
        par_metrics m;
        int64_t b = par_oracle_compare(t, out->outputs[k], &m);
        if (b && !bad)
            snprintf(why, len, "output '%s': %lld elements over budget; worst got %.9g, want %.9g +- %.3g",
                     g->values[g->outputs[k]].name, (long long)b, m.worst_got, m.worst_ref, m.worst_budget);
        bad += b;
    }
    return bad;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    par_fuzz_opts o;
    par_fuzz_opts_default(&o);
    o.max_nodes = 6;
    o.max_elems = 1024;
    par_msg msg;
    par_case *c = par_fuzz_case_from_bytes(data, size, &o, &msg);
    if (!c) {
        fprintf(stderr, "fuzz_graph_diff: the generator failed: %s\n", msg.text);
        abort();
    }
    const par_graph_desc *g = par_graph_desc_of(c->graph);
    void **inputs = NULL;
    if (par_case_make_inputs(c, &inputs, &msg) != PAR_OK) die(c, msg.text);
    int quant = has_quant(g);
    par_exec_opts eo = {.warmup = 0, .repeat = 1, .timeout_s = 0, .isolate = 0};
    for (int k = 0; k < n_insts; k++) {
        par_exec_out out;
        memset(&out, 0, sizeof out);
        par_exec_run(&insts[k], g, (const void *const *)inputs, &eo, &out);
        char why[PAR_MSG_LEN + 128];
        if (out.verdict == PAR_V_UNSUPPORTED) {
            par_exec_out_free(&out);
            continue;
        }
        if (out.verdict != PAR_V_PASS) {
            snprintf(why, sizeof why, "%s: verdict %d: %s", insts[k].label, (int)out.verdict, out.reason);
            die(c, why);
        }
        /* the reference for this backend's precision profile, as the runner computes it */
        par_prec p = par_prec_of_backend(&insts[k]);
        if (!quant) {
            p.requant = PAR_REQUANT_FP32;
            p.requant_exact = 0;
        }
        /* every field set here: par_prec_of_backend leaves the per-node arrays unset */
        p.algo = out.algo;
        p.requant_node = quant ? out.requant : NULL;
        par_ref_result *ref = NULL;
        if (par_ref_run(g, &p, (const void *const *)inputs, &ref, &msg) != PAR_OK) {
            snprintf(why, sizeof why, "reference refuses the case: %s", msg.text);
            die(c, why);
        }
        char how[PAR_MSG_LEN];
        if (judge(g, ref, &out, how, sizeof how)) {
            snprintf(why, sizeof why, "%s: FAIL: %s", insts[k].label, how);
            die(c, why);
        }
        par_ref_result_destroy(ref);
        par_exec_out_free(&out);
    }
    par_case_free_inputs(c, inputs);
    par_case_destroy(c);
    return 0;
}
