/*
 * onnx_read.c - the ONNX reader's entry points (onnx.h): a ModelProto or a lone TensorProto from bytes or from a
 * file, decoded into a new model by onnx_decode.c's messages; ModelProto and OperatorSetIdProto themselves.
 */
#include "onnx_read_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------------------------------------------------------
 * Message definitions (onnx_read_int.h's msgdef)
 * ------------------------------------------------------------------------------------------------------------- */

static const char *const MODEL_F[] = {
    [1] = "ir_version", [2] = "producer_name", [3] = "producer_version", [4] = "domain",
    [5] = "model_version", [6] = "doc_string", [7] = "graph", [8] = "opset_import",
    [14] = "metadata_props", [20] = "training_info", [25] = "functions",
};
static const char MODEL_K[] = {[8] = 'm'};
static const char *const OPSET_F[] = {[1] = "domain", [2] = "version"};
#define MSGDEF(name, f, k) {name, f, (int)(sizeof f / sizeof *f), k, (int)(sizeof k / sizeof *k)}
#define MSGDEF0(name, f) {name, f, (int)(sizeof f / sizeof *f), NULL, 0}
static const msgdef MODEL = MSGDEF("ModelProto", MODEL_F, MODEL_K);
static const msgdef OPSET = MSGDEF0("OperatorSetIdProto", OPSET_F);

/* ---------------------------------------------------------------------------------------------------------------
 * ModelProto
 * ------------------------------------------------------------------------------------------------------------- */

static int decode_opset(dec *d, const uint8_t *p, size_t n, void *obj)
{
    par_onnx_opset *o = obj;
    o->domain = "";
    par_pb_reader r;
    par_pb_reader_init(&r, d->base, p, n);
    par_pb_field f;
    int rc;
    while ((rc = next(d, &OPSET, &r, &f)) > 0) {
        if (f.number == 1 && get_str(d, &OPSET, &f, &o->domain)) return -1;
        if (f.number == 2 && get_i64(d, &OPSET, &f, &o->version)) return -1;
    }
    return rc;
}

static int decode_model(dec *d, const uint8_t *p, size_t n, par_onnx_model *m)
{
    const msgdef *md = &MODEL;
    int64_t c[MAX_KIND];
    if (count_fields(d, md, p, n, c)) return -1;
    int err = 0;
    m->opsets = alloc_array(d, c[8], sizeof *m->opsets, &err);
    if (err) return -1;
    par_pb_reader r;
    par_pb_reader_init(&r, d->base, p, n);
    par_pb_field f;
    int rc, seen_graph = 0;
    while ((rc = next(d, md, &r, &f)) > 0) {
        switch (f.number) {
        case 1:
            if (get_i64(d, md, &f, &m->ir_version)) return -1;
            break;
        case 2:
            if (get_str(d, md, &f, &m->producer_name)) return -1;
            break;
        case 3:
            if (get_str(d, md, &f, &m->producer_version)) return -1;
            break;
        case 6:
            if (get_str(d, md, &f, &m->doc_string)) return -1;
            break;
        case 7:
            if (once(d, md, &f, &seen_graph) || sub(d, "graph", -1, &f, decode_graph, &m->graph)) return -1;
            break;
        case 8:
            if (m->n_opsets < c[8]) {
                if (sub(d, "opset_import", m->n_opsets, &f, decode_opset, &m->opsets[m->n_opsets])) return -1;
                m->n_opsets++;
            }
            break;
        default: break;
        }
    }
    if (rc < 0) return -1;
    if (!seen_graph) return fail(d, NULL, "no graph (not an ONNX model?)");
    return 0;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Entry points
 * ------------------------------------------------------------------------------------------------------------- */

static void dec_init(dec *d, par_onnx_model *m, const uint8_t *buf, const char *origin, const char *root,
                     par_msg *msg)
{
    memset(d, 0, sizeof *d);
    d->base = buf;
    d->origin = origin ? origin : "onnx";
    d->root = root;
    d->msg = msg;
    d->arena = m->arena;
}

par_onnx_model *par_onnx_parse(const uint8_t *buf, size_t len, const char *origin, par_msg *msg)
{
    static const uint8_t empty[1];
    if (!buf) buf = empty, len = 0;
    par_onnx_model *m = model_create();
    if (!m) {
        par_msgf(msg, PAR_ERROR, "%s: out of memory", origin ? origin : "onnx");
        return NULL;
    }
    dec d;
    dec_init(&d, m, buf, origin, "ModelProto", msg);
    if (decode_model(&d, buf, len, m)) {
        par_onnx_free(m);
        return NULL;
    }
    return m;
}

par_onnx_model *par_onnx_tensor_parse(const uint8_t *buf, size_t len, const char *origin, par_msg *msg)
{
    static const uint8_t empty[1];
    if (!buf) buf = empty, len = 0;
    par_onnx_model *m = model_create();
    par_onnx_tensor *t = par_onnx_alloc(m, sizeof *t);
    if (!t) {
        par_onnx_free(m);
        par_msgf(msg, PAR_ERROR, "%s: out of memory", origin ? origin : "onnx");
        return NULL;
    }
    m->graph.initializers = t;
    m->graph.n_initializers = 1;
    dec d;
    dec_init(&d, m, buf, origin, "TensorProto", msg);
    if (decode_tensor(&d, buf, len, t)) {
        par_onnx_free(m);
        return NULL;
    }
    return m;
}

/* The whole file, malloc'ed; NULL with msg set. */
static uint8_t *read_file(const char *path, size_t *len, par_msg *msg)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        par_msgf(msg, PAR_ERROR, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size < (uint64_t)SIZE_MAX - 1)
        cap = (size_t)st.st_size + 1; /* one more, to see the end without a second buffer */
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, fp);
        if (n < cap) break;
        if (cap > SIZE_MAX / 2) {
            free(buf);
            buf = NULL;
            break;
        }
        uint8_t *b = realloc(buf, cap * 2);
        if (!b) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = b;
        cap *= 2;
    }
    int bad = ferror(fp);
    fclose(fp);
    if (!buf) {
        par_msgf(msg, PAR_ERROR, "%s: out of memory reading it", path);
        return NULL;
    }
    if (bad) {
        free(buf);
        par_msgf(msg, PAR_ERROR, "%s: read error", path);
        return NULL;
    }
    *len = n;
    return buf;
}

par_onnx_model *par_onnx_load(const char *path, par_msg *msg)
{
    size_t len;
    uint8_t *buf = read_file(path, &len, msg);
    if (!buf) return NULL;
    par_onnx_model *m = par_onnx_parse(buf, len, path, msg);
    free(buf);
    return m;
}

par_onnx_model *par_onnx_tensor_load(const char *path, par_msg *msg)
{
    size_t len;
    uint8_t *buf = read_file(path, &len, msg);
    if (!buf) return NULL;
    par_onnx_model *m = par_onnx_tensor_parse(buf, len, path, msg);
    free(buf);
    return m;
}
