/*
 * case_mem.c - the memory a worker needs for a case (case_mem.h), term by term from what the code allocates:
 *
 *   data        core/case.c: par_case_make_inputs materializes every input in its dtype; the graph holds every
 *               constant in its dtype.
 *   ref_values  reference/interp.c: par_rt_alloc gives every value, inputs and constants included, three float64
 *               arrays (v, e, s: 24 bytes per element), and requant_exact adds ql and qh (16 bytes) to the output of
 *               every quantized node; with flushed subnormals declared (opts flush), every f32/f16 value has its
 *               flush parts f too (8 bytes); nothing is freed before the whole graph is done. The flush pass's
 *               temporaries are those of the scale pass, freed before it.
 *   ref_temp    the largest per-node temporaries, on top of the values:
 *               - a float node: scale_pass allocates a full par_rt per output (24 bytes per output element) to run
 *                 the kernel again on the scales; a dequantize of a labelled input first copies it (24 per input
 *                 element). Kernels themselves allocate nothing.
 *               - a quantized node: dequantized copies of its quantized and i32 inputs (24 per element), the float
 *                 output (24) and its scale pass (24), then requant_exact's integers under 3 schemes and tie windows
 *                 (32 per output element) while quant_ops.c holds integer copies of the inputs (24 per element) and
 *                 the accumulator (24 per output element): 48 per input element and 80 per output element at most.
 *   ref_kept    runner/runner.c keeps one reference per distinct precision profile until the case is done: every
 *               further one adds its values (or, through par_refcache_run, its outputs only).
 *   buffers     exec/exec.c: 64-byte aligned private copies of the inputs with 64 spare bytes, the shared region
 *               (header, each output 64-byte aligned between 256-byte guards), run 1's copy of each output in the
 *               child, and the copy of each output handed back to the worker.
 *   backend     not the harness's: one repacked copy of the constants and every intermediate activation in its
 *               dtype (no memory planning), a guess on the safe side for the built-in backends.
 *
 * total = data + ref_values + ref_kept + max(ref_temp, buffers + backend): the interpreter's temporaries are freed
 * before a backend runs, so the two peaks never coexist. Checked against the peak RSS of `parity run -b cpu -j 1`:
 * relu on [4096,4096]: estimate 1.275 GB, measured 1.277 GB; on [8192,8192]: 5.10 GB, measured 5.10 GB.
 *
 * It must not allocate or walk elements: it reads shapes and dtypes only.
 */
#include "case_mem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/ops.h"

#define REF_BYTES 24   /* v, e, s */
#define LABEL_BYTES 16 /* ql, qh */
#define ALIGN 64
#define GUARD 256
#define SHARED_HDR 2048 /* exec.c's status header (timings, reason, describe text), rounded up */

static int is_q(par_dtype t) { return par_dtype_is_quant(t); }

static int64_t bytes_of(const par_value *v) { return v->numel * (int64_t)par_dtype_size(v->dtype); }

static int64_t align_up(int64_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

/* interp.c's test for the quantized path: an operand in qu8/qs8, except quantize and dequantize themselves. */
static int quant_node(const par_graph_desc *g, const par_node *n)
{
    const par_op_info *op = par_op_of(n);
    if (op && (op->id == PAR_OP_QUANTIZE || op->id == PAR_OP_DEQUANTIZE)) return 0;
    for (int32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] >= 0 && is_q(g->values[n->inputs[i]].dtype)) return 1;
    for (int32_t i = 0; i < n->n_outputs; i++)
        if (is_q(g->values[n->outputs[i]].dtype)) return 1;
    return 0;
}

/* Whether value v carries labelled ranges (ql, qh): output 0 of a quantized node, in qu8/qs8. */
static int labelled(const par_graph_desc *g, int32_t v)
{
    const par_value *val = &g->values[v];
    if (val->kind != PAR_VALUE_NODE || val->producer < 0 || !is_q(val->dtype)) return 0;
    const par_node *n = &g->nodes[val->producer];
    return quant_node(g, n) && n->n_outputs > 0 && n->outputs[0] == v;
}

static int64_t node_temp(const par_graph_desc *g, const par_node *n)
{
    int64_t in = 0, out = 0, out0 = 0;
    for (int32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] >= 0) in += g->values[n->inputs[i]].numel;
    for (int32_t i = 0; i < n->n_outputs; i++) out += g->values[n->outputs[i]].numel;
    if (n->n_outputs > 0) out0 = g->values[n->outputs[0]].numel;
    if (quant_node(g, n)) return 48 * in + 80 * out0 + REF_BYTES * (out - out0);
    int64_t t = REF_BYTES * out;
    const par_op_info *op = par_op_of(n);
    if (op && op->id == PAR_OP_DEQUANTIZE && n->n_inputs > 0 && n->inputs[0] >= 0 && labelled(g, n->inputs[0]))
        t += REF_BYTES * g->values[n->inputs[0]].numel;
    return t;
}

void par_case_mem_parts(const par_graph_desc *g, int32_t n_backends, const par_case_mem_opts *o, par_case_mem *m)
{
    memset(m, 0, sizeof *m);
    int any_q = 0;
    int64_t consts = 0, inter = 0, outs_ref = 0;
    for (int32_t i = 0; i < g->n_values; i++) {
        const par_value *v = &g->values[i];
        any_q |= is_q(v->dtype);
        int64_t r = REF_BYTES * v->numel + (labelled(g, i) ? LABEL_BYTES * v->numel : 0);
        if (o && o->flush && (v->dtype == PAR_DTYPE_F32 || v->dtype == PAR_DTYPE_F16)) r += 8 * v->numel;
        m->ref_values += r;
        if (v->kind == PAR_VALUE_CONST) consts += bytes_of(v);
        int out = 0;
        for (int32_t k = 0; k < g->n_outputs; k++) out |= g->outputs[k] == i;
        if (out) outs_ref += r;
        else if (v->kind == PAR_VALUE_NODE) inter += bytes_of(v);
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        int64_t t = node_temp(g, &g->nodes[i]);
        if (t > m->ref_temp) m->ref_temp = t;
    }
    int32_t nb = n_backends > 0 ? n_backends : 1;
    const int32_t n_float = o && o->flush ? 6 : 3; /* arith, and flushed subnormals when some backend declares it */
    int32_t np = o && o->n_profiles > 0 ? o->n_profiles : (any_q ? nb : (nb < n_float ? nb : n_float));
    m->ref_kept = (int64_t)(np - 1) * (o && o->outputs_only ? outs_ref : m->ref_values);

    int64_t in_bytes = 0;
    m->buffers = SHARED_HDR;
    for (int32_t i = 0; i < g->n_inputs; i++) {
        int64_t b = bytes_of(&g->values[g->inputs[i]]);
        in_bytes += b;
        m->buffers += align_up(b) + ALIGN;
    }
    for (int32_t k = 0; k < g->n_outputs; k++) {
        int64_t b = bytes_of(&g->values[g->outputs[k]]);
        m->buffers += align_up(b) + 2 * GUARD + 2 * b; /* shared region, run-1 copy, the worker's copy */
    }
    m->data = in_bytes + consts;
    m->backend = consts + inter;
    /* the temporaries are freed before any backend runs: the two peaks do not add */
    int64_t transient = m->ref_temp > m->buffers + m->backend ? m->ref_temp : m->buffers + m->backend;
    m->total = m->data + m->ref_values + m->ref_kept + transient;
}

int64_t par_case_mem_estimate(const par_graph_desc *g, int32_t n_backends)
{
    par_case_mem m;
    par_case_mem_parts(g, n_backends, NULL, &m);
    return m.total;
}

int64_t par_case_mem_parse(const char *s)
{
    if (!s || !*s) return -1;
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0) || !isfinite(v)) return -1;
    double mult = 1;
    switch (*end) {
    case 'k': case 'K': mult = 1024.0; end++; break;
    case 'm': case 'M': mult = 1048576.0; end++; break;
    case 'g': case 'G': mult = 1073741824.0; end++; break;
    case 't': case 'T': mult = 1099511627776.0; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b') end++;
    if (*end != 0 || v * mult > 9.0e18) return -1;
    return (int64_t)(v * mult);
}

int64_t par_case_mem_limit(void)
{
    int64_t env = par_case_mem_parse(getenv("PARITY_MEM_LIMIT"));
    if (env > 0) return env;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) return (int64_t)pages * (int64_t)page / 4;
    return INT64_C(4) << 30;
}

static const char *human(int64_t b, char *buf, size_t len)
{
    double x = (double)b;
    if (x >= 1e9) snprintf(buf, len, "%.1f GB", x / 1e9);
    else if (x >= 1e6) snprintf(buf, len, "%.1f MB", x / 1e6);
    else snprintf(buf, len, "%.0f kB", ceil(x / 1e3));
    return buf;
}

const char *par_case_mem_reason(const par_case_mem *m, int64_t limit, char *buf, size_t len)
{
    char t[32], r[32], b[32], d[32], l[32];
    snprintf(buf, len, "needs ~%s (reference %s, buffers %s, data %s), limit %s", human(m->total, t, sizeof t),
             human(m->ref_values + m->ref_temp + m->ref_kept, r, sizeof r), human(m->buffers + m->backend, b, sizeof b),
             human(m->data, d, sizeof d), human(limit, l, sizeof l));
    return buf;
}

/* A rough count of a case's work, for ordering cases only: every element each node reads and writes, plus, for each
 * input of rank 2 or more that is a constant (a weight), its output elements times the weight's elements over its
 * largest outer dimension (conv2d [Cout, Cin, kh, kw]: Cin kh kw multiply-adds per output; linear [N, K]: min(N, K)).
 * Shapes only, like the estimate above. */
double par_case_cost(const par_graph_desc *g)
{
    double cost = 0;
    for (int32_t j = 0; j < g->n_nodes; j++) {
        const par_node *n = &g->nodes[j];
        double out = 0;
        for (int32_t i = 0; i < n->n_outputs; i++) out += (double)g->values[n->outputs[i]].numel;
        cost += out;
        for (int32_t i = 0; i < n->n_inputs; i++) {
            if (n->inputs[i] < 0) continue;
            const par_value *v = &g->values[n->inputs[i]];
            cost += (double)v->numel;
            if (v->kind != PAR_VALUE_CONST || v->rank < 2) continue;
            int64_t outer = v->dims[0] > v->dims[v->rank - 1] ? v->dims[0] : v->dims[v->rank - 1];
            cost += out * (double)v->numel / (double)(outer > 0 ? outer : 1);
        }
    }
    return cost;
}
