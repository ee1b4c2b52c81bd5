/*
 * runner.c - runtimes under test through a model file and a runner process (docs/runners.md): one backend table
 * per row of `runners` below (ort, litert, openvino, ncnn, executorch, and the generic `runner[cmd=...,format=...]`),
 * all the same code. Each case's graph is exported in the runner's format (formats/model.h) at prepare and sent with
 * `load`; each run sends the inputs in the file's layout and reads the outputs back, checked against the graph's
 * count, dtypes and shapes before a byte reaches an output buffer.
 *
 * The runner process is the fork server's companion where there is one (exec/companion.c: started once per worker,
 * kept while jobs end cleanly), else our own child for this context's life (the probe, --no-isolate, bench).
 *
 * This backend sits above formats/ (it writes model files), a layer above the other backends (docs/ARCHITECTURE.md).
 * Must not: let a reply reach an output unchecked, or guess a runtime's semantics: what it declares is measured.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/paths.h"
#include "core/requant.h"
#include "formats/layout.h"
#include "formats/model.h"
#include "rt_wire.h"

/* One shipped runner: the backend's name, its script under tools/runners/ (run by build/venv/bin/python), its
 * format. What the runtime computes (flushed subnormals, the requantization scheme) the runner declares in its
 * hello (docs/runners.md), as measured for each instance. */
typedef struct rt_spec {
    const char *name, *description, *script;
    par_model_format format;
} rt_spec;

enum { RT_ORT, RT_LITERT, RT_OPENVINO, RT_NCNN, RT_EXECUTORCH, RT_GENERIC, RT_N };
static const rt_spec runners[RT_N] = {
    [RT_ORT] = {"ort", "ONNX Runtime (CPU execution provider) through its runner, tools/runners/ort_runner.py",
                "ort_runner.py", PAR_FMT_ONNX},
    [RT_LITERT] = {"litert", "LiteRT (default XNNPACK delegate; delegate=none: built-in kernels) through its runner, "
                   "tools/runners/litert_runner.py", "litert_runner.py", PAR_FMT_TFLITE},
    [RT_OPENVINO] = {"openvino", "OpenVINO's CPU plugin (precision=f32 | bf16 | f16) through its runner, "
                      "tools/runners/openvino_runner.py", "openvino_runner.py", PAR_FMT_ONNX},
    [RT_NCNN] = {"ncnn", "ncnn's CPU path in f32 (vulkan=1: its Vulkan path; fp16=1: its fp16 storage) through its "
                 "runner, tools/runners/ncnn_runner.py", "ncnn_runner.py", PAR_FMT_NCNN},
    [RT_EXECUTORCH] = {"executorch", "ExecuTorch (XNNPACK delegate; delegate=none: portable kernels), the ONNX file "
                       "converted to torch and lowered by its runner, tools/runners/executorch_runner.py",
                       "executorch_runner.py", PAR_FMT_ONNX},
    [RT_GENERIC] = {"runner", "any runtime through a runner program: runner[cmd=PATH,format=onnx|tflite|ncnn] "
                    "(docs/runners.md)",
                    NULL, PAR_FMT_NONE},
};

#define RT_MAX_ARGS 32
#define RT_MAX_IO 64
#define RT_MAX_OPTS 16

typedef struct rt_ctx {
    const rt_spec *spec;
    rt_conn conn;
    int connected;            /* hello answered ok */
    char cmd[1024];           /* the generic runner's cmd= */
    par_model_format format;
    int32_t n_opts;
    char opt_key[RT_MAX_OPTS][64], opt_val[RT_MAX_OPTS][128];
    char runtime[64], version[64];
    uint32_t arith_flags;     /* hello's "declares": flush_subnormals */
    par_arith arith;          /* hello's "declares": arith (f32 when not said) */
    par_requant requant;      /* hello's "declares": requant (fp32 when not said) */
    int prepared_once;
    /* the last supports(): the graph it exported, and the file */
    const par_graph_desc *exported_for;
    uint8_t *model;
    size_t model_len;
    par_status export_st;
    char export_why[PAR_MSG_LEN];
    int32_t export_node;
    double last_run_ms;       /* the runner's own time of the last run; < 0 when it gave none */
} rt_ctx;

typedef struct rt_io {
    par_dtype dtype;
    int32_t rank;
    int64_t dims[PAR_MAX_RANK];   /* the graph's (NCHW) */
    int64_t fdims[PAR_MAX_RANK];  /* the file's (NHWC for TFLite's rank 4) */
    int nhwc;
    size_t bytes;
} rt_io;

typedef struct rt_prep {
    int32_t n_in, n_out;
    rt_io in[RT_MAX_IO], out[RT_MAX_IO];
    const void *const *inputs;
    void *const *outputs;
    uint8_t *in_data;             /* the inputs in the file's layout, one block */
    const void *in_ptr[RT_MAX_IO];
    size_t in_size[RT_MAX_IO];
    char *run_head;               /* the run request's header */
    size_t out_total;
} rt_prep;

/* ------------------------------------------------------------------------------------------------------------ */

static const char *np_dtype(par_dtype t)
{
    switch (t) {
    case PAR_DTYPE_F32: return "float32";
    case PAR_DTYPE_F16: return "float16";
    case PAR_DTYPE_QU8: return "uint8";
    case PAR_DTYPE_QS8: return "int8";
    case PAR_DTYPE_I32: return "int32";
    case PAR_DTYPE_BOOL: return "bool";
    default: return NULL;
    }
}

/* The shipped runner's command: build/venv/bin/python tools/runners/SCRIPT in the source tree. 0 when not found. */
static int shipped_argv(const rt_spec *sp, char *py, size_t py_len, char *script, size_t script_len)
{
    const char *tree = par_tree_dir();
    if (!tree[0] || !sp->script) return 0;
    snprintf(py, py_len, "%s/build/venv/bin/python", tree);
    snprintf(script, script_len, "%s/tools/runners/%s", tree, sp->script);
    return 1;
}

/* The generic runner's argv from cmd=PATH: the program itself, or for a .py file the interpreter of the shipped
 * runners (build/venv/bin/python when there, else python3) and the file. */
static int cmd_argv(const char *cmd, char **argv, char *py, size_t py_len)
{
    size_t n = strlen(cmd);
    if (n == 0) return 0;
    if (n > 3 && !strcmp(cmd + n - 3, ".py")) {
        const char *tree = par_tree_dir();
        struct stat st;
        snprintf(py, py_len, "%s/build/venv/bin/python", tree);
        if (!tree[0] || stat(py, &st) != 0) snprintf(py, py_len, "python3");
        argv[0] = py, argv[1] = (char *)cmd, argv[2] = NULL;
        return 2;
    }
    argv[0] = (char *)cmd, argv[1] = NULL;
    return 1;
}

static size_t write_argv(char *out, size_t len, char *const *argv)
{
    size_t need = 1;
    for (int i = 0; argv[i]; i++) need += strlen(argv[i]) + 1;
    if (need > len) return need;
    size_t o = 0;
    for (int i = 0; argv[i]; i++) {
        size_t k = strlen(argv[i]) + 1;
        memcpy(out + o, argv[i], k);
        o += k;
    }
    out[o] = '\0';
    return need;
}

/* PAR_PROC_COMPANION for one table: the runner's argv from the instance's knobs. */
static size_t companion_of(const rt_spec *sp, const char *const *keys, const char *const *vals, int32_t n, char *out,
                           size_t len)
{
    char *argv[RT_MAX_ARGS + 1], py[1024], script[1024], cmd[1024] = "";
    if (sp->script) {
        struct stat stt;
        if (!shipped_argv(sp, py, sizeof py, script, sizeof script) || stat(py, &stt) != 0) return 0;
        argv[0] = py, argv[1] = script, argv[2] = NULL;
        return write_argv(out, len, argv);
    }
    for (int32_t i = 0; i < n; i++)
        if (!strcmp(keys[i], "cmd")) snprintf(cmd, sizeof cmd, "%s", vals[i]);
    if (!cmd_argv(cmd, argv, py, sizeof py)) return 0;
    return write_argv(out, len, argv);
}

/* ------------------------------------------------------------------------------------------------------------ */

/* Start our own runner process when there is no companion. */
static par_status start_own(rt_ctx *c, par_msg *msg)
{
    char *argv[RT_MAX_ARGS + 1], py[1024], script[1024];
    if (c->spec->script) {
        struct stat stt;
        if (!shipped_argv(c->spec, py, sizeof py, script, sizeof script))
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: the source tree (tools/runners/) is not found beside this "
                            "parity", c->spec->name);
        if (stat(py, &stt) != 0)
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: %s is missing (make deps creates build/venv with the "
                            "runtimes)", c->spec->name, py);
        argv[0] = py, argv[1] = script, argv[2] = NULL;
    } else {
        if (!c->cmd[0]) return PAR_OK; /* not yet: cmd= comes as a knob */
        cmd_argv(c->cmd, argv, py, sizeof py);
    }
    return rt_spawn(&c->conn, argv, msg);
}

/* hello's "declares": what the runtime computes otherwise than plain f32 and fp32 requantization. */
static par_status declares(rt_ctx *c, struct json_object *head, par_msg *msg)
{
    struct json_object *d = NULL, *v = NULL;
    c->arith_flags = 0;
    c->requant = PAR_REQUANT_FP32;
    c->arith = PAR_ARITH_F32;
    if (!json_object_object_get_ex(head, "declares", &d)) return PAR_OK;
    if (!json_object_is_type(d, json_type_object))
        return par_msgf(msg, PAR_ERROR, "%s: hello's \"declares\" is not an object", c->spec->name);
    if (json_object_object_get_ex(d, "flush_subnormals", &v) && json_object_get_boolean(v))
        c->arith_flags |= PAR_ARITH_FLUSH_SUBNORMALS;
    if (json_object_object_get_ex(d, "arith", &v)) {
        const char *name = json_object_get_string(v);
        int found = 0;
        for (int a = 0; a < (int)PAR_ARITH_N_KINDS && !found; a++)
            if (name && !strcmp(name, par_arith_name((par_arith)a))) c->arith = (par_arith)a, found = 1;
        if (!found)
            return par_msgf(msg, PAR_ERROR, "%s: hello declares arith \"%s\" (known: f32, f16_storage, f16, bf16, "
                            "bf16_storage)", c->spec->name, name ? name : "");
    }
    if (json_object_object_get_ex(d, "requant", &v)) {
        const char *name = json_object_get_string(v);
        if (!name || par_requant_parse(name, &c->requant) != 0)
            return par_msgf(msg, PAR_ERROR, "%s: hello declares requant \"%s\", which parity does not know (known: "
                            "docs/quantization.md)", c->spec->name, name ? name : "");
    }
    return PAR_OK;
}

/* hello with the options so far: the runner answers whether it can work, and with them. */
static par_status hello(rt_ctx *c, par_msg *msg)
{
    if (c->conn.in_w < 0) return PAR_OK;
    char head[8192], *p = head, *end = head + sizeof head;
    p += snprintf(p, (size_t)(end - p), "{\"parity_runner\": 1, \"op\": \"hello\", \"options\": {");
    for (int32_t i = 0; i < c->n_opts && p < end - 600; i++) {
        p += snprintf(p, (size_t)(end - p), "%s", i ? ", " : "");
        p += rt_json_str(p, (size_t)(end - p), c->opt_key[i]);
        p += snprintf(p, (size_t)(end - p), ": ");
        p += rt_json_str(p, (size_t)(end - p), c->opt_val[i]);
    }
    snprintf(p, (size_t)(end - p), "}}");
    rt_reply r;
    par_status st = rt_request(&c->conn, head, NULL, NULL, 0, 0, &r, msg);
    if (st != PAR_OK) {
        char why[PAR_MSG_LEN];
        snprintf(why, sizeof why, "%s", msg->text);
        return par_msgf(msg, st, "%s: %s", c->spec->name, why);
    }
    if (!r.ok) {
        st = par_msgf(msg, r.status, "%s: %s", c->spec->name, r.message);
        rt_reply_free(&r);
        return st;
    }
    struct json_object *v = NULL;
    if (json_object_object_get_ex(r.head, "runtime", &v))
        snprintf(c->runtime, sizeof c->runtime, "%s", json_object_get_string(v));
    if (json_object_object_get_ex(r.head, "version", &v))
        snprintf(c->version, sizeof c->version, "%s", json_object_get_string(v));
    st = declares(c, r.head, msg);
    rt_reply_free(&r);
    if (st != PAR_OK) return st;
    c->connected = 1;
    return PAR_OK;
}

static par_status rt_init_spec(const rt_spec *sp, void **ctx, par_msg *msg)
{
    rt_ctx *c = calloc(1, sizeof *c);
    if (!c) return par_msgf(msg, PAR_ERROR, "out of memory");
    c->spec = sp;
    c->format = sp->format;
    c->last_run_ms = -1;
    rt_conn_init(&c->conn);
    *ctx = c;
    rt_attach_companion(&c->conn);
    return PAR_OK;
}

/* PAR_PROC_READY: with the knobs set, start our own runner where there is no companion, and say hello with the
 * options: a runtime that is missing or refuses an option makes the instance unusable with its reason. */
static par_status rt_ready(void *ctx, par_msg *msg)
{
    rt_ctx *c = ctx;
    if (c->format == PAR_FMT_NONE)
        return par_msgf(msg, PAR_UNSUPPORTED, "runner: name the runner and its format: runner[cmd=PATH,format=onnx|"
                        "tflite|ncnn] (docs/runners.md)");
    if (c->conn.in_w < 0) {
        if (!c->spec->script && !c->cmd[0])
            return par_msgf(msg, PAR_UNSUPPORTED, "runner: no cmd= (the runner's program: runner[cmd=PATH,format="
                            "%s])", par_model_format_name(c->format));
        par_status st = start_own(c, msg);
        if (st != PAR_OK) return st;
    }
    return hello(c, msg);
}

static void rt_destroy(void *ctx)
{
    rt_ctx *c = ctx;
    if (!c) return;
    rt_close(&c->conn);
    free(c->model);
    free(c);
}

static par_status rt_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    rt_ctx *c = ctx;
    if (c->prepared_once) return par_knob_too_late(key, NULL, msg);
    if (c->spec->format == PAR_FMT_NONE && !strcmp(key, "format")) {
        c->format = par_model_format_find(value);
        if (c->format == PAR_FMT_NONE)
            return par_msgf(msg, PAR_ERROR, "knob 'format': '%s' is not onnx, tflite or ncnn", value);
        return PAR_OK;
    }
    if (c->spec->format == PAR_FMT_NONE && !strcmp(key, "cmd")) {
        snprintf(c->cmd, sizeof c->cmd, "%s", value);
        return PAR_OK;
    }
    if (c->n_opts >= RT_MAX_OPTS) return par_msgf(msg, PAR_ERROR, "too many knobs");
    snprintf(c->opt_key[c->n_opts], sizeof c->opt_key[0], "%s", key);
    snprintf(c->opt_val[c->n_opts], sizeof c->opt_val[0], "%s", value);
    c->n_opts++;
    return PAR_OK; /* the runner judges its options at hello (rt_ready) */
}

/* ------------------------------------------------------------------------------------------------------------ */

static par_status export_graph(rt_ctx *c, const par_graph_desc *g)
{
    if (c->exported_for == g && (c->model || c->export_st != PAR_OK)) return c->export_st;
    free(c->model);
    c->model = NULL;
    c->exported_for = g;
    c->export_node = -1;
    par_msg m;
    m.text[0] = '\0';
    c->export_st = par_model_export_graph(g, "parity", c->format, &c->model, &c->model_len, &m);
    snprintf(c->export_why, sizeof c->export_why, "%s", m.text);
    /* "node 'NAME' (op): why": the node it names is the one reported unsupported */
    for (int32_t i = 0; c->export_st != PAR_OK && i < g->n_nodes; i++) {
        char pre[200];
        snprintf(pre, sizeof pre, "node '%s' ", g->nodes[i].name);
        if (!strncmp(m.text, pre, strlen(pre))) c->export_node = i;
    }
    return c->export_st;
}

static par_status rt_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    rt_ctx *c = ctx;
    const par_node *nd = &g->nodes[node];
    for (int32_t k = 0; k < nd->n_inputs + nd->n_outputs; k++) {
        int32_t v = k < nd->n_inputs ? nd->inputs[k] : nd->outputs[k - nd->n_inputs];
        if (v >= 0 && v < g->n_values && !np_dtype(g->values[v].dtype))
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: dtype %s", c->spec->name, par_dtype_name(g->values[v].dtype));
    }
    if (g->n_inputs > RT_MAX_IO || g->n_outputs > RT_MAX_IO)
        return par_msgf(msg, PAR_UNSUPPORTED, "more than %d graph inputs or outputs", RT_MAX_IO);
    par_status st = export_graph(c, g);
    if (st == PAR_OK || (c->export_node >= 0 && c->export_node != node)) return PAR_OK;
    return par_msgf(msg, st, "%s: %s", par_model_format_name(c->format), c->export_why);
}

static void io_of(const rt_ctx *c, const par_value *v, rt_io *io)
{
    io->dtype = v->dtype;
    io->rank = v->rank;
    io->nhwc = c->format == PAR_FMT_TFLITE && v->rank == 4;
    for (int32_t d = 0; d < v->rank; d++) io->dims[d] = v->dims[d];
    memcpy(io->fdims, io->dims, sizeof io->dims);
    if (io->nhwc) io->fdims[1] = v->dims[2], io->fdims[2] = v->dims[3], io->fdims[3] = v->dims[1];
    io->bytes = (size_t)v->numel * par_dtype_size(v->dtype);
}

static char *io_json(char *p, char *end, const rt_io *io)
{
    p += snprintf(p, (size_t)(end - p), "{\"dtype\": \"%s\", \"shape\": [", np_dtype(io->dtype));
    for (int32_t d = 0; d < io->rank; d++) p += snprintf(p, (size_t)(end - p), "%s%lld", d ? ", " : "",
                                                         (long long)io->fdims[d]);
    return p + snprintf(p, (size_t)(end - p), "]}");
}

static par_status rt_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    rt_ctx *c = ctx;
    c->prepared_once = 1;
    if (!c->connected) return par_msgf(msg, PAR_ERROR, "%s: prepare before the runner said hello", c->spec->name);
    par_status st = export_graph(c, g);
    if (st != PAR_OK) return par_msgf(msg, st, "%s: %s", par_model_format_name(c->format), c->export_why);
    rt_prep *p = calloc(1, sizeof *p);
    if (!p) return par_msgf(msg, PAR_ERROR, "out of memory");
    p->n_in = g->n_inputs, p->n_out = g->n_outputs;
    for (int32_t i = 0; i < p->n_in; i++) io_of(c, &g->values[g->inputs[i]], &p->in[i]);
    for (int32_t i = 0; i < p->n_out; i++) io_of(c, &g->values[g->outputs[i]], &p->out[i]), p->out_total += p->out[i].bytes;
    char head[128];
    snprintf(head, sizeof head, "{\"op\": \"load\", \"format\": \"%s\", \"blobs\": [%zu]}",
             par_model_format_name(c->format), c->model_len);
    const void *blob = c->model;
    rt_reply r;
    st = rt_request(&c->conn, head, &blob, &c->model_len, 1, 0, &r, msg);
    if (st == PAR_OK && !r.ok) st = par_msgf(msg, r.status, "%s: %s", c->spec->name, r.message);
    rt_reply_free(&r);
    if (st != PAR_OK) {
        free(p);
        return st;
    }
    *prepared = p;
    return PAR_OK;
}

static void rt_release(void *ctx, void *prepared)
{
    (void)ctx;
    rt_prep *p = prepared;
    if (!p) return;
    free(p->in_data);
    free(p->run_head);
    free(p);
}

static const int32_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};

static par_status rt_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    (void)ctx;
    rt_prep *p = prepared;
    p->inputs = inputs;
    p->outputs = outputs;
    size_t total = 0;
    for (int32_t i = 0; i < p->n_in; i++) total += p->in[i].bytes;
    free(p->in_data);
    p->in_data = malloc(total ? total : 1);
    size_t head_cap = 256 + (size_t)p->n_in * (64 + 24 * PAR_MAX_RANK);
    free(p->run_head);
    p->run_head = malloc(head_cap);
    if (!p->in_data || !p->run_head) return par_msgf(msg, PAR_ERROR, "out of memory");
    char *h = p->run_head, *end = h + head_cap;
    h += snprintf(h, (size_t)(end - h), "{\"op\": \"run\", \"inputs\": [");
    size_t off = 0;
    for (int32_t i = 0; i < p->n_in; i++) {
        const rt_io *io = &p->in[i];
        uint8_t *dst = p->in_data + off;
        if (io->nhwc) par_fmt_permute(inputs[i], dst, par_dtype_size(io->dtype), 4, io->dims, to_nhwc);
        else memcpy(dst, inputs[i], io->bytes);
        p->in_ptr[i] = dst;
        p->in_size[i] = io->bytes;
        off += io->bytes;
        h += snprintf(h, (size_t)(end - h), "%s", i ? ", " : "");
        h = io_json(h, end, io);
    }
    h += snprintf(h, (size_t)(end - h), "], \"blobs\": [");
    for (int32_t i = 0; i < p->n_in; i++) h += snprintf(h, (size_t)(end - h), "%s%zu", i ? ", " : "", p->in_size[i]);
    snprintf(h, (size_t)(end - h), "]}");
    return PAR_OK;
}

/* Check the run reply's outputs against the graph's: count, dtype, shape (in the file's layout), bytes. */
static par_status check_outputs(rt_ctx *c, const rt_prep *p, const rt_reply *r, par_msg *msg)
{
    struct json_object *outs = NULL;
    if (!json_object_object_get_ex(r->head, "outputs", &outs) || !json_object_is_type(outs, json_type_array))
        return par_msgf(msg, PAR_ERROR, "%s: the reply to run has no \"outputs\" array", c->spec->name);
    int32_t n = (int32_t)json_object_array_length(outs);
    if (n != p->n_out || r->n_blobs != p->n_out)
        return par_msgf(msg, PAR_ERROR, "%s: run returned %d outputs (%d blobs), the graph has %d", c->spec->name,
                        (int)n, (int)r->n_blobs, (int)p->n_out);
    for (int32_t k = 0; k < n; k++) {
        const rt_io *io = &p->out[k];
        struct json_object *o = json_object_array_get_idx(outs, (size_t)k), *dt = NULL, *sh = NULL;
        const char *dts = o && json_object_object_get_ex(o, "dtype", &dt) ? json_object_get_string(dt) : NULL;
        if (!dts || strcmp(dts, np_dtype(io->dtype)) != 0)
            return par_msgf(msg, PAR_ERROR, "%s: output %d is %s, the graph's is %s", c->spec->name, (int)k,
                            dts ? dts : "(no dtype)", np_dtype(io->dtype));
        int ok = o && json_object_object_get_ex(o, "shape", &sh) && json_object_is_type(sh, json_type_array) &&
                 (int32_t)json_object_array_length(sh) == io->rank;
        for (int32_t d = 0; ok && d < io->rank; d++) {
            struct json_object *e = json_object_array_get_idx(sh, (size_t)d);
            ok = json_object_is_type(e, json_type_int) && json_object_get_int64(e) == io->fdims[d];
        }
        if (!ok) {
            char want[200] = "", *w = want;
            for (int32_t d = 0; d < io->rank; d++)
                w += snprintf(w, sizeof want - (size_t)(w - want), "%s%lld", d ? "," : "", (long long)io->fdims[d]);
            return par_msgf(msg, PAR_ERROR, "%s: output %d has shape %s, the graph's is [%s]%s", c->spec->name,
                            (int)k, sh ? json_object_to_json_string(sh) : "(none)", want,
                            io->nhwc ? " (NHWC)" : "");
        }
        if (r->blob_len[k] != io->bytes)
            return par_msgf(msg, PAR_ERROR, "%s: output %d has %zu bytes, its dtype and shape make %zu",
                            c->spec->name, (int)k, r->blob_len[k], io->bytes);
    }
    return PAR_OK;
}

static par_status rt_run(void *ctx, void *prepared, par_msg *msg)
{
    rt_ctx *c = ctx;
    rt_prep *p = prepared;
    rt_reply r;
    c->last_run_ms = -1;
    par_status st = rt_request(&c->conn, p->run_head, p->in_ptr, p->in_size, p->n_in, p->out_total, &r, msg);
    if (st != PAR_OK) return st;
    if (!r.ok) {
        st = par_msgf(msg, r.status, "%s: run: %s", c->spec->name, r.message);
        rt_reply_free(&r);
        return st;
    }
    st = check_outputs(c, p, &r, msg);
    if (st != PAR_OK) {
        rt_reply_free(&r);
        rt_kill(&c->conn); /* it does not do what it says: a fresh one for the next case */
        return st;
    }
    for (int32_t k = 0; k < p->n_out; k++) {
        const rt_io *io = &p->out[k];
        if (io->nhwc) par_fmt_permute(r.blob[k], p->outputs[k], par_dtype_size(io->dtype), 4, io->fdims, to_nchw);
        else memcpy(p->outputs[k], r.blob[k], io->bytes);
    }
    struct json_object *t = NULL;
    if (json_object_object_get_ex(r.head, "run_ms", &t) &&
        (json_object_is_type(t, json_type_double) || json_object_is_type(t, json_type_int)))
        c->last_run_ms = json_object_get_double(t);
    rt_reply_free(&r);
    return PAR_OK;
}

/* ------------------------------------------------------------------------------------------------------------ */

static size_t rt_describe(void *ctx, char *buf, size_t len)
{
    rt_ctx *c = ctx;
    int n = snprintf(buf, len, "runtime=%s;version=%s;format=%s", c->runtime[0] ? c->runtime : "?",
                     c->version[0] ? c->version : "?", par_model_format_name(c->format));
    for (int32_t i = 0; i < c->n_opts && n >= 0 && (size_t)n < len; i++)
        n += snprintf(buf + n, len - (size_t)n, ";%s=%s", c->opt_key[i], c->opt_val[i]);
    return n < 0 ? 0 : (size_t)n;
}

static int rt_device_time(void *ctx, void *prepared, double *total_ms, double *node_ms, int32_t n_nodes)
{
    rt_ctx *c = ctx;
    (void)prepared;
    if (!(c->last_run_ms >= 0) || !isfinite(c->last_run_ms)) return 0;
    *total_ms = c->last_run_ms;
    for (int32_t i = 0; i < n_nodes; i++) node_ms[i] = -1;
    return 1;
}

static par_requant rt_requant(void *ctx) { return ((rt_ctx *)ctx)->requant; }
static uint32_t rt_arith_flags(void *ctx) { return ((rt_ctx *)ctx)->arith_flags; }
static par_arith rt_arith(void *ctx) { return ((rt_ctx *)ctx)->arith; }

#define RT_TABLE(ID, NAME)                                                                                         \
    static par_status init_##NAME(void **ctx, par_msg *msg) { return rt_init_spec(&runners[ID], ctx, msg); }     \
    static size_t companion_##NAME(const char *const *k, const char *const *v, int32_t n, char *o, size_t l)     \
    {                                                                                                              \
        return companion_of(&runners[ID], k, v, n, o, l);                                                          \
    }                                                                                                              \
    static void *proc_##NAME(void *ctx, const char *name)                                                          \
    {                                                                                                              \
        if (!strcmp(name, PAR_PROC_COMPANION)) return (void *)companion_##NAME;                                    \
        if (!ctx) return NULL;                                                                                     \
        if (!strcmp(name, PAR_PROC_SET_KNOB)) return (void *)rt_set_knob;                                          \
        if (!strcmp(name, PAR_PROC_READY)) return (void *)rt_ready;                                                \
        if (!strcmp(name, PAR_PROC_DESCRIBE)) return (void *)rt_describe;                                          \
        if (!strcmp(name, PAR_PROC_DEVICE_TIME)) return (void *)rt_device_time;                                    \
        if (!strcmp(name, PAR_PROC_REQUANT)) return (void *)rt_requant;                                            \
        if (!strcmp(name, PAR_PROC_ARITH_FLAGS)) return (void *)rt_arith_flags;                                    \
        if (!strcmp(name, PAR_PROC_ARITH)) return (void *)rt_arith;                                                \
        return NULL;                                                                                               \
    }                                                                                                              \
    static const par_backend table_##NAME = {                                                                      \
        .api_version = PAR_BACKEND_API_VERSION,                                                                    \
        .struct_size = sizeof(par_backend),                                                                        \
        .name = #NAME,                                                                                             \
        .version = "1",                                                                                            \
        .arith = PAR_ARITH_F32,                                                                                    \
        .init = init_##NAME,                                                                                       \
        .destroy = rt_destroy,                                                                                     \
        .supports = rt_supports,                                                                                   \
        .prepare = rt_prepare,                                                                                     \
        .bind = rt_bind,                                                                                           \
        .run = rt_run,                                                                                             \
        .release = rt_release,                                                                                     \
        .get_proc = proc_##NAME,                                                                                   \
    };                                                                                                             \
    const par_backend *par_backend_##NAME(void);                                                                   \
    const par_backend *par_backend_##NAME(void)                                                                    \
    {                                                                                                              \
        static par_backend t;                                                                                      \
        t = table_##NAME;                                                                                          \
        t.description = runners[ID].description;                                                                  \
        return &t;                                                                                                 \
    }

RT_TABLE(RT_ORT, ort)
RT_TABLE(RT_LITERT, litert)
RT_TABLE(RT_OPENVINO, openvino)
RT_TABLE(RT_NCNN, ncnn)
RT_TABLE(RT_EXECUTORCH, executorch)
RT_TABLE(RT_GENERIC, runner)
