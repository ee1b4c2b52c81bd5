/*
 * onednn.c - the `onednn` built-in backend: oneDNN 2.6 (Debian's libdnnl, the CPU engine on its OpenMP runtime)
 * through its C API, behind parity's backend ABI.
 *
 * This file holds the backend table: the context (a CPU engine and an in-order stream; knobs threads=N and
 * fpmath=strict|bf16), supports, prepare (fusion planning, then primitives per node, onednn_lower*.c), bind (the
 * caller's buffers become the handles of the graph inputs' and outputs' memory objects), run (the steps in order on
 * the stream), release, the requantization scheme, and the note naming the implementations oneDNN chose.
 *
 * It must not judge results (the oracle does) nor work around oneDNN: whatever the library lacks is UNSUPPORTED with
 * the reason, and whatever it computes differently is reported as it is (docs/findings.md).
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "onednn_internal.h"

static par_status dn_init(void **ctx, par_msg *msg)
{
    dn_ctx *c = calloc(1, sizeof *c);
    if (!c) return par_msgf(msg, PAR_ERROR, "init: out of memory");
    c->threads = 1;
    par_status st = par_dn_check(dnnl_engine_create(&c->eng, dnnl_cpu, 0), "dnnl_engine_create(cpu)", msg);
    if (st == PAR_OK)
        st = par_dn_check(dnnl_stream_create(&c->strm, c->eng, dnnl_stream_in_order), "dnnl_stream_create", msg);
    if (st != PAR_OK) {
        if (c->eng) dnnl_engine_destroy(c->eng);
        free(c);
        return st == PAR_UNSUPPORTED ? st : PAR_ERROR;
    }
    *ctx = c;
    return PAR_OK;
}

static void dn_destroy(void *ctx)
{
    dn_ctx *c = ctx;
    if (!c) return;
    if (c->strm) dnnl_stream_destroy(c->strm);
    if (c->eng) dnnl_engine_destroy(c->eng);
    free(c);
}

static par_status dn_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    dn_ctx *c = ctx;
    if (c->prepared) return par_knob_too_late(key, NULL, msg);
    if (strcmp(key, "fpmath") == 0) {
        if (strcmp(value, "strict") != 0 && strcmp(value, "bf16") != 0)
            return par_msgf(msg, PAR_ERROR, "knob 'fpmath': '%s' is not strict or bf16", value);
        c->bf16 = strcmp(value, "bf16") == 0;
        return PAR_OK;
    }
    if (strcmp(key, "strict") == 0) return par_knob_bool(key, value, &c->strict, msg);
    if (strcmp(key, "layout") == 0) {
        if (strcmp(value, "blocked") != 0 && strcmp(value, "plain") != 0)
            return par_msgf(msg, PAR_ERROR, "knob 'layout': '%s' is not blocked or plain", value);
        c->plain = strcmp(value, "plain") == 0;
        return PAR_OK;
    }
    if (strcmp(key, "threads") != 0)
        return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (the onednn backend has threads=1..%d, fpmath=strict|bf16, "
                        "layout=blocked|plain, strict=0|1)", key, PAR_MAX_THREADS);
    return par_knob_threads(value, &c->threads, msg);
}

static const char *isa_name(dnnl_cpu_isa_t isa)
{
    switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    default: return "all";
    }
}

static size_t dn_describe(void *ctx, char *buf, size_t len)
{
    const dn_ctx *c = ctx;
    const dnnl_version_t *v = dnnl_version();
    int need = snprintf(buf, len, "threads=%d;fpmath=%s;layout=%s;library=oneDNN %d.%d.%d (%s);runtime=%s;isa=%s;requant=fp32%s",
                        c->threads, c->bf16 ? "bf16" : "strict", c->plain ? "plain" : "blocked", v->major, v->minor, v->patch, v->hash,
                        v->cpu_runtime == DNNL_RUNTIME_OMP ? "omp" : v->cpu_runtime == DNNL_RUNTIME_TBB ? "tbb" : "other",
                        isa_name(dnnl_get_effective_cpu_isa()), c->strict ? ";strict=1" : "");
    return need < 0 ? 0 : (size_t)need;
}

static par_status dn_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    (void)ctx;
    return par_dn_check_node(g, node, msg);
}

static void dn_release(void *ctx, void *prepared)
{
    (void)ctx;
    dn_plan *p = prepared;
    if (!p) return;
    for (int i = 0; i < p->n_steps; i++) {
        if (p->steps[i].prim) dnnl_primitive_destroy(p->steps[i].prim);
        free(p->steps[i].args);
    }
    for (int i = 0; i < p->n_owned; i++) dnnl_memory_destroy(p->owned[i]);
    for (int i = 0; i < p->n_bufs; i++) free(p->bufs[i]);
    free(p->steps);
    free(p->owned);
    free(p->bufs);
    free(p->mem);
    free(p->n_uses);
    free(p->is_output);
    free(p->fused_into);
    free(p->post);
    free(p->final_out);
    free(p->can_block);
    free(p);
}

/* OpenMP's thread count for the primitives this thread runs: libgomp is loaded with libdnnl (DNNL_RUNTIME_OMP) */
static void set_threads(int n)
{
    void (*set)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    if (set) set(n);
}

static par_status dn_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    dn_ctx *c = ctx;
    c->prepared = 1;
    set_threads(c->threads);
    dn_plan *p = calloc(1, sizeof *p);
    if (!p) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    p->c = c;
    p->g = g;
    size_t nv = (size_t)(g->n_values > 0 ? g->n_values : 1), nn = (size_t)(g->n_nodes > 0 ? g->n_nodes : 1);
    p->mem = calloc(nv, sizeof *p->mem);
    p->n_uses = calloc(nv, sizeof *p->n_uses);
    p->is_output = calloc(nv, 1);
    p->fused_into = calloc(nn, sizeof *p->fused_into);
    p->post = calloc(nn, sizeof *p->post);
    p->final_out = calloc(nn, sizeof *p->final_out);
    p->can_block = calloc(nv, 1);
    if (!p->mem || !p->n_uses || !p->is_output || !p->fused_into || !p->post || !p->final_out || !p->can_block) {
        dn_release(ctx, p);
        return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    }
    for (int32_t i = 0; i < g->n_nodes; i++)
        for (int32_t k = 0; k < g->nodes[i].n_inputs; k++)
            if (g->nodes[i].inputs[k] >= 0) p->n_uses[g->nodes[i].inputs[k]]++;
    for (int32_t k = 0; k < g->n_outputs; k++) {
        int32_t v = g->outputs[k];
        if (g->values[v].kind != PAR_VALUE_NODE || p->is_output[v]) {
            dn_release(ctx, p);
            return par_msgf(msg, PAR_UNSUPPORTED, "graph output '%s' is a graph input, a constant or repeated",
                            g->values[v].name);
        }
        p->is_output[v] = 1;
    }
    par_dn_plan_fusions(p);
    if (!c->plain) par_dn_plan_layouts(p);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        par_msg m = {{0}};
        par_status st = par_dn_lower(p, i, &m);
        if (st != PAR_OK) {
            par_msgf(msg, st, "node '%s' (%s): %s", g->nodes[i].name, g->nodes[i].op, m.text);
            dn_release(ctx, p);
            return st;
        }
    }
    for (int32_t k = 0; k < g->n_outputs; k++)
        if (!p->mem[g->outputs[k]]) {
            dn_release(ctx, p);
            return par_msgf(msg, PAR_ERROR, "prepare: graph output '%s' is never computed",
                            g->values[g->outputs[k]].name);
        }
    *prepared = p;
    return PAR_OK;
}

static par_status dn_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    (void)ctx;
    dn_plan *p = prepared;
    if (!p) return par_msgf(msg, PAR_ERROR, "bind: no prepared graph");
    const par_graph_desc *g = p->g;
    for (int32_t k = 0; k < g->n_inputs; k++) {
        dnnl_memory_t m = p->mem[g->inputs[k]];
        if (m && dnnl_memory_set_data_handle(m, (void *)(uintptr_t)inputs[k]) != dnnl_success)
            return par_msgf(msg, PAR_ERROR, "bind: dnnl_memory_set_data_handle of input '%s' failed",
                            g->values[g->inputs[k]].name);
    }
    for (int32_t k = 0; k < g->n_outputs; k++)
        if (dnnl_memory_set_data_handle(p->mem[g->outputs[k]], outputs[k]) != dnnl_success)
            return par_msgf(msg, PAR_ERROR, "bind: dnnl_memory_set_data_handle of output '%s' failed",
                            g->values[g->outputs[k]].name);
    p->inputs = inputs;
    p->outputs = outputs;
    return PAR_OK;
}

static par_status dn_run(void *ctx, void *prepared, par_msg *msg)
{
    dn_ctx *c = ctx;
    dn_plan *p = prepared;
    if (!p || !p->outputs) return par_msgf(msg, PAR_ERROR, "run: bind was not called");
    for (int i = 0; i < p->n_steps; i++) {
        const dn_step *s = &p->steps[i];
        const par_node *n = &p->g->nodes[s->node];
        if (s->kind == DN_STEP_PRIM) {
            dnnl_status_t r = dnnl_primitive_execute(s->prim, c->strm, s->nargs, s->args);
            if (r != dnnl_success)
                return par_msgf(msg, PAR_ERROR, "node '%s' (%s): dnnl_primitive_execute (step %d): %s", n->name, n->op,
                                i, par_dn_status_name(r));
        } else {
            void *src = NULL, *dst = NULL;
            dnnl_stream_wait(c->strm);
            dnnl_memory_get_data_handle(s->src, &src);
            dnnl_memory_get_data_handle(s->dst, &dst);
            if (src != dst) memcpy(dst, src, s->bytes);
        }
    }
    dnnl_status_t r = dnnl_stream_wait(c->strm);
    if (r != dnnl_success) return par_msgf(msg, PAR_ERROR, "dnnl_stream_wait: %s", par_dn_status_name(r));
    return PAR_OK;
}

static par_requant dn_requant(void *ctx)
{
    (void)ctx;
    return PAR_REQUANT_FP32;
}

/* fpmath=bf16: oneDNN may round the operands of its convolutions, inner products and matmuls to bfloat16 and
 * accumulate in f32 (avx512_core_bf16's vdpbf16ps); every other primitive ignores the mode */
static par_arith dn_arith(void *ctx)
{
    return ((const dn_ctx *)ctx)->bf16 ? PAR_ARITH_BF16 : PAR_ARITH_F32;
}

/* strict=1: the integers of every quantized op are promised to be exactly fp32's (a measurement tool) */
static int dn_requant_exact(void *ctx)
{
    return ((const dn_ctx *)ctx)->strict;
}

static size_t dn_note(void *ctx, void *prepared, char *buf, size_t len)
{
    (void)ctx;
    const dn_plan *p = prepared;
    if (!p || !p->note[0]) return 0;
    int need = snprintf(buf, len, "%s", p->note);
    return need < 0 ? 0 : (size_t)need + 1;
}

static void *dn_get_proc(void *ctx, const char *name)
{
    (void)ctx;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)dn_set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)(par_describe_fn)dn_describe;
    if (strcmp(name, PAR_PROC_REQUANT) == 0) return (void *)(par_requant_fn)dn_requant;
    if (strcmp(name, PAR_PROC_NOTE) == 0) return (void *)(par_note_fn)dn_note;
    if (strcmp(name, PAR_PROC_ARITH) == 0) return (void *)(par_arith_fn)dn_arith;
    if (strcmp(name, PAR_PROC_REQUANT_EXACT) == 0) return (void *)(par_requant_exact_fn)dn_requant_exact;
    return NULL;
}

static const par_backend onednn_backend = {
    .api_version = PAR_BACKEND_API_VERSION,
    .struct_size = sizeof(par_backend),
    .name = "onednn",
    .description = "oneDNN 2.6 (libdnnl) through its C API: blocked layouts chosen by the library, f32 and int8",
    .version = "2.6",
    .arith = PAR_ARITH_F32,
    .init = dn_init,
    .destroy = dn_destroy,
    .supports = dn_supports,
    .prepare = dn_prepare,
    .bind = dn_bind,
    .run = dn_run,
    .release = dn_release,
    .get_proc = dn_get_proc,
};

const par_backend *par_backend_onednn(void);
const par_backend *par_backend_onednn(void)
{
    return &onednn_backend;
}
