/*
 * judge.c - judges one case on every backend instance: refuses a case whose memory estimate exceeds the limit,
 * builds the inputs, executes each backend in isolation (exec/exec.c), and for a backend that produced outputs
 * computes (or reads from the on-disk cache) the reference once per precision profile the backends declared at
 * their probe (par_prec_of_backend reads the instance record: nothing starts a
 * backend here), executes each backend in isolation (exec/exec.c) and lets the oracle decide. It must not print,
 * keep records, or start a backend outside exec/.
 */
#include "judge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <unistd.h>

#include "case_mem.h"
#include "node_stat.h"
#include "refcache.h"

#include "backends/expected/expected.h"
#include "oracle/oracle.h"
#include "core/clock.h"
#include "core/ops.h"
#include "core/requant.h"

static void fmt_coords(const par_metrics *m, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int32_t k = 0; k < m->worst_rank && used < len; k++) {
        int w = snprintf(buf + used, len - used, "%s%lld", k ? "," : "[", (long long)m->worst_coords[k]);
        if (w < 0) return;
        used += (size_t)w;
    }
    if (used < len) used += (size_t)snprintf(buf + used, len - used, m->worst_rank ? "]" : "[]");
    /* the output's shape beside the coordinates: [0,4,4,4] of [1,5,8,8] */
    for (int32_t k = 0; k < m->worst_rank && used < len; k++) {
        int w = snprintf(buf + used, len - used, "%s%lld", k ? "," : " of [", (long long)m->worst_dims[k]);
        if (w < 0) return;
        used += (size_t)w;
    }
    if (m->worst_rank && used < len) snprintf(buf + used, len - used, "]");
}

static int has_quant(const par_graph_desc *g)
{
    for (int32_t i = 0; i < g->n_values; i++)
        if (par_dtype_is_quant(g->values[i].dtype)) return 1;
    return 0;
}

/* The reason of a record whose ties contradict the declared scheme's rule (docs/quantization.md, "Ties"): the rule
 * that explains most of them (the first in par_tie_rule order among equals) against the declared one. */
static void tie_reason(const par_metrics *m, const char *const *schemes, char *buf, size_t len)
{
    const char *scheme = (unsigned)m->tie_declared < PAR_TIE_RULES ? schemes[m->tie_declared] : "?";
    int best = m->tie_declared == 0 ? 1 : 0;
    for (int k = 0; k < PAR_TIE_RULES; k++)
        if (k != m->tie_declared && m->tie_rule_n[k] > m->tie_rule_n[best]) best = k;
    snprintf(buf, len, "ties: %lld of %lld rounded %s; declared %s rounds %s (%lld of %lld)",
             (long long)m->tie_rule_n[best], (long long)m->tie_n, par_tie_rule_words((par_tie_rule)best), scheme,
             par_tie_rule_words((par_tie_rule)m->tie_declared), (long long)m->tie_rule_n[m->tie_declared],
             (long long)m->tie_n);
}

/* Whether a float output of the reference holds an "anything" element (value NaN, budget +Inf). */
static int has_anything(const par_graph_desc *g, const par_ref_result *ref)
{
    for (int32_t k = 0; k < g->n_outputs; k++) {
        const par_rt *t = &ref->values[g->outputs[k]];
        if (t->dtype != PAR_DTYPE_F32 && t->dtype != PAR_DTYPE_F16 && t->dtype != PAR_DTYPE_F64) continue;
        for (int64_t i = 0; t->e && i < t->numel; i++)
            if (isnan(t->v[i]) && !(t->e[i] < INFINITY)) return 1;
    }
    return 0;
}

/* The case's ideal values (the reference in exact arithmetic, par_prec_ideal), computed once per case and only
 * where a record has "anything" elements to take metrics on; NULL when the reference refuses (the metrics then
 * skip those elements, as before). */
typedef struct ideal_ref {
    par_ref_result *res;
    int tried;
} ideal_ref;

static const par_ref_result *ideal_for(const par_run_config *cfg, const par_case *c, const par_graph_desc *g,
                                       void **inputs, ideal_ref *ir)
{
    if (!ir->tried) {
        ir->tried = 1;
        par_prec p = par_prec_ideal();
        par_msg m = {{0}};
        par_status st = cfg->no_refcache ? par_ref_run(g, &p, (const void *const *)inputs, &ir->res, &m)
                                         : par_refcache_run(c, g, &p, (const void *const *)inputs, &ir->res, &m);
        if (st != PAR_OK) ir->res = NULL;
    }
    return ir->res;
}

/* Judge a backend's outputs against the reference (ideal: NULL, or the ideal values for the metrics of unjudged
 * elements; stat: NULL, or the reference run for the statistical companion's scales, par_prec.stat_scale). */
static void judge(const par_graph_desc *g, const par_ref_result *ref, const par_ref_result *ideal,
                  const par_ref_result *stat, const par_exec_out *out, const char *const *schemes, par_result *r)
{
    par_metrics_init(&r->m);
    /* A NaN budget beside a non-NaN reference value would pass any backend value (no |d| exceeds NaN): the oracle
     * cannot judge that output, which is an ERROR of the reference, never a PASS. */
    for (int32_t k = 0; k < g->n_outputs; k++) {
        const par_rt *t = &ref->values[g->outputs[k]];
        for (int64_t i = 0; t->e && i < t->numel; i++)
            if (isnan(t->e[i]) && !isnan(t->v[i])) {
                r->verdict = PAR_V_ERROR;
                snprintf(r->reason, sizeof r->reason,
                         "reference: output '%s' element %lld (value %.9g) has a NaN error budget: the budget "
                         "derivation of some node does not cover this input, so the oracle cannot judge it",
                         g->values[g->outputs[k]].name, (long long)i, t->v[i]);
                return;
            }
    }
    int64_t bad = 0;
    for (int32_t k = 0; k < g->n_outputs; k++) {
        par_metrics m;
        bad += par_oracle_compare_ideal(&ref->values[g->outputs[k]], ideal ? &ideal->values[g->outputs[k]] : NULL,
                                        out->outputs[k], &m);
        if (stat) par_oracle_companion(&ref->values[g->outputs[k]], &stat->values[g->outputs[k]], out->outputs[k], &m);
        par_metrics_merge(&r->m, &m, k);
    }
    if (bad == 0 && r->m.stat_over) {
        r->verdict = PAR_V_FAIL;
        snprintf(r->reason, sizeof r->reason,
                 "statistical companion: the root-mean-square of error / scale is %.3g over %lld elements, above "
                 "%.3g (a correct backend exceeds it with probability below 3e-8); every element within its budget "
                 "(worst %.3g x budget)",
                 r->m.stat_z, (long long)r->m.stat_n, PAR_STAT_BOUND, r->m.max_ratio);
        return;
    }
    if (bad == 0) {
        r->verdict = PAR_V_PASS;
        r->reason[0] = 0;
        if (r->m.quant && r->m.n_labelled > 0)
            snprintf(r->reason, sizeof r->reason,
                     "labelled: %lld of %lld integers off the declared scheme by steps another scheme, a tie or the "
                     "inputs' budget explains (histogram -2:%lld -1:%lld +1:%lld +2:%lld; bias %.3g, bound %.3g)",
                     (long long)r->m.n_labelled, (long long)r->m.n, (long long)r->m.hist[PAR_HIST_ZERO - 2],
                     (long long)r->m.hist[PAR_HIST_ZERO - 1], (long long)r->m.hist[PAR_HIST_ZERO + 1],
                     (long long)r->m.hist[PAR_HIST_ZERO + 2], r->m.bias, r->m.bias_bound);
        else if (r->m.n_unbounded > 0)
            snprintf(r->reason, sizeof r->reason,
                     "%lld of %lld output elements have an infinite budget and were not judged (the budget "
                     "derivation admits any value there: docs/oracle.md)",
                     (long long)r->m.n_unbounded, (long long)r->m.n);
        return;
    }
    const par_metrics *m = &r->m;
    char coords[96];
    fmt_coords(m, coords, sizeof coords);
    const char *oname = g->values[g->outputs[m->worst_output]].name;
    r->verdict = PAR_V_FAIL;
    if (m->tie_over && m->n_over == 0 && m->n_nonfinite == 0 && !m->bias_over)
        tie_reason(m, schemes, r->reason, sizeof r->reason);
    else if (m->quant && m->bias_over && m->n_over == 0)
        snprintf(r->reason, sizeof r->reason,
                 "output '%s': bias %.4g steps exceeds %.4g, what rounding can cause (every element of %lld within "
                 "its range; %lld labelled)",
                 oname, m->bias, m->bias_bound, (long long)m->n, (long long)m->n_labelled);
    else if (m->quant)
        snprintf(r->reason, sizeof r->reason,
                 "output '%s': %lld of %lld integers outside their range%s; worst %s: got %.0f, want %.0f (+%.0f "
                 "allowed on that side)",
                 oname, (long long)m->n_over, (long long)m->n, m->bias_over ? ", and a bias beyond rounding" : "",
                 coords, m->worst_got, m->worst_ref, m->worst_budget);
    else if (m->n_nonfinite)
        snprintf(r->reason, sizeof r->reason,
                 "output '%s': %lld non-finite and %lld over budget of %lld; worst %s: got %.9g, want %.9g +- %.3g",
                 oname, (long long)m->n_nonfinite, (long long)m->n_over, (long long)m->n, coords, m->worst_got,
                 m->worst_ref, m->worst_budget);
    else
        snprintf(r->reason, sizeof r->reason,
                 "output '%s': %lld of %lld elements over budget; worst %s: got %.9g, want %.9g +- %.3g (%.3g x budget)",
                 oname, (long long)m->n_over, (long long)m->n, coords, m->worst_got, m->worst_ref, m->worst_budget,
                 m->max_ratio);
}

/* The reference for backend inst's precision profile, computed on first use and kept per profile (arith, requant,
 * strict, flushed subnormals: the scheme only matters for graphs with quantized values); NULL with the reason in msg
 * when the reference refuses the case. Served by the on-disk cache (runner/refcache.c). */
/* The precision profile a record is judged under: the probe's answers, the scheme only for graphs with quantized
 * values, and the per-node declarations of out (NULL: none). */
static par_prec record_prec(const par_backend_inst *inst, int quant, const par_exec_out *out)
{
    par_prec p = par_prec_of_backend(inst);
    if (!quant) {
        p.requant = PAR_REQUANT_FP32;
        p.requant_exact = 0;
    }
    if (out) {
        p.algo = out->algo;
        if (quant) p.requant_node = out->requant;
    }
    return p;
}

static par_ref_result *reference_for(const par_run_config *cfg, const par_backend_inst *inst, const par_case *c,
                                     const par_graph_desc *g, int quant, void **inputs,
                                     par_ref_result *refs[PAR_ARITH_N_KINDS][PAR_REQUANT_N_SCHEMES][4],
                                     par_status *st, par_msg *msg)
{
    par_prec p = record_prec(inst, quant, NULL); /* the probe's answers */
    /* every kind its own reference: bf16 (3) shared f32's slot, so the first of an f32 and a bf16 backend in one run
     * set the budgets of both */
    unsigned a = (unsigned)inst->arith < PAR_ARITH_N_KINDS ? (unsigned)inst->arith : 0;
    unsigned q = (unsigned)p.requant < PAR_REQUANT_N_SCHEMES ? (unsigned)p.requant : 0;
    unsigned e = (p.requant_exact ? 1u : 0u) | (p.flush > 0 ? 2u : 0u); /* strict mode, flushed subnormals */
    par_ref_result **ref = &refs[a][q][e];
    *st = PAR_OK;
    if (!*ref) {
        /* The one reference call of the runner (the cache is skipped for one-off cases: par_run_config). */
        *st = cfg->no_refcache ? par_ref_run(g, &p, (const void *const *)inputs, ref, msg)
                               : par_refcache_run(c, g, &p, (const void *const *)inputs, ref, msg);
        if (*st != PAR_OK) *ref = NULL;
    }
    return *ref;
}

/* A backend that declared non-direct algorithms for some nodes (PAR_PROC_NODE_ALGO), or schemes other than its
 * backend-wide one for some quantized nodes (PAR_PROC_NODE_REQUANT), validated by exec/, is judged against a
 * reference of its own: the budgets of those nodes follow the algorithm (docs/oracle.md, "Declared algorithms"), their
 * integers and tie rule the scheme (docs/quantization.md, "Schemes per node"). The per-node arrays are part of the
 * cache key (runner/refcache.c). The record lists the nodes. */
static par_ref_result *reference_declared(const par_run_config *cfg, const par_backend_inst *inst,
                                          const par_case *c, const par_graph_desc *g, int quant, void **inputs,
                                          const par_exec_out *out, par_status *st, par_msg *msg)
{
    par_prec p = record_prec(inst, quant, out);
    par_ref_result *ref = NULL;
    *st = cfg->no_refcache ? par_ref_run(g, &p, (const void *const *)inputs, &ref, msg)
                           : par_refcache_run(c, g, &p, (const void *const *)inputs, &ref, msg);
    return *st == PAR_OK ? ref : NULL;
}

/* The reference whose scales the statistical companion takes (par_prec.stat_scale) under the record's profile, kept
 * per arithmetic and flushing for the records without declarations (the others get their own, freed by the
 * caller: *own); NULL when the companion does not apply or the reference refuses. */
static const par_ref_result *stat_reference(const par_run_config *cfg, const par_backend_inst *inst, const par_case *c,
                                            const par_graph_desc *g, void **inputs, const par_exec_out *out,
                                            par_ref_result *stats[PAR_ARITH_N_KINDS][2], par_ref_result **own)
{
    par_prec p = record_prec(inst, 0, out);
    p.stat_scale = 1;
    unsigned a = (unsigned)inst->arith < PAR_ARITH_N_KINDS ? (unsigned)inst->arith : 0, f = p.flush > 0;
    par_ref_result **slot = out->algo ? own : &stats[a][f];
    if (!*slot) {
        par_msg m = {{0}};
        par_status st = cfg->no_refcache ? par_ref_run(g, &p, (const void *const *)inputs, slot, &m)
                                         : par_refcache_run(c, g, &p, (const void *const *)inputs, slot, &m);
        if (st != PAR_OK) *slot = NULL;
    }
    return *slot;
}

/* A PASS judged once more by the companion on every node's value (runner/node_stat.c), into the record's metrics
 * (node_k and the rest): a value over the bound of the case's node values makes it a FAIL that names the node.
 * Returns 1 when a reference failed. */
static int judge_node_values(const par_run_config *cfg, const par_backend_inst *inst, const par_case *c,
                             const par_graph_desc *g, int quant, void **inputs, const par_exec_opts *o,
                             const par_exec_out *out, par_node_refs *nr, par_result *r)
{
    par_node_stat ns;
    int ret = par_node_companion(cfg, inst, c, g, inputs, o, record_prec(inst, quant, out), nr, &ns);
    if (ns.applied) {
        r->m.node_k = ns.n_values;
        r->m.node_bound = ns.bound;
        r->m.node_z = ns.z_max;
        snprintf(r->m.node_at, sizeof r->m.node_at, "%s", ns.name_max);
        if (ns.over) {
            r->m.node_first_z = ns.z;
            snprintf(r->m.node_first, sizeof r->m.node_first, "%s", ns.name);
        }
    }
    if (!ns.over) return ret;
    r->verdict = PAR_V_FAIL;
    snprintf(r->reason, sizeof r->reason,
             "statistical companion at node '%s' (%s): the root-mean-square of error / scale of its value is %.3g "
             "over %lld elements, above %.3g, the bound over the case's %d node values (a correct backend exceeds "
             "it at any of them with probability below 3e-8; the largest, %.3g, at '%s'); every output element "
             "within its budget (worst %.3g x budget), the outputs' companion %.3g",
             ns.name, ns.op, ns.z, (long long)ns.n, ns.bound, (int)ns.n_values, ns.z_max, ns.name_max,
             r->m.max_ratio, r->m.stat_z);
    return ret;
}

/* A PASS that left elements unjudged says where they come from (par_unjudged_origin): the reference runs once more
 * with every node's values (the cache keeps the outputs only), under the record's profile. */
static void note_unjudged(const par_backend_inst *inst, const par_graph_desc *g, int quant, void **inputs,
                          const par_exec_out *out, par_result *r)
{
    if (r->verdict != PAR_V_PASS || r->m.n_unbounded <= 0) return;
    par_prec p = record_prec(inst, quant, out);
    par_ref_result *full = NULL;
    par_msg m = {{0}};
    char origin[PAR_REASON_LEN];
    if (par_ref_run(g, &p, (const void *const *)inputs, &full, &m) == PAR_OK &&
        par_unjudged_origin(g, full, origin, sizeof origin)) {
        size_t n = strlen(r->reason);
        snprintf(r->reason + n, sizeof r->reason - n, "; %s", origin);
    }
    par_ref_result_destroy(full);
}

/* The declared nodes of an exec out array (decl[i] for node i; skip: the value that means "not declared") into a
 * record's list: *n all of them, the first PAR_RESULT_ALGOS listed. */
static void note_decls(const par_graph_desc *g, const int32_t *decl, int32_t n_decl, int32_t skip,
                       par_result_decl *list, int32_t *n)
{
    *n = 0;
    for (int32_t i = 0; decl && i < n_decl && i < g->n_nodes; i++) {
        if (decl[i] == skip) continue;
        if (*n < PAR_RESULT_ALGOS) {
            par_result_decl *a = &list[*n];
            a->node = i;
            a->value = decl[i];
            snprintf(a->node_name, sizeof a->node_name, "%s", g->nodes[i].name ? g->nodes[i].name : "");
        }
        (*n)++;
    }
}

/* The schemes a record's tie reason names, per tie rule: the backend-wide one, or with schemes declared per node,
 * those of the record's requantizing nodes whose tie rule it is ("rndnu" for the half-up ties of an add declared
 * rndnu, "fp32" for a convolution's half-to-even ones), in par_requant order; names[r] points into buf. */
static void record_schemes(const par_graph_desc *g, const par_backend_inst *inst, const par_exec_out *out,
                           char buf[PAR_TIE_RULES][64], const char *names[PAR_TIE_RULES])
{
    const par_requant wide = par_prec_of_backend(inst).requant;
    const char *w = par_requant_name(wide);
    unsigned used[PAR_TIE_RULES] = {0};
    for (int32_t i = 0; out->requant && i < g->n_nodes && i < out->n_requant; i++) {
        const par_node *n = &g->nodes[i];
        const par_op_info *info = par_op_of(n);
        if (!info || info->qform == PAR_QFORM_CONVERT) continue;
        int q = 0;
        for (int32_t k = 0; k < n->n_outputs; k++) {
            par_dtype dt = g->values[n->outputs[k]].dtype;
            q |= par_dtype_is_quant(dt);
        }
        if (!q) continue;
        const int32_t s = out->requant[i] >= 0 && out->requant[i] < PAR_REQUANT_N_SCHEMES ? out->requant[i] : (int32_t)wide;
        const par_tie_rule r = par_requant_tie_rule((par_requant)s, info->qform == PAR_QFORM_ADD);
        if ((unsigned)r < PAR_TIE_RULES) used[r] |= 1u << s;
    }
    for (int r = 0; r < PAR_TIE_RULES; r++) {
        buf[r][0] = 0;
        for (int s = 0; s < PAR_REQUANT_N_SCHEMES; s++)
            if (used[r] & (1u << s)) {
                const char *nm = par_requant_name((par_requant)s);
                snprintf(buf[r] + strlen(buf[r]), 64 - strlen(buf[r]), "%s%s", buf[r][0] ? "/" : "", nm ? nm : "?");
            }
        names[r] = buf[r][0] ? buf[r] : w ? w : "fp32";
    }
}

/* The backend's diagnostics (PAR_PROC_DIAGNOSTICS, exec/ kept the first and counted them): a defect the backend's own
 * checking found makes the record FAIL with the first text as its reason, whatever the values, which the oracle has
 * judged already (the metrics stay: a validation message does not erase the numeric evidence; a FAIL of the values
 * keeps its reason after the diagnostic's). A verdict the harness reached itself that says more stays (ERROR, CRASH,
 * TIMEOUT, FLAKY): the diagnostic follows its reason. */
static void apply_diagnostics(const par_exec_out *out, par_result *r)
{
    r->n_diagnostics = out->n_diag;
    if (out->n_diag <= 0) return;
    /* the text cut (at a character) so that where it came and the count always fit in the reason */
    char text[PAR_REASON_LEN - 128], where[64], more[48] = "", big[3 * PAR_REASON_LEN];
    par_text_clean(text, sizeof text, out->diag, sizeof out->diag, 1);
    if (out->diag_run > 0) snprintf(where, sizeof where, "after run %d", (int)out->diag_run);
    else snprintf(where, sizeof where, "after prepare");
    if (out->n_diag > 1) snprintf(more, sizeof more, "; %d more", (int)out->n_diag - 1);
    if (r->verdict == PAR_V_PASS || r->verdict == PAR_V_FAIL || r->verdict == PAR_V_UNSUPPORTED) {
        /* a PASS note (labelled integers, unbounded elements) gives way; a FAIL's reason follows */
        const int keep = r->verdict == PAR_V_FAIL && r->reason[0];
        snprintf(big, sizeof big, "diagnostic: %s (%s%s)%s%s", text, where, more, keep ? "; values: " : "",
                 keep ? r->reason : "");
        r->verdict = PAR_V_FAIL;
    } else {
        snprintf(big, sizeof big, "%s; diagnostic: %s (%s%s)", r->reason, text, where, more);
    }
    par_text_clean(r->reason, sizeof r->reason, big, sizeof big, 1); /* cut at a character, valid UTF-8 */
}

/* The `expected` backend: the case's own expected outputs (an ONNX node test's output_K.pb) as if a backend had
 * produced them, or UNSUPPORTED when the case carries none. */
static void expected_out(const par_case *c, const par_graph_desc *g, par_exec_out *out)
{
    memset(out, 0, sizeof *out);
    if (!c->expected) {
        out->verdict = PAR_V_UNSUPPORTED;
        snprintf(out->reason, sizeof out->reason, "the case carries no expected outputs (ONNX node tests do)");
        return;
    }
    out->outputs = calloc((size_t)g->n_outputs, sizeof *out->outputs);
    out->n_outputs = g->n_outputs;
    for (int32_t k = 0; out->outputs && k < g->n_outputs; k++) {
        const par_value *v = &g->values[g->outputs[k]];
        size_t bytes = (size_t)v->numel * par_dtype_size(v->dtype);
        out->outputs[k] = c->expected[k] ? malloc(bytes) : NULL;
        if (!out->outputs[k]) {
            out->verdict = PAR_V_UNSUPPORTED;
            snprintf(out->reason, sizeof out->reason, "no expected output %d", (int)k);
            return;
        }
        memcpy(out->outputs[k], c->expected[k], bytes);
    }
    out->verdict = out->outputs ? PAR_V_PASS : PAR_V_ERROR;
    if (!out->outputs) snprintf(out->reason, sizeof out->reason, "out of memory");
}

/* PARITY_TRACE=FILE: one line per record appended to FILE (one write each, so the workers' lines do not mix): the
 * worker, the case, the backend, when its job started (seconds of the monotonic clock), the backend's execution and
 * the judging (reference and oracle) in seconds, and the verdict. For finding where a run's time goes. */
static void trace_record(int32_t worker, const par_case *c, const par_backend_inst *inst, double t0, double t1,
                         double t2, par_verdict v)
{
    static int fd = -2;
    if (fd == -2) {
        const char *path = getenv("PARITY_TRACE");
        fd = path && *path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
    }
    if (fd < 0) return;
    char line[512];
    int n = snprintf(line, sizeof line, "%d %.3f %.3f %.3f %s %s %s\n", (int)worker, t0, t1 - t0, t2 - t1,
                     par_verdict_name(v), inst->label, c->id ? c->id : "?");
    if (n > 0) {
        ssize_t w = write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)w;
    }
}

int par_judge_case(const par_run_config *cfg, int32_t worker, int32_t ci, par_case *c, par_emit_fn emit, void *user)
{
    const par_graph_desc *g = par_graph_desc_of(c->graph);
    void **inputs = NULL;
    par_msg msg = {{0}};
    int internal = 0;
    par_ref_result *refs[PAR_ARITH_N_KINDS][PAR_REQUANT_N_SCHEMES][4] = {{{NULL}}};
    par_ref_result *stats[PAR_ARITH_N_KINDS][2] = {{NULL}};
    par_node_refs node_refs;
    memset(&node_refs, 0, sizeof node_refs);
    ideal_ref ideal = {NULL, 0};
    const int quant = has_quant(g);
    const par_stat_skip stat_skip = par_stat_applies(c, quant);
    par_result *r = malloc(sizeof *r);
    if (!r) return 1;

    /* A case whose memory (reference, buffers, backend working set) would not fit beside the other workers is
     * refused before anything is allocated for it (runner/case_mem.c, docs/reliability.md). */
    par_case_mem mem;
    par_case_mem_opts mo = {.n_profiles = 0, .outputs_only = 1};
    for (int32_t b = 0; b < cfg->n_backends; b++)
        mo.flush |= (cfg->backends[b].arith_flags & PAR_ARITH_FLUSH_SUBNORMALS) != 0;
    par_case_mem_parts(g, cfg->n_backends, &mo, &mem);
    int64_t limit = par_case_mem_limit() / (cfg->jobs > 1 ? cfg->jobs : 1);
    char refused[PAR_REASON_LEN] = "";
    if (mem.total > limit) {
        char why[256];
        snprintf(refused, sizeof refused, "case refused: %s (PARITY_MEM_LIMIT / jobs)",
                 par_case_mem_reason(&mem, limit, why, sizeof why));
    }
    par_status ist = refused[0] ? PAR_OK : par_case_make_inputs(c, &inputs, &msg);

    for (int32_t b = 0; b < cfg->n_backends; b++) {
        const par_backend_inst *inst = &cfg->backends[b];
        const double t_start = par_now_s();
        double t_exec = t_start;
        memset(r, 0, sizeof *r);
        par_metrics_init(&r->m);
        snprintf(r->case_dtype, sizeof r->case_dtype, "%s", par_dtype_name(par_graph_compute_dtype(g)));
        if (refused[0]) {
            r->verdict = PAR_V_ERROR;
            snprintf(r->reason, sizeof r->reason, "%s", refused);
        } else if (ist != PAR_OK) {
            r->verdict = PAR_V_ERROR;
            snprintf(r->reason, sizeof r->reason, "inputs: %s", msg.text);
            internal = 1;
        } else {
            par_exec_opts o = cfg->exec;
            if (cfg->servers) o.server = cfg->servers[(size_t)worker * (size_t)cfg->n_backends + (size_t)b];
            if (c->repeat > 0) o.repeat = c->repeat;
            if (c->timeout_s > 0) o.timeout_s = c->timeout_s;
            par_exec_out *out = calloc(1, sizeof *out);
            if (!out) {
                r->verdict = PAR_V_ERROR;
                snprintf(r->reason, sizeof r->reason, "out of memory");
                internal = 1;
            } else {
                /* The backend runs first: the reference is computed only for a backend that produced outputs to
                 * judge (an UNSUPPORTED or crashed backend needs none). */
                if (inst->be == par_backend_expected()) expected_out(c, g, out);
                else par_exec_run(inst, g, (const void *const *)inputs, &o, out);
                t_exec = par_now_s();
                r->t = out->t;
                r->output_bytes = out->output_bytes;
                snprintf(r->output, sizeof r->output, "%s", out->output);
                r->output_dropped = out->output_bytes - (int64_t)strlen(r->output);
                if (r->output_dropped < 0) r->output_dropped = 0;
                if (out->verdict == PAR_V_PASS) {
                    par_msg rm = {{0}};
                    par_status rs;
                    const int declared = out->algo || (quant && out->requant);
                    par_ref_result *own = declared ? reference_declared(cfg, inst, c, g, quant, inputs, out, &rs, &rm)
                                                   : NULL;
                    const par_ref_result *ref =
                        declared ? own : reference_for(cfg, inst, c, g, quant, inputs, refs, &rs, &rm);
                    note_decls(g, out->algo, out->n_algo, PAR_ALGO_DIRECT, r->algos, &r->n_algos);
                    note_decls(g, out->requant, out->n_requant, -1, r->requants, &r->n_requants);
                    if (ref) {
                        char sbuf[PAR_TIE_RULES][64];
                        const char *schemes[PAR_TIE_RULES];
                        record_schemes(g, inst, out, sbuf, schemes);
                        const par_ref_result *id = has_anything(g, ref) ? ideal_for(cfg, c, g, inputs, &ideal) : NULL;
                        par_ref_result *stat_own = NULL;
                        const par_ref_result *sr = stat_skip == PAR_STAT_APPLIED
                                                       ? stat_reference(cfg, inst, c, g, inputs, out, stats, &stat_own)
                                                       : NULL;
                        judge(g, ref, id, sr, out, schemes, r);
                        if (stat_skip != PAR_STAT_APPLIED) r->m.stat_skip = stat_skip;
                        if (cfg->node_companion && r->verdict == PAR_V_PASS && sr && inst->be != par_backend_expected())
                            internal |= judge_node_values(cfg, inst, c, g, quant, inputs, &o, out, &node_refs, r);
                        par_ref_result_destroy(stat_own);
                        note_unjudged(inst, g, quant, inputs, out, r);
                    } else {
                        r->verdict = rs == PAR_UNSUPPORTED ? PAR_V_UNSUPPORTED : PAR_V_ERROR;
                        snprintf(r->reason, sizeof r->reason, "reference: %s", rm.text);
                        if (rs != PAR_UNSUPPORTED) internal = 1;
                    }
                    par_ref_result_destroy(own);
                } else {
                    r->verdict = out->verdict;
                    snprintf(r->reason, sizeof r->reason, "%s", out->reason);
                }
                apply_diagnostics(out, r);
                /* a backend child kept across jobs serves the next case only after a PASS or UNSUPPORTED */
                if (r->verdict != PAR_V_PASS && r->verdict != PAR_V_UNSUPPORTED) par_exec_server_drop(o.server);
                par_text_clean(r->note, sizeof r->note, out->note, sizeof out->note, 1); /* PAR_PROC_NOTE */
                par_exec_out_free(out);
                free(out);
            }
        }
        r->done = 1;
        trace_record(worker, c, inst, t_start, t_exec, par_now_s(), r->verdict);
        emit(user, ci, b, r);
    }
    free(r);
    par_node_refs_free(&node_refs);
    par_ref_result_destroy(ideal.res);
    for (int k = 0; k < PAR_ARITH_N_KINDS; k++)
        for (int f = 0; f < 2; f++) par_ref_result_destroy(stats[k][f]);
    for (int k = 0; k < PAR_ARITH_N_KINDS; k++)
        for (int j = 0; j < PAR_REQUANT_N_SCHEMES; j++) {
            for (int f = 0; f < 4; f++) par_ref_result_destroy(refs[k][j][f]);
        }
    if (inputs) par_case_free_inputs(c, inputs);
    return internal;
}

void par_judge_unbuilt(const par_run_config *cfg, int32_t ci, const char *reason, par_emit_fn emit, void *user)
{
    par_result *r = calloc(1, sizeof *r);
    if (!r) return;
    for (int32_t b = 0; b < cfg->n_backends; b++) {
        memset(r, 0, sizeof *r);
        r->verdict = PAR_V_ERROR;
        snprintf(r->reason, sizeof r->reason, "case could not be built: %s", reason);
        r->done = 1;
        emit(user, ci, b, r);
    }
    free(r);
}
