/*
 * nnapi.c - the nnapi backend (built in): parity graphs run through the Android Neural Networks API, the way
 * PyTorch Mobile's NNAPI path does it. The converter (nn_convert.c, nn_ops*.c) turns a graph into an NNAPI model
 * description; this file opens libneuralnetworks.so (nn_lib.c: dlopen, dlsym), builds the model through the public
 * C API only, picks the device of the profile (ANeuralNetworks_getDevice, createForDevices) with the CPU fallback
 * where the library offers one, and runs executions with the host-side layout conversions of the model's inputs and
 * outputs (NCHW <-> NHWC, qs8 held as qu8 below level 30).
 *
 * Knobs: profile=reference|npu-int8|gpu-fp16|old-android, level=27|28|29|30, lib=PATH. Declarations: the arithmetic
 * of the profile (PAR_PROC_ARITH: f16 for gpu-fp16, which also relaxes the model), gemmlowp_android requantization, exact
 * for the reference profile (PAR_PROC_REQUANT, PAR_PROC_REQUANT_EXACT), the device's own time (PAR_PROC_DEVICE_TIME).
 *
 * It must not write outside the bound outputs, nor work around a defect of the library: a refusal or a failure of
 * an NNAPI call is reported with the call, its result code and the library's reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_lib.h"
#include "nn_model.h"

#define NN_VERSION "1.0"

typedef struct nn_ctx {
    nn_lib lib;
    nn_settings set;
    char lib_knob[256];
    int prepared_once;
    int strict;
    int level_set; /* the level knob was given (else old-android implies 27) */
    /* supports() converts the whole graph once and answers every node from it */
    const par_graph_desc *cached_g;
    const par_node *cached_nodes;
    int32_t cached_n;
    nn_model cached;
} nn_ctx;

typedef struct nn_prep {
    nn_model m;
    ANeuralNetworksModel *model;
    ANeuralNetworksCompilation *comp;
    const void *const *inputs;
    void *const *outputs;
    void **in_buf, **out_buf; /* host-side scratch for permuted or shifted inputs / outputs (NULL: direct) */
    int32_t *in_index;        /* NNAPI input index of each graph input, -1 when the model does not read it */
    int one_device;           /* compiled for exactly one device: timing may be measured */
    int timed;
    double device_ms;
    char devices[160];
    char placement[256]; /* where the operations run (the simulator's partition query), for messages */
} nn_prep;

/* ---------------------------------------------------------------------------------------------------------------
 * Context and knobs
 * ------------------------------------------------------------------------------------------------------------- */
static par_status nn_init(void **ctx, par_msg *msg)
{
    nn_ctx *c = calloc(1, sizeof *c);
    if (!c) return par_msgf(msg, PAR_ERROR, "init: out of memory");
    c->set.level = NN_LEVEL_MAX;
    c->set.profile = NN_PROFILE_REFERENCE;
    par_status st = par_nn_lib_open(&c->lib, NULL, msg);
    if (st != PAR_OK) {
        free(c);
        return st;
    }
    *ctx = c;
    return PAR_OK;
}

static void drop_cache(nn_ctx *c)
{
    par_nn_model_free(&c->cached);
    c->cached_g = NULL;
    c->cached_nodes = NULL;
}

static void nn_destroy(void *ctx)
{
    nn_ctx *c = ctx;
    if (!c) return;
    drop_cache(c);
    par_nn_lib_close(&c->lib);
    free(c);
}

static par_status nn_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    nn_ctx *c = ctx;
    if (c->prepared_once) return par_knob_too_late(key, NULL, msg);
    drop_cache(c);
    if (strcmp(key, "profile") == 0) {
        for (int p = 0; p < NN_PROFILE_COUNT; p++)
            if (strcmp(value, par_nn_profile_name((nn_profile)p)) == 0) {
                c->set.profile = (nn_profile)p;
                c->set.relax_f16 = p == NN_PROFILE_GPU_FP16;
                /* Android 8.1's device knows level 27 only: the converter then uses no later feature. */
                if (!c->level_set) c->set.level = p == NN_PROFILE_OLD_ANDROID ? 27 : NN_LEVEL_MAX;
                return PAR_OK;
            }
        return par_msgf(msg, PAR_ERROR, "knob 'profile': value '%s' is not one of reference, npu-int8, gpu-fp16, "
                        "old-android", value);
    }
    if (strcmp(key, "level") == 0) {
        char *end = NULL;
        errno = 0;
        long v = strtol(value, &end, 10);
        if (!*value || *end || errno || v < NN_LEVEL_MIN || v > NN_LEVEL_MAX)
            return par_msgf(msg, PAR_ERROR, "knob 'level': value '%s' is not a feature level in [27, 30]", value);
        c->set.level = (int)v;
        c->level_set = 1;
        return PAR_OK;
    }
    if (strcmp(key, "strict") == 0) return par_knob_bool(key, value, &c->strict, msg);
    if (strcmp(key, "lib") == 0) {
        nn_lib lib;
        par_status st = par_nn_lib_open(&lib, value, msg);
        if (st != PAR_OK) return st == PAR_UNSUPPORTED ? PAR_ERROR : st;
        par_nn_lib_close(&c->lib);
        c->lib = lib;
        snprintf(c->lib_knob, sizeof c->lib_knob, "%s", value);
        return PAR_OK;
    }
    return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (nnapi knobs: profile=reference|npu-int8|gpu-fp16|old-android, "
                    "level=27|28|29|30, strict=0|1, lib=PATH)", key);
}

static size_t nn_describe(void *ctx, char *buf, size_t len)
{
    const nn_ctx *c = ctx;
    int need = snprintf(buf, len, "profile=%s;level=%d;relaxed_f16=%d;requant=gemmlowp_android;strict=%d;lib=%s;devices=%s",
                        par_nn_profile_name(c->set.profile), c->set.level, c->set.relax_f16 && c->set.level >= 28,
                        c->strict,
                        c->lib.path, c->lib._getDevice ? "api" : "none");
    return need < 0 ? 0 : (size_t)need;
}

static par_arith nn_arith(void *ctx)
{
    const nn_ctx *c = ctx;
    return c->set.profile == NN_PROFILE_GPU_FP16 ? PAR_ARITH_F16 : PAR_ARITH_F32;
}

/* gemmlowp's rounding with Android's ratio (GetQuantizedConvolutionMultipler: the product of the scales in float,
 * divided in double), which the simulator's CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D, TRANSPOSE_CONV_2D,
 * FULLY_CONNECTED, MUL and PRELU use. Where there is no product of two scales (ADD, requantizing data movement) the
 * ratio is the same as gemmlowp's. Android 8.1's float division (old-android) is neither scheme's. */
static par_requant nn_requant(void *ctx)
{
    (void)ctx;
    return PAR_REQUANT_GEMMLOWP_ANDROID;
}

/* Strict only on request (knob strict=1): NNAPI's convolutions, fully connected layers, ADD and MUL are
 * gemmlowp_android's integers, but Android's quantized AVERAGE_POOL_2D divides the window sum exactly,
 * (sum + n / 2) / n, which no scheme's ratio representation reproduces at the ties of a window of 3, 6 or 9
 * elements: strict mode, which labels no tie, fails those. */
static int nn_requant_exact(void *ctx)
{
    const nn_ctx *c = ctx;
    return c->strict;
}

/* NNAPI's quantized AVERAGE_POOL_2D is not a requantization: Android computes (sum + n / 2) / n on the stored
 * uint8 integers (TFLite's uint8 reference), round half up of the exact average, which is rndnu's rule; on int8
 * (TENSOR_QUANT8_ASYMM_SIGNED, level 30) TFLite's integer reference rounds the stored sum half away from zero,
 * rndna's rule (exact with zero point 0). Every other quantized node is gemmlowp_android's. */
static par_requant nn_node_requant(void *ctx, void *prepared, int32_t node)
{
    (void)ctx;
    const nn_prep *p = prepared;
    if (!p) return PAR_REQUANT_GEMMLOWP_ANDROID;
    for (int32_t i = 0; i < p->m.n_oper; i++) {
        const nn_operation *op = &p->m.oper[i];
        if (op->node != node || op->type != ANEURALNETWORKS_AVERAGE_POOL_2D) continue;
        int32_t t = p->m.opnd[op->in[0]].type;
        if (t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM) return PAR_REQUANT_RNDNU;
        if (t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED) return PAR_REQUANT_RNDNA;
    }
    return PAR_REQUANT_GEMMLOWP_ANDROID;
}

static int nn_device_time(void *ctx, void *prepared, double *total_ms, double *node_ms, int32_t n_nodes)
{
    (void)ctx;
    const nn_prep *p = prepared;
    if (!p || !p->timed) return 0;
    *total_ms = p->device_ms;
    for (int32_t i = 0; i < n_nodes; i++) node_ms[i] = -1;
    return 1;
}

static size_t nn_note(void *ctx, void *prepared, char *buf, size_t len);

static void *nn_get_proc(void *ctx, const char *name)
{
    (void)ctx;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)nn_set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)(par_describe_fn)nn_describe;
    if (strcmp(name, PAR_PROC_ARITH) == 0) return (void *)(par_arith_fn)nn_arith;
    if (strcmp(name, PAR_PROC_REQUANT) == 0) return (void *)(par_requant_fn)nn_requant;
    if (strcmp(name, PAR_PROC_REQUANT_EXACT) == 0) return (void *)(par_requant_exact_fn)nn_requant_exact;
    if (strcmp(name, PAR_PROC_NODE_REQUANT) == 0) return (void *)(par_node_requant_fn)nn_node_requant;
    if (strcmp(name, PAR_PROC_DEVICE_TIME) == 0) return (void *)(par_device_time_fn)nn_device_time;
    if (strcmp(name, PAR_PROC_NOTE) == 0) return (void *)(par_note_fn)nn_note;
    return NULL;
}

/* ---------------------------------------------------------------------------------------------------------------
 * supports
 * ------------------------------------------------------------------------------------------------------------- */
static par_status nn_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    nn_ctx *c = ctx;
    if (node < 0 || node >= g->n_nodes)
        return par_msgf(msg, PAR_ERROR, "supports: node index %d out of range [0, %d)", node, g->n_nodes);
    if (c->cached_g != g || c->cached_nodes != g->nodes || c->cached_n != g->n_nodes || node == 0) {
        drop_cache(c);
        par_status st = par_nn_convert(&c->cached, g, &c->set, msg);
        if (st != PAR_OK) {
            par_nn_model_free(&c->cached);
            return st;
        }
        c->cached_g = g;
        c->cached_nodes = g->nodes;
        c->cached_n = g->n_nodes;
    }
    par_status st = c->cached.node_st[node];
    if (st != PAR_OK) par_msgf(msg, st, "%s", c->cached.node_msg[node].text);
    return st;
}

/* ---------------------------------------------------------------------------------------------------------------
 * prepare: the model through the API, the compilation for the profile's device
 * ------------------------------------------------------------------------------------------------------------- */
static par_status nn_fail(const nn_ctx *c, par_msg *msg, const char *call, int rc, const char *detail)
{
    const char *why = c->lib.sim_last_error ? c->lib.sim_last_error() : "";
    return par_msgf(msg, PAR_ERROR, "%s%s: %s%s%s", call, detail ? detail : "", par_nn_result_name(rc),
                    why && *why ? ": " : "", why ? why : "");
}

static ANeuralNetworksOperandType op_type(const nn_operand *o)
{
    ANeuralNetworksOperandType t = {o->type, o->rank, o->rank ? o->dims : NULL, o->scale, o->zp};
    return t;
}

static par_status build_model(nn_ctx *c, nn_prep *p, par_msg *msg)
{
    const nn_lib *L = &c->lib;
    nn_model *m = &p->m;
    int rc = L->Model_create(&p->model);
    if (rc) return nn_fail(c, msg, "ANeuralNetworksModel_create", rc, NULL);
    char where[96];
    for (int32_t i = 0; i < m->n_opnd; i++) {
        const nn_operand *o = &m->opnd[i];
        ANeuralNetworksOperandType t = op_type(o);
        snprintf(where, sizeof where, " (operand %d)", i);
        if ((rc = L->Model_addOperand(p->model, &t))) return nn_fail(c, msg, "ANeuralNetworksModel_addOperand", rc, where);
        if (o->ch_scales) {
            if (!L->Model_setOperandSymmPerChannelQuantParams)
                return par_msgf(msg, PAR_UNSUPPORTED, "%s lacks setOperandSymmPerChannelQuantParams", L->path);
            ANeuralNetworksSymmPerChannelQuantParams q = {o->ch_dim, o->n_ch, o->ch_scales};
            if ((rc = L->Model_setOperandSymmPerChannelQuantParams(p->model, i, &q)))
                return nn_fail(c, msg, "ANeuralNetworksModel_setOperandSymmPerChannelQuantParams", rc, where);
        }
        if (o->data && (rc = L->Model_setOperandValue(p->model, i, o->data, o->len)))
            return nn_fail(c, msg, "ANeuralNetworksModel_setOperandValue", rc, where);
    }
    for (int32_t i = 0; i < m->n_oper; i++) {
        const nn_operation *op = &m->oper[i];
        const char *node = op->node >= 0 ? m->g->nodes[op->node].name : "?";
        snprintf(where, sizeof where, " (%s of node '%s')", par_nn_op_name(op->type), node);
        if ((rc = L->Model_addOperation(p->model, op->type, op->n_in, op->in, op->n_out, op->out)))
            return nn_fail(c, msg, "ANeuralNetworksModel_addOperation", rc, where);
    }
    uint32_t ins[PAR_MAX_RANK * 16], outs[PAR_MAX_RANK * 16], ni = 0, no = 0;
    if (m->n_in > (int32_t)(sizeof ins / sizeof ins[0]) || m->n_out > (int32_t)(sizeof outs / sizeof outs[0]))
        return par_msgf(msg, PAR_UNSUPPORTED, "more than %zu graph inputs or outputs", sizeof ins / sizeof ins[0]);
    for (int32_t i = 0; i < m->n_in; i++) {
        p->in_index[i] = -1;
        /* An input no operation reads is not given to NNAPI (a model input must be used). */
        int used = 0;
        for (int32_t k = 0; k < m->n_oper && !used; k++)
            for (uint32_t j = 0; j < m->oper[k].n_in; j++)
                if ((int32_t)m->oper[k].in[j] == m->in[i].operand) used = 1;
        if (m->in[i].operand >= 0 && used) {
            p->in_index[i] = (int32_t)ni;
            ins[ni++] = (uint32_t)m->in[i].operand;
        }
    }
    for (int32_t i = 0; i < m->n_out; i++) outs[no++] = (uint32_t)m->out[i].operand;
    if ((rc = L->Model_identifyInputsAndOutputs(p->model, ni, ins, no, outs)))
        return nn_fail(c, msg, "ANeuralNetworksModel_identifyInputsAndOutputs", rc, NULL);
    if (c->set.relax_f16 && c->set.level >= 28) {
        if (!L->Model_relaxComputationFloat32toFloat16)
            return par_msgf(msg, PAR_UNSUPPORTED, "%s lacks relaxComputationFloat32toFloat16", L->path);
        if ((rc = L->Model_relaxComputationFloat32toFloat16(p->model, true)))
            return nn_fail(c, msg, "ANeuralNetworksModel_relaxComputationFloat32toFloat16", rc, NULL);
    }
    if ((rc = L->Model_finish(p->model))) return nn_fail(c, msg, "ANeuralNetworksModel_finish", rc, NULL);
    return PAR_OK;
}

/* " (on parity-npu-int8: 5 operations, cpu-fallback: 2)": where the compilation placed the operations, from the
 * simulator's partition query when the library has it; named in the messages of failed runs. */
static void placement(const nn_ctx *c, nn_prep *p)
{
    snprintf(p->placement, sizeof p->placement, " (devices %s)", p->devices);
    uint32_t count = 0;
    const char *names[256];
    if (!c->lib.sim_partition || c->lib.sim_partition(p->comp, names, 256, &count) || count > 256) return;
    char buf[256] = " (on ";
    for (uint32_t i = 0; i < count; i++) {
        int seen = 0;
        for (uint32_t k = 0; k < i && !seen; k++) seen = names[k] && names[i] && !strcmp(names[k], names[i]);
        if (seen || !names[i]) continue;
        uint32_t n = 0;
        for (uint32_t k = i; k < count; k++) n += names[k] && !strcmp(names[k], names[i]);
        size_t u = strlen(buf);
        snprintf(buf + u, sizeof buf - u, "%s%s: %u operation%s", u > 5 ? ", " : "", names[i], n, n == 1 ? "" : "s");
    }
    size_t u = strlen(buf);
    snprintf(buf + u, sizeof buf - u, ")");
    snprintf(p->placement, sizeof p->placement, "%s", buf);
}

/* PAR_PROC_NOTE: where the compilation placed the operations, e.g. "placement: parity-npu-int8: 5 operations,
 * parity-reference: 2 operations" for a partitioned graph (the simulator's partition query; the devices given to the
 * compilation when the library cannot say). */
static size_t nn_note(void *ctx, void *prepared, char *buf, size_t len)
{
    (void)ctx;
    const nn_prep *p = prepared;
    if (!p || !p->placement[0]) return 0;
    const char *s = p->placement;
    size_t n = strlen(s);
    if (n >= 2 && s[0] == ' ' && s[1] == '(' && s[n - 1] == ')') s += 2, n -= 3; /* " (...)" -> "..." */
    if (strncmp(s, "on ", 3) == 0) s += 3, n -= 3;
    return (size_t)snprintf(buf, len, "placement: %.*s", (int)n, s) + 1;
}

/* The profile's device, found by name as an application finds a vendor's driver, plus the CPU device where the
 * library lists one (Android's fallback for operations the accelerator refuses). */
static par_status compile(nn_ctx *c, nn_prep *p, par_msg *msg)
{
    const nn_lib *L = &c->lib;
    int rc;
    const ANeuralNetworksDevice *devs[2];
    uint32_t nd = 0;
    if (L->_getDeviceCount && L->_getDevice && L->Device_getName && L->Compilation_createForDevices) {
        uint32_t count = 0;
        if ((rc = L->_getDeviceCount(&count))) return nn_fail(c, msg, "ANeuralNetworks_getDeviceCount", rc, NULL);
        const char *want = par_nn_profile_name(c->set.profile);
        const ANeuralNetworksDevice *cpu = NULL, *dev = NULL;
        int32_t dev_type = 0;
        char names[256] = "";
        for (uint32_t i = 0; i < count; i++) {
            ANeuralNetworksDevice *d = NULL;
            const char *name = NULL;
            int32_t type = 0;
            if (L->_getDevice(i, &d) || !d || L->Device_getName(d, &name) || !name) continue;
            if (L->Device_getType) L->Device_getType(d, &type);
            size_t u = strlen(names);
            snprintf(names + u, sizeof names - u, "%s%s", u ? ", " : "", name);
            size_t nl = strlen(name), wl = strlen(want);
            if (!dev && nl >= wl && strcmp(name + nl - wl, want) == 0) dev = d, dev_type = type;
            else if (!cpu && type == ANEURALNETWORKS_DEVICE_CPU) cpu = d;
        }
        if (!dev)
            return par_msgf(msg, PAR_UNSUPPORTED, "no NNAPI device for profile %s (devices: %s)", want,
                            *names ? names : "none");
        devs[nd++] = dev;
        /* An accelerator or GPU gets the CPU device beside it for what it refuses; a CPU device (the reference, the
         * old runtime) runs the whole model itself. */
        if (cpu && cpu != dev && dev_type != ANEURALNETWORKS_DEVICE_CPU) devs[nd++] = cpu;
        const char *n0 = NULL, *n1 = NULL;
        L->Device_getName(devs[0], &n0);
        if (nd > 1) L->Device_getName(devs[1], &n1);
        snprintf(p->devices, sizeof p->devices, "%s%s%s", n0 ? n0 : "?", n1 ? "+" : "", n1 ? n1 : "");
        if ((rc = L->Compilation_createForDevices(p->model, devs, nd, &p->comp)))
            return nn_fail(c, msg, "ANeuralNetworksCompilation_createForDevices", rc, NULL);
        p->one_device = nd == 1;
    } else {
        if (c->set.profile != NN_PROFILE_REFERENCE)
            return par_msgf(msg, PAR_UNSUPPORTED, "%s has no device API (level 29) to choose profile %s", L->path,
                            par_nn_profile_name(c->set.profile));
        snprintf(p->devices, sizeof p->devices, "default");
        if ((rc = L->Compilation_create(p->model, &p->comp)))
            return nn_fail(c, msg, "ANeuralNetworksCompilation_create", rc, NULL);
    }
    if ((rc = L->Compilation_setPreference(p->comp, ANEURALNETWORKS_PREFER_FAST_SINGLE_ANSWER)))
        return nn_fail(c, msg, "ANeuralNetworksCompilation_setPreference", rc, NULL);
    if ((rc = L->Compilation_finish(p->comp))) {
        snprintf(p->placement, sizeof p->placement, " (devices %s)", p->devices);
        return nn_fail(c, msg, "ANeuralNetworksCompilation_finish", rc, p->placement);
    }
    placement(c, p);
    return PAR_OK;
}

static void nn_release(void *ctx, void *prepared)
{
    nn_ctx *c = ctx;
    nn_prep *p = prepared;
    if (!p) return;
    if (p->comp) c->lib.Compilation_free(p->comp);
    if (p->model) c->lib.Model_free(p->model);
    for (int32_t i = 0; i < p->m.n_in; i++) free(p->in_buf ? p->in_buf[i] : NULL);
    for (int32_t i = 0; i < p->m.n_out; i++) free(p->out_buf ? p->out_buf[i] : NULL);
    free(p->in_buf);
    free(p->out_buf);
    free(p->in_index);
    par_nn_model_free(&p->m);
    free(p);
}

static par_status nn_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    nn_ctx *c = ctx;
    *prepared = NULL;
    c->prepared_once = 1;
    nn_prep *p = calloc(1, sizeof *p);
    if (!p) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    par_status st = par_nn_convert(&p->m, g, &c->set, msg);
    if (st == PAR_OK && p->m.failed >= 0) {
        int32_t f = p->m.failed;
        st = par_msgf(msg, p->m.node_st[f] == PAR_OK ? PAR_UNSUPPORTED : p->m.node_st[f], "node '%s' (%s): %s",
                      g->nodes[f].name, g->nodes[f].op, p->m.node_msg[f].text);
    }
    if (st == PAR_OK) {
        p->in_buf = calloc((size_t)p->m.n_in + 1, sizeof *p->in_buf);
        p->out_buf = calloc((size_t)p->m.n_out + 1, sizeof *p->out_buf);
        p->in_index = calloc((size_t)p->m.n_in + 1, sizeof *p->in_index);
        if (!p->in_buf || !p->out_buf || !p->in_index) st = par_msgf(msg, PAR_ERROR, "prepare: out of memory");
        for (int32_t i = 0; i < p->m.n_in && st == PAR_OK; i++)
            if (p->m.in[i].nhwc || p->m.in[i].xor80)
                if (!(p->in_buf[i] = malloc(p->m.in[i].bytes))) st = par_msgf(msg, PAR_ERROR, "prepare: out of memory");
        for (int32_t i = 0; i < p->m.n_out && st == PAR_OK; i++)
            if (p->m.out[i].nhwc || p->m.out[i].xor80)
                if (!(p->out_buf[i] = malloc(p->m.out[i].bytes)))
                    st = par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    }
    if (st == PAR_OK) st = build_model(c, p, msg);
    if (st == PAR_OK) st = compile(c, p, msg);
    if (st != PAR_OK) {
        nn_release(ctx, p);
        return st;
    }
    *prepared = p;
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * bind / run
 * ------------------------------------------------------------------------------------------------------------- */
static par_status nn_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    (void)ctx;
    nn_prep *p = prepared;
    if (!p) return par_msgf(msg, PAR_ERROR, "bind: no prepared graph");
    p->inputs = inputs;
    p->outputs = outputs;
    return PAR_OK;
}

static void flip(uint8_t *d, size_t n)
{
    for (size_t i = 0; i < n; i++) d[i] ^= 0x80;
}

static par_status nn_run(void *ctx, void *prepared, par_msg *msg)
{
    nn_ctx *c = ctx;
    const nn_lib *L = &c->lib;
    nn_prep *p = prepared;
    if (!p || !p->outputs) return par_msgf(msg, PAR_ERROR, "run: graph not prepared and bound");
    const nn_model *m = &p->m;
    for (int32_t i = 0; i < m->n_in; i++) {
        const nn_io *io = &m->in[i];
        if (!p->in_buf[i] || p->in_index[i] < 0) continue;
        if (io->nhwc) par_nn_nchw_to_nhwc(p->inputs[i], p->in_buf[i], io->dims, io->elsize);
        else memcpy(p->in_buf[i], p->inputs[i], io->bytes);
        if (io->xor80) flip(p->in_buf[i], io->bytes);
    }
    ANeuralNetworksExecution *e = NULL;
    int rc = L->Execution_create(p->comp, &e);
    if (rc) return nn_fail(c, msg, "ANeuralNetworksExecution_create", rc, NULL);
    par_status st = PAR_OK;
    char where[64];
    for (int32_t i = 0; i < m->n_in && st == PAR_OK; i++) {
        if (p->in_index[i] < 0) continue;
        const void *src = p->in_buf[i] ? p->in_buf[i] : p->inputs[i];
        snprintf(where, sizeof where, " (input %d)", i);
        if ((rc = L->Execution_setInput(e, p->in_index[i], NULL, src, m->in[i].bytes)))
            st = nn_fail(c, msg, "ANeuralNetworksExecution_setInput", rc, where);
    }
    for (int32_t i = 0; i < m->n_out && st == PAR_OK; i++) {
        void *dst = p->out_buf[i] ? p->out_buf[i] : p->outputs[i];
        snprintf(where, sizeof where, " (output %d)", i);
        if ((rc = L->Execution_setOutput(e, i, NULL, dst, m->out[i].bytes)))
            st = nn_fail(c, msg, "ANeuralNetworksExecution_setOutput", rc, where);
    }
    int timing = st == PAR_OK && p->one_device && L->Execution_setMeasureTiming && L->Execution_getDuration &&
                 L->Execution_setMeasureTiming(e, true) == ANEURALNETWORKS_NO_ERROR;
    if (st == PAR_OK) {
        if (L->Execution_compute) {
            if ((rc = L->Execution_compute(e)))
                st = nn_fail(c, msg, "ANeuralNetworksExecution_compute", rc, p->placement);
        } else {
            ANeuralNetworksEvent *ev = NULL;
            if ((rc = L->Execution_startCompute(e, &ev)))
                st = nn_fail(c, msg, "ANeuralNetworksExecution_startCompute", rc, p->placement);
            else if ((rc = L->Event_wait(ev)))
                st = nn_fail(c, msg, "ANeuralNetworksEvent_wait", rc, p->placement);
            if (ev) L->Event_free(ev);
        }
    }
    p->timed = 0;
    if (st == PAR_OK && timing) {
        uint64_t ns = UINT64_MAX;
        if (L->Execution_getDuration(e, ANEURALNETWORKS_DURATION_ON_HARDWARE, &ns) == 0 && ns != UINT64_MAX) {
            p->device_ms = (double)ns * 1e-6;
            p->timed = 1;
        }
    }
    L->Execution_free(e);
    if (st != PAR_OK) return st;
    for (int32_t i = 0; i < m->n_out; i++) {
        const nn_io *io = &m->out[i];
        if (!p->out_buf[i]) continue;
        if (io->xor80) flip(p->out_buf[i], io->bytes);
        if (io->nhwc) par_nn_nhwc_to_nchw(p->out_buf[i], p->outputs[i], io->dims, io->elsize);
        else memcpy(p->outputs[i], p->out_buf[i], io->bytes);
    }
    return PAR_OK;
}

static const par_backend NN_BACKEND = {
    .api_version = PAR_BACKEND_API_VERSION,
    .struct_size = sizeof(par_backend),
    .name = "nnapi",
    .description = "Android NNAPI through libneuralnetworks.so (dlopen): graphs converted to NNAPI models as "
                   "PyTorch's converter does, NHWC, f32 / relaxed f16 / quant8, device profiles",
    .version = NN_VERSION,
    .arith = PAR_ARITH_F32,
    .init = nn_init,
    .destroy = nn_destroy,
    .supports = nn_supports,
    .prepare = nn_prepare,
    .bind = nn_bind,
    .run = nn_run,
    .release = nn_release,
    .get_proc = nn_get_proc,
};

const par_backend *par_backend_nnapi(void);
const par_backend *par_backend_nnapi(void)
{
    return &NN_BACKEND;
}
