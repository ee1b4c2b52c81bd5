/*
 * model.c - model files as case sources: the format of a path, and import / export dispatched to each format's
 * half (onnx_import.c / onnx_export.c, tflite_import.c / tflite_export.c, ncnn_export.c: export only).
 *
 * Must not: know any format's structure.
 */
#include <string.h>

#include "formats/model.h"
#include "formats/ncnn.h"
#include "formats/onnx_int.h"
#include "formats/tflite.h"

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a > b && strcmp(s + a - b, suf) == 0;
}

par_model_format par_model_format_of(const char *path)
{
    if (!path) return PAR_FMT_NONE;
    if (ends_with(path, ".onnx")) return PAR_FMT_ONNX;
    if (ends_with(path, ".tflite")) return PAR_FMT_TFLITE;
    return PAR_FMT_NONE;
}

const char *par_model_format_name(par_model_format f)
{
    return f == PAR_FMT_ONNX ? "onnx" : f == PAR_FMT_TFLITE ? "tflite" : f == PAR_FMT_NCNN ? "ncnn" : "none";
}

par_model_format par_model_format_find(const char *name)
{
    if (!name) return PAR_FMT_NONE;
    if (strcmp(name, "onnx") == 0) return PAR_FMT_ONNX;
    if (strcmp(name, "tflite") == 0) return PAR_FMT_TFLITE;
    if (strcmp(name, "ncnn") == 0) return PAR_FMT_NCNN;
    return PAR_FMT_NONE;
}

par_case *par_model_import(const char *path, const par_import_opts *o, par_import_info *info, par_msg *msg)
{
    switch (par_model_format_of(path)) {
    case PAR_FMT_ONNX: return par_onnx_import_file(path, o, info, msg);
    case PAR_FMT_TFLITE: return par_tflite_import(path, o, info, msg);
    default: par_msgf(msg, PAR_ERROR, "%s: not a model file (.onnx, .tflite)", path); return NULL;
    }
}

par_status par_model_import_ops(const char *path, const par_import_opts *o, par_case ***cases, int32_t *n,
                                par_import_info *info, par_msg *msg)
{
    *cases = NULL;
    *n = 0;
    switch (par_model_format_of(path)) {
    case PAR_FMT_ONNX: return par_onnx_import_ops(path, o, cases, n, info, msg);
    case PAR_FMT_TFLITE: return par_tflite_import_ops(path, o, cases, n, info, msg);
    default: return par_msgf(msg, PAR_ERROR, "%s: not a model file (.onnx, .tflite)", path);
    }
}

par_status par_model_export(const par_case *c, par_model_format f, const char *path, par_msg *msg)
{
    switch (f) {
    case PAR_FMT_ONNX: return par_onnx_export(c, path, msg);
    case PAR_FMT_TFLITE: return par_tflite_export(c, path, msg);
    case PAR_FMT_NCNN: return par_ncnn_export(c, path, msg);
    default: return par_msgf(msg, PAR_ERROR, "unknown model format");
    }
}

par_status par_model_export_graph(const par_graph_desc *g, const char *name, par_model_format f, uint8_t **buf,
                                  size_t *len, par_msg *msg)
{
    par_status st = PAR_ERROR;
    *buf = NULL;
    *len = 0;
    msg->text[0] = '\0';
    if (f == PAR_FMT_ONNX) {
        par_onnx_model *m = par_onnx_export_graph(g, name, &st, msg);
        if (!m) return st;
        st = par_onnx_write(m, buf, len, msg);
        par_onnx_free(m);
        return st;
    }
    if (f == PAR_FMT_TFLITE) {
        par_tfl_model *m = par_tflite_export_graph(g, name, &st, msg);
        if (!m) return st;
        *buf = par_tfl_write(m, len, msg);
        par_tfl_free(m);
        return *buf ? PAR_OK : PAR_ERROR;
    }
    if (f == PAR_FMT_NCNN) return par_ncnn_export_graph(g, buf, len, msg);
    return par_msgf(msg, PAR_ERROR, "unknown model format");
}
